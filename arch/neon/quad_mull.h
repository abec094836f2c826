/* quad_mull.h — int8 products into int16 lanes for q8.c's and q4.c's
 * kernels without the dot product (ARMv8.0, ARMv7): a neon_quad holds 4
 * bytes of a row in every 4-byte lane; neon_mull_lo/hi and neon_mlal_lo/hi
 * multiply the low or high 8 bytes of w by it. On AArch64 the quad fills a
 * q register and the high half is SMULL2/SMLAL2, which read w's high half
 * in place (SMULL needs an EXT or a DUP to move it down first); on ARMv7 it
 * is a d register, as a half of w is (a q one costs spills: ARMv7 has 16 q
 * registers). The products are the same either way. */
#ifndef NGPT_NEON_QUAD_MULL_H
#define NGPT_NEON_QUAD_MULL_H

#include <string.h>
#include <arm_neon.h>

#if defined(__aarch64__)
typedef int8x16_t neon_quad;
static inline neon_quad neon_quad_dup(int32_t q) { return vreinterpretq_s8_s32(vdupq_n_s32(q)); }
static inline int8x8_t neon_quad_lo(neon_quad x) { return vget_low_s8(x); }
static inline int16x8_t neon_mull_hi(int8x16_t w, neon_quad x) { return vmull_high_s8(w, x); }
static inline int16x8_t neon_mlal_hi(int16x8_t a, int8x16_t w, neon_quad x)
{
    return vmlal_high_s8(a, w, x);
}
#else
typedef int8x8_t neon_quad;
static inline neon_quad neon_quad_dup(int32_t q) { return vreinterpret_s8_s32(vdup_n_s32(q)); }
static inline int8x8_t neon_quad_lo(neon_quad x) { return x; }
static inline int16x8_t neon_mull_hi(int8x16_t w, neon_quad x)
{
    return vmull_s8(vget_high_s8(w), x);
}
static inline int16x8_t neon_mlal_hi(int16x8_t a, int8x16_t w, neon_quad x)
{
    return vmlal_s8(a, vget_high_s8(w), x);
}
#endif

/* The 4 bytes at p (any alignment) in every lane. */
static inline neon_quad neon_quad_load(const int8_t *p)
{
    int32_t q;
    memcpy(&q, p, 4);
    return neon_quad_dup(q);
}
static inline int16x8_t neon_mull_lo(int8x16_t w, neon_quad x)
{
    return vmull_s8(vget_low_s8(w), neon_quad_lo(x));
}
static inline int16x8_t neon_mlal_lo(int16x8_t a, int8x16_t w, neon_quad x)
{
    return vmlal_s8(a, vget_low_s8(w), neon_quad_lo(x));
}

#endif
