/* text.c — a model's text: opening a model with the tokenizer its
 * checkpoint carries, and turning text into its tokens and tokens into
 * bytes (a tokenizer's, or bytes themselves for a byte-level model). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

ngpt_status cli_model_context(const ngpt_model *m, const ngpt_shape *shape, ngpt_context **ctx)
{
    ngpt_config cfg;
    ngpt_status st = ngpt_model_config(m, &cfg);
    if (st) return st;
    ngpt_shape s = *shape;
    if (s.seq > cfg.context_len) s.seq = cfg.context_len;
    if (s.threads == 0) s.threads = cli_threads_auto(&cfg, &s);
    return ngpt_context_init(ctx, m, NULL, &s, NULL, 0);
}

ngpt_status cli_open_model(const char *path, const ngpt_shape *shape, ngpt_model **m,
                           ngpt_context **ctx, const ngpt_tokenizer **tok)
{
    *ctx = NULL;
    if (tok) *tok = NULL;
    ngpt_status st = ngpt_model_open(m, path);     /* the one read of the file */
    if (!st) st = cli_model_context(*m, shape, ctx);
    if (!st && tok) st = ngpt_model_tokenizer(*m, tok);
    if (st) {
        cli_close_model(*m, *ctx);
        *m = NULL, *ctx = NULL;
        if (tok) *tok = NULL;
    }
    return st;
}

void cli_close_model(ngpt_model *m, ngpt_context *ctx)
{
    ngpt_context_free(ctx);
    ngpt_model_close(m);    /* its last context is gone: cannot refuse */
}

/* A copy of a model's tokenizer (NULL: none), through its file image. */
static int tokenizer_copy(const char *cmd, const char *path, const ngpt_tokenizer *t,
                          ngpt_tokenizer **copy)
{
    size_t size = 0;
    void *image = NULL;
    *copy = NULL;
    if (!t) return CLI_OK;
    if (ngpt_tokenizer_save_mem(t, NULL, 0, &size)) return cli_library_failed(cmd);
    if (!(image = malloc(size)))
        return cli_error(cmd, CLI_FAILED, "out of memory copying the tokenizer of %s", path);
    ngpt_status st = ngpt_tokenizer_save_mem(t, image, size, &size);
    if (!st) st = ngpt_tokenizer_load_mem(copy, image, size);
    free(image);
    return st ? cli_library_failed(cmd) : CLI_OK;
}

int cli_load_tokenizer(const char *cmd, const char *path, ngpt_tokenizer **tok)
{
    size_t size = 0;
    char *bytes = cli_read_file(path, &size);     /* a model file is read once */
    if (!bytes) return cli_error(cmd, CLI_FAILED, "cannot read %s: %s", path, strerror(errno));
    int rc = CLI_OK;
    if (size >= 8 && !memcmp(bytes, "NGPTCKPT", 8)) {
        ngpt_model *m;
        const ngpt_tokenizer *t = NULL;
        if (ngpt_model_open_mem(&m, bytes, size) || ngpt_model_tokenizer(m, &t))
            rc = cli_library_failed(cmd);
        else
            rc = tokenizer_copy(cmd, path, t, tok);
        ngpt_model_close(m);
    } else if (ngpt_tokenizer_load(tok, path)) {        /* its errors name the file */
        rc = cli_library_failed(cmd);
    }
    free(bytes);
    if (!rc && !*tok)
        return cli_error(cmd, CLI_FAILED, "%s is a byte-level model: it carries no tokenizer", path);
    return rc;
}

int cli_encode(const char *cmd, const ngpt_tokenizer *tok, const void *text, size_t n,
               int32_t **ids, size_t *n_ids)
{
    /* counted first: a normalizer may lengthen the text */
    ngpt_tokenizer_info info = {.bos_id = -1};
    size_t count = n;
    *ids = NULL;
    *n_ids = 0;
    if (tok && (ngpt_tokenizer_describe(tok, &info) ||
                ngpt_tokenizer_encode(tok, text, n, NULL, 0, &count)))
        return cli_library_failed(cmd);
    const size_t bos = info.bos_id >= 0;
    *ids = malloc((count + bos + 1) * sizeof **ids);
    if (!*ids) return cli_error(cmd, CLI_FAILED, "out of memory for %zu tokens", count);
    if (!tok) {
        for (size_t i = 0; i < n; i++) (*ids)[i] = ((const unsigned char *)text)[i];
        *n_ids = n;
    } else if (ngpt_tokenizer_encode(tok, text, n, *ids + bos, count, n_ids)) {
        free(*ids);
        *ids = NULL;
        return cli_library_failed(cmd);
    } else if (bos) {               /* prompts start with BOS (llama2.c's, Llama 3's) */
        (*ids)[0] = info.bos_id;
        ++*n_ids;
    }
    return CLI_OK;
}

const uint8_t *cli_token_bytes(const ngpt_tokenizer *tok, int32_t id, size_t *len)
{
    static const uint8_t bytes[256] = {
#define B4(n) n, n + 1, n + 2, n + 3
#define B16(n) B4(n), B4(n + 4), B4(n + 8), B4(n + 12)
#define B64(n) B16(n), B16(n + 16), B16(n + 32), B16(n + 48)
        B64(0), B64(64), B64(128), B64(192)};
    const uint8_t *b = NULL;
    *len = 0;
    if (tok) {
        if (ngpt_tokenizer_token(tok, id, &b, len)) b = NULL, *len = 0;
    } else if (id >= 0 && id < 256) {
        b = &bytes[id], *len = 1;
    }
    return b;
}
