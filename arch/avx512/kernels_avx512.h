/* kernels_avx512.h — what the AVX-512 kernels (x86-64, built with -mavx512f
 * -mavx512bw -mavx512vl -mavx512dq besides the baseline -mfma) share: their
 * prototypes and the helpers more than one op file uses. Each kernel matches
 * its reference in src/ref/ bit for bit (contract: src/kernels.inc). The
 * build also links arch/avx2/ (compiled with -mavx2 only): a kernel the
 * list's avx512 column marks AVX2 runs its AVX2 form. Only a library whose
 * CPU check passed (src/base/cpu.c, at ngpt_context_init) reaches these. */
#ifndef NGPT_KERNELS_AVX512_H
#define NGPT_KERNELS_AVX512_H

#include <immintrin.h>
#include <sleef.h>

#include "kernels.h"
#include "ref/softmax.h"

/* The prototypes of the kernels the list's avx512 column names: its own
 * (SIMD) and the AVX2 ones it borrows (AVX2). */
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, avx512_flag, ...) \
    NGPT_ISA_PROTO(kernel, avx512, avx512_flag, ret, params)
#include "kernels.inc"

#endif
