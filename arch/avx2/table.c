/* table.c — the AVX2 build's kernel table, from the list's avx2 column:
 * arch/avx2/<op>.c where it says SIMD, the reference where it says REF. */
#include "kernels_avx2.h"

const ngpt_kernels ngpt_kernels_active = {
    .name = "avx2",
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, ...) NGPT_ISA_ENTRY(kernel, avx2, avx2_flag)
#include "kernels.inc"
};
