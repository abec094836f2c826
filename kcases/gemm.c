/* gemm.c — the cases of the matrix products: gemm, pack_w, gemm_packed
 * (tests/test_gemm.c goes further: k to 9000, thread splits, NaN/Inf).
 *
 * gemm: shape m n k layout, with layout bits
 *   BIAS  add a bias;  ACC  accumulate into C;
 *   W     B stored as a Linear's weight (n, k): b_rs = 1, b_cs = k
 *         (else B's rows (k, n): b_rs = n, b_cs = 1);
 *   AT    A stored transposed (k, m): a_rs = 1, a_cs = m (the weight gradient);
 *   TINY      values whose products are subnormal (ARMv7 NEON flushes them),
 *             every chain starting with the band product (KC_BAND_A * KC_BAND_B);
 *   ONE_TINY  normal values but one subnormal in A's last row;
 *   ONE_TINY_B  normal values but one subnormal in B's last column (a tile
 *             whose right half flushes and left half does not: ARMv7 runs
 *             the halves one after the other).
 * C has 3 columns of padding (c_rs = n + 3) that must stay untouched. The
 * definition is the one-chain-per-output triple loop (gemm_def.h). */
#include <stdlib.h>

#include "gemm_def.h"
#include "kcase.h"
#include "model_shapes.h"

/* The workspace of a gemm call (not a slot: what a kernel leaves there is
 * not a result). Allocated once, at exactly its size. */
static float *workspace(void)
{
    static float *work;
    if (!work && !(work = malloc(NGPT_GEMM_WORK_BYTES))) abort();
    return work;
}

enum { BIAS = 1, ACC = 2, W = 4, AT = 8, TINY = 16, ONE_TINY = 32, ONE_TINY_B = 64 };
enum { A, B, BIASV, C };

static void test_shapes(kc_shapes *out)
{
    /* across tile edges (4x4, 6x16, 8x32, 4x8, 8 columns), every layout */
    static const int ms[] = {1, 3, 4, 5, 13}, ns[] = {1, 7, 8, 9, 33}, ks[] = {0, 1, 5, 17, 64};
    for (int im = 0; im < 5; im++)
        for (int in = 0; in < 5; in++)
            for (int ik = 0; ik < 5; ik++)
                for (int layout = 0; layout < 16; layout++) kc_add_shape(out, ms[im], ns[in], ks[ik], layout);
    /* many-row tiles with leftovers, full and partial panels, k across the
     * cache blocks (KC = 256: chains continued in C or, accumulating, in the
     * workspace), rows past MC = 144 and columns past NC = 256 */
    static const int wide[][3] = {{37, 45, 300}, {5, 17, 5000}, {64, 72, 128}, {1, 100, 257},
                                  {9, 8, 4100}, {150, 20, 520}, {7, 270, 260},
                                  /* tiles two panels wide, then one full panel */
                                  {16, 48, 300}, {24, 80, 40}};
    for (int s = 0; s < 9; s++)
        for (int l = 0; l < 8; l++)
            kc_add_shape(out, wide[s][0], wide[s][1], wide[s][2], (l & 1 ? W : 0) | (l & 2 ? BIAS | ACC : 0) | (l & 4 ? AT : 0));
    for (int n = 1; n < 300; n += 23) kc_add_shape(out, 1, n, 1, ACC | TINY);
    /* accumulating over more rows than the workspace keeps chains for */
    kc_add_shape(out, NGPT_GEMM_MS + 7, 20, 300, AT | ACC);
    /* subnormals through every path: full and edge tiles, k across a cache
     * block (chains continued in C or in the workspace) */
    static const int tm[] = {1, 3, 6, 13}, tn[] = {8, 16, 33}, tk[] = {1, 6, 40, 300};
    static const int tl[] = {0, W, AT | ACC, W | BIAS | ACC};
    for (int im = 0; im < 4; im++)
        for (int in = 0; in < 3; in++)
            for (int ik = 0; ik < 4; ik++)
                for (int l = 0; l < 4; l++)
                    kc_add_shape(out, tm[im], tn[in], tk[ik], tl[l] | TINY),
                        kc_add_shape(out, tm[im], tn[in], tk[ik], tl[l] | ONE_TINY),
                        kc_add_shape(out, tm[im], tn[in], tk[ik], tl[l] | ONE_TINY_B);
}

/* The default model's training products (model_shapes.h), per Linear:
 * forward x W^T, dX = dY W, dW += dY^T X. */
static void bench_shapes(kc_shapes *out)
{
    for (int l = 0; l < KC_LINEARS; l++) {
        const kc_linear *L = &kc_linears[l];
        if (kc_linear_repeats(l)) continue;
        kc_add_shape(out, KC_TRAIN_ROWS, L->out, L->in, W | (L->bias ? BIAS : 0));
        kc_add_shape(out, KC_TRAIN_ROWS, L->in, L->out, 0);
        kc_add_shape(out, L->out, L->in, KC_TRAIN_ROWS, AT | ACC);
    }
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
    float *a = tiny ? kc_tiny(st, A, (size_t)g.m * g.k, 0x1p-63f) : kc_rand(st, A, (size_t)g.m * g.k, 1.0f);
    float *b = tiny ? kc_tiny(st, B, (size_t)g.k * g.n, 0x1p-63f) : kc_rand(st, B, (size_t)g.k * g.n, 1.0f);
    kc_rand(st, BIASV, (size_t)g.n, 0.5f);
    kc_rand(st, C, (size_t)g.m * (g.n + 3), tiny ? 1e-38f : 1.0f);
    if (tiny && g.k > 0) {
        for (int i = 0; i < g.m; i++) a[i * g.a_rs] = KC_BAND_A;
        for (int j = 0; j < g.n; j++) b[j * g.b_cs] = KC_BAND_B;
    }
    if ((g.layout & ONE_TINY) && g.k > 0) a[(g.m - 1) * g.a_rs + (g.k - 1) * g.a_cs] = 0x1p-140f;
    if ((g.layout & ONE_TINY_B) && g.k > 0) b[(g.k - 1) * g.b_rs + (g.n - 1) * g.b_cs] = 0x1p-140f;
    st->flops = 2.0 * g.m * g.n * g.k;
    st->bytes = 4.0 * ((double)g.m * g.k + (double)g.k * g.n + (double)g.m * g.n * (g.layout & ACC ? 2 : 1));
}

static void run(kc_state *st, const ngpt_kernels *t)
{
    const gemm_args g = args(st);
    t->gemm(g.m, g.n, g.k, st->buf[A], g.a_rs, g.a_cs, st->buf[B], g.b_rs, g.b_cs,
            g.layout & BIAS ? st->buf[BIASV] : NULL, st->buf[C], g.n + 3, g.layout & ACC, workspace());
}

static void definition(kc_state *st)
{
    const gemm_args g = args(st);
    gemm_def(g.m, g.n, g.k, st->buf[A], g.a_rs, g.a_cs, st->buf[B], g.b_rs, g.b_cs,
             g.layout & BIAS ? st->buf[BIASV] : NULL, st->buf[C], g.n + 3, g.layout & ACC);
}

const kc_case kc_gemm = {"m n k layout", test_shapes, bench_shapes, setup, run, definition};

/* ---- pack_w: shape n k (W's rows 3 floats longer than k) */

enum { PW_W, PW_WP };

static void pack_test_shapes(kc_shapes *out)
{
    static const int ns[] = {1, 7, 15, 16, 17, 33, 100}, ks[] = {0, 1, 5, 64};
    for (int in = 0; in < 7; in++)
        for (int ik = 0; ik < 4; ik++) kc_add_shape(out, ns[in], ks[ik]);
}

static void pack_bench_shapes(kc_shapes *out)
{
    for (int l = 0; l < KC_LINEARS; l++)
        if (!kc_linear_repeats(l)) kc_add_shape(out, kc_linears[l].out, kc_linears[l].in);
}

static void pack_setup(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1);
    kc_rand(st, PW_W, (size_t)n * (k + 3), 1.0f);
    kc_rand(st, PW_WP, ngpt_packed_w_floats(n, k), 1.0f);   /* every float is written */
    st->bytes = 8.0 * (double)n * k;
}

static void pack_run(kc_state *st, const ngpt_kernels *t)
{
    t->pack_w(st->buf[PW_WP], st->buf[PW_W], kc_int(st, 0), kc_int(st, 1), kc_int(st, 1) + 3);
}

static void pack_definition(kc_state *st)
{
    pack_w_def(st->buf[PW_WP], st->buf[PW_W], kc_int(st, 0), kc_int(st, 1), kc_int(st, 1) + 3);
}

const kc_case kc_pack_w = {"n k", pack_test_shapes, pack_bench_shapes, pack_setup, pack_run,
                           pack_definition};

/* ---- gemm_packed: shape m n k variant; A's rows k + 2 floats apart, C's
 * n + 3, W (n, k) packed by its definition in the setup; variant bits:
 * GP_HAS_BIAS adds a bias, GP_TINY makes subnormal products, each chain
 * starting with the band product */

enum { GP_HAS_BIAS = 1, GP_TINY = 2 };

enum { GP_A, GP_W, GP_WP, GP_BIAS, GP_C };

static void packed_test_shapes(kc_shapes *out)
{
    /* the gemv path (m <= 8: row groups of 4, blocks of 4/2/1 panels; AVX2's
     * 3 to 16 rows a panel at a time in blocks of up to 6) and the tiles
     * (m > 8; AVX2 m > 16), partial panels, k across KC */
    enum { NM = 12 };
    static const int ms[NM] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17}, ns[] = {1, 17, 33, 64, 100},
                     ks[] = {0, 1, 17, 300};
    for (int im = 0; im < NM; im++)
        for (int in = 0; in < 5; in++)
            for (int ik = 0; ik < 4; ik++) kc_add_shape(out, ms[im], ns[in], ks[ik], (im + in + ik) % 2);
    kc_add_shape(out, 150, 40, 600, 1);
    kc_add_shape(out, 16, 48, 40, 1);   /* a two-panel tile, then one full panel */
    for (int im = 0; im < NM; im++)
        for (int in = 0; in < 5; in++) kc_add_shape(out, ms[im], ns[in], 17, (in % 2) | GP_TINY);
}

/* The forward products on packed weights over a training step's rows, and
 * the decode step's (one row: the gemv path). */
static void packed_bench_shapes(kc_shapes *out)
{
    static const int rows[] = {KC_TRAIN_ROWS, 1};
    for (int r = 0; r < 2; r++)
        for (int l = 0; l < KC_LINEARS; l++)
            if (!kc_linear_repeats(l))
                kc_add_shape(out, rows[r], kc_linears[l].out, kc_linears[l].in, kc_linears[l].bias);
}

static void packed_setup(kc_state *st)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2);
    const bool tiny = kc_int(st, 3) & GP_TINY;
    float *a = tiny ? kc_tiny(st, GP_A, (size_t)m * (k + 2), 0x1p-63f) : kc_rand(st, GP_A, (size_t)m * (k + 2), 1.0f);
    float *w = tiny ? kc_tiny(st, GP_W, (size_t)n * k, 0x1p-63f) : kc_rand(st, GP_W, (size_t)n * k, 1.0f);
    if (tiny && k > 0) {
        for (int i = 0; i < m; i++) a[i * (k + 2)] = KC_BAND_A;
        for (int j = 0; j < n; j++) w[j * k] = KC_BAND_B;
    }
    pack_w_def(kc_zeros(st, GP_WP, ngpt_packed_w_floats(n, k)), w, n, k, k);
    kc_rand(st, GP_BIAS, (size_t)n, 0.5f);
    kc_rand(st, GP_C, (size_t)m * (n + 3), 1.0f);
    st->flops = 2.0 * m * n * k;
    st->bytes = 4.0 * ((double)m * k + (double)ngpt_packed_w_floats(n, k) + (double)m * n);
}

static void packed_run(kc_state *st, const ngpt_kernels *t)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2);
    t->gemm_packed(m, n, k, st->buf[GP_A], k + 2, st->buf[GP_WP], kc_int(st, 3) & GP_HAS_BIAS ? st->buf[GP_BIAS] : NULL,
                   st->buf[GP_C], n + 3);
}

static void packed_definition(kc_state *st)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2);
    gemm_def(m, n, k, st->buf[GP_A], k + 2, 1, st->buf[GP_W], 1, k, kc_int(st, 3) & GP_HAS_BIAS ? st->buf[GP_BIAS] : NULL,
             st->buf[GP_C], n + 3, false);
}

const kc_case kc_gemm_packed = {"m n k variant", packed_test_shapes, packed_bench_shapes, packed_setup,
                                packed_run, packed_definition};
