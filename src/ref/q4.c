/* q4.c — the reference 4-bit kernels (contracts in kernels.inc, the rule
 * and the layout in q4.h): the weights' rule, written once here, and the
 * product as its definition: gemm_q8's, an exact int32 sum per group, then
 * one fmaf chain over the groups per output. */
#include <math.h>
#include <string.h>

#include "../kernels.h"

enum { G = NGPT_Q4_GROUP, NR = NGPT_Q4_NR, BLOCK = NGPT_Q4_BLOCK };

/* Round to nearest even by the magic constant (|v| < 2^22), as q8.c. */
static inline int32_t round_even(float v)
{
    const float magic = 0x1.8p23f;
    return (int32_t)((v + magic) - magic);
}

/* One group of n <= 32 values into q[0..31] (zero past n): its scale. */
static float quantize_group(int8_t q[G], const float *x, int n)
{
    uint32_t amax_bits = 0;
    float m = 0.0f;
    for (int t = 0; t < n; t++) {
        uint32_t a;
        memcpy(&a, &x[t], sizeof a);
        a &= 0x7fffffffu;
        if (a > amax_bits) amax_bits = a, m = x[t];
    }
    memset(q, 0, G);
    if (amax_bits >= 0x7f800000u) {     /* Inf or NaN */
        const uint32_t nan = 0x7fc00000u;
        float d;
        memcpy(&d, &nan, sizeof d);
        return d;
    }
    const float d = m / -8.0f;
    if (!(fabsf(d) >= NGPT_Q8_MIN_SCALE)) return 0.0f;
    const float id = -8.0f / m;
    for (int t = 0; t < n; t++) {
        const int32_t v = round_even(x[t] * id);
        q[t] = (int8_t)(v < -8 ? -8 : v > 7 ? 7 : v);
    }
    return d;
}

void ngpt_f32_pack_q4_ref(uint8_t *wq, const float *w, ptrdiff_t w_rs, int n, int k)
{
    const int groups = ngpt_q8_groups(k), panels = (n + NR - 1) / NR;
    for (int p = 0; p < panels; p++)
        for (int g = 0; g < groups; g++) {
            uint8_t *blk = wq + ((size_t)p * (size_t)groups + (size_t)g) * BLOCK;
            uint8_t *b = blk + NR * sizeof(float);
            memset(b, 0, NR * G / 2);
            for (int jj = 0; jj < NR; jj++) {
                const int j = p * NR + jj;
                int8_t q[G];
                float d = 0.0f;
                if (j < n) {
                    const int len = k - g * G < G ? k - g * G : G;
                    d = quantize_group(q, w + j * w_rs + (size_t)g * G, len);
                } else {
                    memset(q, 0, sizeof q);
                }
                memcpy(blk + jj * sizeof(float), &d, sizeof d);
                for (int t = 0; t < G; t++)
                    b[(t % 16 / 4) * NR * 4 + jj * 4 + t % 4] |=
                        (uint8_t)((q[t] & 15) << (t < 16 ? 0 : 4));
            }
        }
}

/* One output: the contract's chain over the groups. */
static float dot_q4(const int8_t *xrow, const float *xd, const uint8_t *panel, int groups, int jj)
{
    float acc = 0.0f;
    for (int g = 0; g < groups; g++) {
        const uint8_t *blk = panel + (size_t)g * BLOCK;
        float wd;
        memcpy(&wd, blk + jj * sizeof(float), sizeof wd);
        int32_t isum = 0;
        for (int t = 0; t < G; t++)
            isum += (int32_t)xrow[g * G + t] * ngpt_q4_value(blk + NR * sizeof(float), jj, t);
        acc = fmaf((float)isum, xd[g] * wd, acc);
    }
    return acc;
}

void ngpt_f32_gemm_q4_ref(int m, int n, int k, const int8_t *xq, ptrdiff_t xq_rs,
                          const uint8_t *wq, const float *bias, float *c, ptrdiff_t c_rs)
{
    const int groups = ngpt_q8_groups(k);
    for (int i = 0; i < m; i++) {
        const int8_t *row = xq + i * xq_rs;
        const float *xd = ngpt_q8_row_scales(row, k);
        for (int j = 0; j < n; j++) {
            const float acc = dot_q4(row, xd, ngpt_q4_panel(wq, k, j - j % NR), groups, j % NR);
            c[i * c_rs + j] = bias ? acc + bias[j] : acc;
        }
    }
}

void ngpt_f32_embed_q4_ref(float *x, const uint8_t *wq, int k, int j)
{
    const int jj = j % NR;
    const uint8_t *panel = ngpt_q4_panel(wq, k, j - jj);
    for (int kk = 0; kk < k; kk++) {
        const uint8_t *blk = panel + (size_t)(kk / G) * BLOCK;
        float d;
        memcpy(&d, blk + jj * sizeof(float), sizeof d);
        x[kk] = (float)ngpt_q4_value(blk + NR * sizeof(float), jj, kk % G) * d;
    }
}
