/* gemm.c — AVX-512 matrix products, bit-identical to the reference: every
 * output is one fma chain over k in increasing order from +0.0f (one lane of
 * _mm512_fmadd_ps per k is exactly fmaf), then + bias, then added to the old
 * C when accumulating. Vectorised across the 16 output columns of a packed
 * panel (one __m512), never across k.
 *
 *  - gemm, and gemm_packed for m > 8: the shared cache-blocked driver
 *    (arch/gemm_blocked.h) around an 8x32 register tile that reads two
 *    packed panels side by side (gemm.h's 16-column layout, the same for
 *    every ISA): 16 accumulators, two B vectors, A broadcast from memory
 *    into the fmas; 16 independent chains cover 2 fma pipes x 4 cycles of
 *    latency with room to spare (Zen 5, Xeon; Zen 4 runs one 512-bit fma a
 *    cycle), and each k step loads 10 values for 16 fmas. A last single
 *    panel runs the same tile 8x16. Measured against other shapes on Zen 4
 *    (same run, min of 9): 8x32 and 8x16 1-4% faster than AVX2's 6x16, 6x32
 *    1%, 12x16 5% slower and 12x32 7% (twelve rows of A read in place 4 KiB
 *    apart share an L1 set: 23% slower where k = 1024).
 *  - gemm_packed for m <= 8 (decode steps, beams): the blocks of
 *    arch/gemv.h with one __m512 per panel row, three and four rows on two
 *    panels at once.
 *  - pack_w is AVX2's (a copy: the list's avx512 column says AVX2).
 * Same shape as arch/avx2/gemm.c, which has two __m256 where this has one
 * __m512, and 6 rows of one panel where this has 8 of two. */
#include <immintrin.h>

#define NGPT_TILE_MR 8
#define NGPT_TILE_NR 32
#include "../gemm_blocked.h"
#include "kernels_avx512.h"

/* ---- the 8x32 tile of the blocked driver (8x16 for a last single panel) */

#define TILE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* acc = cin or 0, for one (H = 1) or both (H = 2) panels of row r */
#define TILE_INIT(r)                                                                     \
    __m512 c##r##0 = _mm512_setzero_ps(), c##r##1 = _mm512_setzero_ps();                 \
    if (io->cin) {                                                                       \
        c##r##0 = _mm512_loadu_ps(io->cin + (r) * io->cin_rs);                           \
        if (H == 2) c##r##1 = _mm512_loadu_ps(io->cin + (r) * io->cin_rs + NR);          \
    }
#define TILE_FMA(r)                                                                      \
    {                                                                                    \
        const __m512 av = _mm512_set1_ps(a[(r) * a_rs + o]);                             \
        c##r##0 = _mm512_fmadd_ps(av, b0, c##r##0);                                      \
        if (H == 2) c##r##1 = _mm512_fmadd_ps(av, b1, c##r##1);                          \
    }
#define TILE_STORE(r)                                                                    \
    store_row(io, r, 0, c##r##0);                                                        \
    if (H == 2) store_row(io, r, NR, c##r##1);

/* Columns j..j+15 of row r of a finished tile: + bias, then the old C + acc
 * (the reference's order). */
static inline void store_row(const ngpt_gemm_tile_io *io, int r, int j, __m512 acc)
{
    if (io->bias) acc = _mm512_add_ps(acc, _mm512_loadu_ps(io->bias + j));
    if (io->cadd) acc = _mm512_add_ps(_mm512_loadu_ps(io->cadd + r * io->cadd_rs + j), acc);
    _mm512_storeu_ps(io->cout + r * io->cout_rs + j, acc);
}

/* H panels (16 columns each) of MR rows. */
static inline __attribute__((always_inline)) void
tile_panels(const int H, int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
            const ngpt_gemm_tile_io *io)
{
    TILE_ROWS(TILE_INIT)
    const float *bq = bp + io->b_next;
    ptrdiff_t o = 0;
    for (int kk = 0; kk < kc; kk++, bp += NR, bq += NR, o += a_cs) {
        const __m512 b0 = _mm512_loadu_ps(bp), b1 = H == 2 ? _mm512_loadu_ps(bq) : b0;
        TILE_ROWS(TILE_FMA)
    }
    TILE_ROWS(TILE_STORE)
}

static void tile_8x32(int kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs, const float *bp,
                      const ngpt_gemm_tile_io *io)
{
    if (io->panels == 2) tile_panels(2, kc, a, a_rs, a_cs, bp, io);
    else tile_panels(1, kc, a, a_rs, a_cs, bp, io);
}

void ngpt_f32_gemm__avx512(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                           const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                           float *c, ptrdiff_t c_rs, bool accumulate, float *work)
{
    ngpt_gemm_blocked(tile_8x32, m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, NULL, bias, c, c_rs,
                      accumulate, work);
}

/* ---- m <= 8 on packed panels: the blocks of arch/gemv.h with one __m512
 * per panel row (its blocks but 3x2 and 4x2, below). */
#define GV_VEC __m512
#define GV_ACC(r, p) __m512 s##r##p = _mm512_setzero_ps();
#define GV_LOAD(p)                                                                       \
    __m512 w##p = _mm512_setzero_ps();                                                   \
    if (P > p) w##p = _mm512_loadu_ps(w + (p) * ps + (size_t)kk * NR);
#define GV_PREFETCH(p, ahead)                                                            \
    if (P > p) _mm_prefetch((const char *)(w + (p) * ps + (ahead)), _MM_HINT_T0);
#define GV_BROADCAST(x) _mm512_set1_ps(*(x))
#define GV_FMA(r, p)                                                                     \
    if (R > r && P > p) s##r##p = _mm512_fmadd_ps(av, w##p, s##r##p);
#define GV_STORE(r, p)                                                                   \
    if (R > r && P > p) gv_store(c + (r) * c_rs + (p) * NR, s##r##p, bias, (p) * NR, n);

/* Columns j0..j0+15 of one row (only those below n): + bias. */
static inline void gv_store(float *c, __m512 acc, const float *bias, int j0, int n)
{
    const __mmask16 keep = n - j0 >= NR ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j0)) - 1);
    if (bias) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(keep, bias + j0));
    _mm512_mask_storeu_ps(c, keep, acc);
}

/* 32 registers: three and four rows take two panels at once (6 and 8
 * chains; one panel leaves 3 and 4 chains, half the fma pipes' latency
 * uncovered), so a short pass (a speculative check of 5 positions) costs
 * less per row than the one-panel blocks. */
#define GV_OWN_BLOCKS
#include "../gemv.h"
GV_FN(1, 4) GV_FN(2, 2) GV_FN(3, 2) GV_FN(4, 2) GV_FN(1, 1) GV_FN(2, 1) GV_FN(3, 1) GV_FN(4, 1)
static const ngpt_gemv_blocks gemv_blocks = {
    {4, 2, 2, 2}, {gv_1x4, gv_2x2, gv_3x2, gv_4x2}, {gv_1x1, gv_2x1, gv_3x1, gv_4x1}};

void ngpt_f32_gemm_packed__avx512(int m, int n, int k, const float *a, ptrdiff_t a_rs,
                                  const float *wp, const float *bias, float *c, ptrdiff_t c_rs)
{
    ngpt_gemm_packed_run(tile_8x32, &gemv_blocks, m, n, k, a, a_rs, wp, bias, c, c_rs);
}
