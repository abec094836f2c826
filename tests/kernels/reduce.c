/* reduce.c — the cases of rsum, sumsq and colsum_acc. rsum and sumsq have a
 * definition: the canonical 8 lanes written out (kernels.h). Shapes:
 *   rsum: n;  sumsq: n tiny — tiny = 1: squares are subnormal;
 *   colsum_acc: rows n. */
#include <math.h>

#include "kcase.h"

static void sum_tests(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i]);
    kc_add_shape(out, 1000), kc_add_shape(out, 4099);
}

static void sumsq_tests(kc_shapes *out)
{
    sum_tests(out);
    for (int n = 1; n < 300; n += 23) kc_add_shape(out, n, 1);
}

/* A LayerNorm row of C = 256, and the gradient norm over W_1 (C * d_ff). */
static void sum_bench(kc_shapes *out)
{
    kc_add_shape(out, 256), kc_add_shape(out, 256 * 1024);
}

enum { X, OUT };

static void sum_setup(kc_state *st)
{
    kc_rand(st, X, kc_size(st, 0), kc_int(st, 1) ? 1.5e-19f : 8.0f);
    kc_zeros(st, OUT, 1);
    st->bytes = 4.0 * (double)kc_size(st, 0);
}

static void rsum_run(kc_state *st, const ngpt_kernels *t)
{
    st->buf[OUT][0] = t->rsum(st->buf[X], kc_size(st, 0));
}

static void sumsq_run(kc_state *st, const ngpt_kernels *t)
{
    st->buf[OUT][0] = t->sumsq(st->buf[X], kc_size(st, 0));
}

/* Lane l takes the elements i with i % 8 == l, in increasing i from +0.0f. */
static float canonical(const float lane[8])
{
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

static void rsum_definition(kc_state *st)
{
    float lane[8] = {0};
    for (size_t i = 0; i < kc_size(st, 0); i++) lane[i % 8] = lane[i % 8] + st->buf[X][i];
    st->buf[OUT][0] = canonical(lane);
}

static void sumsq_definition(kc_state *st)
{
    float lane[8] = {0};
    for (size_t i = 0; i < kc_size(st, 0); i++) lane[i % 8] = fmaf(st->buf[X][i], st->buf[X][i], lane[i % 8]);
    st->buf[OUT][0] = canonical(lane);
}

const kc_case kc_rsum = {"n", sum_tests, sum_bench, sum_setup, rsum_run, rsum_definition};
const kc_case kc_sumsq = {"n tiny", sumsq_tests, sum_bench, sum_setup, sumsq_run, sumsq_definition};

static void colsum_tests(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, 1, kc_sizes[i]);
    for (int rows = 1; rows < 70; rows += 7)
        for (int n = 4; n < 43; n += 5) kc_add_shape(out, rows, n);
}

/* The bias gradient of the MLP's first layer: T = 256 rows of d_ff = 1024. */
static void colsum_bench(kc_shapes *out)
{
    kc_add_shape(out, 256, 1024);
}

enum { DB, DY };

static void colsum_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), n = kc_size(st, 1);
    kc_rand(st, DB, n, 1.0f), kc_rand(st, DY, rows * n, 8.0f);
    st->bytes = 4.0 * ((double)rows * n + 2.0 * n);
}

static void colsum_run(kc_state *st, const ngpt_kernels *t)
{
    t->colsum_acc(st->buf[DB], st->buf[DY], kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_colsum_acc = {"rows n", colsum_tests, colsum_bench, colsum_setup, colsum_run, NULL};
