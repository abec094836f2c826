/* model_shapes.h — the default model's matrix products, the one list of
 * GEMM shapes that `ngpt bench` (the bench shapes of the gemm cases,
 * kcases/gemm.c, and of the 8- and 4-bit products, quant_cases.h) and the
 * gemm microbenchmark (tools/gemm_bench.c) time: each Linear (out, in) of
 * a block and the tied lm_head; the float32 products over the rows of a
 * default training step (B = 32 windows of T = 256 bytes). */
#ifndef NGPT_MODEL_SHAPES_H
#define NGPT_MODEL_SHAPES_H

#include <stdbool.h>

enum { KC_MODEL_C = 256, KC_MODEL_F = 1024, KC_MODEL_V = 256, KC_TRAIN_ROWS = 32 * 256 };

typedef struct kc_linear {
    const char *name;
    int out, in;
    bool bias;
} kc_linear;

enum { KC_LINEARS = 5 };
static const kc_linear kc_linears[KC_LINEARS] = {
    {"qkv", 3 * KC_MODEL_C, KC_MODEL_C, false},
    {"proj", KC_MODEL_C, KC_MODEL_C, false},
    {"fc1", KC_MODEL_F, KC_MODEL_C, true},
    {"fc2", KC_MODEL_C, KC_MODEL_F, true},
    {"lm_head", KC_MODEL_V, KC_MODEL_C, false},
};

/* Whether linear l has the shape of an earlier one (lm_head is proj's at
 * V = C): a list of shapes needs it once. */
static inline bool kc_linear_repeats(int l)
{
    for (int e = 0; e < l; e++)
        if (kc_linears[e].out == kc_linears[l].out && kc_linears[e].in == kc_linears[l].in &&
            kc_linears[e].bias == kc_linears[l].bias)
            return true;
    return false;
}

#endif
