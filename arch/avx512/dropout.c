/* dropout.c — AVX-512 dropout, bit-identical to the reference: the keep mask
 * is the same Philox4x32-10 words (integer arithmetic, exact by
 * construction), computed for 16 blocks at once (lane = block, 32-bit
 * multiply-high/low from two _mm512_mul_epu32), then applied as in the
 * reference: (w >> 8) >= threshold ? x * scale : 0, with a compare mask and
 * a zero-masked multiply. Constants as in rng.h. Same shape as
 * arch/avx2/dropout.c, 16 blocks (64 elements) where that has 8 (32). */
#include <immintrin.h>

#include "kernels_avx512.h"
#include "base/rng.h"
#include "../dropout.h"

/* (hi, lo) of the 32x32 -> 64-bit products of 16 lanes by m. */
static inline void mulhilo16(__m512i c, __m512i m, __m512i *hi, __m512i *lo)
{
    const __m512i pe = _mm512_mul_epu32(c, m);                          /* even lanes */
    const __m512i po = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), m);  /* odd lanes */
    *lo = _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
    *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(pe, 32), po);
}

/* Words of the 64 elements of blocks group0 .. group0 + 15 of the key's
 * stream, in element order: out[v] lane l is word (16v + l) % 4 of block
 * group0 + (16v + l) / 4. */
static inline __attribute__((always_inline)) void
philox16(const ngpt_dropout_key *key, uint64_t group0, __m512i out[4])
{
    uint32_t lo32[16], hi32[16];
    for (int b = 0; b < 16; b++) {
        const uint64_t g = group0 + (uint64_t)b;
        lo32[b] = (uint32_t)g, hi32[b] = (uint32_t)(g >> 32);
    }
    __m512i c0 = _mm512_loadu_si512(lo32), c1 = _mm512_loadu_si512(hi32);
    __m512i c2 = _mm512_set1_epi32((int)key->site), c3 = _mm512_set1_epi32((int)(uint32_t)key->step);
    uint32_t k0 = (uint32_t)key->seed, k1 = (uint32_t)(key->seed >> 32);
    const __m512i m0 = _mm512_set1_epi32((int)NGPT_PHILOX_M0), m1 = _mm512_set1_epi32((int)NGPT_PHILOX_M1);
    for (int round = 0; round < 10; round++) {
        if (round > 0) k0 += NGPT_PHILOX_W0, k1 += NGPT_PHILOX_W1;
        __m512i hi0, lo0, hi1, lo1;
        mulhilo16(c0, m0, &hi0, &lo0);
        mulhilo16(c2, m1, &hi1, &lo1);
        c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32((int)k0));
        c1 = lo1;
        c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32((int)k1));
        c3 = lo0;
    }
    /* c_w lane b = word w of block b. Within each 128-bit quarter q:
     * blocks 4q..4q+3 (b0..b3), then the quarters transposed so that out[v]
     * holds blocks 4v..4v+3. */
    const __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
    const __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
    const __m512i b0 = _mm512_unpacklo_epi64(t0, t2), b1 = _mm512_unpackhi_epi64(t0, t2);
    const __m512i b2 = _mm512_unpacklo_epi64(t1, t3), b3 = _mm512_unpackhi_epi64(t1, t3);
    const __m512i u0 = _mm512_shuffle_i32x4(b0, b1, 0x44), u1 = _mm512_shuffle_i32x4(b0, b1, 0xEE);
    const __m512i u2 = _mm512_shuffle_i32x4(b2, b3, 0x44), u3 = _mm512_shuffle_i32x4(b2, b3, 0xEE);
    out[0] = _mm512_shuffle_i32x4(u0, u2, 0x88);
    out[1] = _mm512_shuffle_i32x4(u0, u2, 0xDD);
    out[2] = _mm512_shuffle_i32x4(u1, u3, 0x88);
    out[3] = _mm512_shuffle_i32x4(u1, u3, 0xDD);
}

void ngpt_f32_dropout__avx512(float *y, const float *x, size_t n, uint64_t first,
                              const ngpt_dropout_key *key)
{
    size_t i = ngpt_dropout_head(y, x, n, first, key);
    const float scale = 1.0f / (1.0f - key->p);
    const uint32_t threshold = ngpt_dropout_threshold(key->p);
    /* keep <=> (w >> 8) > threshold - 1, a signed compare: both sides are in
     * [-1, 2^24]. A dropped element is +0.0f, a kept one x * scale. */
    const __m512i thr1 = _mm512_set1_epi32((int)threshold - 1);
    const __m512 vscale = _mm512_set1_ps(scale);
    __m512i w[4];
    for (; i + 64 <= n; i += 64) {
        philox16(key, (first + i) / 4, w);
        for (int v = 0; v < 4; v++) {
            const __mmask16 keep = _mm512_cmpgt_epi32_mask(_mm512_srli_epi32(w[v], 8), thr1);
            _mm512_storeu_ps(y + i + 16 * v, _mm512_maskz_mul_ps(keep, _mm512_loadu_ps(x + i + 16 * v), vscale));
        }
    }
    if (i < n) {   /* the tail (< 64): its blocks at once too, applied as the reference does */
        uint32_t words[64];
        philox16(key, (first + i) / 4, w);
        for (int v = 0; v < 4; v++) _mm512_storeu_si512(words + 16 * v, w[v]);
        ngpt_dropout_apply(y + i, x + i, n - i, words, threshold, scale);
    }
}
