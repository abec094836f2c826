/* lora.c — LoRA configs and the layout of an adapter's floats (lora.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/fpmode.h"
#include "runtime/config.h"
#include "runtime/context.h"
#include "runtime/derived.h"
#include "gemm.h"
#include "runtime/lora.h"

ngpt_lora_config ngpt_lora_config_default(void)
{
    NGPT_FPMODE_SCOPE;
    ngpt_lora_config lc = {.rank = 8, .alpha = 16.0f, .targets = NGPT_LORA_Q | NGPT_LORA_V};
    return lc;
}

ngpt_status ngpt_lora_check(const ngpt_lora_config *lc)
{
    ngpt_status st = NGPT_RESERVED_CHECK("lora_config", lc);
    if (st) return st;
    if (lc->rank < 1 || lc->rank > NGPT_LORA_RANK_MAX)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "rank must be in 1..%d, got %d", NGPT_LORA_RANK_MAX,
                         (int)lc->rank);
    if (!(lc->alpha > 0.0f) || isinf(lc->alpha))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "alpha must be finite and > 0, got %g",
                         (double)lc->alpha);
    if (!(lc->dropout >= 0.0f && lc->dropout < 1.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "dropout must be in [0, 1), got %g",
                         (double)lc->dropout);
    if (lc->targets == 0 || lc->targets >= (NGPT_LORA_ALL_LINEAR << 1))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "targets 0x%x: name at least one module (q_proj, "
                         "v_proj, ...; NGPT_LORA_* bits)", (unsigned)lc->targets);
    return NGPT_OK;
}

ngpt_status ngpt_lora_config_validate(const ngpt_lora_config *lc)
{
    NGPT_FPMODE_SCOPE;
    if (!lc) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_lora_config_validate: NULL config");
    return ngpt_prefixed("ngpt_lora_config_validate", ngpt_lora_check(lc));
}

/* Module names, PEFT's for the Llama family and GPT-2; c_proj is both of
 * GPT-2's. The embedding and the lm_head are named to be refused. */
static const struct { const char *name; uint32_t bits; } NAMES[] = {
    {"q_proj", NGPT_LORA_Q},        {"k_proj", NGPT_LORA_K},      {"v_proj", NGPT_LORA_V},
    {"o_proj", NGPT_LORA_O},        {"gate_proj", NGPT_LORA_GATE}, {"up_proj", NGPT_LORA_UP},
    {"down_proj", NGPT_LORA_DOWN},  {"c_attn", NGPT_LORA_QKV},    {"attn.c_proj", NGPT_LORA_O},
    {"c_fc", NGPT_LORA_FC1},        {"mlp.c_proj", NGPT_LORA_DOWN},
    {"c_proj", NGPT_LORA_O | NGPT_LORA_DOWN}, {"all-linear", NGPT_LORA_ALL_LINEAR},
};
static const char *const REFUSED[] = {"lm_head", "embed_tokens", "wte", "wpe", "tok_emb"};

static ngpt_status parse_targets(const char *v, uint32_t *bits)
{
    char buf[512];
    if (strlen(v) >= sizeof buf) return ngpt_fail(NGPT_ERR_BAD_ARG, "targets: too long");
    strcpy(buf, v);
    *bits = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        bool known = false;
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0] && !known; i++)
            if (!strcmp(t, NAMES[i].name)) *bits |= NAMES[i].bits, known = true;
        for (size_t i = 0; i < sizeof REFUSED / sizeof REFUSED[0] && !known; i++)
            if (!strcmp(t, REFUSED[i]))
                return ngpt_fail(NGPT_ERR_UNSUPPORTED, "targets: %s is the embedding or the "
                                 "lm_head, which LoRA does not adapt here (the blocks' Linears "
                                 "only)", t);
        if (!known)
            return ngpt_fail(NGPT_ERR_BAD_ARG, "targets: unknown module \"%s\" (q_proj k_proj "
                             "v_proj o_proj gate_proj up_proj down_proj c_attn attn.c_proj c_fc "
                             "mlp.c_proj c_proj all-linear)", t);
    }
    return *bits ? NGPT_OK : ngpt_fail(NGPT_ERR_BAD_ARG, "targets: none given");
}

/* "0-3,7" into bits 0..3 and 7 (layers below 64). */
static bool parse_layers(const char *v, uint64_t *bits)
{
    *bits = 0;
    const char *p = v;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a > 63) goto bad;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b > 63) goto bad;
            p = end;
        }
        for (long l = a; l <= b; l++) *bits |= (uint64_t)1 << l;
        if (*p == ',') p++;
        else if (*p) goto bad;
    }
    if (*bits) return true;
bad:
    ngpt_fail(NGPT_ERR_BAD_ARG, "layers: \"%s\" is not a list of layers and ranges below 64 "
              "(e.g. 0-3,7)", v);
    return false;
}

ngpt_status ngpt_lora_config_set(ngpt_lora_config *lc, const char *kv)
{
    NGPT_FPMODE_SCOPE;
    if (!lc || !kv) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_lora_config_set: NULL argument");
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || !eq[1])
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_lora_config_set: \"%s\" is not key=value", kv);
    const size_t k = (size_t)(eq - kv);
    const char *v = eq + 1;
    ngpt_lora_config c = *lc;
    char *end = NULL;
    bool ok = true;
#define KEY(s) (k == strlen(s) && !strncmp(kv, s, k))
    if (KEY("r") || KEY("rank")) {
        long r = strtol(v, &end, 10);
        ok = *end == '\0' && r >= 1 && r <= NGPT_LORA_RANK_MAX;
        c.rank = (int32_t)r;
    } else if (KEY("alpha")) {
        c.alpha = strtof(v, &end);
        ok = *end == '\0';
    } else if (KEY("dropout")) {
        c.dropout = strtof(v, &end);
        ok = *end == '\0';
    } else if (KEY("rslora")) {
        ok = !strcmp(v, "0") || !strcmp(v, "1");
        c.rslora = !strcmp(v, "1");
    } else if (KEY("targets")) {
        ngpt_status st = parse_targets(v, &c.targets);
        if (st) return ngpt_prefixed("ngpt_lora_config_set", st);
    } else if (KEY("layers")) {
        if (!parse_layers(v, &c.layers)) return ngpt_prefixed("ngpt_lora_config_set", NGPT_ERR_BAD_ARG);
    } else {
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_lora_config_set: unknown key \"%.*s\" (r, alpha, "
                         "rslora, dropout, targets, layers)", (int)k, kv);
    }
#undef KEY
    if (!ok)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_lora_config_set: bad value in \"%s\"", kv);
    ngpt_status st = ngpt_lora_check(&c);
    if (st) return ngpt_prefixed("ngpt_lora_config_set", st);
    *lc = c;
    return NGPT_OK;
}

/* "0-3,7" of layer bits (the form parse_layers reads). */
static void format_layers(uint64_t bits, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int l = 0; l < 64; l++) {
        if (!((bits >> l) & 1) || (l > 0 && ((bits >> (l - 1)) & 1))) continue;
        int end = l;
        while (end < 63 && ((bits >> (end + 1)) & 1)) end++;
        int w = end > l ? snprintf(out + n, cap - n, "%s%d-%d", n ? "," : "", l, end)
                        : snprintf(out + n, cap - n, "%s%d", n ? "," : "", l);
        if (w < 0 || (size_t)w >= cap - n) return;
        n += (size_t)w;
    }
}

void ngpt_lora_config_format(const ngpt_lora_config *lc, char *buf, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!buf || size == 0) return;
    buf[0] = '\0';
    if (!lc) return;
    char alpha[32], dropout[32], targets[160] = "", layers[200];
    ngpt_format_float(alpha, lc->alpha);
    ngpt_format_float(dropout, lc->dropout);
    /* each bit by the first name that is exactly it (o_proj, down_proj:
     * the Llama names, which mean GPT-2's c_projs too) */
    for (uint32_t bit = 1; bit && bit <= NGPT_LORA_ALL_LINEAR; bit <<= 1) {
        if (!(lc->targets & bit)) continue;
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++) {
            if (NAMES[i].bits != bit) continue;
            const size_t n = strlen(targets);
            snprintf(targets + n, sizeof targets - n, "%s%s", n ? "," : "", NAMES[i].name);
            break;
        }
    }
    format_layers(lc->layers, layers, sizeof layers);
    snprintf(buf, size, "r=%d alpha=%s targets=%s%s%s%s%s%s", (int)lc->rank, alpha, targets,
             lc->rslora ? " rslora=1" : "", lc->dropout != 0.0f ? " dropout=" : "",
             lc->dropout != 0.0f ? dropout : "", lc->layers ? " layers=" : "", layers);
}

ngpt_status ngpt_lora_layout_compute(const ngpt_config *cfg, const ngpt_lora_config *lc,
                                     ngpt_lora_layout *ll)
{
    ngpt_status st = ngpt_lora_check(lc);
    if (st) return st;
    const bool gated = ngpt_cfg_gated(cfg);     /* SwiGLU or GeGLU: gate_proj, up_proj */
    uint32_t t = lc->targets;
    if (t & NGPT_LORA_ALL_LINEAR)
        t = (t & ~(uint32_t)NGPT_LORA_ALL_LINEAR) | NGPT_LORA_O | NGPT_LORA_DOWN |
            (gated ? NGPT_LORA_Q | NGPT_LORA_K | NGPT_LORA_V | NGPT_LORA_GATE | NGPT_LORA_UP
                    : NGPT_LORA_QKV | NGPT_LORA_FC1);
    if ((t & NGPT_LORA_QKV) && (t & (NGPT_LORA_Q | NGPT_LORA_K | NGPT_LORA_V)))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "targets: c_attn (q|k|v whole) and q_proj, k_proj "
                         "or v_proj adapt the same rows; name one or the other");
    if (gated && (t & NGPT_LORA_FC1))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "targets: c_fc is a GELU MLP's first Linear; this "
                         "model's MLP is gated, SwiGLU or GeGLU (gate_proj, up_proj)");
    if (!gated && (t & (NGPT_LORA_GATE | NGPT_LORA_UP)))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "targets: gate_proj and up_proj are a gated MLP's "
                         "(SwiGLU, GeGLU); this model's MLP is GELU (c_fc)");
    if (lc->layers && cfg->n_layers < 64 && (lc->layers >> cfg->n_layers))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "layers: the model has layers 0..%d",
                         (int)cfg->n_layers - 1);
    const int32_t C = cfg->d_model, D = ngpt_cfg_head_dim(cfg), F = cfg->d_ff;
    const int32_t A = ngpt_cfg_attn_width(cfg), KVD = ngpt_cfg_kv_heads(cfg) * D;
    const struct { uint32_t bit; ngpt_linear lin; int32_t row0, rows, in; const char *name; } all[] = {
        {NGPT_LORA_QKV, NGPT_LINEAR_QKV, 0, ngpt_cfg_qkv_width(cfg), C, "attn.qkv"},
        {NGPT_LORA_Q, NGPT_LINEAR_QKV, 0, A, C, "attn.q"},
        {NGPT_LORA_K, NGPT_LINEAR_QKV, A, KVD, C, "attn.k"},
        {NGPT_LORA_V, NGPT_LINEAR_QKV, A + KVD, KVD, C, "attn.v"},
        {NGPT_LORA_O, NGPT_LINEAR_PROJ, 0, C, A, "attn.proj"},
        {NGPT_LORA_FC1, NGPT_LINEAR_FC1, 0, F, C, "mlp.fc1"},
        {NGPT_LORA_GATE, NGPT_LINEAR_FC1, 0, F, C, "mlp.gate"},
        {NGPT_LORA_UP, NGPT_LINEAR_FC1, F, F, C, "mlp.up"},
        {NGPT_LORA_DOWN, NGPT_LINEAR_FC2, 0, C, F, "mlp.fc2"},
    };
    ngpt_lora_layout l = {.rank = lc->rank, .dropout = lc->dropout, .layers = lc->layers,
                          .n_layers = cfg->n_layers};
    l.scale = (float)(lc->rslora ? (double)lc->alpha / sqrt((double)lc->rank)
                                 : (double)lc->alpha / (double)lc->rank);
    size_t at = 0, pk = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!(t & all[i].bit)) continue;
        ngpt_lora_module *m = &l.mod[l.n_modules++];
        *m = (ngpt_lora_module){all[i].bit, (int32_t)i, all[i].lin, all[i].row0, all[i].rows,
                                all[i].in, all[i].name, at, 0, pk, 0};
        at += (size_t)lc->rank * (size_t)m->in;
        pk += ngpt_packed_w_floats(lc->rank, m->in);
        m->b = at;
        m->pb = pk;
        at += (size_t)m->rows * (size_t)lc->rank;
        pk += ngpt_packed_w_floats(m->rows, lc->rank);
    }
    l.layer_floats = at;
    l.packed_layer = pk;
    const size_t on = ngpt_lora_layers_below(&l, cfg->n_layers);
    if (!ngpt_mul_ok(at, on, &l.total) || !ngpt_mul_ok(pk, on, &l.packed_total))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the adapter's size overflows size_t");
    *ll = l;
    return NGPT_OK;
}

size_t ngpt_lora_layers_below(const ngpt_lora_layout *ll, int l)
{
    if (!ll->layers) return (size_t)l;
    uint64_t bits = l >= 64 ? ll->layers : ll->layers & (((uint64_t)1 << l) - 1);
    size_t n = 0;
    for (; bits; bits &= bits - 1) n++;
    return n;
}

int ngpt_lora_adapted_layer(const ngpt_lora_layout *ll, size_t on)
{
    if (!ll->layers) return on < (size_t)ll->n_layers ? (int)on : -1;
    for (int l = 0; l < 64 && l < ll->n_layers; l++)
        if (ll->layers >> l & 1 && on-- == 0) return l;
    return -1;
}

size_t ngpt_lora_layer_offset(const ngpt_lora_layout *ll, int l)
{
    return ngpt_lora_layers_below(ll, l) * ll->layer_floats;
}

bool ngpt_lora_same_model(const ngpt_config *a, const ngpt_config *b)
{
    ngpt_config x = *a, y = *b;
    x.weights = y.weights, x.lm_head_q4 = y.lm_head_q4;     /* any storage of the model */
    x.dropout = y.dropout;
    return ngpt_config_compare(&x, &y) == NGPT_OK;   /* (the caller says what differs) */
}

void ngpt_lora_release(ngpt_context *ctx)
{
    for (int32_t i = 0; i < ctx->lora.n; i++)
        atomic_fetch_sub(&((ngpt_adapter *)(uintptr_t)ctx->lora.ads[i])->users, 1);
    ctx->lora.n = 0;
    if (ctx->lora.training) {
        atomic_fetch_sub(&((ngpt_adapter *)(uintptr_t)ctx->shape.adapter)->users, 1);
        ctx->lora.training = false;
    }
}

uint64_t ngpt_lora_checksum(const ngpt_context *ctx)
{
    if (ctx->lora.training || ctx->lora.n == 0) return 0;
    uint64_t parts[2 * NGPT_ADAPTERS_MAX];
    for (int32_t i = 0; i < ctx->lora.n; i++) {
        const ngpt_adapter *ad = ctx->lora.ads[i];
        uint32_t scale;
        memcpy(&scale, &ctx->lora.scale[i], sizeof scale);
        parts[2 * i] = ngpt_checksum_bytes(ad->w, ad->ll.total * sizeof(float));
        parts[2 * i + 1] = scale;
    }
    return ngpt_checksum_bytes(parts, (size_t)ctx->lora.n * 2 * sizeof(uint64_t));
}
