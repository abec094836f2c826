/* tok_attach.c — the public face of a model's tokenizer: attaching one to a
 * context (which checkpoint saves then carry, loads check and generation
 * reads) and reading the one a checkpoint carries. */
#include <stdio.h>

#include "base/fpmode.h"
#include "io/checkpoint.h"
#include "io/model.h"
#include "io/tok_tensor.h"
#include "tokenizer/tokenizer.h"

ngpt_status ngpt_context_tokenizer_set(ngpt_context *ctx, const ngpt_tokenizer *tok)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_tokenizer_set: NULL context");
    if (tok && tok->n_tokens != ctx->cfg.vocab_size)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "ngpt_context_tokenizer_set: the tokenizer "
                         "has %d tokens but the model's vocabulary is V=%d; a model and its "
                         "tokenizer must agree (make the model with V=%d)", (int)tok->n_tokens,
                         (int)ctx->cfg.vocab_size, (int)tok->n_tokens);
    ctx->tokenizer = tok;
    return NGPT_OK;
}

ngpt_status ngpt_context_tokenizer(const ngpt_context *ctx, const ngpt_tokenizer **tok)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx || !tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_tokenizer: NULL argument");
    *tok = ctx->tokenizer;
    return NGPT_OK;
}

/* The tokenizer a checkpoint (a file, or data/size when path is NULL)
 * carries, built and checked whole; NULL when it carries none. */
static ngpt_status read_tokenizer(const char *path, const void *data, size_t size,
                                  ngpt_tokenizer **tok)
{
    ngpt_model *m;
    ngpt_status st = ngpt_model_open_internal(&m, path, data, size, false);
    if (st) return st;
    *tok = ngpt_model_take_tokenizer(m);
    ngpt_model_destroy(m);
    return NGPT_OK;
}

ngpt_status ngpt_checkpoint_tokenizer(const char *path, ngpt_tokenizer **tok)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_tokenizer: NULL argument");
    *tok = NULL;
    if (!path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_tokenizer: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_tokenizer", read_tokenizer(path, NULL, 0, tok));
}

ngpt_status ngpt_checkpoint_tokenizer_mem(const void *data, size_t size, ngpt_tokenizer **tok)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_tokenizer_mem: NULL argument");
    *tok = NULL;
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_checkpoint_tokenizer_mem: NULL argument");
    return ngpt_prefixed("ngpt_checkpoint_tokenizer_mem", read_tokenizer(NULL, data, size, tok));
}
