/* rope.c — the cases of rope, rope_bwd and the halves' rope_halves,
 * rope_halves_bwd. Shape: heads dim tiny — heads
 * vectors of dim (even) floats rotated in place by unit cos/sin pairs; with
 * tiny = 1 the vectors hold subnormal and tiny values (subnormal products). */
#include "kcase.h"

static void test_shapes(kc_shapes *out)
{
    static const int heads[] = {1, 3, 6}, dims[] = {2, 8, 10, 34, 48, 64, 66};
    for (int h = 0; h < 3; h++)
        for (int d = 0; d < 7; d++) kc_add_shape(out, heads[h], dims[d]), kc_add_shape(out, heads[h], dims[d], 1);
}

/* One position's H = 4 heads of D = 64, as the model calls it. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 4, 64);
}

enum { X, COS, SIN };

static void setup(kc_state *st)
{
    const size_t heads = kc_size(st, 0), dim = kc_size(st, 1);
    if (kc_int(st, 2))
        kc_tiny(st, X, heads * dim, 0x1p-120f);
    else
        kc_rand(st, X, heads * dim, 3.0f);
    kc_rotations(st, COS, dim / 2);
    st->bytes = 4.0 * (2.0 * (double)heads * dim + (double)dim);
}

static void fwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->rope(st->buf[X], kc_int(st, 0), kc_int(st, 1), st->buf[COS], st->buf[SIN]);
}

static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->rope_bwd(st->buf[X], kc_int(st, 0), kc_int(st, 1), st->buf[COS], st->buf[SIN]);
}

const kc_case kc_rope = {"heads dim tiny", test_shapes, bench_shapes, setup, fwd_run, NULL};
const kc_case kc_rope_bwd = {"heads dim tiny", test_shapes, bench_shapes, setup, bwd_run, NULL};

static void halves_run(kc_state *st, const ngpt_kernels *t)
{
    t->rope_halves(st->buf[X], kc_int(st, 0), kc_int(st, 1), st->buf[COS], st->buf[SIN]);
}

static void halves_bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->rope_halves_bwd(st->buf[X], kc_int(st, 0), kc_int(st, 1), st->buf[COS], st->buf[SIN]);
}

const kc_case kc_rope_halves = {"heads dim tiny", test_shapes, bench_shapes, setup, halves_run, NULL};
const kc_case kc_rope_halves_bwd = {"heads dim tiny", test_shapes, bench_shapes, setup,
                                    halves_bwd_run, NULL};
