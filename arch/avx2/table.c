/* table.c — the AVX2 build's kernel table: vectorised kernels where they
 * exist, the reference (exact by definition) for the rest. */
#include "kernels_avx2.h"

const ngpt_kernels ngpt_kernels_active = {
    .name = "avx2",
    .gemm = ngpt_f32_gemm__avx2,
    .pack_w = ngpt_f32_pack_w_ref,
    .gemm_packed = ngpt_f32_gemm_packed__avx2,
    .rsum = ngpt_f32_rsum__avx2,
    .layernorm_fwd = ngpt_f32_layernorm_fwd__avx2,
    .softmax = ngpt_f32_softmax__avx2,
    .xent = ngpt_f32_xent__avx2,
    .attn_scores = ngpt_f32_attn_scores__avx2,
    .attn_wsum = ngpt_f32_attn_wsum__avx2,
    .gelu_fwd = ngpt_f32_gelu_fwd__avx2,
    .rope = ngpt_f32_rope__avx2,
    .dropout = ngpt_f32_dropout__avx2,
    .add = ngpt_f32_add__avx2,
    .xent_bwd = ngpt_f32_xent_bwd__avx2,
    .layernorm_bwd = ngpt_f32_layernorm_bwd__avx2,
    .softmax_bwd = ngpt_f32_softmax_bwd__avx2,
    .gelu_bwd = ngpt_f32_gelu_bwd__avx2,
    .rope_bwd = ngpt_f32_rope_bwd__avx2,
    .outer_acc = ngpt_f32_outer_acc__avx2,
    .colsum_acc = ngpt_f32_colsum_acc__avx2,
    .sumsq = ngpt_f32_sumsq__avx2,
    .adamw = ngpt_f32_adamw__avx2,
};
