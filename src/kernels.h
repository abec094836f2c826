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

/* C(i,j) = [C(i,j) +] (sum_k A(i,k) B(k,j) [+ bias[j]])
 *   A(i,k) = a[i*a_rs + k*a_cs], B(k,j) = b[k*b_rs + j*b_cs], C(i,j) = c[i*c_rs + j].
 * The sum is one fmaf chain over k = 0..k-1 from +0.0f; the bias is added
 * after the chain, and with accumulate the result is then added to C. k may
 * be 0 (the chain is +0.0f). c must not alias a or b. */
typedef void (*ngpt_gemm_fn)(int m, int n, int k,
                             const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                             const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs,
                             const float *bias, float *c, ptrdiff_t c_rs, bool accumulate);

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

typedef struct ngpt_kernels {
    const char *name;           /* "scalar", "avx2", "neon" */
    ngpt_gemm_fn gemm;
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
} ngpt_kernels;

/* Initializer of a table made of the reference kernels only. */
#define NGPT_KERNELS_REF_INIT(table_name)                                               \
    {                                                                                    \
        .name = (table_name), .gemm = ngpt_f32_gemm_ref, .rsum = ngpt_f32_rsum_ref,     \
        .layernorm_fwd = ngpt_f32_layernorm_fwd_ref, .softmax = ngpt_f32_softmax_ref,    \
        .xent = ngpt_f32_xent_ref, .attn_scores = ngpt_f32_attn_scores_ref,              \
        .attn_wsum = ngpt_f32_attn_wsum_ref, .gelu_fwd = ngpt_f32_gelu_fwd_ref,          \
        .rope = ngpt_f32_rope_ref, .dropout = ngpt_f32_dropout_ref, .add = ngpt_f32_add_ref \
    }

extern const ngpt_kernels ngpt_kernels_ref;     /* src/ref/table.c */
extern const ngpt_kernels ngpt_kernels_active;  /* chosen at build time */

/* The reference kernels, callable directly (tests compare against them). */
void ngpt_f32_gemm_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                       float *c, ptrdiff_t c_rs, bool accumulate);
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

/* Combines 8 lane partial sums in the canonical tree. */
static inline float ngpt_lanes_combine(const float p[NGPT_LANES])
{
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

#endif
