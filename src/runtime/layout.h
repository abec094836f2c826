/* layout.h — where every parameter lives in the flat parameter array
 * (runtime/layout.c), its state_dict name, and the Linear layers the
 * model multiplies by (their shapes, and where their packed copies sit).
 *
 * Parameter layout (floats), in state_dict order:
 *   tok_emb (V,C) | [pos_emb (T,C)] | blocks[L] | [ln_f.weight (C) ln_f.bias (C)]
 *   | [lm_head (V,C)]
 *   block: ln1.weight (C) [ln1.bias (C)] attn.qkv.weight (QKV,C) [attn.qkv.bias (QKV)]
 *          [attn.q_norm.weight (D) attn.k_norm.weight (D)] attn.proj.weight (C,H*D) [attn.proj.bias (C)]
 *          [post_attn_norm.weight (C) [post_attn_norm.bias (C)]] ln2.weight (C) [ln2.bias (C)]
 *          mlp.fc1.weight (F1,C) [mlp.fc1.bias (F1)] mlp.fc2.weight (C,d_ff) [mlp.fc2.bias (C)]
 *          [post_mlp_norm.weight (C) [post_mlp_norm.bias (C)]]
 *   QKV = (H + 2 KV) D (3C by default), F1 = d_ff (2 d_ff with SwiGLU or GeGLU: gate
 *   rows then up rows)
 * [..] only with the variant that has it (pos=learned, final_norm, untied
 * lm_head, qkv_bias, qk_norm, proj_bias, norm=sandwich's post norms, LayerNorm's
 * biases (not with RMSNorm), mlp_bias); an absent tensor has no floats. Tied, lm_head is
 * tok_emb's offset, so the wiring reads and accumulates into one tensor.
 * An 8-bit model (weights=q8) gives its Linear weights and lm_head (tied:
 * tok_emb) no floats: they are in the 8-bit weights (below).
 * Gradients and AdamW moments use the same layout. */
#ifndef NGPT_RUNTIME_LAYOUT_H
#define NGPT_RUNTIME_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "ngpt.h"

#define NGPT_NAME_MAX 64        /* tensor names, NUL included */

typedef struct ngpt_layout {
    size_t tok_emb, pos_emb, blocks, block_stride, lnf_w, lnf_b, lm_head, total;
    /* offsets inside one block */
    size_t ln1_w, ln1_b, qkv_w, qkv_b, q_norm, k_norm, proj_w, proj_b, ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
    size_t pa_w, pa_b, pm_w, pm_b;  /* norm=sandwich: post_attn_norm, post_mlp_norm */
} ngpt_layout;

/* Fills the layout; false if the count overflows size_t. */
bool ngpt_layout_compute(const ngpt_config *cfg, ngpt_layout *lay);

/* Field `field` (a block-relative offset) of layer `layer`. */
static inline float *ngpt_block_ptr(const ngpt_layout *lay, float *base, int layer, size_t field)
{
    return base + lay->blocks + (size_t)layer * lay->block_stride + field;
}

/* Tensor table entries (names + shapes), in state_dict order. */
int32_t ngpt_layout_tensor_count(const ngpt_config *cfg);
/* Entry i: name into name[NGPT_NAME_MAX], shape, offset, count. */
void ngpt_layout_tensor(const ngpt_config *cfg, const ngpt_layout *lay, int32_t i,
                        char name[NGPT_NAME_MAX], ngpt_tensor_info *info);

/* ---- the Linear layers: x W^T with W stored (out, in) as in PyTorch */

/* The Linears of a layer, and the lm_head (tied: tok_emb). */
typedef enum ngpt_linear {
    NGPT_LINEAR_QKV,            /* ((H + 2 KV) D, C): 3C by default */
    NGPT_LINEAR_PROJ,           /* (C, H D) */
    NGPT_LINEAR_FC1,            /* (d_ff, C); SwiGLU: (2 d_ff, C) */
    NGPT_LINEAR_FC2,            /* (C, d_ff) */
    NGPT_LINEAR_PER_LAYER,
    NGPT_LINEAR_LM_HEAD = NGPT_LINEAR_PER_LAYER     /* (V, C), layer ignored */
} ngpt_linear;

/* (out, in) of a Linear. */
void ngpt_linear_dims(const ngpt_config *cfg, ngpt_linear which, int *out, int *in);

/* The offset of a Linear's W in the parameters. */
size_t ngpt_linear_weight(const ngpt_layout *lay, int layer, ngpt_linear which);

/* How a Linear's W is stored: float32 (weights=f32), 8-bit (q8; q4's
 * lm_head unless lm_head_q4: docs/DESIGN.md §3) or 4-bit (q4's blocks). */
ngpt_dtype ngpt_linear_dtype(const ngpt_config *cfg, ngpt_linear which);

/* The quantized weights of an NGPT_WEIGHTS_Q8 or Q4 model: each Linear's W
 * packed (src/q8.h or src/q4.h, by ngpt_linear_dtype), the lm_head (tied:
 * tok_emb), then per layer qkv, proj, fc1, fc2. Their bytes in all (false
 * if that overflows size_t), and the offset of one. */
bool ngpt_linear_q8_bytes(const ngpt_config *cfg, size_t *bytes);
size_t ngpt_linear_q8_offset(const ngpt_config *cfg, int layer, ngpt_linear which);

#endif
