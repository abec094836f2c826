/* packed.h — the Linear weights in gemm_packed's layout (gemm.h), kept for
 * the cached passes of generation (packed.c says when they are repacked). */
#ifndef NGPT_PACKED_H
#define NGPT_PACKED_H

#include "internal.h"

/* The Linears of a layer, and the lm_head (tied: tok_emb). */
typedef enum ngpt_linear {
    NGPT_LINEAR_QKV,            /* (3C, C) */
    NGPT_LINEAR_PROJ,           /* (C, C) */
    NGPT_LINEAR_FC1,            /* (d_ff, C) */
    NGPT_LINEAR_FC2,            /* (C, d_ff) */
    NGPT_LINEAR_PER_LAYER,
    NGPT_LINEAR_LM_HEAD = NGPT_LINEAR_PER_LAYER     /* (V, C), layer ignored */
} ngpt_linear;

/* Floats of all the packed weights of cfg; false if that overflows size_t. */
bool ngpt_packed_floats(const ngpt_config *cfg, size_t *floats);

/* The packed W of Linear `which` of `layer` (plan.packed_w, infer mode). */
const float *ngpt_packed_w(const ngpt_context *ctx, int layer, ngpt_linear which);

/* Repacks every Linear from the parameters unless they are known to be
 * unchanged since the last packing (ctx->run.packed_valid). */
void ngpt_packed_refresh(ngpt_context *ctx);

#endif
