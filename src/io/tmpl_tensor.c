/* tmpl_tensor.c — the byte tensor `chat_template` of a checkpoint
 * (tmpl_tensor.h; io/model.c parses it for the model's template). */
#include "io/tmpl_tensor.h"
#include "io/tok_tensor.h"

size_t ngpt_ckpt_bytes_count(const ngpt_context *ctx)
{
    return (ctx->tokenizer != NULL) + (ctx->chat_template != NULL);
}

void ngpt_ckpt_bytes_tensor(const ngpt_context *ctx, size_t j, ngpt_ckpt_tensor *out)
{
    if (j == 0 && ngpt_ckpt_tokenizer_tensor(ctx, out)) return;
    *out = ngpt_ckpt_template_entry(ctx->chat_template, ctx->chat_template_size);
}

ngpt_ckpt_tensor ngpt_ckpt_template_entry(const void *data, size_t size)
{
    ngpt_ckpt_tensor e = {.name = NGPT_CKPT_CHAT_TEMPLATE, .ndim = 1, .dtype = NGPT_CKPT_BYTES,
                          .data = data};
    e.shape[0] = (int32_t)size;     /* at most NGPT_CKPT_TEMPLATE_MAX */
    return e;
}

ngpt_status ngpt_ckpt_template_check(const ngpt_ckpt_reader *r, uint32_t i)
{
    size_t size;
    ngpt_ckpt_tensor_data(r, i, &size);
    if (ngpt_ckpt_tensor_dtype(r, i) != NGPT_CKPT_BYTES || size > NGPT_CKPT_TEMPLATE_MAX)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor chat_template of %s is not a chat "
                         "template (bytes, at most %zu of them); the file is damaged", r->src,
                         NGPT_CKPT_TEMPLATE_MAX);
    return NGPT_OK;
}

const void *ngpt_ckpt_template_bytes(const ngpt_ckpt_reader *r, size_t *size)
{
    const int64_t at = ngpt_ckpt_find_tensor(r, NGPT_CKPT_CHAT_TEMPLATE);
    *size = 0;
    return at < 0 ? NULL : ngpt_ckpt_tensor_data(r, (uint32_t)at, size);
}
