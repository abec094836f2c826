/* gelu.c — the cases of gelu_fwd and gelu_bwd. Shape: n inplace — with
 * inplace = 1 the output overwrites x (fwd) or dy (bwd). */
#include "kcase.h"

static void test_shapes(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i], 0), kc_add_shape(out, kc_sizes[i], 1);
}

/* The MLP hidden layer of one sequence: T * d_ff = 256 * 1024. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256 * 1024, 0);
}

enum { X, DY, Y };

static void setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    kc_rand(st, X, n, 8.0f), kc_rand(st, DY, n, 2.0f), kc_zeros(st, Y, n);
}

static void fwd_setup(kc_state *st)
{
    setup(st);
    st->bytes = 4.0 * 2.0 * (double)kc_size(st, 0);
}

static void fwd_run(kc_state *st, const ngpt_kernels *t)
{
    float *x = st->buf[X];
    t->gelu_fwd(kc_int(st, 1) ? x : st->buf[Y], x, kc_size(st, 0));
}

const kc_case kc_gelu_fwd = {"n inplace", test_shapes, bench_shapes, fwd_setup, fwd_run, NULL};

static void bwd_setup(kc_state *st)
{
    setup(st);
    st->bytes = 4.0 * 3.0 * (double)kc_size(st, 0);
}

static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    float *dy = st->buf[DY];
    t->gelu_bwd(kc_int(st, 1) ? dy : st->buf[Y], st->buf[X], dy, kc_size(st, 0));
}

const kc_case kc_gelu_bwd = {"n inplace", test_shapes, bench_shapes, bwd_setup, bwd_run, NULL};
