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

/* The same three arrays serve all three kernels: n strided rows (keys,
 * values, or dK/dV rows), a vector of n (scores, probabilities, weights) and
 * one of dim (query or output). */
enum { ROWS, VN, VDIM };

static void fill(kc_state *st, double row_passes)
{
    const int n = kc_int(st, 0), dim = kc_int(st, 1);
    kc_rand(st, ROWS, (size_t)n * (size_t)stride(st), 1.0f);
    kc_rand(st, VN, (size_t)n, 1.0f);
    kc_rand(st, VDIM, (size_t)dim, 1.0f);
    st->flops = 2.0 * n * dim;
    st->bytes = 4.0 * (row_passes * n * dim + dim + n);
}

static void read_rows(kc_state *st) { fill(st, 1.0); }    /* scores, wsum */
static void update_rows(kc_state *st) { fill(st, 2.0); }  /* outer_acc */

static void scores_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_scores(st->buf[VN], st->buf[VDIM], st->buf[ROWS], stride(st), kc_int(st, 0), kc_int(st, 1), 0.125f);
}

static void wsum_run(kc_state *st, const ngpt_kernels *t)
{
    t->attn_wsum(st->buf[VDIM], st->buf[VN], st->buf[ROWS], stride(st), kc_int(st, 0), kc_int(st, 1));
}

static void outer_run(kc_state *st, const ngpt_kernels *t)
{
    t->outer_acc(st->buf[ROWS], stride(st), st->buf[VN], st->buf[VDIM], kc_int(st, 0), kc_int(st, 1));
}

const kc_case kc_attn_scores = {"n dim pad", test_shapes, bench_shapes, read_rows, scores_run, NULL};
const kc_case kc_attn_wsum = {"n dim pad", test_shapes, bench_shapes, read_rows, wsum_run, NULL};
const kc_case kc_outer_acc = {"n dim pad", test_shapes, bench_shapes, update_rows, outer_run, NULL};
