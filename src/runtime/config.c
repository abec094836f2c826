/* config.c — defaults, validation and "key=value" parsing of the model config. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/checked.h"
#include "runtime/config.h"
#include "runtime/layout.h"

ngpt_config ngpt_config_default(void)
{
    NGPT_FPMODE_SCOPE;
    ngpt_config c = {
        .vocab_size = 256, .context_len = 256, .d_model = 256, .n_layers = 4, .n_heads = 4,
        .d_ff = 1024, .dropout = 0.1f, .rope_theta = 10000.0f,
        .qkv_bias = false, .proj_bias = false, .tie_lm_head = true, .final_norm = true,
        .norm = NGPT_NORM_PRE, .pos = NGPT_POS_ROPE, .gelu = NGPT_GELU_EXACT,
        .norm_type = NGPT_NORM_LAYER, .norm_eps = 1e-5f, .mlp = NGPT_MLP_GELU, .mlp_bias = true,
        .n_kv_heads = 0, .head_dim = 0, .rope_pairs = NGPT_ROPE_INTERLEAVED,
        .weights = NGPT_WEIGHTS_F32,
    };
    return c;
}

ngpt_status ngpt_config_validate(const ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!cfg) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_config_validate: NULL config");
    return ngpt_prefixed("ngpt_config_validate", ngpt_config_check(cfg));
}

/* Gemma 3's switches. */
static ngpt_status gemma_check(const ngpt_config *cfg)
{
    if (cfg->norm_offset && cfg->norm_type != NGPT_NORM_RMS)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "norm_offset (RMSNorm by 1 + w) needs norm_type=rms");
    if (cfg->sliding_window < 0)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "sliding_window must be >= 0 (0: none), got %d",
                         (int)cfg->sliding_window);
    if (cfg->sliding_pattern < 0 || cfg->sliding_pattern > 255)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "sliding_pattern must be in 0..255, got %d",
                         (int)cfg->sliding_pattern);
    if (!cfg->sliding_window && (cfg->sliding_pattern || cfg->rope_local_theta != 0.0f))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "sliding_pattern and rope_local_theta need "
                         "sliding_window");
    const struct { const char *name; float v; } floats[] = {
        {"rope_local_theta", cfg->rope_local_theta}, {"attn_scalar", cfg->attn_scalar},
        {"logit_softcap", cfg->logit_softcap},       {"emb_scale", cfg->emb_scale},
    };
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        if (!(floats[i].v >= 0.0f) || !isfinite(floats[i].v))
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "%s must be finite and >= 0 (0: none), got %g",
                             floats[i].name, (double)floats[i].v);
    return NGPT_OK;
}

ngpt_status ngpt_config_check(const ngpt_config *cfg)
{
    ngpt_status st = NGPT_RESERVED_CHECK("config", cfg);
    if (st) return st;
    const struct { const char *name; int32_t v; } sizes[] = {
        {"V (vocab_size)", cfg->vocab_size}, {"T (context_len)", cfg->context_len},
        {"C (d_model)", cfg->d_model},       {"L (n_layers)", cfg->n_layers},
        {"H (n_heads)", cfg->n_heads},       {"d_ff", cfg->d_ff},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v <= 0)
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "%s must be > 0, got %d",
                             sizes[i].name, (int)sizes[i].v);
    if (cfg->n_kv_heads < 0 || cfg->head_dim < 0)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "%s must be >= 0 (0: the default), got %d",
                         cfg->n_kv_heads < 0 ? "kv_heads (n_kv_heads)" : "head_dim",
                         (int)(cfg->n_kv_heads < 0 ? cfg->n_kv_heads : cfg->head_dim));
    if (cfg->n_heads % ngpt_cfg_kv_heads(cfg) != 0)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                         "H (n_heads=%d) must be a multiple of kv_heads (n_kv_heads=%d)",
                         (int)cfg->n_heads, (int)cfg->n_kv_heads);
    if (!cfg->head_dim && cfg->d_model % cfg->n_heads != 0)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                         "C (d_model=%d) must be divisible by H (n_heads=%d), or head_dim set",
                         (int)cfg->d_model, (int)cfg->n_heads);
    if (cfg->pos == NGPT_POS_ROPE && ngpt_cfg_head_dim(cfg) % 2 != 0)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                         "head size D = %s = %d must be even (RoPE rotates pairs)",
                         cfg->head_dim ? "head_dim" : "C/H", (int)ngpt_cfg_head_dim(cfg));
    if (cfg->pos == NGPT_POS_SINUSOIDAL && cfg->d_model % 2 != 0)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                         "C (d_model=%d) must be even for pos=sinusoidal (sin/cos pairs)",
                         (int)cfg->d_model);
    if (!(cfg->dropout >= 0.0f && cfg->dropout < 1.0f))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "dropout must be in [0, 1), got %g",
                         (double)cfg->dropout);
    if (!(cfg->rope_theta > 0.0f) || !isfinite(cfg->rope_theta))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_theta must be finite and > 0, got %g",
                         (double)cfg->rope_theta);
    if (cfg->norm != NGPT_NORM_PRE && cfg->norm != NGPT_NORM_POST &&
        cfg->norm != NGPT_NORM_SANDWICH)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "norm must be pre, post or sandwich, got %d",
                         (int)cfg->norm);
    if (cfg->pos != NGPT_POS_ROPE && cfg->pos != NGPT_POS_SINUSOIDAL &&
        cfg->pos != NGPT_POS_LEARNED)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "pos must be rope, sinusoidal or learned, got %d",
                         (int)cfg->pos);
    if (cfg->gelu != NGPT_GELU_EXACT && cfg->gelu != NGPT_GELU_TANH)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "gelu must be exact or tanh, got %d",
                         (int)cfg->gelu);
    if (cfg->norm_type != NGPT_NORM_LAYER && cfg->norm_type != NGPT_NORM_RMS)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "norm_type must be layer or rms, got %d",
                         (int)cfg->norm_type);
    if (!(cfg->norm_eps >= 0.0f) || !isfinite(cfg->norm_eps))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "norm_eps must be finite and > 0 (0: 1e-5), got %g",
                         (double)cfg->norm_eps);
    if (cfg->mlp != NGPT_MLP_GELU && cfg->mlp != NGPT_MLP_SWIGLU && cfg->mlp != NGPT_MLP_GEGLU)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "mlp must be gelu, swiglu or geglu, got %d",
                         (int)cfg->mlp);
    if ((st = gemma_check(cfg))) return st;
    if (cfg->rope_pairs != NGPT_ROPE_INTERLEAVED && cfg->rope_pairs != NGPT_ROPE_HALVES)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_pairs must be interleaved or halves, got %d",
                         (int)cfg->rope_pairs);
    if (cfg->rope_scaling == NGPT_ROPE_SCALING_NONE) {
        if (cfg->rope_factor != 0.0f || cfg->rope_low_freq_factor != 0.0f ||
            cfg->rope_high_freq_factor != 0.0f || cfg->rope_original_context != 0)
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_factor, rope_low_freq_factor, "
                             "rope_high_freq_factor and rope_original_context must be 0 "
                             "without rope_scaling");
    } else if (cfg->rope_scaling == NGPT_ROPE_SCALING_LLAMA3) {
        if (cfg->pos != NGPT_POS_ROPE)
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_scaling=llama3 needs pos=rope");
        if (!(cfg->rope_factor >= 1.0f) || !isfinite(cfg->rope_factor))
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_factor must be finite and >= 1, got %g",
                             (double)cfg->rope_factor);
        if (!(cfg->rope_low_freq_factor > 0.0f) ||
            !(cfg->rope_high_freq_factor > cfg->rope_low_freq_factor) ||
            !isfinite(cfg->rope_high_freq_factor))
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_low_freq_factor (%g) must be > 0 and "
                             "rope_high_freq_factor (%g) finite and larger",
                             (double)cfg->rope_low_freq_factor,
                             (double)cfg->rope_high_freq_factor);
        if (cfg->rope_original_context <= 0)
            return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_original_context must be > 0, got %d",
                             (int)cfg->rope_original_context);
    } else {
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_scaling must be none or llama3, got %d",
                         (int)cfg->rope_scaling);
    }
    if (cfg->weights != NGPT_WEIGHTS_F32 && cfg->weights != NGPT_WEIGHTS_Q8 &&
        cfg->weights != NGPT_WEIGHTS_Q4)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "weights must be f32, q8 or q4, got %d",
                         (int)cfg->weights);
    if (cfg->lm_head_q4 && cfg->weights != NGPT_WEIGHTS_Q4)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "lm_head_q4 needs weights=q4 (weights is %s)",
                         ngpt_weights_name(cfg->weights));
    /* Kernels take int dimensions (the widest are the qkv projection,
     * (H + 2 KV) D, and fc1, 2 d_ff with SwiGLU) and tensors are counted
     * with int32 (at most 2 + 14 L + 3). */
    if (cfg->d_model > INT32_MAX / 3)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "C (d_model=%d) is too large: 3*C overflows "
                         "a 32-bit int", (int)cfg->d_model);
    const int64_t qkv = ((int64_t)cfg->n_heads + 2 * (int64_t)ngpt_cfg_kv_heads(cfg)) *
                        (int64_t)ngpt_cfg_head_dim(cfg);
    if (qkv > INT32_MAX || (int64_t)cfg->d_ff * 2 > INT32_MAX)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "%s overflows a 32-bit int",
                         qkv > INT32_MAX ? "the qkv width (H + 2 kv_heads) * head_dim"
                                         : "2 * d_ff");
    if (cfg->n_layers > (INT32_MAX - 5) / 18)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "L (n_layers=%d) is too large: the tensor "
                         "count 18*L+5 overflows a 32-bit int", (int)cfg->n_layers);
    ngpt_layout lay;
    if (!ngpt_layout_compute(cfg, &lay))
        return ngpt_fail(NGPT_ERR_OVERFLOW,
                         "the parameter count overflows size_t on this machine");
    /* The largest single activation, (T, T) per head and (T, d_ff), must be
     * addressable with int indices used by the kernels. */
    size_t tt;
    if (!ngpt_mul_ok((size_t)cfg->context_len, (size_t)cfg->context_len, &tt) || tt > INT32_MAX)
        return ngpt_fail(NGPT_ERR_OVERFLOW, "T*T = %d*%d is too large",
                         (int)cfg->context_len, (int)cfg->context_len);
    return NGPT_OK;
}

ngpt_status ngpt_config_param_count(const ngpt_config *cfg, size_t *count)
{
    NGPT_FPMODE_SCOPE;
    if (!cfg || !count)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_config_param_count: NULL argument");
    ngpt_status st = ngpt_config_check(cfg);
    if (st) return ngpt_prefixed("ngpt_config_param_count", st);
    ngpt_config f32 = *cfg;     /* every parameter, whatever its storage */
    f32.weights = NGPT_WEIGHTS_F32, f32.lm_head_q4 = false;
    ngpt_layout lay;
    ngpt_layout_compute(&f32, &lay);
    *count = lay.total;
    return NGPT_OK;
}

static ngpt_status set_field(ngpt_config *cfg, const char *kv);

static ngpt_status parse_int(const char *key, const char *s, int32_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0' || errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "%s expects an integer, got \"%s\"", key, s);
    *out = (int32_t)v;
    return NGPT_OK;
}

static ngpt_status parse_float(const char *key, const char *s, float *out)
{
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (*s == '\0' || isspace((unsigned char)*s) || *end != '\0' || errno == ERANGE || !isfinite(v))
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "%s expects a finite number, got \"%s\"",
                         key, s);
    *out = v;
    return NGPT_OK;
}

static ngpt_status parse_bool(const char *key, const char *s, bool *out)
{
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes")) { *out = true; return NGPT_OK; }
    if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no")) { *out = false; return NGPT_OK; }
    return ngpt_fail(NGPT_ERR_BAD_CONFIG, "%s expects 0/1/true/false, got \"%s\"", key, s);
}

ngpt_status ngpt_config_set(ngpt_config *cfg, const char *kv)
{
    NGPT_FPMODE_SCOPE;
    if (!cfg || !kv) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_config_set: NULL argument");
    return ngpt_prefixed("ngpt_config_set", set_field(cfg, kv));
}

/* ngpt_config_set after its NULL checks; messages without the prefix. */
static ngpt_status set_field(ngpt_config *cfg, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "expected key=value, got \"%s\"", kv);
    char key[32];
    size_t klen = (size_t)(eq - kv);
    if (klen >= sizeof key)
        return ngpt_fail(NGPT_ERR_BAD_CONFIG, "unknown key \"%.*s\"", (int)klen, kv);
    memcpy(key, kv, klen);
    key[klen] = '\0';
    const char *val = eq + 1;
    ngpt_config c = *cfg;
    ngpt_status st;
    struct { const char *a, *b; int32_t *field; } ints[] = {
        {"V", "vocab_size", &c.vocab_size}, {"T", "context_len", &c.context_len},
        {"C", "d_model", &c.d_model},       {"L", "n_layers", &c.n_layers},
        {"H", "n_heads", &c.n_heads},       {"d_ff", "d_ff", &c.d_ff},
        {"kv_heads", "n_kv_heads", &c.n_kv_heads}, {"head_dim", "head_dim", &c.head_dim},
        {"rope_original_context", "rope_original_context", &c.rope_original_context},
        {"sliding_window", "sliding_window", &c.sliding_window},
        {"sliding_pattern", "sliding_pattern", &c.sliding_pattern},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(key, ints[i].a) || !strcmp(key, ints[i].b)) {
            if ((st = parse_int(key, val, ints[i].field))) return st;
            *cfg = c;
            return NGPT_OK;
        }
    if (!strcmp(key, "dropout")) st = parse_float(key, val, &c.dropout);
    else if (!strcmp(key, "rope_theta")) st = parse_float(key, val, &c.rope_theta);
    else if (!strcmp(key, "qkv_bias")) st = parse_bool(key, val, &c.qkv_bias);
    else if (!strcmp(key, "proj_bias")) st = parse_bool(key, val, &c.proj_bias);
    else if (!strcmp(key, "tie_lm_head") || !strcmp(key, "tied_head")) st = parse_bool(key, val, &c.tie_lm_head);
    else if (!strcmp(key, "final_norm")) st = parse_bool(key, val, &c.final_norm);
    else if (!strcmp(key, "norm")) {
        if (!strcmp(val, "pre")) c.norm = NGPT_NORM_PRE;
        else if (!strcmp(val, "post")) c.norm = NGPT_NORM_POST;
        else if (!strcmp(val, "sandwich")) c.norm = NGPT_NORM_SANDWICH;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG, "norm expects pre|post|sandwich, got \"%s\"",
                              val);
        st = NGPT_OK;
    } else if (!strcmp(key, "pos")) {
        if (!strcmp(val, "rope")) c.pos = NGPT_POS_ROPE;
        else if (!strcmp(val, "sinusoidal")) c.pos = NGPT_POS_SINUSOIDAL;
        else if (!strcmp(val, "learned")) c.pos = NGPT_POS_LEARNED;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                              "pos expects rope|sinusoidal|learned, got \"%s\"", val);
        st = NGPT_OK;
    } else if (!strcmp(key, "gelu")) {
        if (!strcmp(val, "exact")) c.gelu = NGPT_GELU_EXACT;
        else if (!strcmp(val, "tanh")) c.gelu = NGPT_GELU_TANH;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG, "gelu expects exact|tanh, got \"%s\"", val);
        st = NGPT_OK;
    } else if (!strcmp(key, "norm_type")) {
        if (!strcmp(val, "layer")) c.norm_type = NGPT_NORM_LAYER;
        else if (!strcmp(val, "rms")) c.norm_type = NGPT_NORM_RMS;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG, "norm_type expects layer|rms, got \"%s\"", val);
        st = NGPT_OK;
    } else if (!strcmp(key, "norm_eps")) {
        st = parse_float(key, val, &c.norm_eps);
    } else if (!strcmp(key, "mlp")) {
        if (!strcmp(val, "gelu")) c.mlp = NGPT_MLP_GELU;
        else if (!strcmp(val, "swiglu")) c.mlp = NGPT_MLP_SWIGLU;
        else if (!strcmp(val, "geglu")) c.mlp = NGPT_MLP_GEGLU;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG, "mlp expects gelu|swiglu|geglu, got \"%s\"",
                              val);
        st = NGPT_OK;
    } else if (!strcmp(key, "mlp_bias")) {
        st = parse_bool(key, val, &c.mlp_bias);
    } else if (!strcmp(key, "rope_pairs")) {
        if (!strcmp(val, "interleaved")) c.rope_pairs = NGPT_ROPE_INTERLEAVED;
        else if (!strcmp(val, "halves")) c.rope_pairs = NGPT_ROPE_HALVES;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                              "rope_pairs expects interleaved|halves, got \"%s\"", val);
        st = NGPT_OK;
    } else if (!strcmp(key, "qk_norm")) {
        st = parse_bool(key, val, &c.qk_norm);
    } else if (!strcmp(key, "rope_scaling")) {
        if (!strcmp(val, "none")) c.rope_scaling = NGPT_ROPE_SCALING_NONE;
        else if (!strcmp(val, "llama3")) c.rope_scaling = NGPT_ROPE_SCALING_LLAMA3;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG, "rope_scaling expects none|llama3, got \"%s\"",
                              val);
        st = NGPT_OK;
    } else if (!strcmp(key, "rope_factor")) {
        st = parse_float(key, val, &c.rope_factor);
    } else if (!strcmp(key, "rope_low_freq_factor")) {
        st = parse_float(key, val, &c.rope_low_freq_factor);
    } else if (!strcmp(key, "rope_high_freq_factor")) {
        st = parse_float(key, val, &c.rope_high_freq_factor);
    } else if (!strcmp(key, "norm_offset")) {
        st = parse_bool(key, val, &c.norm_offset);
    } else if (!strcmp(key, "rope_local_theta")) {
        st = parse_float(key, val, &c.rope_local_theta);
    } else if (!strcmp(key, "attn_scalar")) {
        st = parse_float(key, val, &c.attn_scalar);
    } else if (!strcmp(key, "logit_softcap")) {
        st = parse_float(key, val, &c.logit_softcap);
    } else if (!strcmp(key, "emb_scale")) {
        st = parse_float(key, val, &c.emb_scale);
    } else if (!strcmp(key, "lm_head_q4")) {
        st = parse_bool(key, val, &c.lm_head_q4);
    } else if (!strcmp(key, "weights")) {
        if (!strcmp(val, "f32")) c.weights = NGPT_WEIGHTS_F32;
        else if (!strcmp(val, "q8")) c.weights = NGPT_WEIGHTS_Q8;
        else if (!strcmp(val, "q4")) c.weights = NGPT_WEIGHTS_Q4;
        else return ngpt_fail(NGPT_ERR_BAD_CONFIG, "weights expects f32|q8|q4, got \"%s\"", val);
        st = NGPT_OK;
    } else {
        return ngpt_fail(NGPT_ERR_BAD_CONFIG,
                         "unknown key \"%s\" (known: V T C L H d_ff dropout rope_theta "
                         "qkv_bias proj_bias tie_lm_head (tied_head) final_norm norm pos gelu "
                         "norm_type norm_eps mlp mlp_bias kv_heads (n_kv_heads) head_dim "
                         "rope_pairs weights lm_head_q4 qk_norm rope_scaling rope_factor "
                         "rope_low_freq_factor rope_high_freq_factor rope_original_context "
                         "norm_offset sliding_window sliding_pattern rope_local_theta attn_scalar "
                         "logit_softcap emb_scale)", key);
    }
    if (st) return st;
    *cfg = c;
    return NGPT_OK;
}

/* So a printed config can be passed back to --config and give the same
 * model (config.h). */
void ngpt_format_float(char out[32], float v)
{
    snprintf(out, 32, "%g", (double)v);
    if (strtof(out, NULL) != v) snprintf(out, 32, "%.9g", (double)v);
}

/* Gemma 3's switches that are set, as " key=value" words. */
static void gemma_format(const ngpt_config *cfg, char *out, size_t size)
{
    size_t n = 0;
    if (cfg->norm_offset) n += (size_t)snprintf(out + n, size - n, " norm_offset=1");
    if (cfg->sliding_window)
        n += (size_t)snprintf(out + n, size - n, " sliding_window=%d sliding_pattern=%d",
                              (int)cfg->sliding_window, (int)cfg->sliding_pattern);
    const struct { const char *name; float v; } floats[] = {
        {"rope_local_theta", cfg->rope_local_theta}, {"attn_scalar", cfg->attn_scalar},
        {"logit_softcap", cfg->logit_softcap},       {"emb_scale", cfg->emb_scale},
    };
    for (size_t i = 0; i < sizeof floats / sizeof floats[0] && n < size; i++) {
        if (floats[i].v == 0.0f) continue;
        char v[32];
        ngpt_format_float(v, floats[i].v);
        n += (size_t)snprintf(out + n, size - n, " %s=%s", floats[i].name, v);
    }
}

void ngpt_config_format(const ngpt_config *cfg, char *buf, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!buf || size == 0) return;
    if (!cfg) { buf[0] = '\0'; return; }
    char dropout[32], theta[32], eps[48] = "", kv[32] = "", hd[32] = "", rs[224] = "";
    char gemma[256] = "";
    gemma_format(cfg, gemma, sizeof gemma);
    ngpt_format_float(dropout, cfg->dropout);
    ngpt_format_float(theta, cfg->rope_theta);
    if (ngpt_cfg_norm_eps(cfg) != 1e-5f) {
        char v[32];
        ngpt_format_float(v, cfg->norm_eps);
        snprintf(eps, sizeof eps, " norm_eps=%s", v);
    }
    if (cfg->n_kv_heads) snprintf(kv, sizeof kv, " kv_heads=%d", (int)cfg->n_kv_heads);
    if (cfg->head_dim) snprintf(hd, sizeof hd, " head_dim=%d", (int)cfg->head_dim);
    if (cfg->rope_scaling == NGPT_ROPE_SCALING_LLAMA3) {
        char f[32], lo[32], hi[32];
        ngpt_format_float(f, cfg->rope_factor);
        ngpt_format_float(lo, cfg->rope_low_freq_factor);
        ngpt_format_float(hi, cfg->rope_high_freq_factor);
        snprintf(rs, sizeof rs, " rope_scaling=llama3 rope_factor=%s rope_low_freq_factor=%s "
                 "rope_high_freq_factor=%s rope_original_context=%d", f, lo, hi,
                 (int)cfg->rope_original_context);
    }
    snprintf(buf, size,
             "V=%d T=%d C=%d L=%d H=%d d_ff=%d dropout=%s rope_theta=%s qkv_bias=%d "
             "tie_lm_head=%d final_norm=%d norm=%s pos=%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s",
             (int)cfg->vocab_size, (int)cfg->context_len, (int)cfg->d_model, (int)cfg->n_layers,
             (int)cfg->n_heads, (int)cfg->d_ff, dropout, theta,
             cfg->qkv_bias, cfg->tie_lm_head, cfg->final_norm,
             cfg->norm == NGPT_NORM_PRE ? "pre" : cfg->norm == NGPT_NORM_POST ? "post" : "sandwich",
             cfg->pos == NGPT_POS_ROPE ? "rope" : cfg->pos == NGPT_POS_SINUSOIDAL ? "sinusoidal"
                                                                                  : "learned",
             /* switches added later: printed only when set, so that a
              * default model's line stays what it always was */
             cfg->proj_bias ? " proj_bias=1" : "", cfg->gelu == NGPT_GELU_TANH ? " gelu=tanh" : "",
             cfg->norm_type == NGPT_NORM_RMS ? " norm_type=rms" : "", eps,
             cfg->mlp == NGPT_MLP_SWIGLU ? " mlp=swiglu" : cfg->mlp == NGPT_MLP_GEGLU ? " mlp=geglu" : "",
             cfg->mlp_bias ? "" : " mlp_bias=0",
             kv, hd, cfg->rope_pairs == NGPT_ROPE_HALVES ? " rope_pairs=halves" : "",
             cfg->qk_norm ? " qk_norm=1" : "", rs, gemma,
             cfg->weights == NGPT_WEIGHTS_F32 ? "" : cfg->weights == NGPT_WEIGHTS_Q8 ? " weights=q8"
                                                                             : " weights=q4",
             cfg->lm_head_q4 ? " lm_head_q4=1" : "");
}

/* A config value for a message: integers exactly, floats with the digits
 * that tell them apart (%g, else %.9g). */
static void format_value(char out[32], double v, bool is_float)
{
    if (!is_float) {
        snprintf(out, 32, "%.0f", v);
        return;
    }
    snprintf(out, 32, "%g", v);
    if (strtof(out, NULL) != (float)v) snprintf(out, 32, "%.9g", v);
}

/* D of a config that may be unvalidated (0 without heads). */
static int32_t head_dim_or_0(const ngpt_config *c)
{
    return c->n_heads > 0 ? ngpt_cfg_head_dim(c) : c->head_dim;
}

ngpt_status ngpt_config_compare(const ngpt_config *want, const ngpt_config *got)
{
    const struct { const char *name; double a, b; bool is_float; } f[] = {
        {"V", want->vocab_size, got->vocab_size, false},
        {"T", want->context_len, got->context_len, false},
        {"C", want->d_model, got->d_model, false},
        {"L", want->n_layers, got->n_layers, false},
        {"H", want->n_heads, got->n_heads, false},
        {"d_ff", want->d_ff, got->d_ff, false},
        {"dropout", want->dropout, got->dropout, true},
        {"rope_theta", want->rope_theta, got->rope_theta, true},
        {"qkv_bias", want->qkv_bias, got->qkv_bias, false},
        {"proj_bias", want->proj_bias, got->proj_bias, false},
        {"tie_lm_head", want->tie_lm_head, got->tie_lm_head, false},
        {"final_norm", want->final_norm, got->final_norm, false},
        {"norm", want->norm, got->norm, false},
        {"pos", want->pos, got->pos, false},
        {"gelu", want->gelu, got->gelu, false},
        {"norm_type", want->norm_type, got->norm_type, false},
        {"norm_eps", ngpt_cfg_norm_eps(want), ngpt_cfg_norm_eps(got), true},
        {"mlp", want->mlp, got->mlp, false},
        {"mlp_bias", want->mlp_bias, got->mlp_bias, false},
        {"kv_heads", ngpt_cfg_kv_heads(want), ngpt_cfg_kv_heads(got), false},
        {"head_dim", head_dim_or_0(want), head_dim_or_0(got), false},
        {"rope_pairs", want->rope_pairs, got->rope_pairs, false},
        {"qk_norm", want->qk_norm, got->qk_norm, false},
        {"rope_scaling", want->rope_scaling, got->rope_scaling, false},
        {"rope_factor", want->rope_factor, got->rope_factor, true},
        {"rope_low_freq_factor", want->rope_low_freq_factor, got->rope_low_freq_factor, true},
        {"rope_high_freq_factor", want->rope_high_freq_factor, got->rope_high_freq_factor, true},
        {"rope_original_context", want->rope_original_context, got->rope_original_context, false},
        {"norm_offset", want->norm_offset, got->norm_offset, false},
        {"sliding_window", want->sliding_window, got->sliding_window, false},
        {"sliding_pattern", want->sliding_pattern, got->sliding_pattern, false},
        {"rope_local_theta", want->rope_local_theta, got->rope_local_theta, true},
        {"attn_scalar", want->attn_scalar, got->attn_scalar, true},
        {"logit_softcap", want->logit_softcap, got->logit_softcap, true},
        {"emb_scale", want->emb_scale, got->emb_scale, true},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].a != f[i].b) {
            char in_ckpt[32], in_ctx[32];
            format_value(in_ckpt, f[i].b, f[i].is_float);
            format_value(in_ctx, f[i].a, f[i].is_float);
            return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH,
                             "the config differs from the model's: %s is %s in the model but "
                             "%s in the config (a config beside a model may change its "
                             "dropout and quantize a float32 model; NULL takes the model's)",
                             f[i].name, in_ckpt, in_ctx);
        }
    if (want->weights != got->weights || want->lm_head_q4 != got->lm_head_q4)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH,
                         "the config differs from the model's: weights is %s%s in the model but "
                         "%s%s in the config (a float32 model quantizes to q8 or q4; NULL takes "
                         "the model's)", ngpt_weights_name(got->weights),
                         got->lm_head_q4 ? " lm_head_q4=1" : "", ngpt_weights_name(want->weights),
                         want->lm_head_q4 ? " lm_head_q4=1" : "");
    return NGPT_OK;
}
