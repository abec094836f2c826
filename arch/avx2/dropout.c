/* dropout.c — AVX2 dropout, bit-identical to the reference: the keep mask is
 * the same Philox4x32-10 words (integer arithmetic, exact by construction),
 * computed for 8 blocks at once (lane = block, 32-bit multiply-high/low from
 * two _mm256_mul_epu32), then applied as in the reference:
 * (w >> 8) >= threshold ? x * scale : 0, with a compare mask. Constants as in
 * rng.h. Same shape as arch/neon/dropout.c, 8 blocks where that has 4. */
#include <immintrin.h>

#include "kernels_avx2.h"
#include "base/rng.h"
#include "../dropout.h"

/* (hi, lo) of the 32x32 -> 64-bit products of 8 lanes by m. */
static inline void mulhilo8(__m256i c, __m256i m, __m256i *hi, __m256i *lo)
{
    const __m256i pe = _mm256_mul_epu32(c, m);                          /* lanes 0,2,4,6 */
    const __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);  /* lanes 1,3,5,7 */
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

/* Words of the 32 elements of blocks group0 .. group0 + 7 of the key's
 * stream, in element order: out[v] lane l is word (8v + l) % 4 of block
 * group0 + (8v + l) / 4. */
static inline __attribute__((always_inline)) void
philox8(const ngpt_dropout_key *key, uint64_t group0, __m256i out[4])
{
    uint32_t lo32[8], hi32[8];
    for (int b = 0; b < 8; b++) {
        const uint64_t g = group0 + (uint64_t)b;
        lo32[b] = (uint32_t)g, hi32[b] = (uint32_t)(g >> 32);
    }
    __m256i c0 = _mm256_loadu_si256((const __m256i *)lo32);
    __m256i c1 = _mm256_loadu_si256((const __m256i *)hi32);
    __m256i c2 = _mm256_set1_epi32((int)key->site), c3 = _mm256_set1_epi32((int)(uint32_t)key->step);
    uint32_t k0 = (uint32_t)key->seed, k1 = (uint32_t)(key->seed >> 32);
    const __m256i m0 = _mm256_set1_epi32((int)NGPT_PHILOX_M0), m1 = _mm256_set1_epi32((int)NGPT_PHILOX_M1);
    for (int round = 0; round < 10; round++) {
        if (round > 0) k0 += NGPT_PHILOX_W0, k1 += NGPT_PHILOX_W1;
        __m256i hi0, lo0, hi1, lo1;
        mulhilo8(c0, m0, &hi0, &lo0);
        mulhilo8(c2, m1, &hi1, &lo1);
        c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
        c1 = lo1;
        c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
        c3 = lo0;
    }
    /* c_w lane b = word w of block b -> 4x8 transpose to element order */
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i b04 = _mm256_unpacklo_epi64(t0, t2), b15 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i b26 = _mm256_unpacklo_epi64(t1, t3), b37 = _mm256_unpackhi_epi64(t1, t3);
    out[0] = _mm256_permute2x128_si256(b04, b15, 0x20);
    out[1] = _mm256_permute2x128_si256(b26, b37, 0x20);
    out[2] = _mm256_permute2x128_si256(b04, b15, 0x31);
    out[3] = _mm256_permute2x128_si256(b26, b37, 0x31);
}

void ngpt_f32_dropout__avx2(float *y, const float *x, size_t n, uint64_t first,
                            const ngpt_dropout_key *key)
{
    size_t i = ngpt_dropout_head(y, x, n, first, key);
    const float scale = 1.0f / (1.0f - key->p);
    const uint32_t threshold = ngpt_dropout_threshold(key->p);
    /* keep <=> (w >> 8) > threshold - 1, a signed compare: both sides are in
     * [-1, 2^24]. A dropped element is +0.0f, a kept one x * scale. */
    const __m256i thr1 = _mm256_set1_epi32((int)threshold - 1);
    const __m256 vscale = _mm256_set1_ps(scale);
    __m256i w[4];
    for (; i + 32 <= n; i += 32) {
        philox8(key, (first + i) / 4, w);
        for (int v = 0; v < 4; v++) {
            const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_srli_epi32(w[v], 8), thr1));
            const __m256 xs = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * v), vscale);
            _mm256_storeu_ps(y + i + 8 * v, _mm256_and_ps(keep, xs));
        }
    }
    if (i < n) {   /* the tail (< 32): its blocks at once too, applied as the reference does */
        uint32_t words[32];
        philox8(key, (first + i) / 4, w);
        for (int v = 0; v < 4; v++) _mm256_storeu_si256((__m256i *)(words + 8 * v), w[v]);
        ngpt_dropout_apply(y + i, x + i, n - i, words, threshold, scale);
    }
}
