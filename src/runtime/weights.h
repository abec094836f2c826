/* weights.h — the Linear weights of an inference context, each held once
 * (runtime/weights.c):
 *  - weights=f32: in the parameters themselves. Before a pass each Linear's
 *    full panels of 16 rows are packed in place (gemm.h's layout: panel p
 *    of W (n, k) occupies the same 16*k floats as rows 16p..16p+15), and the
 *    rows past the last full panel stay as they are; gemm_packed multiplies
 *    by the panels, gemm by those rows. ngpt_context_params unpacks them again
 *    (run.weights_packed, run.params_exposed: runtime/context.h).
 *  - weights=q8 or q4: the quantized weights (plan.q8_w: src/q8.h's and
 *    src/q4.h's panels, by ngpt_linear_dtype), written at init and load only.
 * Training contexts keep every parameter in the state_dict layout. */
#ifndef NGPT_RUNTIME_WEIGHTS_H
#define NGPT_RUNTIME_WEIGHTS_H

#include "runtime/context.h"

/* f32 inference: packs every Linear in place unless it is packed already or
 * ngpt_context_params's pointer is out (run.params_exposed). A no-op in other
 * contexts. */
void ngpt_weights_pack(ngpt_context *ctx);

/* ngpt_context_prepare: the pointer of ngpt_context_params is withdrawn, then
 * the weights are packed. */
void ngpt_weights_settle(ngpt_context *ctx);

/* Puts every Linear back in the state_dict layout (a no-op if it is). */
void ngpt_weights_unpack(ngpt_context *ctx);

/* Init or load has just written every parameter in the state_dict layout. */
static inline void ngpt_weights_written(ngpt_context *ctx) { ctx->run.weights_packed = false; }

/* Floats first..first+count-1 of the parameters as the state_dict lays
 * them out, whether or not the Linears are packed. */
void ngpt_weights_read(const ngpt_context *ctx, size_t first, float *dst, size_t count);

/* XXH3-64 of the parameters in the state_dict layout, followed (q8, q4) by
 * the bytes of the quantized weights. */
uint64_t ngpt_weights_checksum(const ngpt_context *ctx);
/* The same of the parameters of a model of cfg held elsewhere (an
 * ngpt_model's: params packed or not; its quantized Linears in one block
 * q8_w, or one by one, q8_linear, or neither). */
uint64_t ngpt_weights_checksum_of(const ngpt_config *cfg, const float *params, bool packed,
                                  const int8_t *q8_w, const int8_t *const *q8_linear);

/* Rows j0..j0+rows-1 of a float W (n, k) (row r at w + r*k; j0 a multiple
 * of 16, rows reaching n or a multiple of 16) quantized and packed into the
 * quantized weights at byte `offset` (a q8 or q4 tensor's ngpt_tensor_info
 * offset), as its dtype says. */
void ngpt_weights_quantize(ngpt_context *ctx, ngpt_dtype dtype, size_t offset, int n, int k,
                           int j0, const float *w, int rows);

/* f32 inference weights laid out once for every context of an ngpt_model:
 * the float32 tensor at `offset` in params (cfg's layout), count floats in
 * the state_dict layout at src, copied; a Linear's W with its full panels
 * packed on the way, as ngpt_weights_pack packs a context's (the same
 * kernel, so the same bytes). */
void ngpt_weights_copy_packed(const ngpt_kernels *kern, const ngpt_config *cfg,
                              const ngpt_layout *lay, float *params, size_t offset,
                              const float *src, size_t count);

/* The Linear (0: the lm_head, then NGPT_LINEAR_PER_LAYER per layer) whose
 * float32 W is the tensor at `offset` of cfg's layout, or -1 (not a
 * Linear's W, or weights quantized). */
int ngpt_weights_linear_index(const ngpt_config *cfg, const ngpt_layout *lay, size_t offset);

/* Whether ctx keeps its Linears packed (f32 inference, ngpt_context_params's
 * pointer not out): a load may then write them packed. */
bool ngpt_weights_packs(const ngpt_context *ctx);

/* Linear i (0: the lm_head, then NGPT_LINEAR_PER_LAYER per layer)'s byte
 * offset in the quantized weights, and its *bytes. */
size_t ngpt_linear_q8_span(const ngpt_config *cfg, int i, size_t *bytes);

/* The quantized tensor at byte `offset` (its ngpt_tensor_info offset),
 * wherever it lives: the arena, or the model's file (ctx->q8_linear). */
const int8_t *ngpt_weights_q8_at(const ngpt_context *ctx, size_t offset);

/* The 8-bit W of a Linear (weights=q8; q4's lm_head unless lm_head_q4). */
static inline const int8_t *ngpt_weights_q8(const ngpt_context *ctx, int layer, ngpt_linear which)
{
    if (ctx->q8_linear)         /* a model's, in place in its file */
        return ctx->q8_linear[which == NGPT_LINEAR_LM_HEAD ? 0
                                                           : 1 + layer * NGPT_LINEAR_PER_LAYER + which];
    return ctx->plan.q8_w + ngpt_linear_q8_offset(&ctx->cfg, layer, which);
}

/* The 4-bit W of a Linear (weights=q4: the blocks' Linears; lm_head_q4: the lm_head). */
static inline const uint8_t *ngpt_weights_q4(const ngpt_context *ctx, int layer, ngpt_linear which)
{
    return (const uint8_t *)ngpt_weights_q8(ctx, layer, which);
}

#endif
