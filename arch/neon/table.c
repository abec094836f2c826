/* table.c — the NEON build's kernel table, from the list's neon column:
 * arch/neon/<op>.c where it says SIMD, the reference where it says REF.
 * One table for AArch64 and ARMv7 (NEON-VFPv4): ARMv7's Advanced SIMD
 * flushes subnormals, and its kernels recompute the blocks that flushed on
 * the VFP unit, so both targets give the reference's bits
 * (kernels_neon.h, "the flush check"). */
#include "kernels_neon.h"

const ngpt_kernels ngpt_kernels_active = {
    .name = "neon",
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, ...) \
    NGPT_ISA_ENTRY(kernel, neon, neon_flag)
#include "kernels.inc"
};
