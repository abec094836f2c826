/* kernels_avx2.h — the AVX2+FMA kernels (x86-64, -mavx2 -mfma). Each matches
 * its reference in src/ref/ bit for bit (contract: src/kernels.h). */
#ifndef NGPT_KERNELS_AVX2_H
#define NGPT_KERNELS_AVX2_H

#include "kernels.h"

void ngpt_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate);

#endif
