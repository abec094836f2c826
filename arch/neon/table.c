/* table.c — the NEON build's kernel table, from the list's neon column:
 * arch/neon/<op>.c where it says SIMD (and A64 on AArch64), the reference
 * where it says REF.
 *
 * ARMv7: NEON always flushes subnormal inputs and results to zero (there is
 * no FPSCR bit to turn that off for Advanced SIMD), while the scalar VFP the
 * reference runs on keeps them. Every arithmetic kernel here can meet a
 * subnormal (a product of two values below ~1e-19, a near-cancelling sum),
 * so on ARMv7 they are bit-identical only while no operand or result is
 * subnormal. Built with CFLAGS+=-DNGPT_NEON_ARMV7_FTZ they pass every
 * golden test, but the differential test's subnormal shapes differ (sumsq,
 * gemm, add): exactness is the contract, so the ARMv7 table keeps the
 * reference unless that is set. AArch64 Advanced SIMD honours FPCR.FZ (off)
 * like the scalar unit: exact everywhere. A64 kernels need AArch64 (vector
 * divide and sqrt, SLEEF's advsimd functions). */
#include "kernels_neon.h"

#if defined(__aarch64__)
#define NEON_SIMD SIMD
#define NEON_A64 SIMD
#define NAME "neon"
#elif defined(NGPT_NEON_ARMV7_FTZ)
#define NEON_SIMD SIMD
#define NEON_A64 REF
#define NAME "neon"
#else
#define NEON_SIMD REF
#define NEON_A64 REF
#define NAME "neon-armv7-ref"
#endif
#define NEON_REF REF

const ngpt_kernels ngpt_kernels_active = {
    .name = NAME,
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, ...) \
    NGPT_ISA_ENTRY(kernel, neon, NEON_##neon_flag)
#include "kernels.inc"
};
