/* layout.c — where each parameter tensor lives in the flat parameter array,
 * its state_dict name, and the Linear layers (layout.h). The variants
 * (ngpt_config) add or remove tensors; the default model's layout is the
 * original one. An 8-bit model's Linear weights (and its tied embedding)
 * have no floats: they live packed in the quantized weights
 * (ngpt_linear_q8_bytes, ngpt_linear_q8_offset), 8-bit or 4-bit
 * (ngpt_linear_dtype). */
#include <stdio.h>

#include "base/checked.h"
#include "q4.h"
#include "q8.h"
#include "runtime/derived.h"
#include "runtime/layout.h"

bool ngpt_layout_compute(const ngpt_config *cfg, ngpt_layout *lay)
{
    size_t V = (size_t)cfg->vocab_size, C = (size_t)cfg->d_model, F = (size_t)cfg->d_ff;
    size_t L = (size_t)cfg->n_layers, T = (size_t)cfg->context_len, off = 0, n;
    /* the switches' widths: qkv (H + 2 KV) D, attention H D, fc1 F or 2F;
     * RMSNorm has no bias, mlp_bias=0 no MLP biases */
    const size_t QKV = (size_t)ngpt_cfg_qkv_width(cfg), A = (size_t)ngpt_cfg_attn_width(cfg);
    const size_t F1 = (size_t)ngpt_cfg_fc1_width(cfg);
    const size_t NB = cfg->norm_type == NGPT_NORM_LAYER ? C : 0, MB = cfg->mlp_bias;
    const bool q8 = cfg->weights != NGPT_WEIGHTS_F32;  /* Linear weights: no floats */
    const size_t SW = cfg->norm == NGPT_NORM_SANDWICH ? C : 0, SB = SW ? NB : 0;
    ngpt_layout l = {0};
#define TAKE(field, count_expr)                                  \
    do {                                                         \
        l.field = off;                                           \
        if (!(count_expr) || !ngpt_add_ok(off, n, &off)) return false; \
    } while (0)
    /* block-relative offsets first */
    TAKE(ln1_w, (n = C, true));
    TAKE(ln1_b, (n = NB, true));
    TAKE(qkv_w, q8 ? (n = 0, true) : ngpt_mul_ok(QKV, C, &n));
    TAKE(qkv_b, (n = cfg->qkv_bias ? QKV : 0, true));
    TAKE(q_norm, (n = cfg->qk_norm ? (size_t)ngpt_cfg_head_dim(cfg) : 0, true));
    TAKE(k_norm, (n = cfg->qk_norm ? (size_t)ngpt_cfg_head_dim(cfg) : 0, true));
    TAKE(proj_w, q8 ? (n = 0, true) : ngpt_mul_ok(C, A, &n));
    TAKE(proj_b, (n = cfg->proj_bias ? C : 0, true));
    TAKE(pa_w, (n = SW, true));
    TAKE(pa_b, (n = SB, true));
    TAKE(ln2_w, (n = C, true));
    TAKE(ln2_b, (n = NB, true));
    TAKE(fc1_w, q8 ? (n = 0, true) : ngpt_mul_ok(F1, C, &n));
    TAKE(fc1_b, (n = MB * F1, true));
    TAKE(fc2_w, q8 ? (n = 0, true) : ngpt_mul_ok(C, F, &n));
    TAKE(fc2_b, (n = MB * C, true));
    TAKE(pm_w, (n = SW, true));
    TAKE(pm_b, (n = SB, true));
    l.block_stride = off;
    off = 0;
    TAKE(tok_emb, ngpt_mul_ok(q8 && cfg->tie_lm_head ? 0 : V, C, &n));
    TAKE(pos_emb, ngpt_mul_ok(cfg->pos == NGPT_POS_LEARNED ? T : 0, C, &n));
    TAKE(blocks, ngpt_mul_ok(L, l.block_stride, &n));
    TAKE(lnf_w, (n = cfg->final_norm ? C : 0, true));
    TAKE(lnf_b, (n = cfg->final_norm ? NB : 0, true));
    TAKE(lm_head, ngpt_mul_ok(cfg->tie_lm_head || q8 ? 0 : V, C, &n));
#undef TAKE
    if (cfg->tie_lm_head) l.lm_head = l.tok_emb;
    l.total = off;
    *lay = l;
    return true;
}

/* One tensor of the table: name (after "blocks.<l>." inside a block),
 * offset, shape (cols 0: a vector). */
typedef struct entry {
    const char *name;
    size_t offset;
    int32_t rows, cols;
    int linear;                 /* the ngpt_linear it is the W of, or -1 */
} entry;

/* The tensors before the blocks, of one block, and after the blocks, in
 * state_dict order; each returns how many it wrote. */
static int head_entries(const ngpt_config *c, const ngpt_layout *lay, entry e[2])
{
    int n = 0;
    e[n++] = (entry){"tok_emb.weight", lay->tok_emb, c->vocab_size, c->d_model,
                     c->tie_lm_head ? NGPT_LINEAR_LM_HEAD : -1};
    if (c->pos == NGPT_POS_LEARNED)
        e[n++] = (entry){"pos_emb.weight", lay->pos_emb, c->context_len, c->d_model, -1};
    return n;
}

enum { BLOCK_ENTRIES_MAX = 18 };

static int block_entries(const ngpt_config *c, const ngpt_layout *lay, entry e[BLOCK_ENTRIES_MAX])
{
    const int32_t C = c->d_model, F = c->d_ff, F1 = ngpt_cfg_fc1_width(c);
    const int32_t QKV = ngpt_cfg_qkv_width(c), A = ngpt_cfg_attn_width(c);
    const bool layer_norm = c->norm_type == NGPT_NORM_LAYER;
    int n = 0;
    e[n++] = (entry){"ln1.weight", lay->ln1_w, C, 0, -1};
    if (layer_norm) e[n++] = (entry){"ln1.bias", lay->ln1_b, C, 0, -1};
    e[n++] = (entry){"attn.qkv.weight", lay->qkv_w, QKV, C, NGPT_LINEAR_QKV};
    if (c->qkv_bias) e[n++] = (entry){"attn.qkv.bias", lay->qkv_b, QKV, 0, -1};
    if (c->qk_norm) {
        e[n++] = (entry){"attn.q_norm.weight", lay->q_norm, ngpt_cfg_head_dim(c), 0, -1};
        e[n++] = (entry){"attn.k_norm.weight", lay->k_norm, ngpt_cfg_head_dim(c), 0, -1};
    }
    e[n++] = (entry){"attn.proj.weight", lay->proj_w, C, A, NGPT_LINEAR_PROJ};
    if (c->proj_bias) e[n++] = (entry){"attn.proj.bias", lay->proj_b, C, 0, -1};
    const bool sandwich = c->norm == NGPT_NORM_SANDWICH;
    if (sandwich) e[n++] = (entry){"post_attn_norm.weight", lay->pa_w, C, 0, -1};
    if (sandwich && layer_norm) e[n++] = (entry){"post_attn_norm.bias", lay->pa_b, C, 0, -1};
    e[n++] = (entry){"ln2.weight", lay->ln2_w, C, 0, -1};
    if (layer_norm) e[n++] = (entry){"ln2.bias", lay->ln2_b, C, 0, -1};
    e[n++] = (entry){"mlp.fc1.weight", lay->fc1_w, F1, C, NGPT_LINEAR_FC1};
    if (c->mlp_bias) e[n++] = (entry){"mlp.fc1.bias", lay->fc1_b, F1, 0, -1};
    e[n++] = (entry){"mlp.fc2.weight", lay->fc2_w, C, F, NGPT_LINEAR_FC2};
    if (c->mlp_bias) e[n++] = (entry){"mlp.fc2.bias", lay->fc2_b, C, 0, -1};
    if (sandwich) e[n++] = (entry){"post_mlp_norm.weight", lay->pm_w, C, 0, -1};
    if (sandwich && layer_norm) e[n++] = (entry){"post_mlp_norm.bias", lay->pm_b, C, 0, -1};
    return n;
}

static int tail_entries(const ngpt_config *c, const ngpt_layout *lay, entry e[3])
{
    int n = 0;
    if (c->final_norm) {
        e[n++] = (entry){"ln_f.weight", lay->lnf_w, c->d_model, 0, -1};
        if (c->norm_type == NGPT_NORM_LAYER)
            e[n++] = (entry){"ln_f.bias", lay->lnf_b, c->d_model, 0, -1};
    }
    if (!c->tie_lm_head)
        e[n++] = (entry){"lm_head.weight", lay->lm_head, c->vocab_size, c->d_model,
                         NGPT_LINEAR_LM_HEAD};
    return n;
}

int32_t ngpt_layout_tensor_count(const ngpt_config *cfg)
{
    ngpt_layout lay = {0};
    entry e[BLOCK_ENTRIES_MAX];
    return head_entries(cfg, &lay, e) + block_entries(cfg, &lay, e) * cfg->n_layers +
           tail_entries(cfg, &lay, e);
}

void ngpt_layout_tensor(const ngpt_config *cfg, const ngpt_layout *lay, int32_t i,
                        char name[NGPT_NAME_MAX], ngpt_tensor_info *info)
{
    entry e[BLOCK_ENTRIES_MAX];
    int32_t n_head = head_entries(cfg, lay, e), per_block = block_entries(cfg, lay, e);
    int32_t in_blocks = per_block * cfg->n_layers;
    entry pick;
    int32_t layer = 0;
    if (i < n_head) {
        head_entries(cfg, lay, e);
        pick = e[i];
        snprintf(name, NGPT_NAME_MAX, "%s", pick.name);
    } else if (i < n_head + in_blocks) {
        layer = (i - n_head) / per_block;
        pick = e[(i - n_head) % per_block];
        pick.offset += lay->blocks + (size_t)layer * lay->block_stride;
        snprintf(name, NGPT_NAME_MAX, "blocks.%d.%s", (int)layer, pick.name);
    } else {
        tail_entries(cfg, lay, e);
        pick = e[i - n_head - in_blocks];
        snprintf(name, NGPT_NAME_MAX, "%s", pick.name);
    }
    ngpt_tensor_info t = {.name = name, .ndim = pick.cols ? 2 : 1, .offset = pick.offset,
                          .dtype = NGPT_DTYPE_F32};
    if (pick.linear >= 0 && cfg->weights != NGPT_WEIGHTS_F32) {
        t.dtype = ngpt_linear_dtype(cfg, (ngpt_linear)pick.linear);
        t.offset = ngpt_linear_q8_offset(cfg, layer, (ngpt_linear)pick.linear);
    }
    t.shape[0] = pick.rows;
    if (pick.cols) t.shape[1] = pick.cols;
    t.count = (size_t)t.shape[0] * (pick.cols ? (size_t)pick.cols : 1);
    *info = t;
}

/* ---- the Linear layers */

void ngpt_linear_dims(const ngpt_config *c, ngpt_linear which, int *out, int *in)
{
    const int C = c->d_model, F = c->d_ff;
    switch (which) {
    case NGPT_LINEAR_QKV: *out = ngpt_cfg_qkv_width(c), *in = C; return;
    case NGPT_LINEAR_PROJ: *out = C, *in = ngpt_cfg_attn_width(c); return;
    case NGPT_LINEAR_FC1: *out = ngpt_cfg_fc1_width(c), *in = C; return;
    case NGPT_LINEAR_FC2: *out = C, *in = F; return;
    default: *out = c->vocab_size, *in = C; return;
    }
}

size_t ngpt_linear_weight(const ngpt_layout *lay, int layer, ngpt_linear which)
{
    const size_t block = lay->blocks + (size_t)layer * lay->block_stride;
    switch (which) {
    case NGPT_LINEAR_QKV: return block + lay->qkv_w;
    case NGPT_LINEAR_PROJ: return block + lay->proj_w;
    case NGPT_LINEAR_FC1: return block + lay->fc1_w;
    case NGPT_LINEAR_FC2: return block + lay->fc2_w;
    default: return lay->lm_head;     /* tied: tok_emb */
    }
}

ngpt_dtype ngpt_linear_dtype(const ngpt_config *c, ngpt_linear which)
{
    if (c->weights == NGPT_WEIGHTS_F32) return NGPT_DTYPE_F32;
    if (c->weights == NGPT_WEIGHTS_Q8) return NGPT_DTYPE_Q8;
    return which != NGPT_LINEAR_LM_HEAD || c->lm_head_q4 ? NGPT_DTYPE_Q4 : NGPT_DTYPE_Q8;
}

/* Bytes of one Linear's packed W (8-bit or 4-bit); false on overflow. */
static bool q8_bytes_of(const ngpt_config *c, ngpt_linear which, size_t *bytes)
{
    int n, k;
    ngpt_linear_dims(c, which, &n, &k);
    const size_t panels = ((size_t)n + NGPT_Q8_NR - 1) / NGPT_Q8_NR;
    const size_t block = ngpt_linear_dtype(c, which) == NGPT_DTYPE_Q4 ? NGPT_Q4_BLOCK : NGPT_Q8_BLOCK;
    return ngpt_mul_ok(panels, (size_t)ngpt_q8_groups(k), bytes) && ngpt_mul_ok(*bytes, block, bytes);
}

bool ngpt_linear_q8_bytes(const ngpt_config *cfg, size_t *bytes)
{
    size_t total, b, per_layer = 0;
    if (!q8_bytes_of(cfg, NGPT_LINEAR_LM_HEAD, &total)) return false;
    for (int i = 0; i < NGPT_LINEAR_PER_LAYER; i++)
        if (!q8_bytes_of(cfg, (ngpt_linear)i, &b) || !ngpt_add_ok(per_layer, b, &per_layer))
            return false;
    return ngpt_mul_ok(per_layer, (size_t)cfg->n_layers, &b) && ngpt_add_ok(total, b, bytes);
}

/* (sizes checked by ngpt_linear_q8_bytes when the arena was planned) */
size_t ngpt_linear_q8_offset(const ngpt_config *c, int layer, ngpt_linear which)
{
    if (which == NGPT_LINEAR_LM_HEAD) return 0;
    size_t head = 0, b = 0, per_layer = 0, before = 0;
    q8_bytes_of(c, NGPT_LINEAR_LM_HEAD, &head);
    for (int i = 0; i < NGPT_LINEAR_PER_LAYER; i++) {
        q8_bytes_of(c, (ngpt_linear)i, &b);
        if (i < (int)which) before += b;
        per_layer += b;
    }
    return head + (size_t)layer * per_layer + before;
}
