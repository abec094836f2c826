/* table.c — the AVX2 build's kernel table: vectorised kernels where they
 * exist, the reference (exact by definition) for the rest. */
#include "kernels_avx2.h"

const ngpt_kernels ngpt_kernels_active = {
    .name = "avx2",
    .gemm = ngpt_f32_gemm__avx2,
    .rsum = ngpt_f32_rsum_ref,
    .layernorm_fwd = ngpt_f32_layernorm_fwd_ref,
    .softmax = ngpt_f32_softmax_ref,
    .xent = ngpt_f32_xent_ref,
    .attn_scores = ngpt_f32_attn_scores_ref,
    .attn_wsum = ngpt_f32_attn_wsum_ref,
    .gelu_fwd = ngpt_f32_gelu_fwd_ref,
    .rope = ngpt_f32_rope_ref,
    .dropout = ngpt_f32_dropout_ref,
    .add = ngpt_f32_add_ref,
    .xent_bwd = ngpt_f32_xent_bwd_ref,
    .layernorm_bwd = ngpt_f32_layernorm_bwd_ref,
    .softmax_bwd = ngpt_f32_softmax_bwd_ref,
    .gelu_bwd = ngpt_f32_gelu_bwd_ref,
    .rope_bwd = ngpt_f32_rope_bwd_ref,
    .outer_acc = ngpt_f32_outer_acc_ref,
    .colsum_acc = ngpt_f32_colsum_acc_ref,
    .sumsq = ngpt_f32_sumsq_ref,
    .adamw = ngpt_f32_adamw_ref,
};
