/* gemm.c — the reference matrix products (contracts in kernels.inc, layout in
 * gemm.h): each output is one fmaf chain over k in increasing order from
 * +0.0f, bias added after. gemm needs no workspace; pack_w is the packed
 * layout by definition, for every ISA; gemm_packed runs one row against one
 * 16-column panel at a time.
 *
 * Two loop orders compute exactly those chains (same operands, same order;
 * only independent chains are interleaved), so the bits are those of the
 * naive triple loop whichever is taken:
 *  - B's rows contiguous (b_cs == 1: the backward's dy W and x^T dy): i, k, j
 *    over a block of accumulators, so the inner loop walks memory in order;
 *  - otherwise (a Linear's x W^T with W stored (out, in)): 4x4 tiles of
 *    outputs whose sixteen chains advance together, hiding FMA latency, and
 *    1x8 strips for the rows left over (a decode step has one row). */
#include <math.h>

#include "../kernels.h"

enum { JBLOCK = 256 };

static inline void store(float *c, float acc, const float *bias, int j, bool accumulate)
{
    if (bias) acc = acc + bias[j];
    *c = accumulate ? *c + acc : acc;
}

static void gemm_ikj(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                     const float *b, ptrdiff_t b_rs, const float *bias, float *c, ptrdiff_t c_rs,
                     bool accumulate)
{
    float acc[JBLOCK];
    for (int i = 0; i < m; i++) {
        const float *ai = a + i * a_rs;
        float *ci = c + i * c_rs;
        for (int j0 = 0; j0 < n; j0 += JBLOCK) {
            const int nj = n - j0 < JBLOCK ? n - j0 : JBLOCK;
            for (int j = 0; j < nj; j++) acc[j] = 0.0f;
            for (int kk = 0; kk < k; kk++) {
                const float av = ai[kk * a_cs];
                const float *bk = b + kk * b_rs + j0;
                for (int j = 0; j < nj; j++) acc[j] = fmaf(av, bk[j], acc[j]);
            }
            for (int j = 0; j < nj; j++) store(ci + j0 + j, acc[j], bias, j0 + j, accumulate);
        }
    }
}

/* One output: the definition. */
static void gemm_one(int i, int j, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                     const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias, float *c,
                     ptrdiff_t c_rs, bool accumulate)
{
    const float *ai = a + i * a_rs, *bj = b + j * b_cs;
    float acc = 0.0f;
    for (int kk = 0; kk < k; kk++) acc = fmaf(ai[kk * a_cs], bj[kk * b_rs], acc);
    store(c + i * c_rs + j, acc, bias, j, accumulate);
}

static void gemm_tiled(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                       float *c, ptrdiff_t c_rs, bool accumulate)
{
    const int m4 = m - m % 4, n4 = n - n % 4;
    for (int i = 0; i < m4; i += 4) {
        for (int j = 0; j < n4; j += 4) {
            float acc[4][4] = {{0}};
            const float *ap = a + i * a_rs, *bp = b + j * b_cs;
            for (int kk = 0; kk < k; kk++) {
                const float *ak = ap + kk * a_cs, *bk = bp + kk * b_rs;
                float av[4] = {ak[0], ak[a_rs], ak[2 * a_rs], ak[3 * a_rs]};
                float bv[4] = {bk[0], bk[b_cs], bk[2 * b_cs], bk[3 * b_cs]};
                for (int ii = 0; ii < 4; ii++)
                    for (int jj = 0; jj < 4; jj++) acc[ii][jj] = fmaf(av[ii], bv[jj], acc[ii][jj]);
            }
            for (int ii = 0; ii < 4; ii++)
                for (int jj = 0; jj < 4; jj++)
                    store(c + (i + ii) * c_rs + j + jj, acc[ii][jj], bias, j + jj, accumulate);
        }
        for (int j = n4; j < n; j++)
            for (int ii = 0; ii < 4; ii++)
                gemm_one(i + ii, j, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, c, c_rs, accumulate);
    }
    /* Leftover rows (all of a decode step's single row): 8 chains side by side. */
    const int n8 = n - n % 8;
    for (int i = m4; i < m; i++) {
        const float *ai = a + i * a_rs;
        for (int j = 0; j < n8; j += 8) {
            float acc[8] = {0};
            const float *bp = b + j * b_cs;
            for (int kk = 0; kk < k; kk++) {
                const float av = ai[kk * a_cs], *bk = bp + kk * b_rs;
                for (int jj = 0; jj < 8; jj++) acc[jj] = fmaf(av, bk[jj * b_cs], acc[jj]);
            }
            for (int jj = 0; jj < 8; jj++)
                store(c + i * c_rs + j + jj, acc[jj], bias, j + jj, accumulate);
        }
        for (int j = n8; j < n; j++) gemm_one(i, j, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, c, c_rs, accumulate);
    }
}

void ngpt_f32_gemm_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                       float *c, ptrdiff_t c_rs, bool accumulate, float *work)
{
    (void)work;     /* the reference needs no packing space */
    if (b_cs == 1 && b_rs != 1)
        gemm_ikj(m, n, k, a, a_rs, a_cs, b, b_rs, bias, c, c_rs, accumulate);
    else
        gemm_tiled(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, c, c_rs, accumulate);
}

/* The packed layout (gemm.h): panel p, row kk, lane jj holds W[p*16 + jj][kk]. */
void ngpt_f32_pack_w_ref(float *wp, const float *w, int n, int k, ptrdiff_t w_rs)
{
    for (int j0 = 0; j0 < n; j0 += NGPT_GEMM_NR) {
        float *panel = wp + (size_t)(j0 / NGPT_GEMM_NR) * (size_t)k * NGPT_GEMM_NR;
        for (int kk = 0; kk < k; kk++)
            for (int jj = 0; jj < NGPT_GEMM_NR; jj++)
                panel[(size_t)kk * NGPT_GEMM_NR + jj] = j0 + jj < n ? w[(j0 + jj) * w_rs + kk] : 0.0f;
    }
}

/* One row against one panel: its 16 chains advance together over k. */
void ngpt_f32_gemm_packed_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                              const float *wp, const float *bias, float *c, ptrdiff_t c_rs)
{
    for (int i = 0; i < m; i++) {
        const float *ai = a + i * a_rs;
        for (int j0 = 0; j0 < n; j0 += NGPT_GEMM_NR) {
            const float *panel = ngpt_gemm_panel(wp, k, j0);
            const int nj = n - j0 < NGPT_GEMM_NR ? n - j0 : NGPT_GEMM_NR;
            float acc[NGPT_GEMM_NR] = {0};
            for (int kk = 0; kk < k; kk++)
                for (int jj = 0; jj < NGPT_GEMM_NR; jj++)
                    acc[jj] = fmaf(ai[kk], panel[(size_t)kk * NGPT_GEMM_NR + jj], acc[jj]);
            for (int jj = 0; jj < nj; jj++) store(c + i * c_rs + j0 + jj, acc[jj], bias, j0 + jj, false);
        }
    }
}
