/* kernels_neon.h — what the NEON kernels (AArch64, and ARMv7 NEON-VFPv4)
 * share: their prototypes, the per-target building blocks (SLEEF's vector
 * functions, divide and sqrt, the flush check) and the helpers more than one
 * op file uses. Each kernel matches its reference in src/ref/ bit for bit on
 * both targets (contract: src/kernels.inc). */
#ifndef NGPT_KERNELS_NEON_H
#define NGPT_KERNELS_NEON_H

#include <math.h>
#include <arm_neon.h>
#include <sleef.h>

#include "kernels.h"

/* The prototypes of the kernels the list's neon column marks SIMD. */
#define NGPT_KERNEL(kernel, op, ret, params, avx2_flag, neon_flag, ...) \
    NGPT_ISA_PROTO(kernel, neon, neon_flag, ret, params)
#include "kernels.inc"

/* ---- exactness on ARMv7: the flush check ----
 *
 * The canonical math keeps IEEE subnormals (docs/DETERMINISM.md). AArch64's
 * Advanced SIMD follows FPCR like the scalar unit, and the library's
 * floating-point mode has FZ off (src/base/fpmode.h): its results are IEEE's.
 * ARMv7's Advanced SIMD always flushes: a subnormal input is read as zero
 * and a result that is tiny before rounding becomes zero; every other result
 * is IEEE's. Each flush sets a sticky flag in FPSCR: IDC (an input was
 * flushed) or UFC (a result was).
 *
 * So an ARMv7 kernel computes a block of outputs in registers, asks
 * neon_flushed() before it stores them, and a block that flushed is
 * recomputed by the reference on the VFP unit, which keeps subnormals: the
 * bits are the reference's on every input, subnormal or not. A flag can also
 * be set by an IEEE underflow in scalar code (a tail); then a block is
 * recomputed that did not need it, which costs time, not bits. On AArch64
 * neon_flushed() is false and the checks compile away.
 *
 * neon_flushed(a, b, c, d) takes the block's results as operands, so the
 * compiler computes them before the flag read; its memory clobber keeps the
 * loads of the next block after it and the stores of the last one before.
 * neon_flags_clear() starts each kernel and follows each recomputation. */
#if defined(__aarch64__)
static inline void neon_flags_clear(void) {}
static inline bool neon_flags_set(void) { return false; }
static inline bool neon_flushed(float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    return false;
}
#else
enum { NEON_FPSCR_FLUSH_FLAGS = 0x88 };     /* IDC (bit 7) | UFC (bit 3) */

static inline void neon_flags_clear(void)
{
    uint32_t f;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(f) : : "memory");
    if (f & NEON_FPSCR_FLUSH_FLAGS)
        __asm__ __volatile__("vmsr fpscr, %0" : : "r"(f & ~(uint32_t)NEON_FPSCR_FLUSH_FLAGS) : "memory");
}

static inline bool neon_flushed(float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d)
{
    uint32_t f;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(f) : "w"(a), "w"(b), "w"(c), "w"(d) : "memory");
    return (f & NEON_FPSCR_FLUSH_FLAGS) != 0;
}

/* Whether a flush happened since the last clear, in work already stored
 * (the memory clobber orders the read after those stores). */
static inline bool neon_flags_set(void)
{
    uint32_t f;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(f) : : "memory");
    return (f & NEON_FPSCR_FLUSH_FLAGS) != 0;
}
#endif

/* A point no load moves across (a compiler barrier, no instruction): put
 * after each row of a register tile's step, it keeps gcc's scheduler, which
 * runs before register allocation, from hoisting the next rows' loads of A
 * above this row's fmas, which needs more registers than there are and
 * spills accumulators in the k loop. The out-of-order cores reorder those
 * loads anyway; llvm-mca (make mca) shows the spills it saves. */
#define NEON_ORDER() __asm__ __volatile__("" ::: "memory")

/* A value broadcast to every lane for an fma: AArch64 loads it to one
 * 64-bit register and the fma takes it by lane (LLVM's model of the Apple
 * cores issues a by-lane fma on 3 units and a by-vector one on 2); ARMv7 has
 * no fma by lane and loads it to all four lanes. Either way the fma is
 * acc + v * value, rounded once: fmaf's bits. */
#if defined(__aarch64__)
typedef float32x2_t neon_bcast;
static inline neon_bcast neon_bcast_load(const float *p) { return vld1_dup_f32(p); }
static inline float32x4_t neon_fma_bcast(float32x4_t acc, float32x4_t v, neon_bcast b)
{
    return vfmaq_lane_f32(acc, v, b, 0);
}
#else
typedef float32x4_t neon_bcast;
static inline neon_bcast neon_bcast_load(const float *p) { return vld1q_dup_f32(p); }
static inline float32x4_t neon_fma_bcast(float32x4_t acc, float32x4_t v, neon_bcast b)
{
    return vfmaq_f32(acc, b, v);
}
#endif

/* UNROLL before a loop over a register tile's rows or vectors, which run a
 * known few times: unrolled, the tile stays in registers (gcc needs the
 * pragma; clang unrolls them by itself, and with the pragma keeps some of
 * the arrays on the stack). */
#if defined(__clang__)
#define UNROLL
#else
#define UNROLL _Pragma("GCC unroll 4")
#endif

/* One or two result vectors. */
static inline bool neon_flushed1(float32x4_t a) { return neon_flushed(a, a, a, a); }
static inline bool neon_flushed2(float32x4_t a, float32x4_t b) { return neon_flushed(a, b, a, b); }

/* Stores a block of 16 floats held in four vectors (after its check). */
static inline void neon_store16(float *p, float32x4_t a, float32x4_t b, float32x4_t c,
                                float32x4_t d)
{
    vst1q_f32(p, a);
    vst1q_f32(p + 4, b);
    vst1q_f32(p + 8, c);
    vst1q_f32(p + 12, d);
}

/* ---- per target: SLEEF's vector functions, divide and sqrt ----
 * SLEEF's finz vector functions give the bits of the scalar finz ones the
 * reference calls (AArch64: advsimd; ARMv7: neonvfpv4, exact whenever no
 * flush flag is set). ARMv7 has no vector divide or sqrt: each lane goes
 * through the VFP unit, correctly rounded like the reference. */
#if defined(__aarch64__)
#define neon_expf Sleef_finz_expf4_u10advsimd
#define neon_erff Sleef_finz_erff4_u10advsimd
#define neon_tanhf Sleef_finz_tanhf4_u10advsimd
static inline float32x4_t neon_div(float32x4_t a, float32x4_t b) { return vdivq_f32(a, b); }
static inline float32x4_t neon_sqrt(float32x4_t a) { return vsqrtq_f32(a); }
#else
#define neon_expf Sleef_finz_expf4_u10neonvfpv4
#define neon_erff Sleef_finz_erff4_u10neonvfpv4
#define neon_tanhf Sleef_finz_tanhf4_u10neonvfpv4
/* lane l of a / b and sqrt of lane l on the VFP unit, which works on the
 * lanes in place (s registers are the lanes of q0-q7): no trip through
 * memory. */
#define NEON_LANE_DIV(l) r = vsetq_lane_f32(vgetq_lane_f32(a, l) / vgetq_lane_f32(b, l), r, l)
#define NEON_LANE_SQRT(l) r = vsetq_lane_f32(sqrtf(vgetq_lane_f32(a, l)), r, l)
static inline float32x4_t neon_div(float32x4_t a, float32x4_t b)
{
    float32x4_t r = a;
    NEON_LANE_DIV(0), NEON_LANE_DIV(1), NEON_LANE_DIV(2), NEON_LANE_DIV(3);
    return r;
}
static inline float32x4_t neon_sqrt(float32x4_t a)
{
    float32x4_t r = a;
    NEON_LANE_SQRT(0), NEON_LANE_SQRT(1), NEON_LANE_SQRT(2), NEON_LANE_SQRT(3);
    return r;
}
#endif

#endif
