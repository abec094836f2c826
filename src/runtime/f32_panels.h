/* f32_panels.h — a float32 Linear weight W (n, k) in the layout an
 * inference context multiplies by (f32_panels.c), which is also how a
 * file stores it packed (dtype NGPT_CKPT_F32_PACKED, docs/FORMAT.md):
 *   - the floor(n/16) full panels of 16 rows, in gemm.h's layout: panel p
 *     is k rows of 16 floats, p[kk*16 + j] = W[16p + j][kk];
 *   - then the last n % 16 rows as they are (row-major).
 * n*k floats either way, and panel p takes the place of rows 16p..16p+15,
 * so the conversion is in place in size and pure data movement: the same
 * floats, bit for bit, on every build. */
#ifndef NGPT_RUNTIME_F32_PANELS_H
#define NGPT_RUNTIME_F32_PANELS_H

#include <stddef.h>

/* dst (n*k floats, packed) from rows (W row-major, row j at rows + j*k). */
void ngpt_f32_panels_pack(float *dst, const float *rows, int n, int k);

/* Rows j0..j0+count-1 of W (j0 a multiple of 16, count <= 16, within n)
 * from the packed W into dst (row-major, count*k floats); packed may be
 * unaligned. */
void ngpt_f32_panels_rows(float *dst, const void *packed, int n, int k, int j0, int count);

/* The whole W row-major from its packed form (dst and packed distinct). */
void ngpt_f32_panels_unpack(float *dst, const void *packed, int n, int k);

#endif
