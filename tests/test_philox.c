/* test_philox.c — Philox4x32-10 against Random123's known-answer vectors,
 * and the samplers built on it. */
#include <math.h>

#include "base/rng.h"
#include "test.h"

static void kat(void)
{
    /* Random123 tests/kat_vectors: philox4x32 10 CTR[4] KEY[2] EXPECTED[4] */
    static const uint32_t v[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        ngpt_philox4x32_10(v[i], v[i] + 4, out);
        for (int w = 0; w < 4; w++)
            CHECK(out[w] == v[i][6 + w], "kat %d word %d: %08x want %08x", i, w, out[w], v[i][6 + w]);
    }
}

static void streams(void)
{
    /* The counter layout of rng.h: word index%4 of block index/4. */
    uint32_t w[4];
    ngpt_rng_block(7, NGPT_STREAM_DATA, 3, 5, w);
    for (int j = 0; j < 4; j++) CHECK(ngpt_rng_u32(7, NGPT_STREAM_DATA, 3, 20 + j) == w[j], "word %d", j);
    CHECK(ngpt_rng_u32(7, NGPT_STREAM_DATA, 3, 20) != ngpt_rng_u32(7, NGPT_STREAM_SAMPLE, 3, 20),
          "streams must differ");
    CHECK(ngpt_rng_u32(7, NGPT_STREAM_DATA, 3, 20) != ngpt_rng_u32(8, NGPT_STREAM_DATA, 3, 20),
          "seeds must differ");
    CHECK(ngpt_rng_u32(7, NGPT_STREAM_DATA, 3, 20) != ngpt_rng_u32(7, NGPT_STREAM_DATA, 4, 20),
          "steps must differ");
}

static void normal_moments(void)
{
    /* 2^18 samples: mean within 5 sigma (0.01) of 0, variance within 0.02 of 1. */
    const int n = 1 << 18;
    double s = 0, s2 = 0;
    float lo = 0, hi = 0;
    for (int g = 0; g < n / 4; g++) {
        uint32_t w[4];
        float z[4];
        ngpt_rng_block(42, NGPT_STREAM_INIT, 0, (uint64_t)g, w);
        ngpt_rng_normal4(w, z);
        for (int j = 0; j < 4; j++) {
            s += z[j], s2 += (double)z[j] * z[j];
            lo = z[j] < lo ? z[j] : lo, hi = z[j] > hi ? z[j] : hi;
        }
    }
    double mean = s / n, var = s2 / n - mean * mean;
    CHECK(fabs(mean) < 0.01, "mean %g", mean);
    CHECK(fabs(var - 1.0) < 0.02, "variance %g", var);
    CHECK(isfinite(lo) && isfinite(hi) && lo < -4 && hi > 4, "range [%g, %g]", lo, hi);
    /* The extreme inputs stay finite: u1 = 2^-24 (smallest) and u1 = 1. */
    uint32_t w0[4] = {0, 0, 0xffffffffu, 0};
    float z[4];
    ngpt_rng_normal4(w0, z);
    for (int j = 0; j < 4; j++) CHECK(isfinite(z[j]), "z[%d] = %g", j, z[j]);
    CHECK(z[2] == 0.0f, "u1 = 1 gives radius 0, got %g", z[2]);
}

static void dropout_rate(void)
{
    ngpt_dropout_key key = {42, 1, ngpt_rng_site_dropout(0, NGPT_SITE_MLP_OUT), 0.25f};
    int kept = 0, n = 100000;
    for (int e = 0; e < n; e++) kept += ngpt_dropout_keep(&key, (uint64_t)e);
    CHECK(fabs(kept / (double)n - 0.75) < 0.01, "kept fraction %g", kept / (double)n);
    CHECK(ngpt_dropout_threshold(0.0f) == 0, "p=0 keeps everything");
}

int main(void)
{
    kat();
    streams();
    normal_moments();
    dropout_rate();
    return test_summary("test_philox");
}
