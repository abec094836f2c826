/* acts.h — one layer's view of the activations the plan carves (model/acts.c).
 * In infer mode all layers share one set and x_in == x_out == res1 (the
 * residual stream is updated in place), and buffers whose contents are
 * never live at once are one (runtime/plan.h): the attention output and
 * the LayerNorm outputs, qkv and fc1 (GELU in place), post-norm's res2 and
 * the sublayer output; the wiring (model/forward.c) writes each only after
 * the last read of what it replaces. In train mode each layer has its own,
 * kept for backward. */
#ifndef NGPT_MODEL_ACTS_H
#define NGPT_MODEL_ACTS_H

#include "runtime/context.h"

typedef struct ngpt_layer_acts {
    float *x_in;        /* (B,T,C) layer input */
    float *ln1_mean;    /* (B,T) */
    float *ln1_rstd;    /* (B,T) */
    float *qkv;         /* (B,T,3C) q and k after RoPE */
    float *att;         /* (B,H,T,T) pre-dropout probabilities, or NULL */
    float *atty;        /* (B,T,C) attention output, heads merged, before proj */
    float *res1;        /* (B,T,C) x_in + dropout(proj(atty)) (post-norm: ln1's input) */
    float *res2;        /* post-norm only: (B,T,C) ln2's input; else NULL */
    float *ln2_mean;    /* (B,T) */
    float *ln2_rstd;    /* (B,T) */
    float *fc1;         /* (B,T,d_ff) before GELU */
    float *mlp_out;     /* (B,T,C) fc2's output before dropout: plan.branch, or ln_out in
                           pre-norm inference (where the branch is qkv's buffer, still
                           holding fc2's input) */
    float *x_out;       /* (B,T,C) layer output */
} ngpt_layer_acts;

ngpt_layer_acts ngpt_layer_acts_get(const ngpt_context *ctx, int layer);

#endif
