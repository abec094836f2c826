/* gemm.c — the gemm case. Shape: m n k layout, with layout bits
 *   BIAS  add a bias;  ACC  accumulate into C;
 *   W     B stored as a Linear's weight (n, k): b_rs = 1, b_cs = k
 *         (else B's rows (k, n): b_rs = n, b_cs = 1);
 *   AT    A stored transposed (k, m): a_rs = 1, a_cs = m (the weight gradient);
 *   TINY  values whose products are subnormal (ARMv7 NEON flushes them).
 * C has 3 columns of padding (c_rs = n + 3) that must stay untouched. The
 * definition is the one-chain-per-output triple loop. */
#include <math.h>

#include "kcase.h"

enum { BIAS = 1, ACC = 2, W = 4, AT = 8, TINY = 16 };
enum { A, B, BIASV, C };

static void test_shapes(kc_shapes *out)
{
    /* across tile edges (4x4, 6x16, 4x8, 8 columns), every layout */
    static const int ms[] = {1, 3, 4, 5, 13}, ns[] = {1, 7, 8, 9, 33}, ks[] = {0, 1, 5, 17, 64};
    for (int im = 0; im < 5; im++)
        for (int in = 0; in < 5; in++)
            for (int ik = 0; ik < 5; ik++)
                for (int layout = 0; layout < 16; layout++) kc_add_shape(out, ms[im], ns[in], ks[ik], layout);
    /* many-row tiles with leftovers, full and partial panels, k past the
     * packing limits (4096 floats: arch/neon/gemm.c) */
    static const int wide[][3] = {{37, 45, 300}, {5, 17, 5000}, {64, 72, 128}, {1, 100, 257}, {9, 8, 4100}};
    for (int s = 0; s < 5; s++)
        for (int l = 0; l < 8; l++)
            kc_add_shape(out, wide[s][0], wide[s][1], wide[s][2], (l & 1 ? W : 0) | (l & 2 ? BIAS | ACC : 0) | (l & 4 ? AT : 0));
    for (int n = 1; n < 300; n += 23) kc_add_shape(out, 1, n, 1, ACC | TINY);
}

/* The default model (C = 256, d_ff = 1024) on one sequence of T = 256. */
static void bench_shapes(kc_shapes *out)
{
    kc_add_shape(out, 256, 768, 256, W);          /* x W_qkv^T */
    kc_add_shape(out, 256, 1024, 256, W | BIAS);  /* MLP up */
    kc_add_shape(out, 256, 256, 1024, W | BIAS);  /* MLP down */
    kc_add_shape(out, 256, 256, 768, 0);          /* backward: dx = dqkv W_qkv */
    kc_add_shape(out, 768, 256, 256, AT | ACC);   /* backward: dW_qkv += dqkv^T x */
    kc_add_shape(out, 1, 768, 256, W);            /* one decode step */
}

typedef struct gemm_args {
    int m, n, k, layout;
    ptrdiff_t a_rs, a_cs, b_rs, b_cs;
} gemm_args;

static gemm_args args(const kc_state *st)
{
    gemm_args g = {(int)st->shape.v[0], (int)st->shape.v[1], (int)st->shape.v[2], (int)st->shape.v[3], 0, 0, 0, 0};
    g.a_rs = g.layout & AT ? 1 : g.k, g.a_cs = g.layout & AT ? g.m : 1;
    g.b_rs = g.layout & W ? 1 : g.n, g.b_cs = g.layout & W ? g.k : 1;
    return g;
}

static void setup(kc_state *st)
{
    const gemm_args g = args(st);
    const bool tiny = g.layout & TINY;
    kc_rand(st, A, (size_t)g.m * g.k, tiny ? 1.5e-19f : 1.0f);
    kc_rand(st, B, (size_t)g.k * g.n, tiny ? 1e-19f : 1.0f);
    kc_rand(st, BIASV, (size_t)g.n, 0.5f);
    kc_rand(st, C, (size_t)g.m * (g.n + 3), tiny ? 1e-38f : 1.0f);
    st->flops = 2.0 * g.m * g.n * g.k;
    st->bytes = 4.0 * ((double)g.m * g.k + (double)g.k * g.n + (double)g.m * g.n * (g.layout & ACC ? 2 : 1));
}

static void run(kc_state *st, const ngpt_kernels *t)
{
    const gemm_args g = args(st);
    t->gemm(g.m, g.n, g.k, st->buf[A], g.a_rs, g.a_cs, st->buf[B], g.b_rs, g.b_cs,
            g.layout & BIAS ? st->buf[BIASV] : NULL, st->buf[C], g.n + 3, g.layout & ACC);
}

static void definition(kc_state *st)
{
    const gemm_args g = args(st);
    const float *a = st->buf[A], *b = st->buf[B], *bias = st->buf[BIASV];
    float *c = st->buf[C];
    for (int i = 0; i < g.m; i++)
        for (int j = 0; j < g.n; j++) {
            float s = 0.0f;
            for (int kk = 0; kk < g.k; kk++) s = fmaf(a[i * g.a_rs + kk * g.a_cs], b[kk * g.b_rs + j * g.b_cs], s);
            if (g.layout & BIAS) s = s + bias[j];
            float *cij = c + (ptrdiff_t)i * (g.n + 3) + j;
            *cij = g.layout & ACC ? *cij + s : s;
        }
}

const kc_case kc_gemm = {"m n k layout", test_shapes, bench_shapes, setup, run, definition};
