/* attention.c — the cases of attn_scores, attn_wsum and outer_acc. Shape:
 * n dim pad — n keys (rows) of dim floats, row stride dim + pad. */
#include "kcase.h"

static void test_shapes(kc_shapes *out)
{
    static const int rows[] = {1, 3, 6}, cols[] = {2, 8, 10, 34, 66};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++) kc_add_shape(out, rows[r], cols[c], 5);
    /* dozens of keys with dim tails */
    for (int n = 1; n < 70; n += 7)
        for (int dim = 1; dim < 40; dim += 5) kc_add_shape(out, n, dim, 3);
}

/* One query row against T = 256 keys of D = 64 in the qkv rows (3C = 768). */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256, 64, 768 - 64);
}

static ptrdiff_t stride(const kc_state *st) { return kc_int(st, 1) + kc_int(st, 2); }

/* Each of the three streams n rows of dim, and a vector of n and one of dim. */
static void count(kc_state *st, double rows_read_and_written)
{
    const double n = kc_int(st, 0), dim = kc_int(st, 1);
    st->flops = 2.0 * n * dim;
    st->bytes = 4.0 * (rows_read_and_written * n * dim + dim + n);
}

enum { Q, K, S };

static void scores_setup(kc_state *st)
{
    const int n = kc_int(st, 0), dim = kc_int(st, 1);
    kc_rand(st, Q, (size_t)dim, 1.0f);
    kc_rand(st, K, (size_t)n * (size_t)stride(st), 1.0f);
    kc_zeros(st, S, (size_t)n);
    count(st, 1);
}

static void scores_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_scores(st->buf[S], st->buf[Q], st->buf[K], stride(st), kc_int(st, 0), kc_int(st, 1), 0.125f);
}

const kc_case kc_attn_scores = {"n dim pad", test_shapes, bench_shapes, scores_setup, scores_run, NULL};

enum { P, V, O };

static void wsum_setup(kc_state *st)
{
    const int n = kc_int(st, 0), dim = kc_int(st, 1);
    kc_rand(st, P, (size_t)n, 1.0f);
    kc_rand(st, V, (size_t)n * (size_t)stride(st), 1.0f);
    kc_zeros(st, O, (size_t)dim);
    count(st, 1);
}

static void wsum_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_wsum(st->buf[O], st->buf[P], st->buf[V], stride(st), kc_int(st, 0), kc_int(st, 1));
}

const kc_case kc_attn_wsum = {"n dim pad", test_shapes, bench_shapes, wsum_setup, wsum_run, NULL};

enum { OUT, WT, X };

static void outer_setup(kc_state *st)
{
    const int n = kc_int(st, 0), dim = kc_int(st, 1);
    kc_rand(st, OUT, (size_t)n * (size_t)stride(st), 1.0f);
    kc_rand(st, WT, (size_t)n, 1.0f);
    kc_rand(st, X, (size_t)dim, 1.0f);
    count(st, 2);
}

static void outer_run(kc_state *st, const ngpt_kernels *t)
{
    t->outer_acc(st->buf[OUT], stride(st), st->buf[WT], st->buf[X], kc_int(st, 0), kc_int(st, 1));
}

const kc_case kc_outer_acc = {"n dim pad", test_shapes, bench_shapes, outer_setup, outer_run, NULL};
