/* add.c — NEON elementwise sum: 16 elements a block, 4 lanes a step, the
 * tail in scalar. Same shape as arch/avx2/add.c. ARMv7: a block that
 * flushed (a subnormal operand or sum) is recomputed by the reference before
 * it is stored (kernels_neon.h, "the flush check"). */
#include <arm_neon.h>

#include "kernels_neon.h"

void ngpt_f32_add__neon(float *y, const float *a, const float *b, size_t n)
{
    neon_flags_clear();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const float32x4_t y0 = vaddq_f32(vld1q_f32(a + i), vld1q_f32(b + i));
        const float32x4_t y1 = vaddq_f32(vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        const float32x4_t y2 = vaddq_f32(vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        const float32x4_t y3 = vaddq_f32(vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
        if (neon_flushed(y0, y1, y2, y3)) {
            ngpt_f32_add_ref(y + i, a + i, b + i, 16);
            neon_flags_clear();
            continue;
        }
        neon_store16(y + i, y0, y1, y2, y3);
    }
    ngpt_f32_add_ref(y + i, a + i, b + i, n - i);
}
