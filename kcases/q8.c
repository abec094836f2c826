/* q8.c — the cases of the 8-bit kernels: quantize_q8, pack_q8, gemm_q8,
 * embed_q8. Byte buffers sit in float slots (whole floats of bytes, so
 * every byte is compared). Each has a definition written out apart from
 * the reference: the rule of q8.h with libm's rounding and fabsf, the
 * packed layout element by element, and the product as the chain over the
 * groups of the quantized rows (before packing).
 *
 * Values (the `kind` of a shape):
 *   K_PLAIN  uniform in [-1, 1) (activations) or [-0.05, 0.05) (weights);
 *   K_WILD   groups of every sort: huge, tiny (below the scale floor: zero),
 *            at the floor, subnormal, ties (amax 127: x.5 values round to
 *            even), NaN and Inf, all zero;
 *   K_BIAS   plain values and a bias with subnormals and values that cancel
 *            the sums (ARMv7 flushes a subnormal sum);
 *   K_EXTREME every value +-1 (activations and weights), so every q is +-127:
 *            groups all +127, all -127 and alternating, the largest sums an
 *            int8 product can make (no overflow, no saturation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant_cases.h"

enum { G = NGPT_Q8_GROUP, NR = NGPT_Q8_NR };

/* Row r of a value pattern of kind `kind` (k values, scale s). */
static void values(float *x, int rows, ptrdiff_t rs, int k, int kind, float s)
{
    for (int r = 0; r < rows; r++)
        for (int kk = 0; kk < k; kk++) {
            const int sort = (r * 7 + kk / G) % 3, sign = sort == 2 ? kk % 2 : sort;
            x[r * rs + kk] = kind == K_EXTREME ? (sign ? -s : s) : x[r * rs + kk] * s;
        }
    if (kind != K_WILD) return;
    for (int r = 0; r < rows; r++) {
        float *xr = x + r * rs;
        for (int g = 0; g * G < k; g++) {
            const int n = k - g * G < G ? k - g * G : G;
            float *xg = xr + g * G;
            switch ((r * 7 + g) % 9) {
            case 0:                                                     /* huge */
                for (int t = 0; t < n; t++) xg[t] *= 1e30f;
                break;
            case 1:                                                     /* below the floor */
                for (int t = 0; t < n; t++) xg[t] *= 1e-14f;
                break;
            case 2:                                                     /* at the floor */
                for (int t = 1; t < n; t++) xg[t] *= 126.0f * NGPT_Q8_MIN_SCALE;
                xg[0] = 127.0f * NGPT_Q8_MIN_SCALE;
                break;
            case 3:                                                     /* subnormal */
                for (int t = 0; t < n; t++) xg[t] = t % 2 ? 0x1p-140f * (float)t : -0x1p-130f;
                break;
            case 4:                                                     /* ties to even */
                for (int t = 1; t < n; t++) xg[t] = (float)((t * 37) % 250 - 125) + 0.5f;
                xg[0] = 127.0f;
                break;
            case 5: xg[n - 1] = NAN; break;
            case 6: xg[n / 2] = -INFINITY; break;
            case 7: memset(xg, 0, (size_t)n * sizeof(float)); break;
            default: xg[n - 1] = -1.0f; break;                          /* a negative amax */
            }
        }
    }
}

/* ---- quantize_q8: shape m k kind; x rows k + 3 floats apart, quantized
 * rows one line longer than they need (which must stay as it is) */

enum { QX, QQ };

static ptrdiff_t q_rs(int k) { return (ptrdiff_t)ngpt_q8_row_bytes(k) + 64; }

static void quant_tests(kc_shapes *out)
{
    static const int ks[] = {1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000};
    for (int m = 1; m <= 3; m++)
        for (int i = 0; i < 18; i++)
            for (int kind = 0; kind < 2; kind++) kc_add_shape(out, m, ks[i], kind);
}

/* A decode step's rows (C, d_ff) and a 128-token prefill's. */
static void quant_bench(kc_shapes *out)
{
    kc_add_shape(out, 1, 256, 0), kc_add_shape(out, 1, 1024, 0), kc_add_shape(out, 128, 1024, 0);
}

static void quant_setup(kc_state *st)
{
    const int m = kc_int(st, 0), k = kc_int(st, 1);
    values(kc_rand(st, QX, (size_t)m * (k + 3), 1.0f), m, k + 3, k, kc_int(st, 2), 1.0f);
    bytes_slot(st, QQ, (size_t)m * (size_t)q_rs(k));
    st->bytes = (double)m * (4.0 * k + (double)ngpt_q8_row_bytes(k));
}

static void quant_run(kc_state *st, const ngpt_kernels *t)
{
    const int k = kc_int(st, 1);
    t->quantize_q8((int8_t *)(void *)st->buf[QQ], q_rs(k), st->buf[QX], k + 3, kc_int(st, 0), k);
}

/* The rule of q8.h, written with libm. */
static void quant_def(kc_state *st)
{
    const int m = kc_int(st, 0), k = kc_int(st, 1), groups = ngpt_q8_groups(k);
    for (int i = 0; i < m; i++) {
        int8_t *row = (int8_t *)(void *)st->buf[QQ] + i * q_rs(k);
        float *d = (float *)(void *)(row + groups * G);
        const float *x = st->buf[QX] + i * (k + 3);
        for (int g = 0; g < groups; g++) {
            float amax = 0.0f;
            bool nonfinite = false;
            for (int t = 0; t < G && g * G + t < k; t++) {
                nonfinite |= !isfinite(x[g * G + t]);
                amax = fmaxf(amax, fabsf(x[g * G + t]));
            }
            memset(row + g * G, 0, G);
            if (nonfinite) {
                d[g] = NAN;
            } else if (amax / 127.0f < NGPT_Q8_MIN_SCALE) {
                d[g] = 0.0f;
            } else {
                d[g] = amax / 127.0f;
                for (int t = 0; t < G && g * G + t < k; t++)
                    row[g * G + t] = (int8_t)nearbyintf(x[g * G + t] * (127.0f / amax));
            }
        }
    }
}

const kc_case kc_quantize_q8 = {"m k kind", quant_tests, quant_bench, quant_setup, quant_run, quant_def};

/* ---- gemm_q8: shape m n k kind (+4: a bias); W (n, k) and X quantized
 * by the reference in the setup, W packed; C rows n + 3 floats apart */

enum { GX, GW, GWP, GBIAS, GC };

static void gemm_tests(kc_shapes *out)
{
    quant_gemm_tests(out);
    for (int m = 1; m <= 9; m += 4)
        for (int in = 0; in < QUANT_NS; in++) {
            kc_add_shape(out, m, quant_ns[in], 100, K_WILD | HAS_BIAS);
            kc_add_shape(out, m, quant_ns[in], 70, K_BIAS | HAS_BIAS);
            kc_add_shape(out, m, quant_ns[in], 96, K_EXTREME | (in % 2 ? HAS_BIAS : 0));
        }
    /* rows longer than the AVX-512 kernel takes at once (1024 groups over
     * the rows of a block: 4096 k at 8 rows, 8192 at 4, 32768 at 1), and
     * around those lengths */
    static const int longk[][2] = {{1, 32769}, {2, 16385}, {3, 10945}, {4, 8193}, {6, 5473},
                                   {9, 4097}, {12, 8193}, {8, 4096}, {5, 2049}};
    for (int s = 0; s < 9; s++) {
        kc_add_shape(out, longk[s][0], 33, longk[s][1], s % 2 ? HAS_BIAS : 0);
        kc_add_shape(out, longk[s][0], 17, longk[s][1], s % 2 ? K_WILD | HAS_BIAS : K_EXTREME | HAS_BIAS);
    }
    /* blocks of 16 rows (the AMX path where the CPU has it) with every
     * kind of value, a row tail, and rows up to and past its 8192 k */
    static const int amx[][3] = {{16, 33, 8192}, {17, 17, 8193}, {32, 50, 1000}, {19, 16, 64}};
    for (int s = 0; s < 4; s++)
        for (int kind = K_PLAIN; kind <= K_EXTREME; kind++)
            kc_add_shape(out, amx[s][0], amx[s][1], amx[s][2], kind | (kind % 2 ? HAS_BIAS : 0));
}

static void gemm_setup(kc_state *st)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2), kind = kc_int(st, 3) & 3;
    float *x = kc_rand(st, GC, (size_t)m * k, 1.0f);      /* staging, replaced below */
    float *w = kc_rand(st, GBIAS, (size_t)n * k, 1.0f);
    values(x, m, k, k, kind, 1.0f);
    values(w, n, k, k, kind == K_WILD || kind == K_EXTREME ? kind : K_PLAIN, 0.05f);
    int8_t *xq = (int8_t *)calloc((size_t)m * (size_t)row_rs(k) + 1, 1);
    int8_t *wr = (int8_t *)calloc((size_t)n * (size_t)row_rs(k) + 1, 1);
    if (!xq || !wr) abort();
    ngpt_f32_quantize_q8_ref(xq, row_rs(k), x, k, m, k);
    ngpt_f32_quantize_q8_ref(wr, row_rs(k), w, k, n, k);
    free(st->buf[GC]), free(st->buf[GBIAS]);
    st->buf[GC] = st->buf[GBIAS] = NULL;
    memcpy(bytes_slot(st, GX, (size_t)m * (size_t)row_rs(k)), xq, (size_t)m * (size_t)row_rs(k));
    memcpy(bytes_slot(st, GW, (size_t)n * (size_t)row_rs(k)), wr, (size_t)n * (size_t)row_rs(k));
    int8_t *wp = bytes_slot(st, GWP, ngpt_q8_packed_bytes(n, k));
    ngpt_f32_pack_q8_ref(wp, wr, row_rs(k), n, k);
    free(xq), free(wr);
    quant_bias(st, GBIAS, n, kind);
    kc_rand(st, GC, (size_t)m * (n + 3), 1.0f);
    st->flops = 2.0 * m * n * k;
    st->bytes = (double)ngpt_q8_packed_bytes(n, k) + (double)m * (double)row_rs(k) + 4.0 * m * n;
}

static void gemm_run(kc_state *st, const ngpt_kernels *t)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2);
    t->gemm_q8(m, n, k, (const int8_t *)(void *)st->buf[GX], row_rs(k), (const int8_t *)(void *)st->buf[GWP],
               kc_int(st, 3) & HAS_BIAS ? st->buf[GBIAS] : NULL, st->buf[GC], n + 3);
}

/* The product from the quantized rows (not the packed layout). */
static void gemm_def(kc_state *st)
{
    const int m = kc_int(st, 0), n = kc_int(st, 1), k = kc_int(st, 2), groups = ngpt_q8_groups(k);
    const int8_t *x = (const int8_t *)(void *)st->buf[GX], *w = (const int8_t *)(void *)st->buf[GW];
    const float *bias = kc_int(st, 3) & HAS_BIAS ? st->buf[GBIAS] : NULL;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            const int8_t *xi = x + i * row_rs(k), *wj = w + j * row_rs(k);
            float acc = 0.0f;
            for (int g = 0; g < groups; g++) {
                int32_t isum = 0;
                for (int t = 0; t < G; t++) isum += xi[g * G + t] * wj[g * G + t];
                acc = fmaf((float)isum, ngpt_q8_row_scales(xi, k)[g] * ngpt_q8_row_scales(wj, k)[g], acc);
            }
            st->buf[GC][i * (n + 3) + j] = bias ? acc + bias[j] : acc;
        }
}

const kc_case kc_gemm_q8 = {"m n k kind", gemm_tests, quant_gemm_bench, gemm_setup, gemm_run, gemm_def};

/* ---- pack_q8: shape n k; quantized rows one line longer than they need */

enum { PR, PW };

static void pack_tests(kc_shapes *out)
{
    static const int ns[] = {1, 7, 15, 16, 17, 33, 100}, ks[] = {0, 1, 5, 31, 32, 33, 64, 100};
    for (int in = 0; in < 7; in++)
        for (int ik = 0; ik < 8; ik++) kc_add_shape(out, ns[in], ks[ik]);
}

static void pack_bench(kc_shapes *out) { kc_add_shape(out, 1024, 256), kc_add_shape(out, 256, 1024); }

static void pack_setup(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1);
    const ptrdiff_t rs = q_rs(k);
    float *w = kc_rand(st, PW, (size_t)n * k, 0.05f);      /* staging */
    int8_t *rows = bytes_slot(st, PR, (size_t)n * (size_t)rs);
    ngpt_f32_quantize_q8_ref(rows, rs, w, k, n, k);
    free(st->buf[PW]);
    st->buf[PW] = NULL;
    bytes_slot(st, PW, ngpt_q8_packed_bytes(n, k));       /* every byte is written */
    st->bytes = 2.0 * (double)ngpt_q8_packed_bytes(n, k);
}

static void pack_run(kc_state *st, const ngpt_kernels *t)
{
    const int k = kc_int(st, 1);
    t->pack_q8((int8_t *)(void *)st->buf[PW], (const int8_t *)(void *)st->buf[PR], q_rs(k), kc_int(st, 0), k);
}

/* Byte by byte: block (p, g) holds 16 scales, then q[s][jj][b]. */
static void pack_def(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1), groups = ngpt_q8_groups(k);
    int8_t *wp = (int8_t *)(void *)st->buf[PW];
    const int8_t *rows = (const int8_t *)(void *)st->buf[PR];
    for (int p = 0; p * NR < n; p++)
        for (int g = 0; g < groups; g++) {
            int8_t *blk = wp + ((size_t)p * groups + g) * NGPT_Q8_BLOCK;
            for (int jj = 0; jj < NR; jj++) {
                const int j = p * NR + jj;
                const float d = j < n ? ngpt_q8_row_scales(rows + j * q_rs(k), k)[g] : 0.0f;
                memcpy(blk + 4 * jj, &d, 4);
                for (int s = 0; s < G / 4; s++)
                    for (int b = 0; b < 4; b++)
                        blk[64 + s * 64 + jj * 4 + b] = j < n ? rows[j * q_rs(k) + g * G + 4 * s + b] : 0;
            }
        }
}

const kc_case kc_pack_q8 = {"n k", pack_tests, pack_bench, pack_setup, pack_run, pack_def};

/* ---- embed_q8: shape n k j; the row j of a packed (n, k) weight */

enum { EW, EX, ER };

static void embed_tests(kc_shapes *out)
{
    static const int ns[] = {1, 17, 40}, ks[] = {1, 31, 33, 100};
    for (int in = 0; in < 3; in++)
        for (int ik = 0; ik < 4; ik++)
            for (int j = 0; j < ns[in]; j += 7) kc_add_shape(out, ns[in], ks[ik], j);
}

static void embed_bench(kc_shapes *out) { kc_add_shape(out, 256, 256, 100); }

static void embed_setup(kc_state *st)
{
    const int n = kc_int(st, 0), k = kc_int(st, 1);
    float *w = kc_rand(st, EX, (size_t)n * k, 0.05f);      /* staging */
    int8_t *rows = bytes_slot(st, ER, (size_t)n * (size_t)row_rs(k));
    ngpt_f32_quantize_q8_ref(rows, row_rs(k), w, k, n, k);
    ngpt_f32_pack_q8_ref(bytes_slot(st, EW, ngpt_q8_packed_bytes(n, k)), rows, row_rs(k), n, k);
    free(st->buf[EX]);
    st->buf[EX] = NULL;
    kc_rand(st, EX, (size_t)k + 3, 1.0f);
    st->bytes = 5.0 * k;
}

static void embed_run(kc_state *st, const ngpt_kernels *t)
{
    t->embed_q8(st->buf[EX], (const int8_t *)(void *)st->buf[EW], kc_int(st, 1), kc_int(st, 2));
}

static void embed_def(kc_state *st)
{
    const int k = kc_int(st, 1), j = kc_int(st, 2);
    const int8_t *row = (const int8_t *)(void *)st->buf[ER] + j * row_rs(k);
    for (int kk = 0; kk < k; kk++) st->buf[EX][kk] = (float)row[kk] * ngpt_q8_row_scales(row, k)[kk / G];
}

const kc_case kc_embed_q8 = {"n k j", embed_tests, embed_bench, embed_setup, embed_run, embed_def};
