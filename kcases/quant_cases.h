/* quant_cases.h — what the cases of the 8- and 4-bit kernels (kcases/q8.c,
 * kcases/q4.c) share: the kinds of values, byte buffers in float slots,
 * the quantized rows' stride, and the shapes and bias of gemm_q8 and
 * gemm_q4 (shape m n k kind, kind | HAS_BIAS for a bias). */
#ifndef NGPT_KCASES_QUANT_CASES_H
#define NGPT_KCASES_QUANT_CASES_H

#include "kcase.h"
#include "model_shapes.h"

/* The kinds of values (each file's comment says what they are for its
 * kernels); a product's kind has HAS_BIAS added for a bias. */
enum { K_PLAIN, K_WILD, K_BIAS, K_EXTREME, HAS_BIAS = 4 };

/* bytes in a slot, in whole floats (so every byte is compared). */
static inline void *bytes_slot(kc_state *st, int slot, size_t bytes)
{
    return kc_rand(st, slot, (bytes + 3) / 4, 1.0f);
}

/* The stride of quantized rows of k values packed one after another. */
static inline ptrdiff_t row_rs(int k) { return (ptrdiff_t)ngpt_q8_row_bytes(k); }

/* The products' output counts: panels full and partial. */
enum { QUANT_NS = 7 };
static const int quant_ns[QUANT_NS] = {1, 7, 16, 17, 33, 64, 100};

/* The products' test shapes both layouts take: the gemv rows (1..8, in
 * groups of 4) and the tiles, each of quant_ns, k across groups and quads;
 * prefill sizes (many row tiles with leftovers); row blocks of 8 (AVX-512)
 * and their edges. A case adds its kinds' shapes. */
static inline void quant_gemm_tests(kc_shapes *out)
{
    static const int ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13};
    static const int ks[] = {0, 1, 5, 31, 32, 33, 64, 100, 257};
    for (int im = 0; im < 10; im++)
        for (int in = 0; in < QUANT_NS; in++)
            for (int ik = 0; ik < 9; ik++)
                kc_add_shape(out, ms[im], quant_ns[in], ks[ik], (im + in + ik) % 2 ? HAS_BIAS : 0);
    static const int big[][3] = {{64, 48, 300}, {37, 100, 96}, {150, 40, 600}, {128, 64, 256}};
    for (int s = 0; s < 4; s++)
        for (int v = 0; v < 2; v++) kc_add_shape(out, big[s][0], big[s][1], big[s][2], v ? HAS_BIAS : 0);
    static const int edges[] = {15, 16, 17, 23, 24, 25};
    for (int im = 0; im < 6; im++)
        for (int in = 0; in < QUANT_NS; in += 2)
            kc_add_shape(out, edges[im], quant_ns[in], ks[(im + in) % 9], (im + in) % 2 ? HAS_BIAS : 0);
}

/* model_shapes.h's Linears (each shape once): a decode step (one row) and
 * a 128-token prefill. */
static inline void quant_gemm_bench(kc_shapes *out)
{
    static const int rows[] = {1, 128};
    for (int r = 0; r < 2; r++)
        for (int l = 0; l < KC_LINEARS; l++)
            if (!kc_linear_repeats(l))
                kc_add_shape(out, rows[r], kc_linears[l].out, kc_linears[l].in,
                             kc_linears[l].bias ? HAS_BIAS : 0);
}

/* The bias of n outputs in slot `slot`; for K_BIAS with subnormals and
 * values that cancel the sums (ARMv7 flushes a subnormal sum). */
static inline void quant_bias(kc_state *st, int slot, int n, int kind)
{
    float *bias = kc_rand(st, slot, (size_t)n, 0.5f);
    if (kind == K_BIAS)
        for (int j = 0; j < n; j++)
            bias[j] = j % 3 == 0 ? 0x1p-140f * (float)(j + 1) : j % 3 == 1 ? -0x1p-119f : bias[j];
}

#endif
