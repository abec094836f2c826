/* add.c — the add case. Shape: n variant, with variant bits
 *   INPLACE  y overwrites a;
 *   TINY     subnormal operands and sums (ARMv7 NEON flushes them). */
#include "kcase.h"

enum { INPLACE = 1, TINY = 2 };

static void test_shapes(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], 0), kc_add_shape(out, kc_sizes[i], INPLACE);
    for (int n = 1; n < 300; n += 23) kc_add_shape(out, n, TINY);
}

/* A residual connection of one sequence: T * C = 256 * 256. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256 * 256, INPLACE);
}

enum { A, B, Y };

static void setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    const bool tiny = kc_int(st, 1) & TINY;
    kc_rand(st, A, n, tiny ? 1e-38f : 8.0f), kc_rand(st, B, n, tiny ? 1e-38f : 2.0f), kc_zeros(st, Y, n);
    st->bytes = 4.0 * 3.0 * (double)n;
}

static void run(kc_state *st, const ngpt_kernels *t)
{
    float *a = st->buf[A];
    t->add(kc_int(st, 1) & INPLACE ? a : st->buf[Y], a, st->buf[B], kc_size(st, 0));
}

const kc_case kc_add = {"n variant", test_shapes, bench_shapes, setup, run, NULL};
