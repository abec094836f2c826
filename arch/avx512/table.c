/* table.c — the AVX-512 build's kernel table, from the list's avx512 column:
 * arch/avx512/<op>.c where it says SIMD, arch/avx2/<op>.c where it says
 * AVX2, the reference where it says REF. */
#include "kernels_avx512.h"

const ngpt_kernels ngpt_kernels_active = {
    .name = "avx512",
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, avx512_flag, ...) \
    NGPT_ISA_ENTRY(kernel, avx512, avx512_flag)
#include "kernels.inc"
};
