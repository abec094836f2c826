/* kernels_neon.h — the NEON kernels (AArch64 and ARMv7 NEON-VFPv4); each
 * matches its reference in src/ref/ bit for bit (spec: src/kernels.h). */
#ifndef NGPT_KERNELS_NEON_H
#define NGPT_KERNELS_NEON_H

#include "../../src/kernels.h"

void ngpt_f32_gemm__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate, float *work);
void ngpt_f32_gemm_packed__neon(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                                const float *wp, const float *bias, float *c, ptrdiff_t c_rs);
void ngpt_f32_attn_scores__neon(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale);
void ngpt_f32_attn_wsum__neon(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                              int n, int dim);
void ngpt_f32_add__neon(float *y, const float *a, const float *b, size_t n);
void ngpt_f32_rope__neon(float *x, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_rope_bwd__neon(float *g, int heads, int dim, const float *cos_t,
                             const float *sin_t);
void ngpt_f32_outer_acc__neon(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                              int n, int dim);
void ngpt_f32_colsum_acc__neon(float *db, const float *dy, size_t rows, int n);
float ngpt_f32_rsum__neon(const float *x, size_t n);
float ngpt_f32_sumsq__neon(const float *x, size_t n);
void ngpt_f32_softmax_bwd__neon(float *ds, const float *p, const float *dp, int n, float scale);

void ngpt_f32_layernorm_fwd__neon(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c);
void ngpt_f32_layernorm_bwd__neon(float *dx, float *dw, float *db, const float *dy,
                                  const float *x, const float *mean, const float *rstd,
                                  const float *w, size_t rows, int c);

/* AArch64 only (vector divide, SLEEF advsimd): transcend.c */
void ngpt_f32_gelu_fwd__neon(float *y, const float *x, size_t n);
void ngpt_f32_gelu_bwd__neon(float *dx, const float *x, const float *dy, size_t n);
void ngpt_f32_softmax__neon(float *p, const float *s, int n);
float ngpt_f32_xent__neon(const float *logits, int n, int target);
void ngpt_f32_xent_bwd__neon(float *dlogits, const float *logits, int n, int target, float scale);
void ngpt_f32_adamw__neon(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c);

#endif
