/* cross_entropy.c — the cases of xent and xent_bwd. Shape: n target
 * variant — logits spread over ±60 (past the exp cutoff); variant 1: over
 * ±30 with a NaN at n/2; variant 2 (TINY): subnormal and tiny logits, and
 * the backward's scale so small that its outputs are subnormal. */
#include <math.h>

#include "kcase.h"

enum { NAN_ROW = 1, TINY = 2 };

static void test_shapes(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++)
        for (int t = 0; t < kc_sizes[i]; t += kc_sizes[i] / 3 + 1) kc_add_shape(out, kc_sizes[i], t, 0);
    for (int n = 1; n < 600; n += 37) kc_add_shape(out, n, n / 3, 1), kc_add_shape(out, n, n - 1, 1);
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], kc_sizes[i] / 2, TINY);
}

/* One row of V = 256 logits. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256, 7, 0);
}

enum { LOGITS, OUT };

static float *logits(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    if (kc_int(st, 2) == TINY) return kc_tiny(st, LOGITS, n, 0x1p-80f);
    float *x = kc_rand(st, LOGITS, n, kc_int(st, 2) == NAN_ROW ? 30.0f : 60.0f);
    if (kc_int(st, 2) == NAN_ROW) x[n / 2] = NAN;
    return x;
}

static void xent_setup(kc_state *st)
{
    logits(st);
    kc_zeros(st, OUT, 1);
    st->bytes = 4.0 * (double)kc_size(st, 0);
}

static void xent_run(kc_state *st, const ngpt_kernels *t)
{
    st->buf[OUT][0] = t->xent(st->buf[LOGITS], kc_int(st, 0), kc_int(st, 1));
}

const kc_case kc_xent = {"n target variant", test_shapes, bench_shapes, xent_setup, xent_run, NULL};

static void bwd_setup(kc_state *st)
{
    logits(st);
    kc_zeros(st, OUT, kc_size(st, 0));
    st->bytes = 4.0 * 2.0 * (double)kc_size(st, 0);
}

static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->xent_bwd(st->buf[OUT], st->buf[LOGITS], kc_int(st, 0), kc_int(st, 1), kc_int(st, 2) == TINY ? 0x1p-120f : 0.25f);
}

const kc_case kc_xent_bwd = {"n target variant", test_shapes, bench_shapes, bwd_setup, bwd_run, NULL};
