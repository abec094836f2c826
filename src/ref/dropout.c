/* dropout.c — reference dropout: the keep mask of element e is word e % 4 of
 * Philox block e / 4 of the key's stream (rng.h), so it depends on neither
 * the thread count nor the vector width. */
#include "../kernels.h"
#include "../base/rng.h"

void ngpt_f32_dropout_ref(float *y, const float *x, size_t n, uint64_t first,
                          const ngpt_dropout_key *key)
{
    const float scale = 1.0f / (1.0f - key->p);
    const uint32_t threshold = ngpt_dropout_threshold(key->p);
    uint32_t w[4];
    uint64_t cached = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t e = first + i;
        if (e / 4 != cached) {
            cached = e / 4;
            ngpt_rng_block(key->seed, key->site, key->step, cached, w);
        }
        y[i] = (w[e % 4] >> 8) >= threshold ? x[i] * scale : 0.0f;
    }
}
