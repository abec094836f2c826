/* text.c — a model's text: opening a model with the tokenizer its
 * checkpoint carries, and turning text into its tokens and tokens into
 * bytes (a tokenizer's, or bytes themselves for a byte-level model). */
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
    if (s.mode == NGPT_MODE_INFER) return ngpt_context_init_model(ctx, m, &s, NULL, 0);
    if ((st = ngpt_context_init(ctx, &cfg, &s, NULL, 0))) return st;
    const ngpt_tokenizer *t = NULL;
    if (!(st = ngpt_checkpoint_load_model(*ctx, m)) && !(st = ngpt_model_tokenizer(m, &t)))
        st = ngpt_context_tokenizer_set(*ctx, t);
    if (st) {
        ngpt_context_free(*ctx);
        *ctx = NULL;
    }
    return st;
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

int cli_load_tokenizer(const char *cmd, const char *path, ngpt_tokenizer **tok)
{
    char magic[8] = {0};
    FILE *f = fopen(path, "rb");
    bool ckpt = f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, "NGPTCKPT", 8);
    if (f) fclose(f);
    if (ckpt ? ngpt_checkpoint_tokenizer(path, tok) : ngpt_tokenizer_load(tok, path))
        return cli_library_failed(cmd);
    if (!*tok)
        return cli_error(cmd, CLI_FAILED, "%s is a byte-level model: it carries no tokenizer", path);
    return CLI_OK;
}

int cli_encode(const char *cmd, const ngpt_tokenizer *tok, const void *text, size_t n,
               int32_t **ids, size_t *n_ids)
{
    /* never more ids than bytes, but for a scored tokenizer's BOS and dummy " " */
    *ids = malloc((n + 2) * sizeof **ids);
    *n_ids = 0;
    if (!*ids) return cli_error(cmd, CLI_FAILED, "out of memory for %zu tokens", n);
    ngpt_tokenizer_info info = {.bos_id = -1};
    if (!tok) {
        for (size_t i = 0; i < n; i++) (*ids)[i] = ((const unsigned char *)text)[i];
        *n_ids = n;
    } else if (ngpt_tokenizer_describe(tok, &info) ||
               ngpt_tokenizer_encode(tok, text, n, *ids + (info.bos_id >= 0), n + 1, n_ids)) {
        free(*ids);
        *ids = NULL;
        return cli_library_failed(cmd);
    } else if (info.bos_id >= 0) {          /* llama2.c's prompts start with BOS, as run.c's */
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
