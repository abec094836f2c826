/* q4.h — what the 4-bit kernels of src/kernels.inc (pack_q4, gemm_q4:
 * their contracts are in the list) share with their callers: the weights'
 * rule and the layout of a packed 4-bit weight. The activations are
 * quantized to 8 bits exactly as for q8 (quantize_q8, q8.h's rows), so a
 * 4-bit product is q8's with other weights. Included by kernels.h.
 *
 * The weights' rule (written once, in src/ref/q4.c; weights are quantized
 * once, at load, so only the reference has it): a row of k floats is cut
 * into groups of NGPT_Q4_GROUP = 32 (the last may be shorter); each group g
 * becomes one float scale d_g and 32 values q in -8..7 with x ~ q * d_g:
 *     m = the first x of the group with the largest |x| (the bits of |x|
 *         compared, as q8.h's rule does);
 *     |m| is Inf or NaN:          d = NaN, every q = 0;
 *     d = m / -8.0f;  |d| < NGPT_Q8_MIN_SCALE (this includes m = 0):
 *                                 d = 0, every q = 0;
 *     otherwise q = round-to-nearest-even(x * (-8.0f / m)) clamped to -8..7.
 * So m itself is -8 (d has the opposite sign of m) and all 16 levels are
 * used: the step is |m|/8, where a symmetric -7..7 rule has |m|/7 (12.5%
 * coarser), with the same exactness (llama.cpp's Q4_0 picks the same
 * scale); on the quick-start model's block weights the relative RMS error
 * is 8.5% against the symmetric rule's 9.7%. The floor on |d| is q8's: no float of a product is subnormal.
 *
 * A product (gemm_q4) is gemm_q8's: per group an exact int32 sum of the
 * 32 products q_x * q_w (|q_x| <= 127, |q_w| <= 8: at most 32512 in
 * magnitude), then the same fmaf chain over the groups.
 *
 * A packed 4-bit weight W (n outputs, k inputs; stored (n, k) as in
 * PyTorch): ceil(n/16) panels of NGPT_Q4_NR = 16 outputs, each G =
 * ngpt_q8_groups(k) blocks of NGPT_Q4_BLOCK = 320 bytes, one per group;
 * block g of panel p:
 *     float  d[16]          d[jj] = the scale of W row 16p+jj, group g
 *     uint8  b[4][16][4]    b[h][jj][t] = nibble(32g + 4h + t)
 *                                       | nibble(32g + 16 + 4h + t) << 4
 * where nibble(kk) = q & 15 (two's complement) of W row 16p+jj, input kk,
 * zero past k and for rows past n (an all-zero byte is two zeros). The low
 * nibbles of b[h] are quad h of the group, the high ones quad h + 4: four
 * consecutive k of 16 outputs, laid out as the 64 bytes of q8.h's quad, so
 * the kernels reuse q8's quad-by-quad products: one mask gives quads 0..3
 * (a row's first 16 values), one shift quads 4..7 (its next 16). (q ^ 8)
 * & 15 = q + 8 is q as an unsigned 0..15, which vpmaddubsw and vpdpbusd
 * take as their unsigned operand (the sum then off by 8 times the row's
 * group sum, subtracted exactly). 5 bits per weight: 0.16 of float32.
 * Panel p starts at byte p * G * 320 (ngpt_q4_panel). A checkpoint stores
 * 4-bit tensors in this layout (docs/FORMAT.md). */
#ifndef NGPT_Q4_H
#define NGPT_Q4_H

#include <stddef.h>
#include <stdint.h>

#include "q8.h"

#define NGPT_Q4_GROUP NGPT_Q8_GROUP      /* k values per scale: the activations' groups */
#define NGPT_Q4_NR 16                    /* outputs per panel */
#define NGPT_Q4_BLOCK (NGPT_Q4_NR * 4 + NGPT_Q4_NR * NGPT_Q4_GROUP / 2)   /* bytes: 320 */

/* Bytes of a packed (n, k) 4-bit weight. */
static inline size_t ngpt_q4_packed_bytes(int n, int k)
{
    return (size_t)((n + NGPT_Q4_NR - 1) / NGPT_Q4_NR) * (size_t)ngpt_q8_groups(k) * NGPT_Q4_BLOCK;
}

/* The panel holding output j0 (a multiple of 16). */
static inline const uint8_t *ngpt_q4_panel(const uint8_t *wq, int k, int j0)
{
    return wq + (size_t)(j0 / NGPT_Q4_NR) * (size_t)ngpt_q8_groups(k) * NGPT_Q4_BLOCK;
}

/* The value of input t (0..31) of output jj in a block's nibbles. */
static inline int ngpt_q4_value(const uint8_t *nibbles, int jj, int t)
{
    const int byte = nibbles[(t % 16 / 4) * NGPT_Q4_NR * 4 + jj * 4 + t % 4];
    const int nib = t < 16 ? byte & 15 : byte >> 4;
    return nib < 8 ? nib : nib - 16;
}

#endif
