/* tok_attach.c — a context's tokenizer: the one its model carries
 * (attached by io/context_init.c), or one attached to a context made from
 * a config, which its saves then carry and generation reads. */
#include "base/fpmode.h"
#include "runtime/context.h"
#include "tokenizer/tokenizer.h"

ngpt_status ngpt_context_tokenizer_set(ngpt_context *ctx, const ngpt_tokenizer *tok)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_tokenizer_set: NULL context");
    if (ctx->model_users)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_context_tokenizer_set: the context was made "
                         "from a model, whose tokenizer it keeps (ngpt_model_tokenizer)");
    if (tok && !ngpt_tok_fits(tok, ctx->cfg.vocab_size))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "ngpt_context_tokenizer_set: the tokenizer "
                         "has %d tokens but the model's vocabulary is V=%d; a model and its "
                         "tokenizer must agree (make the model with V>=%d)", (int)tok->n_tokens,
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
