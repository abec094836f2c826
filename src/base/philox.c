/* philox.c — Philox4x32-10 and the samplers built on it (see rng.h). */
#include <math.h>
#include <sleef.h>

#include "base/rng.h"

void ngpt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) { /* the key is bumped before every round after the first */
            k0 += NGPT_PHILOX_W0;
            k1 += NGPT_PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)NGPT_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)NGPT_PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

void ngpt_rng_block(uint64_t seed, uint32_t stream, uint64_t step, uint64_t group,
                    uint32_t out[4])
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint32_t ctr[4] = {(uint32_t)group, (uint32_t)(group >> 32), stream, (uint32_t)step};
    ngpt_philox4x32_10(ctr, key, out);
}

uint32_t ngpt_rng_u32(uint64_t seed, uint32_t stream, uint64_t step, uint64_t index)
{
    uint32_t w[4];
    ngpt_rng_block(seed, stream, step, index / 4, w);
    return w[index % 4];
}

void ngpt_rng_normal4(const uint32_t w[4], float z[4])
{
    for (int pair = 0; pair < 2; pair++) {
        float u1 = (float)((w[2 * pair] >> 8) + 1u) * 0x1p-24f;
        float u2 = (float)(w[2 * pair + 1] >> 8) * 0x1p-24f;
        float r = sqrtf(-2.0f * Sleef_finz_logf1_u10purecfma(u1));
        Sleef_float_2 sc = Sleef_finz_sincosf1_u10purecfma(6.28318530717958647692f * u2);
        z[2 * pair] = r * sc.y;
        z[2 * pair + 1] = r * sc.x;
    }
}

uint32_t ngpt_dropout_threshold(float p)
{
    return (uint32_t)((double)p * 16777216.0);
}

int ngpt_dropout_keep(const ngpt_dropout_key *key, uint64_t e)
{
    uint32_t w = ngpt_rng_u32(key->seed, key->site, key->step, e);
    return (w >> 8) >= ngpt_dropout_threshold(key->p);
}
