/* test_kernels.c — every kernel of the active table (AVX2, NEON, ...) against
 * the scalar reference, bit for bit, on random inputs of odd shapes (tails!),
 * and the reference gemm's tiled loops against the one-chain definition. In
 * the scalar build the active table is the reference, so the first part
 * checks the table's wiring; in an ISA build it is the differential test. */
#include <math.h>

#include "kernels.h"
#include "rng.h"
#include "test.h"

static const ngpt_kernels *A = &ngpt_kernels_active, *R = &ngpt_kernels_ref;
static _Alignas(64) float gemm_work[NGPT_GEMM_WORK_FLOATS];   /* packing space (gemm.h) */

/* Reproducible values in [-scale, scale) (Philox, stream DATA). */
static void fill(float *x, size_t n, uint64_t seed, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (2.0f * ngpt_rng_uniform(ngpt_rng_u32(seed, NGPT_STREAM_DATA | 0x77u, 0, i)) - 1.0f) * scale;
}

static float *buf(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float) + 64);
    return p;
}

/* Bitwise equality with the first difference printed. */
static int same(const char *what, const float *got, const float *want, size_t n, int shape)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            fprintf(stderr, "%s (shape %d): element %zu: %a (%g) vs reference %a (%g)\n", what, shape,
                    i, (double)got[i], (double)got[i], (double)want[i], (double)want[i]);
            return 0;
        }
    return 1;
}

static const int SIZES[] = {1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 100, 257};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* The definition: one chain per output. */
static void gemm_naive(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias, float *c,
                       ptrdiff_t c_rs, bool acc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int kk = 0; kk < k; kk++) s = fmaf(a[i * a_rs + kk * a_cs], b[kk * b_rs + j * b_cs], s);
            if (bias) s = s + bias[j];
            c[i * c_rs + j] = acc ? c[i * c_rs + j] + s : s;
        }
}

static void gemm_cases(void)
{
    /* (m, n, k) across tile edges; B as a Linear's W (n, k) and as rows (k, n);
     * with and without bias and accumulation; A transposed too. */
    const int ms[] = {1, 3, 4, 5, 13}, ns[] = {1, 7, 8, 9, 33}, ks[] = {0, 1, 5, 17, 64};
    int bad = 0, cases = 0;
    for (int im = 0; im < 5; im++)
        for (int in = 0; in < 5; in++)
            for (int ik = 0; ik < 5; ik++)
                for (int layout = 0; layout < 4; layout++) {
                    int m = ms[im], n = ns[in], k = ks[ik];
                    bool bias_on = layout & 1, acc = layout & 2;
                    float *a = buf((size_t)m * k), *b = buf((size_t)k * n), *bias = buf((size_t)n);
                    float *c0 = buf((size_t)m * (n + 3)), *c1 = buf((size_t)m * (n + 3)), *c2 = buf((size_t)m * (n + 3));
                    uint64_t seed = (uint64_t)(cases * 7 + 1);
                    fill(a, (size_t)m * k, seed, 1.0f), fill(b, (size_t)k * n, seed + 1, 1.0f);
                    fill(bias, (size_t)n, seed + 2, 0.5f), fill(c0, (size_t)m * (n + 3), seed + 3, 1.0f);
                    memcpy(c1, c0, (size_t)m * (n + 3) * sizeof(float));
                    memcpy(c2, c0, (size_t)m * (n + 3) * sizeof(float));
                    /* A (m,k) row-major or stored transposed (k,m); B as W (n,k) or rows (k,n) */
                    bool wlayout = (cases % 2) == 0;
                    ptrdiff_t b_rs = wlayout ? 1 : n, b_cs = wlayout ? k : 1;
                    bool at = (cases % 3) == 0;
                    ptrdiff_t a_rs = at ? 1 : k, a_cs = at ? m : 1;
                    const float *bb = bias_on ? bias : NULL;
                    gemm_naive(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bb, c0, n + 3, acc);
                    R->gemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bb, c1, n + 3, acc, gemm_work);
                    A->gemm(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bb, c2, n + 3, acc, gemm_work);
                    size_t nc = (size_t)m * (n + 3);
                    if (!same("gemm ref vs definition", c1, c0, nc, m * 10000 + n * 100 + k)) bad++;
                    if (!same("gemm active vs ref", c2, c1, nc, m * 10000 + n * 100 + k)) bad++;
                    cases++;
                    free(a), free(b), free(bias), free(c0), free(c1), free(c2);
                }
    CHECK(bad == 0, "%d of %d gemm cases differ", bad, cases);
}

static void row_kernels(void)
{
    int bad = 0;
    for (int si = 0; si < NSIZES; si++) {
        int n = SIZES[si];
        float *x = buf((size_t)n), *y = buf((size_t)n), *w = buf((size_t)n), *bb = buf((size_t)n);
        float *o1 = buf((size_t)n), *o2 = buf((size_t)n);
        fill(x, (size_t)n, 100 + si, 8.0f), fill(y, (size_t)n, 200 + si, 2.0f);
        fill(w, (size_t)n, 300 + si, 1.5f), fill(bb, (size_t)n, 400 + si, 0.5f);
        float r1 = R->rsum(x, (size_t)n), r2 = A->rsum(x, (size_t)n);
        bad += !same("rsum", &r2, &r1, 1, n);
        r1 = R->sumsq(x, (size_t)n), r2 = A->sumsq(x, (size_t)n);
        bad += !same("sumsq", &r2, &r1, 1, n);
        /* softmax with a spread that reaches the exp cutoff */
        float *s = buf((size_t)n);
        fill(s, (size_t)n, 500 + si, 60.0f);
        R->softmax(o1, s, n), A->softmax(o2, s, n);
        bad += !same("softmax", o2, o1, (size_t)n, n);
        for (int t = 0; t < n; t += (n / 3) + 1) {
            r1 = R->xent(s, n, t), r2 = A->xent(s, n, t);
            bad += !same("xent", &r2, &r1, 1, n);
            R->xent_bwd(o1, s, n, t, 0.25f), A->xent_bwd(o2, s, n, t, 0.25f);
            bad += !same("xent_bwd", o2, o1, (size_t)n, n);
        }
        R->softmax_bwd(o1, w, y, n, 0.3f), A->softmax_bwd(o2, w, y, n, 0.3f);
        bad += !same("softmax_bwd", o2, o1, (size_t)n, n);
        /* elementwise */
        R->gelu_fwd(o1, x, (size_t)n), A->gelu_fwd(o2, x, (size_t)n);
        bad += !same("gelu_fwd", o2, o1, (size_t)n, n);
        R->gelu_bwd(o1, x, y, (size_t)n), A->gelu_bwd(o2, x, y, (size_t)n);
        bad += !same("gelu_bwd", o2, o1, (size_t)n, n);
        R->add(o1, x, y, (size_t)n), A->add(o2, x, y, (size_t)n);
        bad += !same("add", o2, o1, (size_t)n, n);
        ngpt_dropout_key key = {9, 4, ngpt_rng_site_dropout(1, NGPT_SITE_MLP_OUT), 0.3f};
        R->dropout(o1, x, (size_t)n, 13, &key), A->dropout(o2, x, (size_t)n, 13, &key);
        bad += !same("dropout", o2, o1, (size_t)n, n);
        memset(o1, 0, (size_t)n * sizeof(float)), memset(o2, 0, (size_t)n * sizeof(float));
        R->colsum_acc(o1, x, 1, n), A->colsum_acc(o2, x, 1, n);
        bad += !same("colsum_acc", o2, o1, (size_t)n, n);
        free(x), free(y), free(w), free(bb), free(o1), free(o2), free(s);
    }
    /* dropout on long rows at large element offsets (vectorised Philox) */
    const size_t lens[] = {1000, 4099};
    const uint64_t firsts[] = {0, 12345, (1ull << 32) - 3};
    for (int li = 0; li < 2; li++)
        for (int fi = 0; fi < 3; fi++) {
            size_t n = lens[li];
            float *x = buf(n), *o1 = buf(n), *o2 = buf(n);
            fill(x, n, 3000 + li, 4.0f);
            ngpt_dropout_key key = {0x123456789ull, 77, ngpt_rng_site_dropout(3, NGPT_SITE_ATTN_PROBS), 0.1f};
            R->dropout(o1, x, n, firsts[fi], &key), A->dropout(o2, x, n, firsts[fi], &key);
            bad += !same("dropout (long)", o2, o1, n, (int)n);
            free(x), free(o1), free(o2);
        }
    CHECK(bad == 0, "%d row-kernel comparisons differ", bad);
}

static void matrix_kernels(void)
{
    int bad = 0;
    const int rows_[] = {1, 3, 6}, cols_[] = {2, 8, 10, 34, 66};
    for (int ri = 0; ri < 3; ri++)
        for (int ci = 0; ci < 5; ci++) {
            int rows = rows_[ri], c = cols_[ci], shape = rows * 1000 + c;
            size_t n = (size_t)rows * c;
            float *x = buf(n), *dy = buf(n), *w = buf((size_t)c), *b = buf((size_t)c);
            float *o1 = buf(n), *o2 = buf(n), *m1 = buf((size_t)rows), *m2 = buf((size_t)rows);
            float *s1 = buf((size_t)rows), *s2 = buf((size_t)rows);
            fill(x, n, 600 + shape, 3.0f), fill(dy, n, 700 + shape, 1.0f);
            fill(w, (size_t)c, 800 + shape, 1.0f), fill(b, (size_t)c, 900 + shape, 0.2f);
            R->layernorm_fwd(o1, m1, s1, x, w, b, (size_t)rows, c);
            A->layernorm_fwd(o2, m2, s2, x, w, b, (size_t)rows, c);
            bad += !same("layernorm_fwd", o2, o1, n, shape) + !same("layernorm mean", m2, m1, (size_t)rows, shape) +
                   !same("layernorm rstd", s2, s1, (size_t)rows, shape);
            float *dx1 = buf(n), *dx2 = buf(n), *dw1 = buf((size_t)c), *dw2 = buf((size_t)c);
            float *db1 = buf((size_t)c), *db2 = buf((size_t)c);
            fill(dx1, n, 1000 + shape, 0.1f), memcpy(dx2, dx1, n * sizeof(float));
            fill(dw1, (size_t)c, 1100 + shape, 0.1f), memcpy(dw2, dw1, (size_t)c * sizeof(float));
            fill(db1, (size_t)c, 1200 + shape, 0.1f), memcpy(db2, db1, (size_t)c * sizeof(float));
            R->layernorm_bwd(dx1, dw1, db1, dy, x, m1, s1, w, (size_t)rows, c);
            A->layernorm_bwd(dx2, dw2, db2, dy, x, m1, s1, w, (size_t)rows, c);
            bad += !same("layernorm_bwd dx", dx2, dx1, n, shape) + !same("layernorm_bwd dw", dw2, dw1, (size_t)c, shape) +
                   !same("layernorm_bwd db", db2, db1, (size_t)c, shape);
            /* attention over n = rows keys of dim c (even), strided rows */
            if (c % 2 == 0) {
                float *q = buf((size_t)c), *keys = buf((size_t)rows * (c + 5)), *sc1 = buf((size_t)rows), *sc2 = buf((size_t)rows);
                fill(q, (size_t)c, 1300 + shape, 1.0f), fill(keys, (size_t)rows * (c + 5), 1400 + shape, 1.0f);
                R->attn_scores(sc1, q, keys, c + 5, rows, c, 0.125f);
                A->attn_scores(sc2, q, keys, c + 5, rows, c, 0.125f);
                bad += !same("attn_scores", sc2, sc1, (size_t)rows, shape);
                float *ov1 = buf((size_t)c), *ov2 = buf((size_t)c);
                R->attn_wsum(ov1, sc1, keys, c + 5, rows, c), A->attn_wsum(ov2, sc1, keys, c + 5, rows, c);
                bad += !same("attn_wsum", ov2, ov1, (size_t)c, shape);
                float *acc1 = buf((size_t)rows * (c + 5)), *acc2 = buf((size_t)rows * (c + 5));
                memcpy(acc1, keys, (size_t)rows * (c + 5) * sizeof(float));
                memcpy(acc2, keys, (size_t)rows * (c + 5) * sizeof(float));
                R->outer_acc(acc1, c + 5, sc1, q, rows, c), A->outer_acc(acc2, c + 5, sc1, q, rows, c);
                bad += !same("outer_acc", acc2, acc1, (size_t)rows * (c + 5), shape);
                /* RoPE on `rows` heads of dim c */
                float *cs = buf((size_t)c / 2), *sn = buf((size_t)c / 2);
                fill(cs, (size_t)c / 2, 1500 + shape, 1.0f), fill(sn, (size_t)c / 2, 1600 + shape, 1.0f);
                memcpy(o1, x, n * sizeof(float)), memcpy(o2, x, n * sizeof(float));
                R->rope(o1, rows, c, cs, sn), A->rope(o2, rows, c, cs, sn);
                bad += !same("rope", o2, o1, n, shape);
                R->rope_bwd(o1, rows, c, cs, sn), A->rope_bwd(o2, rows, c, cs, sn);
                bad += !same("rope_bwd", o2, o1, n, shape);
                free(q), free(keys), free(sc1), free(sc2), free(ov1), free(ov2), free(acc1), free(acc2), free(cs), free(sn);
            }
            /* AdamW over n elements */
            float *p1 = buf(n), *p2 = buf(n), *mm1 = buf(n), *mm2 = buf(n), *v1 = buf(n), *v2 = buf(n);
            fill(p1, n, 1700 + shape, 1.0f), memcpy(p2, p1, n * sizeof(float));
            fill(mm1, n, 1800 + shape, 0.1f), memcpy(mm2, mm1, n * sizeof(float));
            for (size_t i = 0; i < n; i++) v1[i] = v2[i] = fabsf(mm1[i]) * 0.01f;
            ngpt_adamw_coef co = {.gmul = 0.5f, .beta1 = 0.9f, .one_minus_beta1 = 0.1f, .beta2 = 0.95f,
                                  .one_minus_beta2 = 0.05f, .step_size = 1e-3f, .bc2_sqrt = 0.3f,
                                  .eps = 1e-8f, .decay = 0.9999f};
            R->adamw(p1, dy, mm1, v1, n, &co), A->adamw(p2, dy, mm2, v2, n, &co);
            bad += !same("adamw p", p2, p1, n, shape) + !same("adamw m", mm2, mm1, n, shape) +
                   !same("adamw v", v2, v1, n, shape);
            free(p1), free(p2), free(mm1), free(mm2), free(v1), free(v2);
            free(x), free(dy), free(w), free(b), free(o1), free(o2), free(m1), free(m2), free(s1), free(s2);
            free(dx1), free(dx2), free(dw1), free(dw2), free(db1), free(db2);
        }
    CHECK(bad == 0, "%d matrix-kernel comparisons differ", bad);
}

/* The canonical reduction order, written out: the reference must follow it. */
static void canonical_sum(void)
{
    for (int si = 0; si < NSIZES; si++) {
        int n = SIZES[si];
        float *x = buf((size_t)n);
        fill(x, (size_t)n, 2000 + si, 1e4f);
        float lane[8] = {0};
        for (int i = 0; i < n; i++) lane[i % 8] = lane[i % 8] + x[i];
        float want = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
        float got = R->rsum(x, (size_t)n);
        CHECK(memcmp(&got, &want, sizeof got) == 0, "rsum(%d) %a vs canonical %a", n, (double)got, (double)want);
        free(x);
    }
}

int main(void)
{
    CHECK(A->name != NULL && R->name != NULL, "tables are named");
    gemm_cases();
    row_kernels();
    matrix_kernels();
    canonical_sum();
    printf("kernels: %s vs %s\n", A->name, R->name);
    return test_summary("test_kernels");
}
