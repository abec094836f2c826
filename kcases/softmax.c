/* softmax.c — the cases of softmax and softmax_bwd. Shape: n variant, with
 * variant bits
 *   INPLACE  the output overwrites the input (p = s, ds = dp), as the model calls it;
 *   NAN      (softmax) a NaN at n/2 and a narrower spread;
 *   TINY     subnormal and tiny values: (softmax) scores s - max whose exp
 *            meets subnormals inside SLEEF; (backward) subnormal products.
 * Otherwise the scores spread over ±60, past the exp cutoff. */
#include <math.h>

#include "kcase.h"

enum { INPLACE = 1, NAN_ROW = 2, TINY = 4 };

static void softmax_tests(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], 0), kc_add_shape(out, kc_sizes[i], INPLACE);
    for (int n = 1; n < 600; n += 37) kc_add_shape(out, n, NAN_ROW), kc_add_shape(out, n, NAN_ROW | INPLACE);
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], TINY | INPLACE);
}

/* A row of attention scores at T = 256, in place as in the forward. */
static void softmax_bench(kc_shapes *out)
{
    kc_add_shape(out, 256, INPLACE);
}

enum { S, P };

static void softmax_setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    float *s = kc_int(st, 1) & TINY ? kc_tiny(st, S, n, 0x1p-80f)
                                    : kc_rand(st, S, n, kc_int(st, 1) & NAN_ROW ? 30.0f : 60.0f);
    if (kc_int(st, 1) & NAN_ROW) s[n / 2] = NAN;
    kc_zeros(st, P, n);
    st->bytes = 4.0 * 2.0 * (double)n;
}

static void softmax_run(kc_state *st, const ngpt_kernels *t)
{
    float *s = st->buf[S];
    t->softmax(kc_int(st, 1) & INPLACE ? s : st->buf[P], s, kc_int(st, 0));
}

const kc_case kc_softmax = {"n variant", softmax_tests, softmax_bench, softmax_setup, softmax_run, NULL};

static void bwd_tests(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++)
        kc_add_shape(out, kc_sizes[i], 0), kc_add_shape(out, kc_sizes[i], INPLACE), kc_add_shape(out, kc_sizes[i], TINY | INPLACE);
}

static void bwd_bench(kc_shapes *out)
{
    kc_add_shape(out, 256, INPLACE);
}

enum { PR, DP, DS };

static void bwd_setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    if (kc_int(st, 1) & TINY)
        kc_tiny(st, PR, n, 0x1p-63f), kc_tiny(st, DP, n, 0x1p-63f);
    else
        kc_rand(st, PR, n, 1.5f), kc_rand(st, DP, n, 2.0f);
    kc_zeros(st, DS, n);
    st->bytes = 4.0 * 3.0 * (double)n;
}

static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    float *dp = st->buf[DP];
    t->softmax_bwd(kc_int(st, 1) & INPLACE ? dp : st->buf[DS], st->buf[PR], dp, kc_int(st, 0), 0.3f);
}

const kc_case kc_softmax_bwd = {"n variant", bwd_tests, bwd_bench, bwd_setup, bwd_run, NULL};
