/* acts.h — the activations as the wiring sees them (model/acts.c): one
 * layer's view, the buffers the layers share, and where a shared buffer
 * changes hands.
 *
 * The plan (runtime/plan.c) carves the memory; this file decides which
 * buffer of the wiring lives where. In train mode each layer has its own,
 * kept for backward. In infer mode all layers share one set, x_in == x_out
 * == res1 (the residual stream is updated in place), and buffers whose
 * contents are never live at once are one (acts.c says which); the wiring
 * (model/forward.c) writes each only after the last read of what it
 * replaces, and calls ngpt_acts_handover before, so that a debug build can
 * prove it. */
#ifndef NGPT_MODEL_ACTS_H
#define NGPT_MODEL_ACTS_H

#include "runtime/context.h"

typedef struct ngpt_layer_acts {
    float *x_in;        /* (B,T,C) layer input */
    float *ln1_mean;    /* (B,T) */
    float *ln1_rstd;    /* (B,T) */
    float *qkv;         /* (B,T,3C) q and k after RoPE */
    float *qk_x;        /* qk_norm: q's (B T H, D) then k's (B T KV, D) before it */
    float *qk_rstd;     /* qk_norm, train: (B T H) then (B T KV) */
    float *att;         /* (B,H,T,T) pre-dropout probabilities, or NULL */
    float *atty;        /* (B,T,C) attention output, heads merged, before proj */
    float *branch;      /* (B,T,C) proj's output before dropout */
    float *res1;        /* (B,T,C) x_in + dropout(proj(atty)) (post-norm: ln1's input) */
    float *res2;        /* post-norm only: (B,T,C) ln2's input; else NULL */
    float *ln2_mean;    /* (B,T) */
    float *ln2_rstd;    /* (B,T) */
    float *ln_out;      /* (B,T,C) the LayerNorms' outputs (shared by the layers) */
    float *fc1;         /* (B,T,d_ff) before GELU */
    float *hidden;      /* (B,T,d_ff) GELU(fc1), fc2's input (shared by the layers) */
    float *mlp_out;     /* (B,T,C) fc2's output before dropout */
    float *x_out;       /* (B,T,C) layer output */
    /* norm=sandwich: the post norms' rstd [and mean] (B,T) each, and their
     * outputs (B,T,C): post_attn_norm's, then post_mlp_norm's */
    float *pa_mean, *pa_rstd, *pm_mean, *pm_rstd;
    float *pa_out, *pm_out;
} ngpt_layer_acts;

ngpt_layer_acts ngpt_layer_acts_get(const ngpt_context *ctx, int layer);

/* The buffers of a pass outside the layers: ln_f's output (B,T,C), and the
 * embedding's position rows (B,T,C, absolute positions). */
float *ngpt_acts_lnf(const ngpt_context *ctx);
float *ngpt_acts_positions(const ngpt_context *ctx);

/* The n floats at buf are handed to their next user, which writes them
 * before it reads them: what they held is dead. Nothing, unless the library
 * is built with NGPT_POISON_SHARED (make SANITIZE=1, or POISON=1): then they
 * are filled with NaN, so that a buffer shared by two values that are live
 * at once, or read before it is written, changes the results the tests
 * check. */
#ifdef NGPT_POISON_SHARED
void ngpt_acts_handover(float *buf, size_t n);
#else
static inline void ngpt_acts_handover(float *buf, size_t n)
{
    (void)buf, (void)n;
}
#endif

#endif
