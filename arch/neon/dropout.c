/* dropout.c — NEON dropout, bit-identical to the reference: the keep mask is
 * the same Philox4x32-10 words (integer arithmetic, exact by construction),
 * computed for 4 blocks at once (lane = block, the 32x32 -> 64-bit products
 * from vmull_u32), then applied as in the reference:
 * (w >> 8) >= threshold ? x * scale : +0.0f, with a compare mask. Constants
 * as in rng.h. Same shape as arch/avx2/dropout.c, 4 blocks (16 elements) a
 * step where that has 8 (32). ARMv7: 16 elements whose products flushed (a
 * subnormal x) are recomputed by the reference before they are stored
 * (kernels_neon.h, "the flush check"). */
#include <arm_neon.h>

#include "kernels_neon.h"
#include "base/rng.h"

/* (hi, lo) of the 32x32 -> 64-bit products of 4 lanes by m. */
static inline void mulhilo4(uint32x4_t c, uint32_t m, uint32x4_t *hi, uint32x4_t *lo)
{
    const uint32x2_t mv = vdup_n_u32(m);
    const uint64x2_t p01 = vmull_u32(vget_low_u32(c), mv), p23 = vmull_u32(vget_high_u32(c), mv);
    /* little-endian: each 64-bit product is (lo, hi) as two 32-bit lanes */
    const uint32x4x2_t u = vuzpq_u32(vreinterpretq_u32_u64(p01), vreinterpretq_u32_u64(p23));
    *lo = u.val[0];
    *hi = u.val[1];
}

/* The 16 words of blocks group0 .. group0+3 of the key's stream, in element
 * order: words[4*b + i] = word i of block group0 + b. */
static void philox4(const ngpt_dropout_key *key, uint64_t group0, uint32_t words[16])
{
    uint32_t lo32[4], hi32[4];
    for (int b = 0; b < 4; b++) {
        const uint64_t g = group0 + (uint64_t)b;
        lo32[b] = (uint32_t)g, hi32[b] = (uint32_t)(g >> 32);
    }
    uint32x4x4_t c = {{vld1q_u32(lo32), vld1q_u32(hi32), vdupq_n_u32(key->site),
                       vdupq_n_u32((uint32_t)key->step)}};
    uint32_t k0 = (uint32_t)key->seed, k1 = (uint32_t)(key->seed >> 32);
    for (int round = 0; round < 10; round++) {
        if (round > 0) k0 += NGPT_PHILOX_W0, k1 += NGPT_PHILOX_W1;
        uint32x4_t hi0, lo0, hi1, lo1;
        mulhilo4(c.val[0], NGPT_PHILOX_M0, &hi0, &lo0);
        mulhilo4(c.val[2], NGPT_PHILOX_M1, &hi1, &lo1);
        c.val[0] = veorq_u32(veorq_u32(hi1, c.val[1]), vdupq_n_u32(k0));
        c.val[1] = lo1;
        c.val[2] = veorq_u32(veorq_u32(hi0, c.val[3]), vdupq_n_u32(k1));
        c.val[3] = lo0;
    }
    vst4q_u32(words, c);    /* interleaves the 4 word vectors: block by block */
}

void ngpt_f32_dropout__neon(float *y, const float *x, size_t n, uint64_t first,
                            const ngpt_dropout_key *key)
{
    neon_flags_clear();
    /* The head up to a block boundary and the tail (< 16) run the reference. */
    size_t i = (size_t)((4 - first % 4) % 4);
    if (i > n || ngpt_dropout_threshold(key->p) > (1u << 24)) i = n;   /* p >= 1: no mask */
    ngpt_f32_dropout_ref(y, x, i, first, key);
    const float32x4_t scale = vdupq_n_f32(1.0f / (1.0f - key->p));
    const uint32x4_t threshold = vdupq_n_u32(ngpt_dropout_threshold(key->p));
    uint32_t words[16];
    for (; i + 16 <= n; i += 16) {
        philox4(key, (first + i) / 4, words);
        float32x4_t r[4];
        for (int q = 0; q < 4; q++) {
            /* a dropped element is +0.0f, a kept one x * scale */
            const uint32x4_t keep = vcgeq_u32(vshrq_n_u32(vld1q_u32(words + 4 * q), 8), threshold);
            const float32x4_t v = vmulq_f32(vld1q_f32(x + i + 4 * q), scale);
            r[q] = vreinterpretq_f32_u32(vandq_u32(keep, vreinterpretq_u32_f32(v)));
        }
        if (neon_flushed(r[0], r[1], r[2], r[3])) {
            ngpt_f32_dropout_ref(y + i, x + i, 16, first + i, key);
            neon_flags_clear();
            continue;
        }
        neon_store16(y + i, r[0], r[1], r[2], r[3]);
    }
    ngpt_f32_dropout_ref(y + i, x + i, n - i, first + i, key);
}
