/* internal.h — the context, the parameter layout and shared helpers. */
#ifndef NGPT_INTERNAL_H
#define NGPT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "ngpt.h"

#define NGPT_ALIGN 64
#define NGPT_NAME_MAX 64        /* tensor names, NUL included */

/* ---- errors (status.c) */

/* Records a detailed message for ngpt_last_error() and returns status. */
ngpt_status ngpt_fail(ngpt_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Internal invariant: calls the abort hook and returns NGPT_ERR_INTERNAL. */
ngpt_status ngpt_internal_fail(const char *file, int line, const char *what);
#define NGPT_CHECK_INTERNAL(cond) \
    do { if (!(cond)) return ngpt_internal_fail(__FILE__, __LINE__, #cond); } while (0)

/* ---- checked size arithmetic: return false on overflow */

static inline bool ngpt_mul_ok(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *r = a * b;
    return true;
}
static inline bool ngpt_add_ok(size_t a, size_t b, size_t *r)
{
    if (b > SIZE_MAX - a) return false;
    *r = a + b;
    return true;
}

/* ---- parameter layout (floats), in state_dict order:
 * tok_emb (V,C) | blocks[L] | ln_f.weight (C) | ln_f.bias (C)
 * block: ln1.weight (C) ln1.bias (C) attn.qkv.weight (3C,C) attn.proj.weight (C,C)
 *        ln2.weight (C) ln2.bias (C) mlp.fc1.weight (d_ff,C) mlp.fc1.bias (d_ff)
 *        mlp.fc2.weight (C,d_ff) mlp.fc2.bias (C)
 * The same layout is used for gradients and AdamW moments. */
typedef struct ngpt_layout {
    size_t tok_emb, blocks, block_stride, lnf_w, lnf_b, total;
    /* offsets inside one block */
    size_t ln1_w, ln1_b, qkv_w, proj_w, ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
} ngpt_layout;

/* Fills the layout; false if the count overflows size_t. */
bool ngpt_layout_compute(const ngpt_config *cfg, ngpt_layout *lay);

static inline float *ngpt_block_ptr(const ngpt_layout *lay, float *base, int layer, size_t field)
{
    return base + lay->blocks + (size_t)layer * lay->block_stride + field;
}

/* Tensor table entries (names + shapes), in state_dict order. */
int32_t ngpt_layout_tensor_count(const ngpt_config *cfg);
/* Entry i: name into buf[NGPT_NAME_MAX], shape, offset, count. */
void ngpt_layout_tensor(const ngpt_config *cfg, const ngpt_layout *lay, int32_t i,
                        char name[NGPT_NAME_MAX], ngpt_tensor_info *info);

/* ---- activations of one layer (pointers into the arena). In infer mode all
 * layers share one set and x_in == x_out (the residual stream is updated in
 * place); in train mode each layer has its own, kept for backward. */
typedef struct ngpt_layer_acts {
    float *x_in;        /* (B,T,C) layer input */
    float *ln1_mean;    /* (B,T) */
    float *ln1_rstd;    /* (B,T) */
    float *qkv;         /* (B,T,3C) q and k after RoPE */
    float *att;         /* (B,H,T,T) pre-dropout probabilities, or NULL */
    float *atty;        /* (B,T,C) attention output, heads merged, before proj */
    float *res1;        /* (B,T,C) x_in + dropout(proj(atty)) */
    float *ln2_mean;    /* (B,T) */
    float *ln2_rstd;    /* (B,T) */
    float *fc1;         /* (B,T,d_ff) before GELU */
    float *x_out;       /* (B,T,C) layer output */
} ngpt_layer_acts;

/* ---- the arena plan: one walker both sizes (base NULL) and carves. */
typedef struct ngpt_plan {
    size_t bytes;               /* total, including alignment slack */
    /* tensor table */
    ngpt_tensor_info *tensors;  /* (n_tensors) */
    char *tensor_names;         /* (n_tensors, NGPT_NAME_MAX) */
    /* model state */
    float *params;              /* (P) */
    float *grads;               /* (P) train */
    float *adam_m;              /* (P) train */
    float *adam_v;              /* (P) train */
    float *rope_cos;            /* (T, D/2) */
    float *rope_sin;            /* (T, D/2) */
    /* activations; per layer arrays have L copies in train mode, 1 in infer */
    float *x;                   /* train (L+1,B,T,C) layer inputs + output; infer (B,T,C) */
    float *ln_mean, *ln_rstd;   /* (L',2,B,T) ln1 then ln2 */
    float *qkv;                 /* (L',B,T,3C) */
    float *att;                 /* train (L,B,H,T,T); infer: the FULL trace or NULL */
    float *trace_rows;          /* LAST_ROW trace (L,B,H,T), or NULL */
    float *atty;                /* (L',B,T,C) */
    float *res1;                /* (L',B,T,C) */
    float *fc1;                 /* (L',B,T,d_ff) */
    float *lnf;                 /* (B,T,C) ln_f output */
    float *lnf_mean, *lnf_rstd; /* (B,T) */
    float *logits;              /* (B,T,V) */
    float *losses;              /* (B,T) */
    /* scratch shared by the layers */
    float *ln_out;              /* (B,T,C) ln1/ln2 output */
    float *hidden;              /* (B,T,d_ff) GELU output */
    float *branch;              /* (B,T,C) proj/fc2 output before dropout */
    int32_t *batch_buf;         /* (2,B,T) tokens then targets staged by the data loader */
    /* train mode: gradients of activations (backward.c); the ln outputs and
     * GELU outputs are recomputed into ln_out/hidden instead of being kept,
     * and those two also carry d(attention output) and d(hidden) */
    int32_t *tokens;            /* (B,T) of the last forward */
    int32_t *targets;           /* (B,T) of the last forward */
    float *g_logits;            /* (B,T,V) */
    float *g_res;               /* (B,T,C) residual stream */
    float *g_branch;            /* (B,T,C) sublayer output before dropout */
    float *g_ln;                /* (B,T,C) LayerNorm output */
    float *g_qkv;               /* (B,T,3C) */
    float *thread_rows;         /* (threads, 2, Tctx) probability rows (Tctx = context_len) */
    float *gemm_work;           /* (threads, NGPT_GEMM_WORK_FLOATS) gemm packing space (gemm.h) */
    /* generation (infer mode only; see generate.c, sampler.c, beam.c) */
    float *kv_k, *kv_v;         /* (L, B, Tctx, C) keys after RoPE / values, per sequence slot */
    int32_t *kv_len;            /* (B) tokens cached per slot */
    int32_t *kv_tokens;         /* (B, Tctx) the tokens each slot's cache holds, in order */
    float *kv_trace;            /* (L, B, H, Tctx) last new token's probabilities, or NULL */
    float *kv_tmp;              /* (Tctx, C) one slot-layer block: beam reordering */
    float *samp_z;              /* (V) sampler working logits */
    float *samp_p;              /* (V) sampler probabilities in sorted order */
    int32_t *samp_idx;          /* (V) token ids sorted by logit (desc, ties by id) */
    int32_t *samp_tmp;          /* (V) merge-sort buffer / repetition marks */
    float *beam_score;          /* (B) summed log-probabilities of the live beams */
    int32_t *beam_parent;       /* (B) slot each new beam continues */
    int32_t *beam_tok;          /* (B) token each new beam appends */
    int32_t *beam_work;         /* (4, B) slot permutation work, finished reasons */
    struct ngpt_beam_cand *beam_cand; /* (2B) best candidates of one step */
    int32_t *beam_fin_tok;      /* (B, Tctx) finished hypotheses' generated tokens */
    int32_t *beam_fin_len;      /* (B) */
    float *beam_fin_score;      /* (B) length-penalised scores */
} ngpt_plan;

/* Sizes (base == NULL) or carves (base 64-aligned) the whole arena, starting
 * with the context struct itself. */
ngpt_status ngpt_plan_walk(const ngpt_config *cfg, const ngpt_shape *shape, void *base,
                           ngpt_plan *plan);

struct ngpt_context {
    ngpt_config cfg;
    ngpt_shape shape;           /* seq resolved (never 0) */
    ngpt_layout lay;
    ngpt_plan plan;
    const ngpt_kernels *k;
    void *owned;                /* the internal allocation, or NULL */
    int32_t n_tensors;
    /* dropout */
    bool dropout_on;
    uint64_t dropout_seed, dropout_step;
    /* last forward */
    int32_t last_batch, last_seq;
    bool has_forward;
    /* training (backward.c, optim.c) */
    bool has_targets;           /* the last forward had targets (train mode) */
    int32_t n_backward;         /* backward passes accumulated since zero_grads */
    uint64_t optim_steps;       /* AdamW steps taken (t of the bias correction) */
    bool last_cached;           /* the last pass was prefill/decode (trace in kv_trace) */
    int32_t last_slot0;         /* its first KV slot */
};

/* One beam-search candidate: continue beam `beam` with token `tok`. */
typedef struct ngpt_beam_cand {
    float score;                /* beam score + log p(tok) */
    float z;                    /* the token's logit (tie-break: width 1 == greedy) */
    int32_t beam, tok;
} ngpt_beam_cand;

/* One pass of the model over nseq sequences of len new tokens each (rows
 * r = s*len + i). Full forward: positions 0..len-1, keys/values from the
 * pass's own qkv. Cached (generation): sequence s is KV slot slot0+s; its new
 * tokens sit at positions kv_len[slot]..+len-1, their keys (after RoPE) and
 * values are appended to the cache and attention reads the cache. Both use
 * the same wiring and kernel chains, so the logits are bit-identical. */
typedef struct ngpt_pass {
    const int32_t *tokens;      /* (nseq, len), already validated */
    int32_t nseq, len;
    bool cached;
    int32_t slot0;              /* cached: first KV slot */
} ngpt_pass;

/* Runs the model (forward.c); logits land in plan.logits (nseq, len, V). */
void ngpt_model_pass(ngpt_context *ctx, const ngpt_pass *pass);

/* Copies KV slot src into dst (cache.c; no checks). */
void ngpt_cache_copy_slot(ngpt_context *ctx, int32_t dst, int32_t src);

ngpt_layer_acts ngpt_layer_acts_get(const ngpt_context *ctx, int layer);

/* RoPE tables for positions 0..T-1 (context.c). */
void ngpt_rope_tables(const ngpt_config *cfg, float *cos_t, float *sin_t);

#endif
