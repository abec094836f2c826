/* derived.h — what a config's switches derive, read by the layout, the
 * plan, the ops and the wiring: a header of its own (no .c), so that
 * layout.c reads them without reaching config.c, which computes the layout
 * to check a config. */
#ifndef NGPT_RUNTIME_DERIVED_H
#define NGPT_RUNTIME_DERIVED_H

#include "ngpt.h"

/* The sizes the switches derive (0 fields mean their defaults): the head
 * size D, the key/value heads KV, the qkv projection's outputs (H + 2 KV) D,
 * the attention's output H D, fc1's outputs (2 d_ff with SwiGLU), norm eps. */
static inline int32_t ngpt_cfg_head_dim(const ngpt_config *c)
{
    return c->head_dim ? c->head_dim : c->d_model / c->n_heads;
}
static inline int32_t ngpt_cfg_kv_heads(const ngpt_config *c)
{
    return c->n_kv_heads ? c->n_kv_heads : c->n_heads;
}
static inline int32_t ngpt_cfg_qkv_width(const ngpt_config *c)
{
    return (c->n_heads + 2 * ngpt_cfg_kv_heads(c)) * ngpt_cfg_head_dim(c);
}
static inline int32_t ngpt_cfg_attn_width(const ngpt_config *c)
{
    return c->n_heads * ngpt_cfg_head_dim(c);
}
/* A gated MLP (SwiGLU, GeGLU): fc1 gives [gate | up], 2 d_ff wide. */
static inline bool ngpt_cfg_gated(const ngpt_config *c)
{
    return c->mlp == NGPT_MLP_SWIGLU || c->mlp == NGPT_MLP_GEGLU;
}
static inline int32_t ngpt_cfg_fc1_width(const ngpt_config *c)
{
    return ngpt_cfg_gated(c) ? 2 * c->d_ff : c->d_ff;
}
static inline float ngpt_cfg_norm_eps(const ngpt_config *c)
{
    return c->norm_eps != 0.0f ? c->norm_eps : 1e-5f;
}

/* Sliding-window attention: the window of layer l (0: it sees every
 * earlier position), and the local layers' RoPE base. */
static inline int32_t ngpt_cfg_layer_window(const ngpt_config *c, int l)
{
    const bool global = c->sliding_pattern > 0 && (l + 1) % c->sliding_pattern == 0;
    return global ? 0 : c->sliding_window;
}
/* A local layer's KV ring in an inference plan of passes of at most seq
 * positions: R = W + seq positions, which a pass's queries read (their W
 * keys) after the pass wrote its own, and a cut-back of up to seq keeps;
 * stored twice (2R rows: position p at rows p % R and p % R + R) so that any
 * W consecutive positions are consecutive rows. 0: the layer keeps every
 * position (Tctx rows), also when 2R rows would not be fewer. */
static inline int32_t ngpt_cfg_kv_ring(const ngpt_config *c, int32_t seq, int l)
{
    const int64_t W = ngpt_cfg_layer_window(c, l), R = W + seq;
    return W && 2 * R < c->context_len ? (int32_t)R : 0;
}
/* Rows of one slot of layer l's keys (and values) in the cache. */
static inline size_t ngpt_cfg_kv_rows(const ngpt_config *c, int32_t seq, int l)
{
    const int32_t R = ngpt_cfg_kv_ring(c, seq, l);
    return R ? 2 * (size_t)R : (size_t)c->context_len;
}

static inline float ngpt_cfg_rope_local_theta(const ngpt_config *c)
{
    return c->rope_local_theta != 0.0f ? c->rope_local_theta : c->rope_theta;
}

#endif
