/* dropout.c — the dropout case. Shape: n first variant, with variant bits
 *   LONG     long rows at large element offsets (the vectorised Philox path),
 *            another key and p = 0.1 (else p = 0.3);
 *   INPLACE  y overwrites x, as the model calls it;
 *   TINY     x holds subnormal and tiny values (x * scale flushes on ARMv7). */
#include "kcase.h"
#include "base/rng.h"

enum { LONG = 1, INPLACE = 2, TINY = 4 };

static void test_shapes(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], 13, 0), kc_add_shape(out, kc_sizes[i], 13, INPLACE);
    static const int64_t lens[] = {1000, 4099}, firsts[] = {0, 12345, (1ll << 32) - 3};
    for (int l = 0; l < 2; l++)
        for (int f = 0; f < 3; f++) kc_add_shape(out, lens[l], firsts[f], LONG), kc_add_shape(out, lens[l], firsts[f], LONG | INPLACE);
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], 13, INPLACE | TINY);
    kc_add_shape(out, 1000, 12345, LONG | INPLACE | TINY);
}

/* The embedding dropout of one sequence: T * C = 256 * 256. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256 * 256, 0, LONG | INPLACE);
}

enum { X, Y };

static void setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    if (kc_int(st, 2) & TINY)
        kc_tiny(st, X, n, 0x1p-125f);
    else
        kc_rand(st, X, n, kc_int(st, 2) & LONG ? 4.0f : 8.0f);
    kc_zeros(st, Y, n);
    st->bytes = 4.0 * 2.0 * (double)n;
}

static void run(kc_state *st, const ngpt_kernels *t)
{
    const bool long_rows = kc_int(st, 2) & LONG;
    const ngpt_dropout_key key = long_rows ? (ngpt_dropout_key){0x123456789ull, 77, ngpt_rng_site_dropout(3, NGPT_SITE_ATTN_PROBS), 0.1f}
                                           : (ngpt_dropout_key){9, 4, ngpt_rng_site_dropout(1, NGPT_SITE_MLP_OUT), 0.3f};
    float *x = st->buf[X];
    t->dropout(kc_int(st, 2) & INPLACE ? x : st->buf[Y], x, kc_size(st, 0), (uint64_t)st->shape.v[1], &key);
}

const kc_case kc_dropout = {"n first variant", test_shapes, bench_shapes, setup, run, NULL};
