/* kernels.h — the kernel ABI: every hot loop of the model is one of these.
 *
 * The scalar reference implementations (src/ref/<op>.c, suffix _ref) are the
 * specification. An ISA (arch/<isa>/<op>.c) implements the same functions and
 * must match the reference bit for bit; its table (arch/<isa>/table.c) is
 * chosen at build time as ngpt_kernels_active, and may point ops it does not
 * speed up at the reference. Determinism rules: DESIGN.md §4.
 */
#ifndef NGPT_KERNELS_H
#define NGPT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm.h"      /* gemm, packed weights, gemm_packed */

/* Reductions over rows use 8 virtual lanes: lane l sums elements i with
 * i % 8 == l in increasing i from +0.0f, then
 * ((p0+p4)+(p2+p6)) + ((p1+p5)+(p3+p7)). */
#define NGPT_LANES 8

/* Softmax/log-sum-exp terms with x - max below this are exactly 0, so no
 * canonical result is subnormal (ARMv7 NEON flushes subnormals to zero). */
#define NGPT_EXP_CUTOFF (-70.0f)

/* Dropout stream position: masks are a pure function of these. */
typedef struct ngpt_dropout_key {
    uint64_t seed;
    uint64_t step;
    uint32_t site;              /* ngpt_rng_site_dropout(layer, kind) */
    float p;                    /* drop probability in (0, 1) */
} ngpt_dropout_key;

/* Canonical 8-lane sum of x[0..n). */
typedef float (*ngpt_rsum_fn)(const float *x, size_t n);

/* LayerNorm over rows of c floats (eps 1e-5, biased variance):
 *   mean = rsum(x)/c; var = (8-lane sum of fmaf(d,d,.) with d = x-mean)/c;
 *   rstd = 1/sqrtf(var + 1e-5f); out = fmaf((x-mean)*rstd, w, b).
 * mean/rstd may be NULL (inference). */
typedef void (*ngpt_layernorm_fwd_fn)(float *out, float *mean, float *rstd, const float *x,
                                      const float *w, const float *b, size_t rows, int c);

/* p[j] = e_j / sum(e) with e_j = expf(s_j - max) (0 below NGPT_EXP_CUTOFF),
 * the sum canonical over j < n. p may alias s. */
typedef void (*ngpt_softmax_fn)(float *p, const float *s, int n);

/* Cross-entropy of one row of n logits against target t:
 *   max + logf(sum_j e_j) - logits[t], e_j as in softmax. */
typedef float (*ngpt_xent_fn)(const float *logits, int n, int target);

/* s[j] = dot(q, k_j) * scale for j < n, k_j = k + j*k_stride; each dot is an
 * fmaf chain over d = 0..dim-1 from +0.0f. */
typedef void (*ngpt_attn_scores_fn)(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                    int n, int dim, float scale);

/* o[d] = sum_j p[j] * v_j[d] for j < n, one fmaf chain over j from +0.0f. */
typedef void (*ngpt_attn_wsum_fn)(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                                  int n, int dim);

/* y = (0.5f*x) * (1.0f + erff(x * 0.70710678f)), exact GELU. y may alias x. */
typedef void (*ngpt_gelu_fwd_fn)(float *y, const float *x, size_t n);

/* Interleaved RoPE on `heads` vectors of dim floats each (contiguous), with
 * the position's tables cos[dim/2], sin[dim/2]:
 *   x'_2i = x_2i*c - x_2i+1*s; x'_2i+1 = x_2i*s + x_2i+1*c (no fma). In place. */
typedef void (*ngpt_rope_fn)(float *x, int heads, int dim, const float *cos_t, const float *sin_t);

/* y[i] = keep(first+i) ? x[i] * (1/(1-p)) : 0 for i < n; the mask of element
 * e is ngpt_dropout_keep(key, e). y may alias x. */
typedef void (*ngpt_dropout_fn)(float *y, const float *x, size_t n, uint64_t first,
                                const ngpt_dropout_key *key);

/* y = a + b elementwise. y may alias a or b. */
typedef void (*ngpt_add_fn)(float *y, const float *a, const float *b, size_t n);

/* ---- training kernels (backward and optimizer) ---- */

/* Cross-entropy backward of one row: with e_j, sum as in xent/softmax,
 *   p_j = e_j / sum;  d_j = (p_j - (j == target ? 1.0f : 0.0f)) * scale.
 * scale is 1/(rows of the mean), e.g. 1.0f/(float)(B*T). */
typedef void (*ngpt_xent_bwd_fn)(float *dlogits, const float *logits, int n, int target,
                                 float scale);

/* LayerNorm backward over rows of c floats, with mean/rstd saved by the
 * forward. Per row, with xhat_i = (x_i - mean) * rstd (as in the forward) and
 * g_i = dy_i * w_i:
 *   s1 = 8-lane sum of g_i;  s2 = 8-lane sum of fmaf(g_i, xhat_i, .);
 *   m1 = s1 / c;  m2 = s2 / c;
 *   dx_i = fmaf(rstd, fmaf(-xhat_i, m2, g_i - m1), dx_i)      (accumulates into dx)
 * Weight gradients continue one chain per column over rows in increasing order:
 *   dw_i = fmaf(dy_i, xhat_i, dw_i);  db_i = db_i + dy_i. */
typedef void (*ngpt_layernorm_bwd_fn)(float *dx, float *dw, float *db, const float *dy,
                                      const float *x, const float *mean, const float *rstd,
                                      const float *w, size_t rows, int c);

/* Softmax backward of one row of n probabilities (scores were s = dot*scale):
 *   dot = 8-lane sum of fmaf(p_j, dp_j, .);  ds_j = (p_j * (dp_j - dot)) * scale.
 * ds may alias dp. */
typedef void (*ngpt_softmax_bwd_fn)(float *ds, const float *p, const float *dp, int n,
                                    float scale);

/* dx_i = dy_i * fmaf(x_i, pdf_i, cdf_i) with
 *   cdf_i = 0.5f * (1.0f + erff(x_i * 0.70710678f)),
 *   pdf_i = expf((-0.5f * x_i) * x_i) * 0.39894228f   (exact GELU derivative).
 * dx may alias dy. */
typedef void (*ngpt_gelu_bwd_fn)(float *dx, const float *x, const float *dy, size_t n);

/* Transposed rotation (RoPE backward), in place on `heads` vectors of dim:
 *   g_2i = g'_2i*c + g'_2i+1*s;  g_2i+1 = g'_2i+1*c - g'_2i*s   (no fma). */
typedef void (*ngpt_rope_bwd_fn)(float *g, int heads, int dim, const float *cos_t,
                                 const float *sin_t);

/* Outer-product accumulation: for j < n, d < dim:
 *   out_j[d] = fmaf(w[j], x[d], out_j[d]),  out_j = out + j*out_stride.
 * Called for query rows i in increasing order, this is one chain per element
 * of dK / dV over i. */
typedef void (*ngpt_outer_acc_fn)(float *out, ptrdiff_t out_stride, const float *w,
                                  const float *x, int n, int dim);

/* Column sums continuing the output: for each row r in increasing order,
 * db[j] = db[j] + dy[r*n + j] (bias gradients, one chain per column). */
typedef void (*ngpt_colsum_acc_fn)(float *db, const float *dy, size_t rows, int n);

/* Canonical 8-lane sum of squares: lane l = fmaf(x_i, x_i, lane l). */
typedef float (*ngpt_sumsq_fn)(const float *x, size_t n);

/* Per-step AdamW scalars (float, computed once per step by the optimizer). */
typedef struct ngpt_adamw_coef {
    float gmul;         /* gradient multiplier: clip coefficient / micro-batches */
    float beta1, one_minus_beta1, beta2, one_minus_beta2;
    float step_size;    /* (float)(lr / (1 - beta1^t)), computed in double */
    float bc2_sqrt;     /* (float)sqrt(1 - beta2^t), computed in double */
    float eps;
    float decay;        /* (float)(1 - lr*weight_decay) in double, or 1.0f */
} ngpt_adamw_coef;

/* AdamW (decoupled weight decay, PyTorch's order), per element:
 *   g = grad * gmul
 *   p = p * decay
 *   m = fmaf(beta1, m, one_minus_beta1 * g)
 *   v = fmaf(beta2, v, (one_minus_beta2 * g) * g)
 *   p = fmaf(-step_size, m / (sqrtf(v) / bc2_sqrt + eps), p)   (PyTorch's order) */
typedef void (*ngpt_adamw_fn)(float *p, const float *grad, float *m, float *v, size_t n,
                              const ngpt_adamw_coef *c);

typedef struct ngpt_kernels {
    const char *name;           /* "scalar", "avx2", "neon" */
    ngpt_gemm_fn gemm;
    ngpt_pack_w_fn pack_w;
    ngpt_gemm_packed_fn gemm_packed;
    ngpt_rsum_fn rsum;
    ngpt_layernorm_fwd_fn layernorm_fwd;
    ngpt_softmax_fn softmax;
    ngpt_xent_fn xent;
    ngpt_attn_scores_fn attn_scores;
    ngpt_attn_wsum_fn attn_wsum;
    ngpt_gelu_fwd_fn gelu_fwd;
    ngpt_rope_fn rope;
    ngpt_dropout_fn dropout;
    ngpt_add_fn add;
    /* training */
    ngpt_xent_bwd_fn xent_bwd;
    ngpt_layernorm_bwd_fn layernorm_bwd;
    ngpt_softmax_bwd_fn softmax_bwd;
    ngpt_gelu_bwd_fn gelu_bwd;
    ngpt_rope_bwd_fn rope_bwd;
    ngpt_outer_acc_fn outer_acc;
    ngpt_colsum_acc_fn colsum_acc;
    ngpt_sumsq_fn sumsq;
    ngpt_adamw_fn adamw;
} ngpt_kernels;

/* Initializer of a table made of the reference kernels only. */
#define NGPT_KERNELS_REF_INIT(table_name)                                               \
    {                                                                                    \
        .name = (table_name), .gemm = ngpt_f32_gemm_ref, .pack_w = ngpt_f32_pack_w_ref,         \
        .gemm_packed = ngpt_f32_gemm_packed_ref, .rsum = ngpt_f32_rsum_ref,     \
        .layernorm_fwd = ngpt_f32_layernorm_fwd_ref, .softmax = ngpt_f32_softmax_ref,    \
        .xent = ngpt_f32_xent_ref, .attn_scores = ngpt_f32_attn_scores_ref,              \
        .attn_wsum = ngpt_f32_attn_wsum_ref, .gelu_fwd = ngpt_f32_gelu_fwd_ref,          \
        .rope = ngpt_f32_rope_ref, .dropout = ngpt_f32_dropout_ref, .add = ngpt_f32_add_ref, \
        NGPT_KERNELS_TRAIN_REF_FIELDS                                                    \
    }

/* The training kernels' reference entries (kept apart to ease merging). */
#define NGPT_KERNELS_TRAIN_REF_FIELDS                                                   \
    .xent_bwd = ngpt_f32_xent_bwd_ref, .layernorm_bwd = ngpt_f32_layernorm_bwd_ref,     \
    .softmax_bwd = ngpt_f32_softmax_bwd_ref, .gelu_bwd = ngpt_f32_gelu_bwd_ref,         \
    .rope_bwd = ngpt_f32_rope_bwd_ref, .outer_acc = ngpt_f32_outer_acc_ref,             \
    .colsum_acc = ngpt_f32_colsum_acc_ref, .sumsq = ngpt_f32_sumsq_ref,                 \
    .adamw = ngpt_f32_adamw_ref

extern const ngpt_kernels ngpt_kernels_ref;     /* src/ref/table.c */
extern const ngpt_kernels ngpt_kernels_active;  /* chosen at build time */

/* The reference kernels, callable directly (tests compare against them). */
float ngpt_f32_rsum_ref(const float *x, size_t n);
void ngpt_f32_layernorm_fwd_ref(float *out, float *mean, float *rstd, const float *x,
                                const float *w, const float *b, size_t rows, int c);
void ngpt_f32_softmax_ref(float *p, const float *s, int n);
float ngpt_f32_xent_ref(const float *logits, int n, int target);
void ngpt_f32_attn_scores_ref(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                              int n, int dim, float scale);
void ngpt_f32_attn_wsum_ref(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                            int n, int dim);
void ngpt_f32_gelu_fwd_ref(float *y, const float *x, size_t n);
void ngpt_f32_rope_ref(float *x, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_dropout_ref(float *y, const float *x, size_t n, uint64_t first,
                          const ngpt_dropout_key *key);
void ngpt_f32_add_ref(float *y, const float *a, const float *b, size_t n);
void ngpt_f32_xent_bwd_ref(float *dlogits, const float *logits, int n, int target, float scale);
void ngpt_f32_layernorm_bwd_ref(float *dx, float *dw, float *db, const float *dy, const float *x,
                                const float *mean, const float *rstd, const float *w,
                                size_t rows, int c);
void ngpt_f32_softmax_bwd_ref(float *ds, const float *p, const float *dp, int n, float scale);
void ngpt_f32_gelu_bwd_ref(float *dx, const float *x, const float *dy, size_t n);
void ngpt_f32_rope_bwd_ref(float *g, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_outer_acc_ref(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                            int n, int dim);
void ngpt_f32_colsum_acc_ref(float *db, const float *dy, size_t rows, int n);
float ngpt_f32_sumsq_ref(const float *x, size_t n);
void ngpt_f32_adamw_ref(float *p, const float *grad, float *m, float *v, size_t n,
                        const ngpt_adamw_coef *c);

/* Combines 8 lane partial sums in the canonical tree. */
static inline float ngpt_lanes_combine(const float p[NGPT_LANES])
{
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

#endif
