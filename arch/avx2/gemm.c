/* gemm.c — AVX2 matrix product, bit-identical to ngpt_f32_gemm_ref: every
 * output C(i,j) is one fma chain over k in increasing order from +0.0f (one
 * lane of _mm256_fmadd_ps per k is exactly fmaf), then + bias[j], then added
 * to C when accumulating. Vectorised across 16 consecutive j (two vectors)
 * for tiles of 6 rows (then 4, then 1); the whole k loop runs with the
 * accumulators in registers, so no chain is ever split.
 *
 * B's 16-column panel is read in place when its rows are contiguous
 * (b_cs == 1: the backward's products), otherwise packed once per panel into
 * a stack buffer pack[k][16] (a Linear's W stored (out, in): b_rs == 1), zero
 * padded past n (padding lanes are computed and never stored). When A is
 * strided along k (the weight gradient dy^T x), its 6-row tiles are packed
 * instead (gemm_strided_a). */
#include <immintrin.h>
#include <math.h>

#include "kernels_avx2.h"

enum { NR = 16, KMAX = 1024, KA = 4096 };  /* panel width; largest packed k (64 KiB of stack) */

static inline void store_row(float *c, __m256 lo, __m256 hi, const float *bias, int j, int nj,
                             bool accumulate)
{
    if (nj == NR) {
        if (bias) {
            lo = _mm256_add_ps(lo, _mm256_loadu_ps(bias + j));
            hi = _mm256_add_ps(hi, _mm256_loadu_ps(bias + j + 8));
        }
        if (accumulate) {
            lo = _mm256_add_ps(_mm256_loadu_ps(c), lo);
            hi = _mm256_add_ps(_mm256_loadu_ps(c + 8), hi);
        }
        _mm256_storeu_ps(c, lo);
        _mm256_storeu_ps(c + 8, hi);
        return;
    }
    float t[NR];
    _mm256_storeu_ps(t, lo);
    _mm256_storeu_ps(t + 8, hi);
    for (int jj = 0; jj < nj; jj++) {
        float acc = t[jj];
        if (bias) acc = acc + bias[j + jj];
        c[jj] = accumulate ? c[jj] + acc : acc;
    }
}

/* Rows i0..i0+5 against one panel (12 accumulators + 2 B vectors + 1 A
 * broadcast = 15 of the 16 ymm registers). */
static void tile6(int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                  ptrdiff_t bstride, const float *bias, float *c, ptrdiff_t c_rs, int j, int nj,
                  bool accumulate)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    const float *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
    const float *a4 = a + 4 * a_rs, *a5 = a + 5 * a_rs;
    for (int kk = 0; kk < k; kk++) {
        const float *bk = bp + kk * bstride;
        const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
        const ptrdiff_t o = kk * a_cs;
        __m256 av = _mm256_broadcast_ss(a0 + o);
        c00 = _mm256_fmadd_ps(av, b0, c00), c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a1 + o);
        c10 = _mm256_fmadd_ps(av, b0, c10), c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a2 + o);
        c20 = _mm256_fmadd_ps(av, b0, c20), c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a3 + o);
        c30 = _mm256_fmadd_ps(av, b0, c30), c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a4 + o);
        c40 = _mm256_fmadd_ps(av, b0, c40), c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a5 + o);
        c50 = _mm256_fmadd_ps(av, b0, c50), c51 = _mm256_fmadd_ps(av, b1, c51);
    }
    store_row(c, c00, c01, bias, j, nj, accumulate);
    store_row(c + c_rs, c10, c11, bias, j, nj, accumulate);
    store_row(c + 2 * c_rs, c20, c21, bias, j, nj, accumulate);
    store_row(c + 3 * c_rs, c30, c31, bias, j, nj, accumulate);
    store_row(c + 4 * c_rs, c40, c41, bias, j, nj, accumulate);
    store_row(c + 5 * c_rs, c50, c51, bias, j, nj, accumulate);
}

/* Rows i0..i0+3 against one panel: bp(kk) = bp + kk*bstride holds B(kk, j..j+15). */
static void tile4(int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                  ptrdiff_t bstride, const float *bias, float *c, ptrdiff_t c_rs, int j, int nj,
                  bool accumulate)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    const float *a0 = a, *a1 = a + a_rs, *a2 = a + 2 * a_rs, *a3 = a + 3 * a_rs;
    for (int kk = 0; kk < k; kk++) {
        const float *bk = bp + kk * bstride;
        const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
        const ptrdiff_t o = kk * a_cs;
        __m256 av = _mm256_broadcast_ss(a0 + o);
        c00 = _mm256_fmadd_ps(av, b0, c00), c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a1 + o);
        c10 = _mm256_fmadd_ps(av, b0, c10), c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a2 + o);
        c20 = _mm256_fmadd_ps(av, b0, c20), c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a3 + o);
        c30 = _mm256_fmadd_ps(av, b0, c30), c31 = _mm256_fmadd_ps(av, b1, c31);
    }
    store_row(c, c00, c01, bias, j, nj, accumulate);
    store_row(c + c_rs, c10, c11, bias, j, nj, accumulate);
    store_row(c + 2 * c_rs, c20, c21, bias, j, nj, accumulate);
    store_row(c + 3 * c_rs, c30, c31, bias, j, nj, accumulate);
}

static void tile1(int k, const float *a, ptrdiff_t a_cs, const float *bp, ptrdiff_t bstride,
                  const float *bias, float *c, int j, int nj, bool accumulate)
{
    __m256 c0 = _mm256_setzero_ps(), c1 = _mm256_setzero_ps();
    for (int kk = 0; kk < k; kk++) {
        const float *bk = bp + kk * bstride;
        const __m256 av = _mm256_broadcast_ss(a + kk * a_cs);
        c0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bk), c0);
        c1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bk + 8), c1);
    }
    store_row(c, c0, c1, bias, j, nj, accumulate);
}

/* One output, the definition (tails that cannot be packed). */
static void one(int i, int j, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias, float *c,
                ptrdiff_t c_rs, bool accumulate)
{
    const float *ai = a + i * a_rs, *bj = b + j * b_cs;
    float acc = 0.0f;
    for (int kk = 0; kk < k; kk++) acc = fmaf(ai[kk * a_cs], bj[kk * b_rs], acc);
    if (bias) acc = acc + bias[j];
    float *ci = c + i * c_rs + j;
    *ci = accumulate ? *ci + acc : acc;
}

/* A strided along k (the weight gradient dy^T x: A(i,k) = dy[k*out + i]),
 * B's rows contiguous: each 6-row tile of A is packed once as apack[k][6]
 * and run against every 16-column panel of B read in place, so A is not
 * re-read with a page-sized stride for every panel. */
static void gemm_strided_a(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                           const float *b, ptrdiff_t b_rs, const float *bias, float *c,
                           ptrdiff_t c_rs, bool accumulate, float *pack)
{
    _Alignas(32) float apack[KA * 6];
    const int nfull = n - n % NR, nt = n - nfull;
    if (nt && k <= KMAX)            /* the column tail's panel, zero padded */
        for (int kk = 0; kk < k; kk++) {
            int jj = 0;
            for (; jj < nt; jj++) pack[kk * NR + jj] = b[kk * b_rs + nfull + jj];
            for (; jj < NR; jj++) pack[kk * NR + jj] = 0.0f;
        }
    int i = 0;
    for (; i + 6 <= m; i += 6) {
        const float *ai = a + i * a_rs;
        for (int kk = 0; kk < k; kk++)
            for (int r = 0; r < 6; r++) apack[kk * 6 + r] = ai[r * a_rs + kk * a_cs];
        for (int j = 0; j < nfull; j += NR)
            tile6(k, apack, 1, 6, b + j, b_rs, bias, c + i * c_rs + j, c_rs, j, NR, accumulate);
        if (nt && k <= KMAX)
            tile6(k, apack, 1, 6, pack, NR, bias, c + i * c_rs + nfull, c_rs, nfull, nt, accumulate);
    }
    for (; i < m; i++) {
        for (int j = 0; j < nfull; j += NR)
            tile1(k, a + i * a_rs, a_cs, b + j, b_rs, bias, c + i * c_rs + j, j, NR, accumulate);
        if (nt && k <= KMAX)
            tile1(k, a + i * a_rs, a_cs, pack, NR, bias, c + i * c_rs + nfull, nfull, nt, accumulate);
    }
    if (nt && k > KMAX)             /* a column tail with a long k: one chain each */
        for (int r = 0; r < m; r++)
            for (int j = nfull; j < n; j++)
                one(r, j, k, a, a_rs, a_cs, b, b_rs, 1, bias, c, c_rs, accumulate);
}

void ngpt_f32_gemm__avx2(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                         const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                         float *c, ptrdiff_t c_rs, bool accumulate)
{
    if (m <= 0 || n <= 0) return;
    if (k > KMAX && b_cs != 1) {    /* too big to pack on the stack: same bits, slower */
        ngpt_f32_gemm_ref(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, c, c_rs, accumulate);
        return;
    }
    _Alignas(32) float pack[KMAX * NR];
    if (b_cs == 1 && a_cs != 1 && k <= KA && m >= 6) {
        gemm_strided_a(m, n, k, a, a_rs, a_cs, b, b_rs, bias, c, c_rs, accumulate, pack);
        return;
    }
    const int m6 = m - m % 6;
    for (int j = 0; j < n; j += NR) {
        const int nj = n - j < NR ? n - j : NR;
        const float *bp;
        ptrdiff_t bstride;
        if (b_cs == 1 && nj == NR) {
            bp = b + j, bstride = b_rs;
        } else if (k <= KMAX) {
            for (int kk = 0; kk < k; kk++) {
                float *pk = pack + kk * NR;
                const float *bk = b + kk * b_rs + j * b_cs;
                int jj = 0;
                for (; jj < nj; jj++) pk[jj] = bk[jj * b_cs];
                for (; jj < NR; jj++) pk[jj] = 0.0f;
            }
            bp = pack, bstride = NR;
        } else {                    /* b_cs == 1, a column tail with a long k */
            for (int i = 0; i < m; i++)
                for (int jj = 0; jj < nj; jj++)
                    one(i, j + jj, k, a, a_rs, a_cs, b, b_rs, b_cs, bias, c, c_rs, accumulate);
            continue;
        }
        int i = 0;
        for (; i < m6; i += 6)
            tile6(k, a + i * a_rs, a_rs, a_cs, bp, bstride, bias, c + i * c_rs + j, c_rs, j, nj,
                  accumulate);
        for (; i + 4 <= m; i += 4)
            tile4(k, a + i * a_rs, a_rs, a_cs, bp, bstride, bias, c + i * c_rs + j, c_rs, j, nj,
                  accumulate);
        for (; i < m; i++)
            tile1(k, a + i * a_rs, a_cs, bp, bstride, bias, c + i * c_rs + j, j, nj, accumulate);
    }
}
