/* adamw.c — the adamw case. Shape: n tiny — with tiny = 1 the gradients
 * are tiny (subnormal squares: the second moment of a rarely-seen
 * parameter) and the moments subnormal or tiny. */
#include <math.h>

#include "kcase.h"

static void test_shapes(kc_shapes *out)
{
    static const int more[] = {6, 12, 24, 30, 48, 60, 102, 198, 204, 396};
    for (int i = 0; i < kc_nsizes; i++) kc_add_shape(out, kc_sizes[i]), kc_add_shape(out, kc_sizes[i], 1);
    for (int i = 0; i < 10; i++) kc_add_shape(out, more[i]);
}

/* W_1 of the default model: C * d_ff = 256 * 1024. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256 * 1024);
}

enum { P, G, M, V };

static void setup(kc_state *st)
{
    const size_t n = kc_size(st, 0);
    kc_rand(st, P, n, 1.0f);
    const bool tiny = kc_int(st, 1);
    if (tiny)
        kc_tiny(st, G, n, 0x1p-63f);
    else
        kc_rand(st, G, n, 1.0f);
    const float *m = tiny ? kc_tiny(st, M, n, 0x1p-120f) : kc_rand(st, M, n, 0.1f);
    float *v = kc_zeros(st, V, n);
    for (size_t i = 0; i < n; i++) v[i] = fabsf(m[i]) * (tiny ? 0x1p-20f : 0.01f);
    st->bytes = 4.0 * 7.0 * (double)n;
}

static void run(kc_state *st, const ngpt_kernels *t)
{
    static const ngpt_adamw_coef coef = {.gmul = 0.5f, .beta1 = 0.9f, .one_minus_beta1 = 0.1f,
                                         .beta2 = 0.95f, .one_minus_beta2 = 0.05f, .step_size = 1e-3f,
                                         .bc2_sqrt = 0.3f, .eps = 1e-8f, .decay = 0.9999f};
    t->adamw(st->buf[P], st->buf[G], st->buf[M], st->buf[V], kc_size(st, 0), &coef);
}

const kc_case kc_adamw = {"n tiny", test_shapes, bench_shapes, setup, run, NULL};
