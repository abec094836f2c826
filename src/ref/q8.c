/* q8.c — the reference 8-bit kernels (contracts in kernels.inc, the rule
 * and the layouts in q8.h): the quantization rule, written once here, and
 * the products as their definition: an exact int32 sum per group, then one
 * fmaf chain over the groups per output. */
#include <math.h>
#include <string.h>

#include "../kernels.h"

enum { G = NGPT_Q8_GROUP, NR = NGPT_Q8_NR, QUADS = NGPT_Q8_QUADS, BLOCK = NGPT_Q8_BLOCK };

/* Round to nearest even of |v| < 2^22 by the magic constant 1.5 * 2^23:
 * adding it leaves the integer part in the low mantissa bits, rounded as the
 * current mode rounds (the library's: to nearest even), and subtracting it
 * is exact. Every ISA's conversion gives the same integer. */
static inline int32_t round_even(float v)
{
    const float magic = 0x1.8p23f;
    return (int32_t)((v + magic) - magic);
}

static inline uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float float_of(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* One group of n <= 32 values (the rest of q is zeroed): its scale. */
static float quantize_group(int8_t q[G], const float *x, int n)
{
    uint32_t amax_bits = 0;
    for (int t = 0; t < n; t++) {
        const uint32_t a = bits_of(x[t]) & 0x7fffffffu;
        amax_bits = a > amax_bits ? a : amax_bits;
    }
    memset(q, 0, G);
    if (amax_bits >= 0x7f800000u) return float_of(0x7fc00000u);    /* Inf or NaN */
    const float amax = float_of(amax_bits), d = amax / 127.0f;
    if (!(d >= NGPT_Q8_MIN_SCALE)) return 0.0f;
    const float id = 127.0f / amax;
    for (int t = 0; t < n; t++) q[t] = (int8_t)round_even(x[t] * id);
    return d;
}

void ngpt_f32_quantize_q8_ref(int8_t *xq, ptrdiff_t xq_rs, const float *x, ptrdiff_t x_rs, int m,
                              int k)
{
    const int groups = ngpt_q8_groups(k);
    for (int i = 0; i < m; i++) {
        int8_t *row = xq + i * xq_rs;
        float *d = (float *)(void *)(row + (size_t)groups * G);
        const float *xi = x + i * x_rs;
        for (int g = 0; g < groups; g++) {
            const int n = k - g * G < G ? k - g * G : G;
            d[g] = quantize_group(row + (size_t)g * G, xi + (size_t)g * G, n);
        }
    }
}

/* Block g of panel p: its scales, and its values q[s][jj][b]. */
static inline float *block_scales(int8_t *wq, int groups, int p, int g)
{
    return (float *)(void *)(wq + ((size_t)p * (size_t)groups + (size_t)g) * BLOCK);
}

static inline int8_t *block_values(int8_t *wq, int groups, int p, int g)
{
    return wq + ((size_t)p * (size_t)groups + (size_t)g) * BLOCK + NR * sizeof(float);
}

void ngpt_f32_pack_q8_ref(int8_t *wq, const int8_t *rows, ptrdiff_t rows_rs, int n, int k)
{
    const int groups = ngpt_q8_groups(k), panels = (n + NR - 1) / NR;
    for (int p = 0; p < panels; p++)
        for (int g = 0; g < groups; g++) {
            float *d = block_scales(wq, groups, p, g);
            int8_t *q = block_values(wq, groups, p, g);
            for (int jj = 0; jj < NR; jj++) {
                const int j = p * NR + jj;
                const int8_t *row = j < n ? rows + j * rows_rs : NULL;
                d[jj] = row ? ngpt_q8_row_scales(row, k)[g] : 0.0f;
                for (int t = 0; t < G; t++)
                    q[(t / 4) * NR * 4 + jj * 4 + t % 4] = row ? row[g * G + t] : 0;
            }
        }
}

/* One output: the contract's chain over the groups. */
static float dot_q8(const int8_t *xrow, const float *xd, const int8_t *panel, int groups, int jj)
{
    float acc = 0.0f;
    for (int g = 0; g < groups; g++) {
        const int8_t *blk = panel + (size_t)g * BLOCK;
        float wd;
        memcpy(&wd, blk + jj * sizeof(float), sizeof wd);
        const int8_t *q = blk + NR * sizeof(float);
        int32_t isum = 0;
        for (int t = 0; t < G; t++)
            isum += (int32_t)xrow[g * G + t] * (int32_t)q[(t / 4) * NR * 4 + jj * 4 + t % 4];
        acc = fmaf((float)isum, xd[g] * wd, acc);
    }
    return acc;
}

void ngpt_f32_gemm_q8_ref(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs, const int8_t *wq,
                          const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    for (int i = 0; i < m; i++) {
        const int8_t *row = xq + i * xq_rs;
        const float *xd = ngpt_q8_row_scales(row, k);
        for (int j = 0; j < n; j++) {
            const float acc = dot_q8(row, xd, ngpt_q8_panel(wq, k, j - j % NR), groups, j % NR);
            c[i * c_rs + j] = bias ? acc + bias[j] : acc;
        }
    }
}

void ngpt_f32_embed_q8_ref(float *x, const int8_t *wq, int k, int j)
{
    const int jj = j % NR;
    const int8_t *panel = ngpt_q8_panel(wq, k, j - jj);
    for (int kk = 0; kk < k; kk++) {
        const int8_t *blk = panel + (size_t)(kk / G) * BLOCK;
        float d;
        memcpy(&d, blk + jj * sizeof(float), sizeof d);
        const int t = kk % G;
        x[kk] = (float)blk[NR * sizeof(float) + (t / 4) * NR * 4 + jj * 4 + t % 4] * d;
    }
}
