/* config.h — the model config's internal checks (runtime/config.c): the
 * public ngpt_config_* functions and every public function that takes a
 * config call these and put their own name in front of the message. */
#ifndef NGPT_RUNTIME_CONFIG_H
#define NGPT_RUNTIME_CONFIG_H

#include "base/error.h"

/* Validates every field (a bare message: the caller prefixes it). */
ngpt_status ngpt_config_check(const ngpt_config *cfg);

/* NGPT_ERR_CONFIG_MISMATCH naming the first field in which got (a
 * checkpoint's) differs from want (a context's), or OK. */
ngpt_status ngpt_config_compare(const ngpt_config *want, const ngpt_config *got);

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
static inline int32_t ngpt_cfg_fc1_width(const ngpt_config *c)
{
    return c->mlp == NGPT_MLP_SWIGLU ? 2 * c->d_ff : c->d_ff;
}
static inline float ngpt_cfg_norm_eps(const ngpt_config *c)
{
    return c->norm_eps != 0.0f ? c->norm_eps : 1e-5f;
}

#endif
