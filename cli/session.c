/* session.c — `--session FILE` for generate and chat: slot 0 restored from
 * FILE when it exists (its tokens are the conversation so far), and at the
 * end saved holding exactly the conversation's tokens, so the next run
 * prefills only what is new (docs/GENERATION.md, "Sessions"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int cli_session_restore(const char *cmd, ngpt_context *ctx, const char *path, int32_t **tokens,
                        size_t *n)
{
    *tokens = NULL;
    *n = 0;
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) return CLI_OK;     /* a new session */
    const int32_t *held = NULL;
    int32_t len = 0;
    if (ngpt_context_cache_load(ctx, 0, path) || ngpt_context_cache_tokens(ctx, 0, &held, &len))
        return cli_library_failed(cmd);
    *tokens = malloc((size_t)(len ? len : 1) * sizeof(int32_t));
    if (!*tokens) return cli_error(cmd, CLI_FAILED, "out of memory");
    memcpy(*tokens, held, (size_t)len * sizeof(int32_t));
    *n = (size_t)len;
    return CLI_OK;
}

int cli_session_save(const char *cmd, ngpt_context *ctx, const char *path, const int32_t *tokens,
                     size_t n)
{
    ngpt_config cfg;
    ngpt_shape shape;
    const int32_t *held = NULL;
    int32_t len = 0;
    if (ngpt_context_config(ctx, &cfg) || ngpt_context_shape(ctx, &shape) ||
        ngpt_context_cache_tokens(ctx, 0, &held, &len))
        return cli_library_failed(cmd);
    if (n > (size_t)cfg.context_len) {      /* like generation: the last T */
        tokens += n - (size_t)cfg.context_len;
        n = (size_t)cfg.context_len;
    }
    size_t keep = 0;
    while (keep < (size_t)len && keep < n && held[keep] == tokens[keep]) keep++;
    if (ngpt_context_cache_truncate(ctx, 0, (int32_t)keep)) return cli_library_failed(cmd);
    for (size_t at = keep; at < n;) {       /* what the slot lacks, in passes of seq */
        const size_t k = n - at < (size_t)shape.seq ? n - at : (size_t)shape.seq;
        if (ngpt_context_cache_prefill_slot(ctx, 0, tokens + at, (int32_t)k))
            return cli_library_failed(cmd);
        at += k;
    }
    return ngpt_context_cache_save(ctx, 0, path) ? cli_library_failed(cmd) : CLI_OK;
}
