/* reduce.c — the cases of rsum, sumsq and colsum_acc. rsum and sumsq have a
 * definition: the canonical 8 lanes written out (kernels.h). Shapes:
 *   rsum, sumsq: n tiny — tiny = 1: subnormal elements and sums near FLT_MIN
 *     (rsum), subnormal squares (sumsq);
 *   colsum_acc: rows n pad tiny (rows are n + pad floats apart, as when threads
 *     split the columns; tiny = 1: subnormal elements and sums). */
#include <math.h>

#include "kcase.h"

static void sum_tests(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i]);
    kc_add_shape(out, 1000), kc_add_shape(out, 4099);
    for (int n = 1; n < 300; n += 23) kc_add_shape(out, n, 1);
}

/* A LayerNorm row of C = 256, and the gradient norm over W_1 (C * d_ff). */
static void sum_bench(kc_shapes *out)
{
    kc_add_shape(out, 256), kc_add_shape(out, 256 * 1024);
}

enum { X, OUT };

static void setup_tiny(kc_state *st, float tiny_scale)
{
    if (kc_int(st, 1))
        kc_tiny(st, X, kc_size(st, 0), tiny_scale);
    else
        kc_rand(st, X, kc_size(st, 0), 8.0f);
    kc_zeros(st, OUT, 1);
    st->bytes = 4.0 * (double)kc_size(st, 0);
}

static void rsum_setup(kc_state *st) { setup_tiny(st, 0x1p-125f); }
static void sumsq_setup(kc_state *st) { setup_tiny(st, 0x1p-63f); }

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

const kc_case kc_rsum = {"n tiny", sum_tests, sum_bench, rsum_setup, rsum_run, rsum_definition};
const kc_case kc_sumsq = {"n tiny", sum_tests, sum_bench, sumsq_setup, sumsq_run, sumsq_definition};

static void colsum_tests(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, 1, kc_sizes[i], 0);
    for (int rows = 1; rows < 70; rows += 7)
        for (int n = 4; n < 43; n += 5)
            kc_add_shape(out, rows, n, 0), kc_add_shape(out, rows, n, 13), kc_add_shape(out, rows, n, 13, 1);
}

/* The bias gradient of the MLP's first layer: T = 256 rows of d_ff = 1024. */
static void colsum_bench(kc_shapes *out)
{
    kc_add_shape(out, 256, 1024, 0);
}

enum { DB, DY };

static void colsum_setup(kc_state *st)
{
    const size_t rows = kc_size(st, 0), n = kc_size(st, 1), ld = n + kc_size(st, 2);
    if (kc_int(st, 3))
        kc_tiny(st, DB, n, 0x1p-125f), kc_tiny(st, DY, rows * ld, 0x1p-125f);
    else
        kc_rand(st, DB, n, 1.0f), kc_rand(st, DY, rows * ld, 8.0f);
    st->bytes = 4.0 * ((double)rows * n + 2.0 * n);
}

static void colsum_run(kc_state *st, const ngpt_kernels *t)
{
    t->colsum_acc(st->buf[DB], st->buf[DY], (ptrdiff_t)(kc_size(st, 1) + kc_size(st, 2)),
                  kc_size(st, 0), kc_int(st, 1));
}

const kc_case kc_colsum_acc = {"rows n pad tiny", colsum_tests, colsum_bench, colsum_setup, colsum_run,
                               NULL};
