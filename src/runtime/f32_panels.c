/* f32_panels.c — a float32 Linear weight between the state_dict's rows and
 * the packed layout (f32_panels.h). */
#include <string.h>

#include "gemm.h"
#include "runtime/f32_panels.h"

enum { NR = NGPT_GEMM_NR };

void ngpt_f32_panels_pack(float *dst, const float *rows, int n, int k)
{
    const size_t panel = (size_t)NR * (size_t)k, full = (size_t)(n / NR) * panel;
    for (size_t at = 0; at < full; at += panel)
        for (size_t kk = 0; kk < (size_t)k; kk++)
            for (size_t j = 0; j < NR; j++) dst[at + kk * NR + j] = rows[at + j * (size_t)k + kk];
    memcpy(dst + full, rows + full, ((size_t)n * (size_t)k - full) * sizeof(float));
}

/* (read through memcpy: a checkpoint in memory may hold it unaligned) */
void ngpt_f32_panels_rows(float *dst, const void *packed, int n, int k, int j0, int count)
{
    const unsigned char *src = (const unsigned char *)packed + (size_t)j0 * (size_t)k * sizeof(float);
    if (j0 + NR > n) {      /* the rows past the last full panel: as they are */
        memcpy(dst, src, (size_t)count * (size_t)k * sizeof(float));
        return;
    }
    for (size_t j = 0; j < (size_t)count; j++)
        for (size_t kk = 0; kk < (size_t)k; kk++)
            memcpy(dst + j * (size_t)k + kk, src + (kk * NR + j) * sizeof(float), sizeof(float));
}

void ngpt_f32_panels_unpack(float *dst, const void *packed, int n, int k)
{
    for (int j0 = 0; j0 < n; j0 += NR) {
        const int count = n - j0 < NR ? n - j0 : NR;
        ngpt_f32_panels_rows(dst + (size_t)j0 * (size_t)k, packed, n, k, j0, count);
    }
}
