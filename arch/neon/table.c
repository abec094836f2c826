/* table.c — the NEON build's kernel table: vectorised ops point at
 * arch/neon/, the rest at the reference (exact either way).
 *
 * ARMv7: NEON always flushes subnormal inputs and results to zero (there is
 * no FPSCR bit to turn that off for Advanced SIMD), while the scalar VFP the
 * reference runs on keeps them. Every arithmetic kernel here can meet a
 * subnormal (a product of two values below ~1e-19, a near-cancelling sum),
 * so on ARMv7 they are bit-identical only while no operand or result is
 * subnormal. Built with CFLAGS+=-DNGPT_NEON_ARMV7_FTZ they pass every
 * golden test, but test_kernels_wide's subnormal case differs (sumsq, gemm,
 * add): exactness is the contract, so the ARMv7 table keeps the reference
 * unless that is set. AArch64 Advanced SIMD
 * honours FPCR.FZ (off) like the scalar unit: exact everywhere. */
#include "kernels_neon.h"

#if defined(__aarch64__) || defined(NGPT_NEON_ARMV7_FTZ)
#define NEON(op) ngpt_f32_##op##__neon
#define NAME "neon"
#else
#define NEON(op) ngpt_f32_##op##_ref
#define NAME "neon-armv7-ref"
#endif

/* Vector divide and sqrt, SLEEF advsimd: AArch64 only (transcend.c). */
#if defined(__aarch64__)
#define NEON64(op) ngpt_f32_##op##__neon
#else
#define NEON64(op) ngpt_f32_##op##_ref
#endif

const ngpt_kernels ngpt_kernels_active = {
    .name = NAME,
    .gemm = NEON(gemm),
    .pack_w = ngpt_f32_pack_w_ref,
    .gemm_packed = NEON(gemm_packed),
    .rsum = NEON(rsum),
    .layernorm_fwd = NEON(layernorm_fwd),
    .softmax = NEON64(softmax),
    .xent = NEON64(xent),
    .attn_scores = NEON(attn_scores),
    .attn_wsum = NEON(attn_wsum),
    .gelu_fwd = NEON64(gelu_fwd),
    .rope = NEON(rope),
    .dropout = ngpt_f32_dropout_ref,
    .add = NEON(add),
    .xent_bwd = NEON64(xent_bwd),
    .layernorm_bwd = NEON(layernorm_bwd),
    .softmax_bwd = NEON(softmax_bwd),
    .gelu_bwd = NEON64(gelu_bwd),
    .rope_bwd = NEON(rope_bwd),
    .outer_acc = NEON(outer_acc),
    .colsum_acc = NEON(colsum_acc),
    .sumsq = NEON(sumsq),
    .adamw = NEON64(adamw),
};
