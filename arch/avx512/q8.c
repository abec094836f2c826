/* q8.c — AVX-512 VNNI 8-bit products, bit-identical to the reference
 * (src/ref/q8.c; the rule and the layouts: src/q8.h). Compiled only where
 * the build has AVX-512 VNNI (-mavx512vnni: the Makefile adds it where the
 * build machine has it); without it the list's VNNI flag runs the AVX2
 * kernel (arch/avx2/q8.c). Where the CPU has AMX, blocks of 16 rows (a
 * prefill's) go to its tiles instead (below, "AMX").
 *
 *  - gemm_q8: vpdpbusd adds the four products of each output's quad (four
 *    consecutive k of one output: 4 bytes of the panel) into its int32
 *    lane, exactly (it wraps rather than saturates, and no sum comes near
 *    2^31). Its first operand is unsigned: the weights are, as w ^ 0x80 =
 *    w + 128 (1..255, q is never -128); the row's quad, broadcast, is the
 *    signed one. So a lane holds sum((w + 128) x) = sum(w x) + 128 S, S the
 *    sum of the row's 32 values of the group: each lane starts the group at
 *    -128 S (|sum| <= 32 * 255 * 127 < 2^21). The group's int32 sums are
 *    exact, so their order is free; the float chain over the groups is the
 *    reference's: one fmadd per group and output, lane = output.
 *  - Rows go in blocks of up to 8 against one panel at a time (16 outputs,
 *    one zmm per row), panel after panel, so the weights stream from their
 *    first byte to their last, and a loaded weight quad serves every row of
 *    the block. With 3 rows or fewer, each group's odd quads go to second
 *    chains, added at the group's end (4 chains or more in flight).
 *  - Decoding's blocks are bound by reading the weights, and two things
 *    make that read faster from memory on Zen 4: blocks of up to 4 rows
 *    load the weights as 32-byte halves, and a one-row block adds every
 *    quad it loads into a chain that runs through the whole panel and
 *    computes nothing (`pace`), which keeps the core from running far
 *    ahead of the memory with demand loads. Measured on gpt2-small's 96 MB
 *    of one-row products (12 layers), alternating with the AVX2 kernel,
 *    whose many instructions a quad pace it alike: 2-4% slower than it
 *    with both, 9-13% without the chain, 11-17% with 64-byte loads too
 *    (the model's decoding: 250 -> 263-331 tok/s; the default model's,
 *    from L3, unchanged; where the weights sit in L1 or L2 the chain costs
 *    up to 20%). More rows (prefill) are bound by the arithmetic, but
 *    short passes of 5 to 8 rows (a speculative check of 4 proposals) are
 *    not: with the prefetch (their loads are 64 bytes wide either way) a
 *    5-position pass of GPT-2 124M's shape took 9.6-9.8 ms instead of
 *    10.9-12.0 (1.18-1.27 decode steps instead of 1.35-1.43; five
 *    interleaved runs of 60 passes, another job on the other core) and a
 *    512-position prefill no longer (576-692 ms against 616-798).
 *  - On Intel (Emerald Rapids, SmolLM2-135M's 144 MiB of one-row products
 *    per token, from L3) the pace and the halves are what slows it: 64-byte
 *    loads with a software prefetch 8 KiB ahead into L2 (prefetch_ahead.h)
 *    run a token's products 1.6x as fast as Zen 4's choice (median of 40
 *    interleaved runs; 64-byte loads alone 1.2x; the prefetch with Zen
 *    4's loads 1.1-1.2x).
 *    So the walk is chosen per CPU: AMD's paced blocks, everyone else's
 *    prefetched ones. Only the loads differ; the integer sums are exact,
 *    so both give the same bits.
 *  - The block's -128 S are computed once for all the panels, for as many
 *    groups as a small stack array holds (1024 int32: k up to 4096 at 8
 *    rows, 32768 at one); a longer row runs its chain that many groups at
 *    a time, the partial sums kept in C (a float stored and loaded is the
 *    same float), the bias added after the last. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE         /* glibc: syscall() for the AMX permission */
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../prefetch_ahead.h"
#include "kernels_avx512.h"

#if defined(__AVX512VNNI__)

enum { G = NGPT_Q8_GROUP, NR = NGPT_Q8_NR, BLOCK = NGPT_Q8_BLOCK };
enum { ROWS = 8, CORR = 1024 };     /* rows of a block; int32 corrections (4 KiB) */

/* -128 times the sum of each group g0..g1-1 of a quantized row x. */
static void corrections(int32_t *corr, const int8_t *x, int g0, int g1)
{
    const __m256i ones = _mm256_set1_epi8(1);
    for (int g = g0; g < g1; g++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + (size_t)g * G));
        const __m256i s8 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, v);
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
        corr[g - g0] = -128 * _mm_cvtsi128_si32(s);
    }
}

/* A row's quad (4 bytes) as a 32-bit integer. */
static inline int32_t quad_of(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The lanes of outputs below n (counted from the panel's first). */
static inline __mmask16 lanes(int n)
{
    return n >= NR ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

/* What a block needs besides its rows: groups g0..g1-1 of a chain (first:
 * it starts at +0.0f, else at C; last: the bias follows), the rows' -128 S
 * (row r's at corr + r * chunk, from group g0). */
typedef struct q8_part {
    int k, g0, g1, chunk;
    bool first, last;
    const int32_t *corr;
} q8_part;

#define Q8_QUADS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define Q8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define Q8_SPLIT (R <= 3)

/* 64 bytes of the weights: one load, or (paced, R <= 4) two 32-byte halves */
#define Q8_LOAD(R, p)                                                                    \
    (paced && (R) <= 4 ? _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(p))), \
                                   _mm256_loadu_si256((const __m256i *)(const void *)((p) + 32)), 1) \
              : _mm512_loadu_si512(p))

/* row r's chain: from zero, or from C (a later part of a long row) */
#define Q8_FINIT(r)                                                                      \
    __m512 f##r = _mm512_setzero_ps();                                                   \
    if (R > (r) && !pt->first) f##r = _mm512_maskz_loadu_ps(keep, c + (r) * c_rs);
/* the group's int32 sums start at -128 S (the second chains at 0) */
#define Q8_IINIT(r)                                                                      \
    __m512i i##r = _mm512_setzero_si512(), j##r = i##r;                                  \
    if (R > (r)) i##r = _mm512_set1_epi32(pt->corr[(r) * pt->chunk + g - pt->g0]);
#define Q8_DOT(r)                                                                        \
    if (R > (r)) {                                                                       \
        const __m512i xq = _mm512_set1_epi32(quad_of(x + (r) * xs + g * G + 4 * s));     \
        if (Q8_SPLIT && (s & 1)) j##r = _mm512_dpbusd_epi32(j##r, w, xq);                 \
        else i##r = _mm512_dpbusd_epi32(i##r, w, xq);                                    \
    }
/* quad s of the group (as w + 128) against every row */
#define Q8_QUAD(S)                                                                       \
    {                                                                                    \
        const int s = (S);                                                               \
        if (!paced || R > 4) prefetch_ahead(q + s * 64);     /* the loads wait on the weights */ \
        const __m512i w = _mm512_xor_si512(bias80, Q8_LOAD(R, q + s * 64));              \
        if (paced && R == 1) pace = _mm512_add_epi32(pace, w);                                    \
        Q8_ROWS(Q8_DOT)                                                                  \
    }
#define Q8_FMA(r)                                                                        \
    if (R > (r)) {                                                                       \
        if (Q8_SPLIT) i##r = _mm512_add_epi32(i##r, j##r);                               \
        const __m512 xd = _mm512_set1_ps(ngpt_q8_row_scales(x + (r) * xs, pt->k)[g]);    \
        f##r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i##r), _mm512_mul_ps(xd, wd), f##r);   \
    }
/* after the last part: + bias; the outputs below n */
#define Q8_STORE(r)                                                                      \
    if (R > (r)) {                                                                       \
        if (pt->last && bias) f##r = _mm512_add_ps(f##r, _mm512_maskz_loadu_ps(keep, bias)); \
        _mm512_mask_storeu_ps(c + (r) * c_rs, keep, f##r);                               \
    }

/* R rows (x, xs bytes apart) against one panel: its outputs below n at c
 * (rows c_rs apart), bias from the panel's first output; paced: Zen 4's
 * loads, and no prefetch up to 4 rows (exactly as measured there), else
 * 64-byte loads and prefetches (8 rows too: 1.3x as fast on Emerald Rapids;
 * 5 rows on Zen 4 too: below). */
static inline __attribute__((always_inline)) void
q8_block(const int R, const bool paced, const q8_part *pt, const int8_t *x, ptrdiff_t xs, const int8_t *panel,
         const float *bias, float *c, ptrdiff_t c_rs, int n)
{
    const __m512i bias80 = _mm512_set1_epi8((char)0x80);
    const __mmask16 keep = lanes(n);
    __m512i pace = _mm512_setzero_si512();  /* paced, one row: a chain through every quad (above) */
    Q8_ROWS(Q8_FINIT)
    for (int g = pt->g0; g < pt->g1; g++) {
        const int8_t *blk = panel + (size_t)g * BLOCK, *q = blk + NR * sizeof(float);
        Q8_ROWS(Q8_IINIT)
        Q8_QUADS(Q8_QUAD)
        if (!paced || R > 4) prefetch_ahead(blk);
        const __m512 wd = _mm512_castsi512_ps(Q8_LOAD(R, blk));
        Q8_ROWS(Q8_FMA)
    }
    Q8_ROWS(Q8_STORE)
    if (paced && R == 1) __asm__ __volatile__("" : : "v"(pace));    /* kept, never stored */
}

/* ---- the walk: R rows against every panel, in order */

typedef void (*q8_rows_fn)(const q8_part *pt, int n, const int8_t *x, ptrdiff_t xs,
                           const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs);
#define Q8_ROWS_FN(name, R, paced)                                                       \
    static void name(const q8_part *pt, int n, const int8_t *x, ptrdiff_t xs,             \
                     const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)      \
    {                                                                                    \
        const size_t ps = (size_t)ngpt_q8_groups(pt->k) * BLOCK;                         \
        for (int j0 = 0; j0 < n; j0 += NR)                                               \
            q8_block(R, paced, pt, x, xs, wq + (size_t)(j0 / NR) * ps,                   \
                     bias ? bias + j0 : NULL, c + j0, c_rs, n - j0);                     \
    }
Q8_ROWS_FN(rows_1, 1, false) Q8_ROWS_FN(rows_2, 2, false) Q8_ROWS_FN(rows_3, 3, false)
Q8_ROWS_FN(rows_4, 4, false) Q8_ROWS_FN(rows_5, 5, false) Q8_ROWS_FN(rows_6, 6, false)
Q8_ROWS_FN(rows_7, 7, false) Q8_ROWS_FN(rows_8, 8, false)
Q8_ROWS_FN(paced_1, 1, true) Q8_ROWS_FN(paced_2, 2, true) Q8_ROWS_FN(paced_3, 3, true)
Q8_ROWS_FN(paced_4, 4, true) Q8_ROWS_FN(paced_5, 5, true) Q8_ROWS_FN(paced_6, 6, true)
Q8_ROWS_FN(paced_7, 7, true) Q8_ROWS_FN(paced_8, 8, true)
static const q8_rows_fn rows_of[ROWS + 1] = {NULL,   rows_1, rows_2, rows_3, rows_4,
                                            rows_5, rows_6, rows_7, rows_8};
/* AMD's: Zen 4's walk (paced up to 4 rows; more are bound by the arithmetic) */
static const q8_rows_fn paced_rows_of[ROWS + 1] = {NULL,   paced_1, paced_2, paced_3, paced_4,
                                                  paced_5, paced_6, paced_7, paced_8};

/* ---- AMX: 16 rows at a time, where the CPU and the kernel allow it
 *
 * A group's block of a panel (8 quads of 16 outputs, 64 bytes each) is an
 * AMX B tile as it lies, and 16 quantized rows at the group's offset are an
 * A tile of 32 bytes a row; tdpbssd (signed by signed) gives each row's
 * and output's group sum in int32, exactly as the reference's, and the
 * float chain over the groups is the same fmadd per group and output
 * (lane = output) as the blocks above. Where the CPU has no AMX, Linux
 * refuses the tile state or NGPT_CPU_HIDE lists amx, the blocks above
 * take every row. */
#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

/* AMX_MAX_GROUPS: k up to 8192 (16 KiB of row scales on the stack); longer
 * rows take the blocks above */
enum { AMX_ROWS = 16, AMX_MAX_GROUPS = 256, ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };

/* Whether "amx" is an item of NGPT_CPU_HIDE's comma-separated list (the
 * features src/base/cpu.c treats as absent; the kernels cannot call it). */
static bool amx_hidden(void)
{
    for (const char *p = getenv("NGPT_CPU_HIDE"); p && *p; p += strcspn(p, ","), p += *p != 0)
        if (!strncmp(p, "amx", 3) && (p[3] == 0 || p[3] == ',')) return true;
    return false;
}

/* cpuid's AMX-TILE and AMX-INT8 (leaf 7 edx bits 24, 25), then Linux's
 * permission for the process (8 KiB of tile state a thread, handed out on
 * request; after it, a sigaltstack too small for that state is refused):
 * asked once, on the first product of 16 rows or more. */
static bool amx_usable(void)
{
    static atomic_int state;        /* 0: not asked yet; 1 usable; -1 not */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (!s) {
        unsigned a, b, c, d;
        const bool cpu = !amx_hidden() && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
                         (d >> 24 & 1u) && (d >> 25 & 1u);
        s = cpu && syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 1 : -1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s > 0;
}

/* palette 1: tile 0 A (16 rows of 32 bytes), 1 B (8 rows of 64), 2 and 3 C (16 of 64) */
typedef struct amx_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_config;

/* 16 rows (x, xs bytes apart) against every panel: outputs below n at c. */
__attribute__((target("amx-tile,amx-int8"))) static void
amx_rows(int n, int k, const int8_t *x, ptrdiff_t xs, const int8_t *wq, const float *bias,
         float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    const size_t ps = (size_t)groups * BLOCK;
    /* the rows' scales a group at a time, so a row's is a broadcast from
     * one address and the 16 chains stay in registers */
    float xd[AMX_MAX_GROUPS][AMX_ROWS] __attribute__((aligned(64)));
    for (int r = 0; r < AMX_ROWS; r++) {
        const float *d = ngpt_q8_row_scales(x + r * xs, k);
        for (int g = 0; g < groups; g++) xd[g][r] = d[g];
    }
    /* two C tiles and buffers in turn: the next group's product runs while
     * this one's sums go into the chains */
    int32_t sums[2][AMX_ROWS][NR] __attribute__((aligned(64)));
#define AMX_GROUP(T, g)                                                                  \
    do {                                                                                 \
        _tile_zero(T);                                                                   \
        _tile_loadd(0, x + (size_t)(g) * G, xs);                                         \
        _tile_loadd(1, panel + (size_t)(g) * BLOCK + NR * sizeof(float), NR * 4);        \
        _tile_dpbssd(T, 0, 1);                                                           \
        _tile_stored(T, sums[(T) - 2], NR * sizeof(int32_t));                            \
    } while (0)
    for (int j0 = 0; j0 < n; j0 += NR) {
        const int8_t *panel = wq + (size_t)(j0 / NR) * ps;
        const __mmask16 keep = lanes(n - j0);
        __m512 f[AMX_ROWS];
        for (int r = 0; r < AMX_ROWS; r++) f[r] = _mm512_setzero_ps();
        if (groups) AMX_GROUP(2, 0);
        for (int g = 0; g < groups; g++) {
            if (g + 1 < groups) {
                if (g & 1) AMX_GROUP(2, g + 1);
                else AMX_GROUP(3, g + 1);
            }
            const int32_t(*sg)[NR] = sums[g & 1];
            const __m512 wd = _mm512_loadu_ps((const float *)(const void *)(panel + (size_t)g * BLOCK));
            _Pragma("GCC unroll 16")
            for (int r = 0; r < AMX_ROWS; r++)
                f[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sg[r])),
                                       _mm512_mul_ps(_mm512_set1_ps(xd[g][r]), wd), f[r]);
        }
        for (int r = 0; r < AMX_ROWS; r++) {
            if (bias) f[r] = _mm512_add_ps(f[r], _mm512_maskz_loadu_ps(keep, bias + j0));
            _mm512_mask_storeu_ps(c + r * c_rs + j0, keep, f[r]);
        }
    }
#undef AMX_GROUP
}

/* Rows 0..m-1 in blocks of 16 by AMX; how many it took (0 without AMX). */
__attribute__((target("amx-tile,amx-int8"))) static int
amx_gemm(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs, const int8_t *wq,
         const float *bias, float *c, ptrdiff_t c_rs)
{
    if (m < AMX_ROWS || ngpt_q8_groups(k) > AMX_MAX_GROUPS || !amx_usable()) return 0;
    amx_config cfg = {.palette = 1};
    cfg.rows[0] = AMX_ROWS, cfg.colsb[0] = G;
    cfg.rows[1] = NGPT_Q8_QUADS, cfg.colsb[1] = NR * 4;
    cfg.rows[2] = cfg.rows[3] = AMX_ROWS, cfg.colsb[2] = cfg.colsb[3] = NR * sizeof(int32_t);
    _tile_loadconfig(&cfg);
    int i = 0;
    for (; i + AMX_ROWS <= m; i += AMX_ROWS)
        amx_rows(n, k, xq + i * xq_rs, xq_rs, wq, bias, c + i * c_rs, c_rs);
    _tile_release();
    return i;
}
#else
static int amx_gemm(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs, const int8_t *wq,
                    const float *bias, float *c, ptrdiff_t c_rs)
{
    (void)m, (void)n, (void)k, (void)xq, (void)xq_rs, (void)wq, (void)bias, (void)c, (void)c_rs;
    return 0;
}
#endif

void ngpt_f32_gemm_q8__avx512(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                              const int8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    const q8_rows_fn *const walk = prefetch_few_rows() ? rows_of : paced_rows_of;
    int32_t corr[CORR];
    for (int i = amx_gemm(m, n, k, xq, xq_rs, wq, bias, c, c_rs); i < m; i += ROWS) {
        const int R = m - i < ROWS ? m - i : ROWS;
        const int8_t *x = xq + i * xq_rs;
        q8_part pt = {k, 0, 0, CORR / R, true, false, corr};
        do {    /* once when k = 0: the chains are +0.0f */
            pt.g1 = groups - pt.g0 < pt.chunk ? groups : pt.g0 + pt.chunk;
            pt.last = pt.g1 == groups;
            for (int r = 0; r < R; r++) corrections(corr + r * pt.chunk, x + r * xq_rs, pt.g0, pt.g1);
            walk[R](&pt, n, x, xq_rs, wq, bias, c + i * c_rs, c_rs);
            pt.first = false, pt.g0 = pt.g1;
        } while (pt.g0 < groups);
    }
}

#endif
