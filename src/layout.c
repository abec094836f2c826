/* layout.c — where each parameter tensor lives in the flat parameter array,
 * and its state_dict name. */
#include <stdio.h>

#include "internal.h"

bool ngpt_layout_compute(const ngpt_config *cfg, ngpt_layout *lay)
{
    size_t V = (size_t)cfg->vocab_size, C = (size_t)cfg->d_model, F = (size_t)cfg->d_ff;
    size_t L = (size_t)cfg->n_layers, off = 0, n;
    ngpt_layout l = {0};
#define TAKE(field, count_expr)                                  \
    do {                                                         \
        l.field = off;                                           \
        if (!(count_expr) || !ngpt_add_ok(off, n, &off)) return false; \
    } while (0)
    /* block-relative offsets first */
    TAKE(ln1_w, (n = C, true));
    TAKE(ln1_b, (n = C, true));
    TAKE(qkv_w, ngpt_mul_ok(3 * C, C, &n));
    TAKE(proj_w, ngpt_mul_ok(C, C, &n));
    TAKE(ln2_w, (n = C, true));
    TAKE(ln2_b, (n = C, true));
    TAKE(fc1_w, ngpt_mul_ok(F, C, &n));
    TAKE(fc1_b, (n = F, true));
    TAKE(fc2_w, ngpt_mul_ok(C, F, &n));
    TAKE(fc2_b, (n = C, true));
    l.block_stride = off;
    off = 0;
    TAKE(tok_emb, ngpt_mul_ok(V, C, &n));
    TAKE(blocks, ngpt_mul_ok(L, l.block_stride, &n));
    TAKE(lnf_w, (n = C, true));
    TAKE(lnf_b, (n = C, true));
#undef TAKE
    l.total = off;
    *lay = l;
    return true;
}

enum { BLOCK_TENSORS = 10 };

int32_t ngpt_layout_tensor_count(const ngpt_config *cfg)
{
    return 1 + BLOCK_TENSORS * cfg->n_layers + 2;
}

void ngpt_layout_tensor(const ngpt_config *cfg, const ngpt_layout *lay, int32_t i,
                        char name[NGPT_NAME_MAX], ngpt_tensor_info *info)
{
    int32_t V = cfg->vocab_size, C = cfg->d_model, F = cfg->d_ff;
    int32_t last = ngpt_layout_tensor_count(cfg) - 1;
    ngpt_tensor_info t = {.name = name, .ndim = 1};
    if (i == 0) {
        snprintf(name, NGPT_NAME_MAX, "tok_emb.weight");
        t.ndim = 2, t.shape[0] = V, t.shape[1] = C, t.offset = lay->tok_emb;
    } else if (i >= last - 1) {
        bool w = i == last - 1;
        snprintf(name, NGPT_NAME_MAX, "ln_f.%s", w ? "weight" : "bias");
        t.shape[0] = C, t.offset = w ? lay->lnf_w : lay->lnf_b;
    } else {
        int32_t layer = (i - 1) / BLOCK_TENSORS, which = (i - 1) % BLOCK_TENSORS;
        static const char *const names[BLOCK_TENSORS] = {
            "ln1.weight", "ln1.bias", "attn.qkv.weight", "attn.proj.weight", "ln2.weight",
            "ln2.bias", "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias"};
        const size_t offs[BLOCK_TENSORS] = {lay->ln1_w, lay->ln1_b, lay->qkv_w, lay->proj_w,
                                            lay->ln2_w, lay->ln2_b, lay->fc1_w, lay->fc1_b,
                                            lay->fc2_w, lay->fc2_b};
        const int32_t rows[BLOCK_TENSORS] = {C, C, 3 * C, C, C, C, F, F, C, C};
        const int32_t cols[BLOCK_TENSORS] = {0, 0, C, C, 0, 0, C, 0, F, 0};
        snprintf(name, NGPT_NAME_MAX, "blocks.%d.%s", (int)layer, names[which]);
        t.shape[0] = rows[which];
        if (cols[which]) t.ndim = 2, t.shape[1] = cols[which];
        t.offset = lay->blocks + (size_t)layer * lay->block_stride + offs[which];
    }
    t.count = (size_t)t.shape[0] * (t.ndim == 2 ? (size_t)t.shape[1] : 1);
    *info = t;
}
