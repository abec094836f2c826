/* test_gemm.c — the matrix-product family (src/gemm.h) bit for bit: the
 * active table's gemm and gemm_packed and the reference against the
 * one-chain definition, on random inputs of odd shapes — m 1..13 and 47
 * (register-tile and gemv tails), n not multiples of 16, k across the cache
 * blocks (0, 1, ..., 4097, 9000), every stride layout, bias and accumulate
 * on and off — then: thread-style splits of rows and column panels give the
 * same bits as one call; pack_w's layout; NaN/Inf propagation and subnormal
 * operands. Under emulation (RUN_ENV set, e.g. qemu) the largest k run on
 * fewer shapes. The workspace is malloc'd at exactly NGPT_GEMM_WORK_BYTES,
 * so ASan catches a kernel that writes past it. */
#include <math.h>

#include "kernels.h"
#include "gemm_def.h"
#include "base/rng.h"
#include "test.h"

static const ngpt_kernels *A = &ngpt_kernels_active, *R = &ngpt_kernels_ref;
static float *work;
static bool emulated;

/* Reproducible values in [-scale, scale) (Philox, stream DATA). */
static void fill(float *x, size_t n, uint64_t seed, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (2.0f * ngpt_rng_uniform(ngpt_rng_u32(seed, NGPT_STREAM_DATA | 0x79u, 0, i)) - 1.0f) * scale;
}

static float *buf(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    if (!p) abort();
    return p;
}

/* Bitwise equal, except that any NaN matches any NaN (which payload an
 * operation passes on is the hardware's choice); the first difference is
 * printed. */
static bool same(const char *what, const float *got, const float *want, size_t n, int m, int nn,
                 int k, int layout)
{
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i]) && isnan(want[i])) continue;
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            fprintf(stderr, "%s m=%d n=%d k=%d layout %d: element %zu: %a vs %a\n", what, m, nn, k,
                    layout, i, (double)got[i], (double)want[i]);
            return false;
        }
    }
    return true;
}

/* The strides of layout L (0..8): A row-major, A^T (the weight gradient's
 * dy^T) or both strides > 1; B a Linear's W (n, k), rows (k, n) or both > 1. */
typedef struct strides { ptrdiff_t a_rs, a_cs, b_rs, b_cs; } strides;

static strides layout_strides(int layout, int m, int n, int k)
{
    strides s;
    switch (layout % 3) {
    case 0: s.a_rs = k, s.a_cs = 1; break;
    case 1: s.a_rs = 1, s.a_cs = m; break;
    default: s.a_rs = 2, s.a_cs = 2 * m + 1; break;
    }
    switch (layout / 3) {
    case 0: s.b_rs = 1, s.b_cs = k; break;
    case 1: s.b_rs = n, s.b_cs = 1; break;
    default: s.b_rs = 2, s.b_cs = 2 * k + 1; break;
    }
    return s;
}

/* Largest operand sizes (floats) of any layout. */
static size_t a_floats(int m, int k) { return (size_t)(2 * m + 1) * (size_t)(k + 1) + 2 * (size_t)m; }
static size_t b_floats(int n, int k) { return (size_t)(2 * k + 1) * (size_t)(n + 1) + 2 * (size_t)k; }

/* One gemm case: the definition, the reference and the active kernel on the
 * same C (row stride n + 3: the gap must stay untouched). */
static bool gemm_case(int m, int n, int k, int layout, bool bias_on, bool acc, const float *a,
                      const float *b, const float *bias, const float *c0)
{
    const strides s = layout_strides(layout, m, n, k);
    const ptrdiff_t c_rs = n + 3;
    const size_t nc = (size_t)m * (size_t)c_rs;
    float *want = buf(nc), *got_r = buf(nc), *got_a = buf(nc);
    memcpy(want, c0, nc * sizeof(float));
    memcpy(got_r, c0, nc * sizeof(float));
    memcpy(got_a, c0, nc * sizeof(float));
    const float *bb = bias_on ? bias : NULL;
    gemm_def(m, n, k, a, s.a_rs, s.a_cs, b, s.b_rs, s.b_cs, bb, want, c_rs, acc);
    R->gemm(m, n, k, a, s.a_rs, s.a_cs, b, s.b_rs, s.b_cs, bb, got_r, c_rs, acc, work);
    A->gemm(m, n, k, a, s.a_rs, s.a_cs, b, s.b_rs, s.b_cs, bb, got_a, c_rs, acc, work);
    const int code = layout * 4 + bias_on * 2 + acc;
    bool ok = same("gemm ref vs definition", got_r, want, nc, m, n, k, code) &&
              same("gemm active vs definition", got_a, want, nc, m, n, k, code);
    free(want), free(got_r), free(got_a);
    return ok;
}

static const int MS[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 47};
static const int NS[] = {1, 7, 15, 17, 33, 100};
static const int KS[] = {0, 1, 5, 17, 255, 257, 1000, 4097, 9000};
#define COUNT(x) ((int)(sizeof(x) / sizeof((x)[0])))

/* Shapes a case list runs on: every (m, n) for k up to 1000; past that all
 * m with two n, and m = 47 with every n. Under emulation: every third shape
 * for k 255..1000 and one past that. */
static bool shape_on(int im, int in, int k)
{
    if (emulated && k > 1000) return MS[im] == 13 && NS[in] == 33;
    if (emulated && k >= 255) return (im + in + k) % 3 == 0;
    if (k <= 1000) return true;
    return NS[in] == 17 || NS[in] == 100 || MS[im] == 47;
}

static void gemm_cases(void)
{
    const int maxm = 47, maxn = 100, maxk = 9000;
    float *a = buf(a_floats(maxm, maxk)), *b = buf(b_floats(maxn, maxk)), *bias = buf(maxn);
    float *c0 = buf((size_t)maxm * (maxn + 3));
    fill(a, a_floats(maxm, maxk), 1, 1.0f), fill(b, b_floats(maxn, maxk), 2, 1.0f);
    fill(bias, maxn, 3, 0.5f), fill(c0, (size_t)maxm * (maxn + 3), 4, 1.0f);
    int bad = 0, cases = 0;
    /* every shape with a layout and flags that rotate from case to case */
    for (int ik = 0; ik < COUNT(KS); ik++)
        for (int im = 0; im < COUNT(MS); im++)
            for (int in = 0; in < COUNT(NS); in++) {
                if (!shape_on(im, in, KS[ik])) continue;
                const int v = cases;
                bad += !gemm_case(MS[im], NS[in], KS[ik], v % 9, (v / 9) % 2, (v / 18) % 2, a, b,
                                  bias, c0);
                cases++;
            }
    /* every layout x bias x accumulate on shapes that cross the blocks */
    static const int full[][3] = {{13, 33, 257}, {47, 100, 300}, {7, 17, 600}, {47, 33, 4097}};
    for (int s = 0; s < (emulated ? 2 : 4); s++)
        for (int layout = 0; layout < 9; layout++)
            for (int f = 0; f < 4; f++, cases++)
                bad += !gemm_case(full[s][0], full[s][1], full[s][2], layout, f & 1, f & 2, a, b,
                                  bias, c0);
    /* accumulating over more rows than the workspace holds chains for
     * (NGPT_GEMM_MS): several row super-blocks, B packed again for each */
    const int tall = NGPT_GEMM_MS + 13;
    float *ta = buf(a_floats(tall, 300)), *tc = buf((size_t)tall * (33 + 3));
    fill(ta, a_floats(tall, 300), 5, 1.0f), fill(tc, (size_t)tall * (33 + 3), 6, 1.0f);
    for (int layout = 3; layout < 6; layout++, cases++)
        bad += !gemm_case(tall, 33, 300, layout, layout == 4, true, ta, b, bias, tc);
    free(ta), free(tc);
    CHECK(bad == 0, "%d of %d gemm cases differ", bad, cases);
    free(a), free(b), free(bias), free(c0);
}

/* ---- packed weights */

static void pack_w_layout(void)
{
    int bad = 0;
    for (int in = 0; in < COUNT(NS); in++)
        for (int k = 0; k < 40; k += 13) {
            const int n = NS[in];
            const ptrdiff_t w_rs = k + 5;
            float *w = buf((size_t)n * w_rs), *wp = buf(ngpt_packed_w_floats(n, k) + 1);
            fill(w, (size_t)n * w_rs, 10 + n, 1.0f);
            wp[ngpt_packed_w_floats(n, k)] = 42.0f;         /* a guard just past the end */
            A->pack_w(wp, w, n, k, w_rs);
            for (int j = 0; j < (n + 15) / 16 * 16; j++)   /* the layout, through ngpt_gemm_panel */
                for (int kk = 0; kk < k; kk++) {
                    const float want = j < n ? w[j * w_rs + kk] : 0.0f;
                    const float got = ngpt_gemm_panel(wp, k, j / 16 * 16)[kk * 16 + j % 16];
                    bad += memcmp(&got, &want, sizeof got) != 0;
                }
            bad += wp[ngpt_packed_w_floats(n, k)] != 42.0f;
            free(w), free(wp);
        }
    CHECK(bad == 0, "%d packed-weight elements differ from the layout", bad);
}

/* y = x W^T + bias by the definition, W (n, k) with row stride w_rs. */
static void linear_def(int m, int n, int k, const float *x, ptrdiff_t a_rs, const float *w,
                       ptrdiff_t w_rs, const float *bias, float *c, ptrdiff_t c_rs)
{
    gemm_def(m, n, k, x, a_rs, 1, w, 1, w_rs, bias, c, c_rs, false);
}

static bool packed_case(int m, int n, int k, bool bias_on, const float *x, const float *w,
                        const float *bias, const float *c0)
{
    const ptrdiff_t a_rs = k + 2, w_rs = k + 1, c_rs = n + 3;
    const size_t nc = (size_t)m * (size_t)c_rs;
    float *wp = buf(ngpt_packed_w_floats(n, k)), *want = buf(nc), *got_r = buf(nc), *got_a = buf(nc);
    R->pack_w(wp, w, n, k, w_rs);
    memcpy(want, c0, nc * sizeof(float));
    memcpy(got_r, c0, nc * sizeof(float));
    memcpy(got_a, c0, nc * sizeof(float));
    const float *bb = bias_on ? bias : NULL;
    linear_def(m, n, k, x, a_rs, w, w_rs, bb, want, c_rs);
    R->gemm_packed(m, n, k, x, a_rs, wp, bb, got_r, c_rs);
    A->gemm_packed(m, n, k, x, a_rs, wp, bb, got_a, c_rs);
    bool ok = same("gemm_packed ref vs definition", got_r, want, nc, m, n, k, bias_on) &&
              same("gemm_packed active vs definition", got_a, want, nc, m, n, k, bias_on);
    free(wp), free(want), free(got_r), free(got_a);
    return ok;
}

static void packed_cases(void)
{
    const int maxm = 47, maxn = 100, maxk = 9000;
    float *x = buf((size_t)maxm * (maxk + 2)), *w = buf((size_t)maxn * (maxk + 1));
    float *bias = buf(maxn), *c0 = buf((size_t)maxm * (maxn + 3));
    fill(x, (size_t)maxm * (maxk + 2), 21, 1.0f), fill(w, (size_t)maxn * (maxk + 1), 22, 1.0f);
    fill(bias, maxn, 23, 0.5f), fill(c0, (size_t)maxm * (maxn + 3), 24, 1.0f);
    int bad = 0, cases = 0;
    for (int ik = 0; ik < COUNT(KS); ik++)
        for (int im = 0; im < COUNT(MS); im++)
            for (int in = 0; in < COUNT(NS); in++) {
                if (!shape_on(im, in, KS[ik])) continue;
                bad += !packed_case(MS[im], NS[in], KS[ik], cases % 2, x, w, bias, c0);
                cases++;
            }
    CHECK(bad == 0, "%d of %d gemm_packed cases differ", bad, cases);
    free(x), free(w), free(bias), free(c0);
}

/* ---- splits as a thread pool makes them: rows, and columns (panels of 16
 * for the packed product) computed by separate calls give one call's bits */

static void splits(void)
{
    const int m = 47, n = 100, k = 600;
    const ptrdiff_t c_rs = n;
    float *x = buf((size_t)m * k), *w = buf((size_t)n * k), *bias = buf(n);
    float *wp = buf(ngpt_packed_w_floats(n, k));
    float *one = buf((size_t)m * n), *parts = buf((size_t)m * n);
    fill(x, (size_t)m * k, 31, 1.0f), fill(w, (size_t)n * k, 32, 1.0f), fill(bias, n, 33, 0.5f);
    A->pack_w(wp, w, n, k, k);
    int bad = 0;
    /* packed: rows cut at 5 and 31 (gemv and tile paths), columns at 16 and 64 */
    static const int rcut[] = {0, 5, 31, 47}, ccut[] = {0, 16, 64, 100};
    A->gemm_packed(m, n, k, x, k, wp, bias, one, c_rs);
    for (int ri = 0; ri < 3; ri++)
        for (int ci = 0; ci < 3; ci++) {
            const int i0 = rcut[ri], j0 = ccut[ci];
            A->gemm_packed(rcut[ri + 1] - i0, ccut[ci + 1] - j0, k, x + i0 * k, k,
                           ngpt_gemm_panel(wp, k, j0), bias + j0, parts + i0 * c_rs + j0, c_rs);
        }
    bad += !same("gemm_packed split", parts, one, (size_t)m * n, m, n, k, 0);
    /* gemm, all three training layouts, split the same way (any column cut) */
    static const int gcut[] = {0, 9, 70, 100};
    for (int layout = 0; layout < 3; layout++) {
        const strides s = layout == 0 ? (strides){k, 1, 1, k}       /* x W^T */
                        : layout == 1 ? (strides){k, 1, n, 1}       /* dY W */
                                      : (strides){1, m, n, 1};      /* dY^T X */
        const bool acc = layout == 2;
        fill(one, (size_t)m * n, 34, 1.0f), memcpy(parts, one, (size_t)m * n * sizeof(float));
        A->gemm(m, n, k, x, s.a_rs, s.a_cs, w, s.b_rs, s.b_cs, bias, one, c_rs, acc, work);
        for (int ri = 0; ri < 3; ri++)
            for (int ci = 0; ci < 3; ci++) {
                const int i0 = rcut[ri], j0 = gcut[ci];
                A->gemm(rcut[ri + 1] - i0, gcut[ci + 1] - j0, k, x + i0 * s.a_rs, s.a_rs, s.a_cs,
                        w + j0 * s.b_cs, s.b_rs, s.b_cs, bias + j0, parts + i0 * c_rs + j0, c_rs,
                        acc, work);
            }
        bad += !same("gemm split", parts, one, (size_t)m * n, m, n, k, layout);
    }
    CHECK(bad == 0, "%d split products differ from one call", bad);
    free(x), free(w), free(bias), free(wp), free(one), free(parts);
}

/* ---- special values: NaN and Inf operands must reach (only) the outputs
 * whose chains meet them, as in the definition; subnormal operands and
 * products are kept, never flushed */

static void special_values(void)
{
    const int m = 13, n = 33, k = 300;
    float *a = buf((size_t)m * k), *b = buf((size_t)k * n), *bias = buf(n), *wp = buf(ngpt_packed_w_floats(n, k));
    float *want = buf((size_t)m * n), *got = buf((size_t)m * n), *got_r = buf((size_t)m * n);
    int bad = 0;
    for (int variant = 0; variant < 3; variant++) {
        fill(a, (size_t)m * k, 40 + variant, 1.0f), fill(b, (size_t)k * n, 50 + variant, 1.0f);
        fill(bias, n, 60, 0.5f);
        if (variant == 0) {     /* NaN, Inf and -Inf in A and B; Inf in a bias */
            a[3 * k + 7] = NAN, a[8 * k + 299] = INFINITY, a[12 * k] = -INFINITY;
            b[5 * n + 2] = INFINITY, b[100 * n + 20] = NAN, b[299 * n + 32] = -INFINITY;
            bias[9] = INFINITY;
        } else {                /* tiny operands: subnormal products and sums */
            const float tiny = variant == 1 ? 1e-20f : 1e-39f;
            for (size_t i = 0; i < (size_t)m * k; i++) a[i] *= tiny;
            if (variant == 2) for (size_t i = 0; i < (size_t)k * n; i++) b[i] *= 1e3f;
        }
        for (int acc = 0; acc < 2; acc++) {
            /* B as rows (k, n): dY W and the weight-gradient layouts */
            fill(want, (size_t)m * n, 70, 1e-38f);
            memcpy(got, want, (size_t)m * n * sizeof(float));
            memcpy(got_r, want, (size_t)m * n * sizeof(float));
            gemm_def(m, n, k, a, k, 1, b, n, 1, bias, want, n, acc);
            R->gemm(m, n, k, a, k, 1, b, n, 1, bias, got_r, n, acc, work);
            A->gemm(m, n, k, a, k, 1, b, n, 1, bias, got, n, acc, work);
            bad += !same("gemm special ref", got_r, want, (size_t)m * n, m, n, k, variant);
            bad += !same("gemm special", got, want, (size_t)m * n, m, n, k, variant);
            if (variant == 0)   /* every chain of row 3 met the NaN; of row 0 only column 20's */
                for (int j = 0; j < n; j++) bad += !isnan(got[3 * n + j]) + (isnan(got[j]) != (j == 20));
            /* A transposed (dy^T x) */
            fill(want, (size_t)m * n, 71, 1.0f), memcpy(got, want, (size_t)m * n * sizeof(float));
            gemm_def(n, m, k, b, 1, n, a, 1, k, NULL, want, m, acc);
            A->gemm(n, m, k, b, 1, n, a, 1, k, NULL, got, m, acc, work);
            bad += !same("gemm special (A^T)", got, want, (size_t)m * n, n, m, k, variant);
        }
        /* packed: W = B^T stored (n, k) */
        float *w = buf((size_t)n * k);
        for (int j = 0; j < n; j++)
            for (int kk = 0; kk < k; kk++) w[j * k + kk] = b[kk * n + j];
        A->pack_w(wp, w, n, k, k);
        for (int rows = 1; rows <= m; rows += 11) {     /* the gemv path and the tiles */
            linear_def(rows, n, k, a, k, w, k, bias, want, n);
            A->gemm_packed(rows, n, k, a, k, wp, bias, got, n);
            bad += !same("gemm_packed special", got, want, (size_t)rows * n, rows, n, k, variant);
        }
        free(w);
    }
    CHECK(bad == 0, "%d special-value products differ", bad);
    free(a), free(b), free(bias), free(wp), free(want), free(got), free(got_r);
}

int main(void)
{
    const char *env = getenv("RUN_ENV");
    emulated = env && env[0];
    work = malloc(NGPT_GEMM_WORK_BYTES);
    if (!work) return 1;
    gemm_cases();
    packed_cases();
    pack_w_layout();
    splits();
    special_values();
    printf("gemm: %s vs %s and the definition%s\n", A->name, R->name,
           emulated ? " (emulated: fewer long-k shapes)" : "");
    free(work);
    return test_summary("test_gemm");
}
