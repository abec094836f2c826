/* test_kernels_wide.c — the active table against the reference, bit for bit,
 * on shapes test_kernels does not reach: gemm tiles of many rows, k beyond
 * an ISA's packing limit (PACK_K = 4096 in arch/neon/gemm.c), A transposed;
 * attention over dozens of keys with dim tails; column sums over many rows;
 * softmax/xent rows holding a NaN; and values whose squares and products are
 * subnormal (ARMv7 NEON flushes those to zero, the reference does not). In
 * the scalar build both tables are the reference (a wiring check). */
#include <math.h>
#include <stdlib.h>

#include "kernels.h"
#include "rng.h"
#include "test.h"

static const ngpt_kernels *A = &ngpt_kernels_active, *R = &ngpt_kernels_ref;
static _Alignas(64) float gemm_work[NGPT_GEMM_WORK_FLOATS];   /* packing space (gemm.h) */

/* Reproducible values in [-scale, scale) (Philox, stream DATA). */
static float *filled(size_t n, uint64_t seed, float scale)
{
    float *x = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = (2.0f * ngpt_rng_uniform(ngpt_rng_u32(seed, NGPT_STREAM_DATA | 0x78u, 0, i)) - 1.0f) * scale;
    return x;
}

static float *copy(const float *x, size_t n)
{
    float *y = malloc((n ? n : 1) * sizeof(float));
    memcpy(y, x, n * sizeof(float));
    return y;
}

static int same(const float *got, const float *want, size_t n)
{
    return memcmp(got, want, n * sizeof(float)) == 0;
}

static void gemm_wide(void)
{
    /* (m, n, k): 4-row tiles with leftovers, full and partial 8-column panels,
     * k past 4096 (the pack limit) with and without packing. */
    static const int shapes[][3] = {{37, 45, 300}, {5, 17, 5000}, {64, 72, 128}, {1, 100, 257}, {9, 8, 4100}};
    int bad = 0, cases = 0;
    for (int s = 0; s < 5; s++)
        for (int layout = 0; layout < 8; layout++, cases++) {
            const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            const bool bias_on = layout & 2, acc = layout & 2, w = layout & 1, at = layout & 4;
            const uint64_t seed = (uint64_t)cases * 5 + 1;
            float *a = filled((size_t)m * k, seed, 1.0f), *b = filled((size_t)k * n, seed + 1, 1.0f);
            float *bias = filled((size_t)n, seed + 2, 0.5f), *c1 = filled((size_t)m * (n + 1), seed + 3, 1.0f);
            float *c2 = copy(c1, (size_t)m * (n + 1));
            const ptrdiff_t b_rs = w ? 1 : n, b_cs = w ? k : 1, a_rs = at ? 1 : k, a_cs = at ? m : 1;
            R->gemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bias_on ? bias : NULL, c1, n + 1, acc, gemm_work);
            A->gemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bias_on ? bias : NULL, c2, n + 1, acc, gemm_work);
            if (!same(c2, c1, (size_t)m * (n + 1))) {
                fprintf(stderr, "gemm m=%d n=%d k=%d layout %d differs\n", m, n, k, layout);
                bad++;
            }
            free(a), free(b), free(bias), free(c1), free(c2);
        }
    CHECK(bad == 0, "%d of %d wide gemm cases differ", bad, cases);
}

static void attention_wide(void)
{
    int bad = 0;
    for (int n = 1; n < 70; n += 7)
        for (int dim = 1; dim < 40; dim += 5) {
            const uint64_t seed = (uint64_t)(n * 100 + dim);
            float *q = filled((size_t)dim, seed, 1.0f), *keys = filled((size_t)n * (dim + 3), seed + 1, 1.0f);
            float *s1 = malloc((size_t)n * sizeof(float)), *s2 = malloc((size_t)n * sizeof(float));
            float *o1 = malloc((size_t)dim * sizeof(float)), *o2 = malloc((size_t)dim * sizeof(float));
            R->attn_scores(s1, q, keys, dim + 3, n, dim, 0.3f);
            A->attn_scores(s2, q, keys, dim + 3, n, dim, 0.3f);
            bad += !same(s2, s1, (size_t)n);
            R->attn_wsum(o1, s1, keys, dim + 3, n, dim), A->attn_wsum(o2, s1, keys, dim + 3, n, dim);
            bad += !same(o2, o1, (size_t)dim);
            /* column sums over n rows of dim + 3 */
            float *db1 = filled((size_t)dim + 3, seed + 2, 1.0f), *db2 = copy(db1, (size_t)dim + 3);
            R->colsum_acc(db1, keys, (size_t)n, dim + 3), A->colsum_acc(db2, keys, (size_t)n, dim + 3);
            bad += !same(db2, db1, (size_t)dim + 3);
            free(q), free(keys), free(s1), free(s2), free(o1), free(o2), free(db1), free(db2);
        }
    CHECK(bad == 0, "%d wide attention/colsum comparisons differ", bad);
}

static void rows_wide(void)
{
    int bad = 0;
    for (int n = 1; n < 600; n += 37) {
        float *x = filled((size_t)n, (uint64_t)n, 30.0f);
        float *y1 = malloc((size_t)n * sizeof(float)), *y2 = malloc((size_t)n * sizeof(float));
        if (n % 2) x[n / 2] = NAN;
        R->softmax(y1, x, n), A->softmax(y2, x, n);
        bad += !same(y2, y1, (size_t)n);
        float r1 = R->xent(x, n, n / 3), r2 = A->xent(x, n, n / 3);
        bad += !same(&r2, &r1, 1);
        R->xent_bwd(y1, x, n, n - 1, 0.1f), A->xent_bwd(y2, x, n, n - 1, 0.1f);
        bad += !same(y2, y1, (size_t)n);
        free(x), free(y1), free(y2);
    }
    CHECK(bad == 0, "%d wide softmax/xent comparisons differ", bad);
}

/* Squares and products near 1e-38: subnormal results the reference keeps. */
static void subnormal(void)
{
    int bad = 0;
    for (int n = 1; n < 300; n += 23) {
        float *x = filled((size_t)n, (uint64_t)n + 7, 1.5e-19f), *y = filled((size_t)n, (uint64_t)n + 8, 1e-19f);
        float *y1 = malloc((size_t)n * sizeof(float)), *y2 = malloc((size_t)n * sizeof(float));
        float r1 = R->sumsq(x, (size_t)n), r2 = A->sumsq(x, (size_t)n);
        bad += !same(&r2, &r1, 1);
        float *c1 = filled((size_t)n, (uint64_t)n + 9, 1e-38f), *c2 = copy(c1, (size_t)n);
        R->gemm(1, n, 1, x, 1, 1, y, n, 1, NULL, c1, n, true, gemm_work);
        A->gemm(1, n, 1, x, 1, 1, y, n, 1, NULL, c2, n, true, gemm_work);
        bad += !same(c2, c1, (size_t)n);
        R->add(y1, c1, x, (size_t)n), A->add(y2, c1, x, (size_t)n);
        bad += !same(y2, y1, (size_t)n);
        free(x), free(y), free(y1), free(y2), free(c1), free(c2);
    }
    CHECK(bad == 0, "%d subnormal comparisons differ", bad);
}

int main(void)
{
    gemm_wide();
    attention_wide();
    rows_wide();
    subnormal();
    printf("kernels: %s vs %s\n", A->name, R->name);
    return test_summary("test_kernels_wide");
}
