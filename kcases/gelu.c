/* gelu.c — the cases of gelu_fwd, gelu_fwd_grad, gelu_bwd, the tanh
 * form's gelu_tanh_fwd and gelu_tanh_fwd_grad, and swiglu_fwd, swiglu_bwd
 * (x is the gate, dy the up and, in the backward, dh). Shape: n inplace tiny — with
 * inplace = 1 the output overwrites x (fwd) or dy (bwd; the _grad kernels
 * have no in-place form); with tiny = 1 x mixes subnormal and tiny values
 * (erf and tanh meet subnormals inside SLEEF), values of 11 to 20 (exp of
 * -x^2/2 is subnormal or 0, erf's tail, tanh past the clamp), huge ones
 * (x^3, then x^2, overflow) and normal ones, and dy is tiny. */
#include "kcase.h"

static void test_shapes(kc_shapes *out)
{
    for (int i = 0; i < kc_nsizes; i++)
        kc_add_shape(out, kc_sizes[i], 0), kc_add_shape(out, kc_sizes[i], 1), kc_add_shape(out, kc_sizes[i], 1, 1);
    kc_add_shape(out, 1000, 1, 1);
}

/* The MLP hidden layer of one sequence: T * d_ff = 256 * 1024. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256 * 1024, 0);
}

enum { X, DY, Y, G };

static void setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    if (kc_int(st, 2)) {
        float *x = kc_tiny(st, X, n, 0x1p-50f);
        for (size_t i = 2; i < n; i += 4) x[i] = x[i] * 0x1p50f * 9.0f + (x[i] < 0.0f ? -11.0f : 11.0f);
        for (size_t i = 3; i < n; i += 8) x[i] *= 0x1p52f;
        for (size_t i = 5; i < n; i += 16) x[i] = i % 32 == 5 ? -0x1p45f : 0x1p66f;
        kc_tiny(st, DY, n, 0x1p-63f);
    } else {
        kc_rand(st, X, n, 8.0f), kc_rand(st, DY, n, 2.0f);
    }
    kc_zeros(st, Y, n), kc_zeros(st, G, n);
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

const kc_case kc_gelu_fwd = {"n inplace tiny", test_shapes, bench_shapes, fwd_setup, fwd_run, NULL};

static void fwd_grad_run(kc_state *st, const ngpt_kernels *t)
{
    t->gelu_fwd_grad(st->buf[Y], st->buf[G], st->buf[X], kc_size(st, 0));
}

const kc_case kc_gelu_fwd_grad = {"n inplace tiny", test_shapes, bench_shapes, fwd_setup, fwd_grad_run, NULL};

static void bwd_setup(kc_state *st)
{
    setup(st);
    st->bytes = 4.0 * 3.0 * (double)kc_size(st, 0);
}

/* x serves as the derivative g: tiny x times tiny dy gives subnormal products */
static void bwd_run(kc_state *st, const ngpt_kernels *t)
{
    float *dy = st->buf[DY];
    t->gelu_bwd(kc_int(st, 1) ? dy : st->buf[Y], st->buf[X], dy, kc_size(st, 0));
}

const kc_case kc_gelu_bwd = {"n inplace tiny", test_shapes, bench_shapes, bwd_setup, bwd_run, NULL};

static void tanh_fwd_run(kc_state *st, const ngpt_kernels *t)
{
    float *x = st->buf[X];
    t->gelu_tanh_fwd(kc_int(st, 1) ? x : st->buf[Y], x, kc_size(st, 0));
}

const kc_case kc_gelu_tanh_fwd = {"n inplace tiny", test_shapes, bench_shapes, fwd_setup,
                                  tanh_fwd_run, NULL};

static void tanh_fwd_grad_run(kc_state *st, const ngpt_kernels *t)
{
    t->gelu_tanh_fwd_grad(st->buf[Y], st->buf[G], st->buf[X], kc_size(st, 0));
}

const kc_case kc_gelu_tanh_fwd_grad = {"n inplace tiny", test_shapes, bench_shapes, fwd_setup,
                                       tanh_fwd_grad_run, NULL};

/* SwiGLU: gate x (its tiny set reaches exp's overflow, -x past 88.7, and
 * subnormal exp results), up dy; in place: h over the gate. */
static void swiglu_fwd_run(kc_state *st, const ngpt_kernels *t)
{
    float *g = st->buf[X];
    t->swiglu_fwd(kc_int(st, 1) ? g : st->buf[Y], g, st->buf[DY], kc_size(st, 0));
}

const kc_case kc_swiglu_fwd = {"n inplace tiny", test_shapes, bench_shapes, fwd_setup,
                               swiglu_fwd_run, NULL};

/* dh is the up slot too: the kernel reads them, never writes them */
static void swiglu_bwd_run(kc_state *st, const ngpt_kernels *t)
{
    t->swiglu_bwd(st->buf[Y], st->buf[G], st->buf[DY], st->buf[X], st->buf[DY], kc_size(st, 0));
}

const kc_case kc_swiglu_bwd = {"n inplace tiny", test_shapes, bench_shapes, bwd_setup,
                               swiglu_bwd_run, NULL};
