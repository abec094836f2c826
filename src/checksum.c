/* checksum.c — XXH3-64 checksums of bytes, parameters and logits. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "internal.h"

uint64_t ngpt_checksum_bytes(const void *data, size_t bytes)
{
    if (!data && bytes) return 0;   /* no status to return: 0, never a NULL read */
    return (uint64_t)XXH3_64bits(data, bytes);
}

ngpt_status ngpt_params_checksum(const ngpt_context *ctx, uint64_t *hash)
{
    if (!ctx || !hash) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_params_checksum: NULL argument");
    *hash = ngpt_checksum_bytes(ctx->plan.params, ctx->lay.total * sizeof(float));
    return NGPT_OK;
}

ngpt_status ngpt_logits_checksum(const ngpt_context *ctx, uint64_t *hash)
{
    if (!ctx || !hash) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_logits_checksum: NULL argument");
    if (!ctx->run.pass.valid)
        return ngpt_fail(NGPT_ERR_WRONG_MODE, "ngpt_logits_checksum: there are no logits yet; run "
                         "a forward, prefill or decode first");
    size_t n = (size_t)ctx->run.pass.batch * ctx->run.pass.seq * ctx->cfg.vocab_size;
    *hash = ngpt_checksum_bytes(ctx->plan.logits, n * sizeof(float));
    return NGPT_OK;
}
