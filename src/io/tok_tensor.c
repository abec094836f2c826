/* tok_tensor.c — the byte tensor `tokenizer` of a checkpoint (tok_tensor.h). */
#include <stdio.h>
#include <string.h>

#include "io/tok_tensor.h"
#include "tokenizer/tokenizer.h"

bool ngpt_ckpt_tokenizer_tensor(const ngpt_context *ctx, ngpt_ckpt_tensor *out)
{
    const ngpt_tokenizer *t = ctx->tokenizer;
    if (!t) return false;
    ngpt_ckpt_tensor e = {.name = NGPT_CKPT_TOKENIZER, .ndim = 1, .dtype = NGPT_CKPT_BYTES,
                          .data = t->image};
    e.shape[0] = (int32_t)t->image_size;    /* at most 8 MiB (NGPT_TOK_MAX_TOKENS merges) */
    *out = e;
    return true;
}

/* The identity and token count of the image in entry i. */
static ngpt_status image_of(const ngpt_ckpt_reader *r, uint32_t i, int32_t *n_tokens,
                            uint64_t *checksum)
{
    char src[600];
    snprintf(src, sizeof src, "the tokenizer in %s", r->src);
    size_t size;
    const unsigned char *p = ngpt_ckpt_tensor_data(r, i, &size);
    return ngpt_tok_image_check(p, size, src, n_tokens, checksum);
}

ngpt_status ngpt_ckpt_tokenizer_check(const ngpt_ckpt_reader *r, uint32_t i, const ngpt_config *cfg)
{
    if (ngpt_ckpt_tensor_dtype(r, i) != NGPT_CKPT_BYTES)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor tokenizer of %s is not bytes (dtype 2); "
                         "the file is damaged", r->src);
    int32_t n_tokens;
    uint64_t checksum;
    ngpt_status st = image_of(r, i, &n_tokens, &checksum);
    if (st) return st;
    if (n_tokens > cfg->vocab_size)     /* (rows past its ids: never sampled) */
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: its tokenizer has %d tokens "
                         "but its model's vocabulary is V=%d", r->src, (int)n_tokens,
                         (int)cfg->vocab_size);
    return NGPT_OK;
}

