/* q4.c — the cases of the 4-bit kernels: pack_q4, gemm_q4, embed_q4. Byte buffers
 * sit in float slots (whole floats of bytes, so every byte is compared).
 * Each has a definition written out apart from the reference: q4.h's rule
 * with libm (nearbyintf, fabsf, fminf/fmaxf) and its layout element by
 * element, and the product as the chain over the groups of the weights'
 * values decoded from the packed bytes one by one.
 *
 * Values (the `kind` of a shape):
 *   K_PLAIN   uniform in [-1, 1) (activations) or [-0.05, 0.05) (weights);
 *   K_WILD    groups of every sort: huge, below the scale floor (zero), at
 *             it, subnormal, ties, NaN and Inf, all zero, negative maxima,
 *             values past +7 (clamped);
 *   K_BIAS    plain values and a bias with subnormals and values that
 *             cancel the sums (ARMv7 flushes a subnormal sum);
 *   K_EXTREME the packed weights written directly, every one -8 or +7
 *             (groups all -8, all +7, alternating), every activation +-127
 *             (all +127, all -127, alternating): the largest sums, and the
 *             largest int16 partial sums of the AVX2 kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant_cases.h"

enum { G = NGPT_Q4_GROUP, NR = NGPT_Q4_NR, BLOCK = NGPT_Q4_BLOCK };

/* Wild groups in rows of k floats (rs apart), on top of plain values. */
static void wild(float *x, int rows, ptrdiff_t rs, int k)
{
    for (int r = 0; r < rows; r++)
        for (int g = 0; g * G < k; g++) {
            const int n = k - g * G < G ? k - g * G : G;
            float *xg = x + r * rs + g * G;
            switch ((r * 5 + g) % 10) {
            case 0: for (int t = 0; t < n; t++) xg[t] *= 1e30f; break;
            case 1: for (int t = 0; t < n; t++) xg[t] *= 1e-14f; break;
            case 2:                                             /* at the floor */
                for (int t = 1; t < n; t++) xg[t] *= 7.0f * NGPT_Q8_MIN_SCALE;
                xg[0] = -8.0f * NGPT_Q8_MIN_SCALE;
                break;
            case 3: for (int t = 0; t < n; t++) xg[t] = t % 2 ? 0x1p-140f * (float)t : -0x1p-130f; break;
            case 4:                                             /* ties to even, and +8 */
                for (int t = 1; t < n; t++) xg[t] = (float)((t * 3) % 17 - 8) + 0.5f;
                xg[0] = -8.0f;
                break;
            case 5: xg[n - 1] = NAN; break;
            case 6: xg[n / 2] = -INFINITY; break;
            case 7: memset(xg, 0, (size_t)n * sizeof(float)); break;
            case 8: xg[n - 1] = 1.0f, xg[0] = -1.0f; break;     /* two maxima: the first */
            default: break;
            }
        }
}

/* ---- the rule and the layout, written out */

/* Row j's group g by q4.h's rule: its scale, its values in q[0..31]. */
static float rule_def(int8_t q[G], const float *x, int n)
{
    float m = 0.0f, amax = 0.0f;
    bool nonfinite = false;
    for (int t = 0; t < n; t++) {
        nonfinite |= !isfinite(x[t]);
        if (fabsf(x[t]) > amax) amax = fabsf(x[t]), m = x[t];
    }
    memset(q, 0, G);
    if (nonfinite) return NAN;
    if (amax / 8.0f < NGPT_Q8_MIN_SCALE) return 0.0f;
    for (int t = 0; t < n; t++) q[t] = (int8_t)fminf(fmaxf(nearbyintf(x[t] * (-8.0f / m)), -8.0f), 7.0f);
    return m / -8.0f;
}

/* The byte holding input t of output jj in a block, and its nibble's shift. */
static size_t byte_of(int jj, int t) { return NR * 4 + (size_t)(t % 16 / 4) * 64 + (size_t)jj * 4 + t % 4; }
static int shift_of(int t) { return t < 16 ? 0 : 4; }

/* ---- pack_q4: shape n k kind; W rows k + 3 floats apart */

enum { PW, PP };

static void pack_tests(kc_shapes *out)
{
    static const int ns[] = {1, 7, 15, 16, 17, 33, 100}, ks[] = {0, 1, 5, 16, 31, 32, 33, 64, 100};
    for (int in = 0; in < 7; in++)
        for (int ik = 0; ik < 9; ik++)
            for (int kind = 0; kind < 2; kind++) kc_add_shape(out, ns[in], ks[ik], kind);
}

static void pack_bench(kc_shapes *out) { kc_add_shape(out, 1024, 256, 0), kc_add_shape(out, 256, 1024, 0); }

static void pack_setup(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1);
    float *w = kc_rand(st, PW, (size_t)n * (k + 3), 0.05f);
    if (kc_int(st, 2) == K_WILD) wild(w, n, k + 3, k);
    bytes_slot(st, PP, ngpt_q4_packed_bytes(n, k));       /* every byte is written */
    st->bytes = 4.0 * n * k + (double)ngpt_q4_packed_bytes(n, k);
}

static void pack_run(kc_state *st, const ngpt_kernels *t)
{
    const int k = kc_int(st, 1);
    t->pack_q4((uint8_t *)(void *)st->buf[PP], st->buf[PW], k + 3, kc_int(st, 0), k);
}

static void pack_def(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1), groups = ngpt_q8_groups(k);
    uint8_t *wp = (uint8_t *)(void *)st->buf[PP];
    for (int p = 0; p * NR < n; p++)
        for (int g = 0; g < groups; g++) {
            uint8_t *blk = wp + ((size_t)p * groups + g) * BLOCK;
            memset(blk + NR * 4, 0, BLOCK - NR * 4);
            for (int jj = 0; jj < NR; jj++) {
                const int j = p * NR + jj;
                int8_t q[G] = {0};
                const float d = j < n ? rule_def(q, st->buf[PW] + j * (k + 3) + g * G,
                                                 k - g * G < G ? k - g * G : G)
                                      : 0.0f;
                memcpy(blk + 4 * jj, &d, 4);
                for (int t = 0; t < G; t++) blk[byte_of(jj, t)] |= (uint8_t)((q[t] & 15) << shift_of(t));
            }
        }
}

const kc_case kc_pack_q4 = {"n k kind", pack_tests, pack_bench, pack_setup, pack_run, pack_def};

/* ---- gemm_q4: shape m n k kind (+4: a bias); X quantized by the
 * reference, W packed by it (K_EXTREME: its values then overwritten); C
 * rows n + 3 floats apart */

enum { GX, GWP, GBIAS, GC };

static void gemm_tests(kc_shapes *out)
{
    quant_gemm_tests(out);
    for (int m = 1; m <= 9; m += 2)
        for (int in = 0; in < QUANT_NS; in++) {
            kc_add_shape(out, m, quant_ns[in], 100, K_WILD | HAS_BIAS);
            kc_add_shape(out, m, quant_ns[in], 70, K_BIAS | HAS_BIAS);
            kc_add_shape(out, m, quant_ns[in], 96, K_EXTREME | (in % 2 ? HAS_BIAS : 0));
            kc_add_shape(out, m, quant_ns[in], 77, K_EXTREME);
        }
    /* rows longer than the AVX-512 kernel takes at once (1024 groups over a block's rows) */
    static const int longk[][2] = {{1, 32769}, {2, 16385}, {3, 10945}, {8, 4096}, {9, 4097}, {5, 2049}};
    for (int s = 0; s < 6; s++) {
        kc_add_shape(out, longk[s][0], 33, longk[s][1], s % 2 ? HAS_BIAS : 0);
        kc_add_shape(out, longk[s][0], 17, longk[s][1], K_EXTREME | HAS_BIAS);
    }
}

/* The extreme values: weight group (j, g) all -8, all +7 or alternating;
 * activation group (i, g) all +127, all -127 or alternating. */
static int extreme_w(int j, int g, int t)
{
    const int sort = (j + g) % 3;
    return sort == 0 ? -8 : sort == 1 ? 7 : t % 2 ? 7 : -8;
}

static float extreme_x(int i, int g, int t)
{
    const int sort = (i * 2 + g) % 3;
    return sort == 0 ? 1.0f : sort == 1 ? -1.0f : t % 3 ? 1.0f : -1.0f;
}

static void gemm_setup(kc_state *st)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2), kind = kc_int(st, 3) & 3;
    float *x = kc_rand(st, GC, (size_t)m * k, 1.0f);      /* staging, replaced below */
    float *w = kc_rand(st, GBIAS, (size_t)n * k, 0.05f);
    if (kind == K_WILD) wild(x, m, k, k), wild(w, n, k, k);
    if (kind == K_EXTREME)
        for (int i = 0; i < m; i++)
            for (int kk = 0; kk < k; kk++) x[i * k + kk] = extreme_x(i, kk / G, kk % G);
    uint8_t *xq = bytes_slot(st, GX, (size_t)m * (size_t)row_rs(k));
    ngpt_f32_quantize_q8_ref((int8_t *)xq, row_rs(k), x, k, m, k);
    uint8_t *wp = bytes_slot(st, GWP, ngpt_q4_packed_bytes(n, k));
    ngpt_f32_pack_q4_ref(wp, w, k, n, k);
    if (kind == K_EXTREME)
        for (int j = 0; j < n; j++)
            for (int kk = 0; kk < k; kk++) {
                const int g = kk / G, t = kk % G;
                uint8_t *blk = wp + ((size_t)(j / NR) * ngpt_q8_groups(k) + g) * BLOCK;
                uint8_t *b = blk + byte_of(j % NR, t);
                const int s = shift_of(t);
                *b = (uint8_t)((*b & ~(15 << s)) | ((extreme_w(j, g, t) & 15) << s));
                const float d = (j % 2 ? 0.01f : -0.02f) * (float)(1 + g % 3);
                memcpy(blk + 4 * (j % NR), &d, 4);
            }
    free(st->buf[GC]), free(st->buf[GBIAS]);
    st->buf[GC] = st->buf[GBIAS] = NULL;
    quant_bias(st, GBIAS, n, kind);
    kc_rand(st, GC, (size_t)m * (n + 3), 1.0f);
    st->flops = 2.0 * m * n * k;
    st->bytes = (double)ngpt_q4_packed_bytes(n, k) + (double)m * (double)row_rs(k) + 4.0 * m * n;
}

static void gemm_run(kc_state *st, const ngpt_kernels *t)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2);
    t->gemm_q4(m, n, k, (const int8_t *)(void *)st->buf[GX], row_rs(k),
               (const uint8_t *)(void *)st->buf[GWP], kc_int(st, 3) & HAS_BIAS ? st->buf[GBIAS] : NULL,
               st->buf[GC], n + 3);
}

/* The product from the packed bytes, value by value. */
static void gemm_def(kc_state *st)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2), groups = ngpt_q8_groups(k);
    const int8_t *x = (const int8_t *)(void *)st->buf[GX];
    const uint8_t *wp = (const uint8_t *)(void *)st->buf[GWP];
    const float *bias = kc_int(st, 3) & HAS_BIAS ? st->buf[GBIAS] : NULL;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            const int8_t *xi = x + i * row_rs(k);
            float acc = 0.0f;
            for (int g = 0; g < groups; g++) {
                const uint8_t *blk = wp + ((size_t)(j / NR) * groups + g) * BLOCK;
                int32_t isum = 0;
                for (int t = 0; t < G; t++) {
                    const int nib = (blk[byte_of(j % NR, t)] >> shift_of(t)) & 15;
                    isum += xi[g * G + t] * (nib >= 8 ? nib - 16 : nib);
                }
                float wd;
                memcpy(&wd, blk + 4 * (j % NR), 4);
                acc = fmaf((float)isum, ngpt_q8_row_scales(xi, k)[g] * wd, acc);
            }
            st->buf[GC][i * (n + 3) + j] = bias ? acc + bias[j] : acc;
        }
}

const kc_case kc_gemm_q4 = {"m n k kind", gemm_tests, quant_gemm_bench, gemm_setup, gemm_run, gemm_def};

/* ---- embed_q4: shape n k kind; row j = (n * 5) / 7 of a packed (n, k) weight */

enum { EW, EX };

static void embed_tests(kc_shapes *out)
{
    static const int ns[] = {1, 17, 40}, ks[] = {1, 31, 33, 100};
    for (int in = 0; in < 3; in++)
        for (int ik = 0; ik < 4; ik++)
            for (int kind = 0; kind < 2; kind++) kc_add_shape(out, ns[in], ks[ik], kind);
}

static void embed_bench(kc_shapes *out) { kc_add_shape(out, 256, 256, 0); }

static int embed_row(const kc_state *st) { return kc_int(st, 0) * 5 / 7; }

static void embed_setup(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1);
    float *w = kc_rand(st, EX, (size_t)n * k, 0.05f);      /* staging */
    if (kc_int(st, 2) == K_WILD) wild(w, n, k, k);
    ngpt_f32_pack_q4_ref(bytes_slot(st, EW, ngpt_q4_packed_bytes(n, k)), w, k, n, k);
    free(st->buf[EX]);
    st->buf[EX] = NULL;
    kc_rand(st, EX, (size_t)k + 3, 1.0f);
    st->bytes = 4.5 * k;
}

static void embed_run(kc_state *st, const ngpt_kernels *t)
{
    t->embed_q4(st->buf[EX], (const uint8_t *)(void *)st->buf[EW], kc_int(st, 1), embed_row(st));
}

/* The row's values from the packed bytes, one by one, times their scales. */
static void embed_def(kc_state *st)
{
    const int k = kc_int(st, 1), j = embed_row(st), groups = ngpt_q8_groups(k);
    const uint8_t *wp = (const uint8_t *)(void *)st->buf[EW];
    for (int kk = 0; kk < k; kk++) {
        const uint8_t *blk = wp + ((size_t)(j / NR) * groups + kk / G) * BLOCK;
        const int nib = (blk[byte_of(j % NR, kk % G)] >> shift_of(kk % G)) & 15;
        float d;
        memcpy(&d, blk + 4 * (j % NR), 4);
        st->buf[EX][kk] = (float)(nib >= 8 ? nib - 16 : nib) * d;
    }
}

const kc_case kc_embed_q4 = {"n k kind", embed_tests, embed_bench, embed_setup, embed_run, embed_def};
