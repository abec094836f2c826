/* kernels_avx2.h — the AVX2+FMA kernels (x86-64, -mavx2 -mfma). Each matches
 * its reference in src/ref/ bit for bit (contract: src/kernels.h). */
#ifndef NGPT_KERNELS_AVX2_H
#define NGPT_KERNELS_AVX2_H

#include "kernels.h"

void ngpt_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate, float *work);
void ngpt_f32_gemm_packed__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                                const float *wp, const float *bias, float *c, ptrdiff_t c_rs);
void ngpt_f32_attn_scores__avx2(float *s, const float *q, const float *k, ptrdiff_t k_stride,
                                int n, int dim, float scale);
void ngpt_f32_attn_wsum__avx2(float *o, const float *p, const float *v, ptrdiff_t v_stride,
                              int n, int dim);
void ngpt_f32_gelu_fwd__avx2(float *y, const float *x, size_t n);
void ngpt_f32_gelu_bwd__avx2(float *dx, const float *x, const float *dy, size_t n);
void ngpt_f32_add__avx2(float *y, const float *a, const float *b, size_t n);
float ngpt_f32_rsum__avx2(const float *x, size_t n);
float ngpt_f32_sumsq__avx2(const float *x, size_t n);
void ngpt_f32_softmax__avx2(float *p, const float *s, int n);
float ngpt_f32_xent__avx2(const float *logits, int n, int target);
void ngpt_f32_xent_bwd__avx2(float *dlogits, const float *logits, int n, int target, float scale);
void ngpt_f32_softmax_bwd__avx2(float *ds, const float *p, const float *dp, int n, float scale);
void ngpt_f32_layernorm_fwd__avx2(float *out, float *mean, float *rstd, const float *x,
                                  const float *w, const float *b, size_t rows, int c);
void ngpt_f32_layernorm_bwd__avx2(float *dx, float *dw, float *db, const float *dy,
                                  const float *x, const float *mean, const float *rstd,
                                  const float *w, size_t rows, int c);
void ngpt_f32_adamw__avx2(float *p, const float *grad, float *m, float *v, size_t n,
                          const ngpt_adamw_coef *c);
void ngpt_f32_outer_acc__avx2(float *out, ptrdiff_t out_stride, const float *w, const float *x,
                              int n, int dim);
void ngpt_f32_colsum_acc__avx2(float *db, const float *dy, size_t rows, int n);
void ngpt_f32_rope__avx2(float *x, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_rope_bwd__avx2(float *g, int heads, int dim, const float *cos_t, const float *sin_t);
void ngpt_f32_dropout__avx2(float *y, const float *x, size_t n, uint64_t first,
                            const ngpt_dropout_key *key);

#endif
