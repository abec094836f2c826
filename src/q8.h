/* q8.h — what the 8-bit kernels of src/kernels.inc (quantize_q8, pack_q8,
 * gemm_q8, embed_q8: their contracts are in the list) share with their
 * callers: the quantization rule, the layout of a quantized row and of a
 * packed 8-bit weight, and their sizes. Included by kernels.h.
 *
 * The rule (one for weights and activations, written once in
 * src/ref/q8.c): a row of k floats is cut into groups of NGPT_Q8_GROUP = 32
 * consecutive values (the last group of a row may be shorter); each group g
 * becomes one float scale d_g and 32 int8 values q with x ~ q * d_g:
 *     amax = the largest |x| of the group (compared as the bits of |x|, so
 *            a NaN sorts above infinity and every ISA picks the same one);
 *     amax is Inf or NaN:          d = NaN, every q = 0;
 *     d = amax / 127.0f;  d < NGPT_Q8_MIN_SCALE (this includes amax = 0):
 *                                  d = 0, every q = 0;
 *     otherwise q = round-to-nearest-even(x * (127.0f / amax)), in -127..127
 *            (|x * (127/amax)| <= 127 * (1 + 2^-23): never rounds past 127).
 * q is never -128, so an int8 product never reaches -128 * -128 and the
 * SIMD integer sums cannot saturate. The floor on d keeps every float of
 * the products normal: a product of two scales is 0 or at least 2^-96 (or
 * not finite), so the chain of gemm_q8 is 0 or at least 2^-119 in
 * magnitude and no ISA has a subnormal to flush (ARMv7 NEON).
 *
 * A quantized row (quantize_q8's output, gemm_q8's activations): the
 * int8 values of its G = ngpt_q8_groups(k) groups, q[32g + t] (zero past
 * k), then G float scales d[g] at byte G*32; ngpt_q8_row_bytes(k) bytes,
 * a multiple of 64.
 *
 * A packed 8-bit weight W (n outputs, k inputs; stored (n, k) as in
 * PyTorch): ceil(n/16) panels of NGPT_Q8_NR = 16 outputs, each G blocks of
 * NGPT_Q8_BLOCK = 576 bytes, one per group; block g of panel p:
 *     float  d[16]        d[jj] = the scale of W row 16p+jj, group g
 *     int8   q[8][16][4]  q[s][jj][b] = W row 16p+jj, value 32g + 4s + b
 * (zero past k and for rows past n). Four consecutive k of 16 outputs are
 * 64 bytes: one zmm, two ymm (8 outputs each) or four NEON q registers (4
 * outputs each, SDOT's layout), and the 8 quads of a group follow its
 * scales, so a product streams each panel from its first byte to its last.
 * Panel p starts at byte p * G * 576 (ngpt_q8_panel). A checkpoint stores
 * 8-bit tensors in this layout (docs/FORMAT.md). */
#ifndef NGPT_Q8_H
#define NGPT_Q8_H

#include <stddef.h>
#include <stdint.h>

#define NGPT_Q8_GROUP 32                /* k values per scale */
#define NGPT_Q8_NR 16                   /* outputs per panel */
#define NGPT_Q8_QUADS (NGPT_Q8_GROUP / 4)
#define NGPT_Q8_BLOCK (NGPT_Q8_NR * 4 + NGPT_Q8_NR * NGPT_Q8_GROUP)   /* bytes: 576 */
#define NGPT_Q8_MIN_SCALE 0x1p-48f      /* smaller scales quantize the group to zero */

/* Groups of a row of k values. */
static inline int ngpt_q8_groups(int k) { return (k + NGPT_Q8_GROUP - 1) / NGPT_Q8_GROUP; }

/* Bytes of one quantized row of k values (values, then scales; 64-aligned). */
static inline size_t ngpt_q8_row_bytes(int k)
{
    const size_t g = (size_t)ngpt_q8_groups(k);
    return (g * (NGPT_Q8_GROUP + sizeof(float)) + 63) / 64 * 64;
}

/* Bytes of one quantized row of k values stored compact (values, then
 * scales; no padding): a head's row in the 8-bit KV cache (kernels.inc,
 * kv_q8). A multiple of 4, so its scales are aligned wherever it starts on 4. */
static inline size_t ngpt_q8_head_bytes(int k)
{
    return (size_t)ngpt_q8_groups(k) * (NGPT_Q8_GROUP + sizeof(float));
}

/* The scales of a quantized row of k values. */
static inline const float *ngpt_q8_row_scales(const int8_t *row, int k)
{
    return (const float *)(const void *)(row + (size_t)ngpt_q8_groups(k) * NGPT_Q8_GROUP);
}

/* Bytes of a packed (n, k) 8-bit weight. */
static inline size_t ngpt_q8_packed_bytes(int n, int k)
{
    return (size_t)((n + NGPT_Q8_NR - 1) / NGPT_Q8_NR) * (size_t)ngpt_q8_groups(k) * NGPT_Q8_BLOCK;
}

/* The panel holding output j0 (a multiple of 16). */
static inline const int8_t *ngpt_q8_panel(const int8_t *wq, int k, int j0)
{
    return wq + (size_t)(j0 / NGPT_Q8_NR) * (size_t)ngpt_q8_groups(k) * NGPT_Q8_BLOCK;
}

#endif
