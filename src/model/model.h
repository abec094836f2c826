/* model.h — the model's passes after their checks: the public functions
 * (ngpt_context_forward, ngpt_context_backward, ngpt_context_grads_zero, ngpt_cache_*)
 * and the library's own loops (training, evaluation, generation) validate
 * their requests once and then call these, which trust their arguments. */
#ifndef NGPT_MODEL_MODEL_H
#define NGPT_MODEL_MODEL_H

#include "runtime/context.h"

/* ngpt_context_forward without its checks (tokens and targets valid, the
 * shape within the plan): a full forward over positions 0..seq-1; logits
 * in plan.logits (batch, seq, V), and with targets the mean loss and, in
 * train mode, what backward needs. */
void ngpt_context_forward_unchecked(ngpt_context *ctx, const int32_t *tokens, int32_t batch,
                                  int32_t seq, const int32_t *targets, float *loss);

/* One cached pass, the only place tokens are appended to the KV cache:
 * tokens (nseq, len) go after slots slot0..slot0+nseq-1 (len <= the planned
 * seq, each slot with room for len more); logits in plan.logits
 * (nseq, len, V). */
void ngpt_model_append(ngpt_context *ctx, int32_t slot0, int32_t nseq, const int32_t *tokens,
                       int32_t len);

/* Appends any number of tokens to one slot, in passes of the planned seq
 * that compute only the last token's logits (the rows before it still fill
 * the cache); *last_row is that row (plan.logits, (1, 1, V)). */
void ngpt_model_prefill(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len,
                        const float **last_row);

/* Keeps the first n (0 <= n <= len) tokens of slot `slot` (ngpt_kv_truncate);
 * when a local layer's ring no longer holds the keys position n reads, the
 * slot's n tokens are fed again from position 0 (the same rows: each
 * depends only on the tokens up to it), which costs their prefill and
 * leaves plan.logits that prefill's. */
void ngpt_model_truncate(ngpt_context *ctx, int32_t slot, int32_t n);

/* The rows of targets[0..n) that have one (not NGPT_TARGET_IGNORE): the
 * mean loss's divisor. */
static inline size_t ngpt_targets_kept(const int32_t *targets, size_t n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) kept += targets[i] >= 0;
    return kept;
}

/* logits (n, V) of rows (n, C) of the lm_head's input, into plan.logits. */
void ngpt_model_head(ngpt_context *ctx, const float *rows, int32_t n);

/* Layer `layer`'s block again over the last full forward's (batch, seq):
 * its activations recomputed from its input, bit for bit (shape.recompute:
 * the backward runs it before the layer's own). */
void ngpt_model_block_again(ngpt_context *ctx, int layer, int32_t batch, int32_t seq);

/* ngpt_context_backward without its checks (run.backward_ready is set):
 * gradients of the last forward's mean loss added into plan.grads. */
void ngpt_context_backward_unchecked(ngpt_context *ctx);

/* ngpt_context_grads_zero without its checks: a new gradient sum starts. */
void ngpt_context_grads_zero_unchecked(ngpt_context *ctx);

#endif
