/* dropout.c — AVX2 dropout, bit-identical to the reference: the keep mask is
 * the same Philox4x32-10 words (integer arithmetic, exact by construction),
 * computed for 8 blocks at once (lane = block, 32-bit multiply-high/low from
 * two _mm256_mul_epu32), then applied as in the reference:
 * (w >> 8) >= threshold ? x * scale : 0, with a compare mask. Constants as in
 * rng.h. NEON has no dropout kernel yet (the list's neon column says REF). */
#include <immintrin.h>

#include "kernels_avx2.h"
#include "rng.h"

/* (hi, lo) of the 32x32 -> 64-bit products of 8 lanes by m. */
static inline void mulhilo8(__m256i c, __m256i m, __m256i *hi, __m256i *lo)
{
    const __m256i pe = _mm256_mul_epu32(c, m);                          /* lanes 0,2,4,6 */
    const __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);  /* lanes 1,3,5,7 */
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

/* Words w[word][b] of blocks group0 + b, b < 8, of the key's stream. */
static void philox8(const ngpt_dropout_key *key, uint64_t group0, uint32_t w[4][8])
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
    _mm256_storeu_si256((__m256i *)w[0], c0);
    _mm256_storeu_si256((__m256i *)w[1], c1);
    _mm256_storeu_si256((__m256i *)w[2], c2);
    _mm256_storeu_si256((__m256i *)w[3], c3);
}

void ngpt_f32_dropout__avx2(float *y, const float *x, size_t n, uint64_t first,
                            const ngpt_dropout_key *key)
{
    /* The head up to a block boundary and the tail (< 32) run the reference. */
    size_t i = (size_t)((4 - first % 4) % 4);
    if (i > n || ngpt_dropout_threshold(key->p) > (1u << 24)) i = n;   /* p >= 1: no mask */
    ngpt_f32_dropout_ref(y, x, i, first, key);
    const float scale = 1.0f / (1.0f - key->p);
    const uint32_t threshold = ngpt_dropout_threshold(key->p);
    /* keep <=> (w >> 8) > threshold - 1, a signed compare: both sides are in
     * [-1, 2^24]. A dropped element is +0.0f, a kept one x * scale. */
    const __m256i thr1 = _mm256_set1_epi32((int)threshold - 1);
    const __m256 vscale = _mm256_set1_ps(scale);
    uint32_t w[4][8], words[32];
    for (; i + 32 <= n; i += 32) {
        philox8(key, (first + i) / 4, w);
        for (int e = 0; e < 32; e++) words[e] = w[e % 4][e / 4];
        for (int e = 0; e < 32; e += 8) {
            const __m256i r = _mm256_srli_epi32(_mm256_loadu_si256((const __m256i *)(words + e)), 8);
            const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(r, thr1));
            const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i + e), vscale);
            _mm256_storeu_ps(y + i + e, _mm256_and_ps(keep, v));
        }
    }
    ngpt_f32_dropout_ref(y + i, x + i, n - i, first + i, key);
}
