/* ckpt_config.c — a model's config as the checkpoint header's model block
 * (docs/FORMAT.md, offsets 32..127): written by every save, read and
 * validated by every reader of a model or adapter file (checkpoint.h). */
#include <stdio.h>
#include <string.h>

#include "io/checkpoint.h"
#include "runtime/config.h"

/* Offsets inside the model block (header offset - 32). */
enum { BLOCK_INTS = 0, BLOCK_DROPOUT = 24, BLOCK_THETA = 28, BLOCK_FLAGS = 32,
       BLOCK_NORM_EPS = 44, BLOCK_KV_HEADS = 48, BLOCK_HEAD_DIM = 52,
       /* Qwen3's and Llama 3's switches: zero bytes without them */
       BLOCK_QK_NORM = 56, BLOCK_ROPE_SCALING = 57, BLOCK_ROPE_FACTOR = 60,
       BLOCK_ROPE_LOW = 64, BLOCK_ROPE_HIGH = 68, BLOCK_ROPE_ORIG = 72,
       /* Gemma 3's switches: zero bytes without them */
       BLOCK_NORM_OFFSET = 58, BLOCK_SLIDING_PATTERN = 59, BLOCK_SLIDING_WINDOW = 76,
       BLOCK_ROPE_LOCAL = 80, BLOCK_ATTN_SCALAR = 84, BLOCK_SOFTCAP = 88, BLOCK_EMB_SCALE = 92 };

/* The weights byte of weights=q4 with lm_head_q4 (0..2 are ngpt_weights). */
enum { WEIGHTS_Q4_HEAD4 = 3 };

void ngpt_ckpt_config_encode(const ngpt_config *c, unsigned char b[NGPT_CKPT_MODEL_BYTES])
{
    const int32_t ints[6] = {c->vocab_size, c->context_len, c->d_model,
                             c->n_layers,   c->n_heads,     c->d_ff};
    memcpy(b + BLOCK_INTS, ints, sizeof ints);
    memcpy(b + BLOCK_DROPOUT, &c->dropout, 4);
    memcpy(b + BLOCK_THETA, &c->rope_theta, 4);
    b[BLOCK_FLAGS] = c->qkv_bias, b[BLOCK_FLAGS + 1] = c->tie_lm_head;
    b[BLOCK_FLAGS + 2] = c->final_norm;
    b[BLOCK_FLAGS + 3] = (unsigned char)c->norm, b[BLOCK_FLAGS + 4] = (unsigned char)c->pos;
    /* 3: q4 with a 4-bit lm_head (lm_head_q4): a reader that predates it
     * refuses the file by this byte, as it refuses q4 by 2 */
    b[BLOCK_FLAGS + 5] = c->lm_head_q4 ? WEIGHTS_Q4_HEAD4 : (unsigned char)c->weights;
    b[BLOCK_FLAGS + 6] = c->proj_bias, b[BLOCK_FLAGS + 7] = (unsigned char)c->gelu;
    /* the Llama switches: zero bytes for a default model, so its file is unchanged */
    b[BLOCK_FLAGS + 8] = (unsigned char)c->norm_type, b[BLOCK_FLAGS + 9] = (unsigned char)c->mlp;
    b[BLOCK_FLAGS + 10] = !c->mlp_bias, b[BLOCK_FLAGS + 11] = (unsigned char)c->rope_pairs;
    const float eps = ngpt_cfg_norm_eps(c) == 1e-5f ? 0.0f : c->norm_eps;
    memcpy(b + BLOCK_NORM_EPS, &eps, 4);
    memcpy(b + BLOCK_KV_HEADS, &c->n_kv_heads, 4);
    memcpy(b + BLOCK_HEAD_DIM, &c->head_dim, 4);
    memset(b + BLOCK_QK_NORM, 0, NGPT_CKPT_MODEL_BYTES - BLOCK_QK_NORM);
    b[BLOCK_QK_NORM] = c->qk_norm, b[BLOCK_ROPE_SCALING] = (unsigned char)c->rope_scaling;
    memcpy(b + BLOCK_ROPE_FACTOR, &c->rope_factor, 4);
    memcpy(b + BLOCK_ROPE_LOW, &c->rope_low_freq_factor, 4);
    memcpy(b + BLOCK_ROPE_HIGH, &c->rope_high_freq_factor, 4);
    memcpy(b + BLOCK_ROPE_ORIG, &c->rope_original_context, 4);
    b[BLOCK_NORM_OFFSET] = c->norm_offset;
    b[BLOCK_SLIDING_PATTERN] = (unsigned char)c->sliding_pattern;     /* 0..255 */
    memcpy(b + BLOCK_SLIDING_WINDOW, &c->sliding_window, 4);
    memcpy(b + BLOCK_ROPE_LOCAL, &c->rope_local_theta, 4);
    memcpy(b + BLOCK_ATTN_SCALAR, &c->attn_scalar, 4);
    memcpy(b + BLOCK_SOFTCAP, &c->logit_softcap, 4);
    memcpy(b + BLOCK_EMB_SCALE, &c->emb_scale, 4);
}

ngpt_status ngpt_ckpt_config_decode(const ngpt_ckpt_reader *r, ngpt_config *c)
{
    *c = (ngpt_config){0};
    const unsigned char *b = r->model_block;
    int32_t ints[6];
    memcpy(ints, b + BLOCK_INTS, sizeof ints);
    c->vocab_size = ints[0], c->context_len = ints[1], c->d_model = ints[2];
    c->n_layers = ints[3], c->n_heads = ints[4], c->d_ff = ints[5];
    memcpy(&c->dropout, b + BLOCK_DROPOUT, 4);
    memcpy(&c->rope_theta, b + BLOCK_THETA, 4);
    /* qkv_bias tie_lm_head final_norm proj_bias no_mlp_bias */
    static const int bools[] = {0, 1, 2, 6, 10};
    for (int j = 0; j < 5; j++) {
        const int i = bools[j];
        if (b[BLOCK_FLAGS + i] > 1)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "config flag byte %d of %s is %u, not "
                                  "0 or 1", NGPT_CKPT_MODEL_BLOCK + BLOCK_FLAGS + i, r->src,
                                  b[BLOCK_FLAGS + i]);
    }
    c->qkv_bias = b[BLOCK_FLAGS], c->tie_lm_head = b[BLOCK_FLAGS + 1];
    c->final_norm = b[BLOCK_FLAGS + 2];
    c->norm = (ngpt_norm_placement)b[BLOCK_FLAGS + 3];
    c->pos = (ngpt_pos_encoding)b[BLOCK_FLAGS + 4];
    c->weights = (ngpt_weights)b[BLOCK_FLAGS + 5];
    if (b[BLOCK_FLAGS + 5] == WEIGHTS_Q4_HEAD4) c->weights = NGPT_WEIGHTS_Q4, c->lm_head_q4 = true;
    c->proj_bias = b[BLOCK_FLAGS + 6];
    c->gelu = (ngpt_gelu)b[BLOCK_FLAGS + 7];
    c->norm_type = (ngpt_norm_type)b[BLOCK_FLAGS + 8];
    c->mlp = (ngpt_mlp)b[BLOCK_FLAGS + 9];
    c->mlp_bias = !b[BLOCK_FLAGS + 10];
    c->rope_pairs = (ngpt_rope_pairs)b[BLOCK_FLAGS + 11];
    memcpy(&c->norm_eps, b + BLOCK_NORM_EPS, 4);
    if (c->norm_eps == 0.0f) c->norm_eps = 1e-5f;       /* stored as 0: the default */
    memcpy(&c->n_kv_heads, b + BLOCK_KV_HEADS, 4);
    memcpy(&c->head_dim, b + BLOCK_HEAD_DIM, 4);
    static const int flags[] = {BLOCK_QK_NORM, BLOCK_NORM_OFFSET};
    for (int j = 0; j < 2; j++)
        if (b[flags[j]] > 1)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "config flag byte %d of %s is %u, not 0 or 1",
                             NGPT_CKPT_MODEL_BLOCK + flags[j], r->src, b[flags[j]]);
    c->qk_norm = b[BLOCK_QK_NORM];
    c->rope_scaling = (ngpt_rope_scaling)b[BLOCK_ROPE_SCALING];
    memcpy(&c->rope_factor, b + BLOCK_ROPE_FACTOR, 4);
    memcpy(&c->rope_low_freq_factor, b + BLOCK_ROPE_LOW, 4);
    memcpy(&c->rope_high_freq_factor, b + BLOCK_ROPE_HIGH, 4);
    memcpy(&c->rope_original_context, b + BLOCK_ROPE_ORIG, 4);
    c->norm_offset = b[BLOCK_NORM_OFFSET];
    c->sliding_pattern = b[BLOCK_SLIDING_PATTERN];
    memcpy(&c->sliding_window, b + BLOCK_SLIDING_WINDOW, 4);
    memcpy(&c->rope_local_theta, b + BLOCK_ROPE_LOCAL, 4);
    memcpy(&c->attn_scalar, b + BLOCK_ATTN_SCALAR, 4);
    memcpy(&c->logit_softcap, b + BLOCK_SOFTCAP, 4);
    memcpy(&c->emb_scale, b + BLOCK_EMB_SCALE, 4);
    ngpt_status st = ngpt_config_check(c);
    if (st) {
        char why[400];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(st == NGPT_ERR_UNSUPPORTED ? st : NGPT_ERR_BAD_FORMAT,
                         "the config stored in %s is not valid: %s", r->src, why);
    }
    return NGPT_OK;
}

