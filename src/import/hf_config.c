/* hf_config.c — a config.json as an ngpt config (hf_config.h): GPT-2's
 * (transformers' GPT2Config) or Llama's (LlamaConfig, below map_llama).
 * GPT-2's keys ngpt reads: model_type, vocab_size,
 * n_positions, n_embd, n_layer, n_head, n_inner, activation_function,
 * layer_norm_epsilon, resid_pdrop, tie_word_embeddings,
 * scale_attn_weights, scale_attn_by_inverse_layer_idx,
 * add_cross_attention; a missing one takes GPT2Config's default. Every
 * other key (n_ctx, the summary_* heads, token ids, dtypes) does not
 * change the language model's math and is ignored;
 * reorder_and_upcast_attn only changes the precision PyTorch computes in. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "import/hf_config.h"
#include "import/hf_gpt2.h"
#include "import/hf_llama.h"
#include "runtime/config.h"

static ngpt_status unsupported(const char *src, const char *what)
{
    return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s", src, what);
}

/* Integer key (default dflt when absent): 1..2^31-1. */
static ngpt_status int_key(const cJSON *root, const char *key, int32_t dflt, const char *src,
                           int32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        *out = dflt;
        return NGPT_OK;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= 2147483647.0) ||
        v->valuedouble != floor(v->valuedouble))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s must be a positive integer", src, key);
    *out = (int32_t)v->valuedouble;
    return NGPT_OK;
}

static ngpt_status bool_key(const cJSON *root, const char *key, bool dflt, const char *src,
                            bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        *out = dflt;
        return NGPT_OK;
    }
    if (!cJSON_IsBool(v))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s must be true or false", src, key);
    *out = cJSON_IsTrue(v);
    return NGPT_OK;
}

static ngpt_status number_key(const cJSON *root, const char *key, double dflt, const char *src,
                              double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        *out = dflt;
        return NGPT_OK;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s must be a number", src, key);
    *out = v->valuedouble;
    return NGPT_OK;
}

/* The config ngpt plans, or the reason it cannot. */
static ngpt_status checked(const ngpt_config *c, const char *src, ngpt_config *cfg)
{
    ngpt_status st = ngpt_config_check(c);
    if (st) {
        char why[400];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(st, "%s describes a model ngpt cannot plan: %s", src, why);
    }
    *cfg = *c;
    return NGPT_OK;
}

static ngpt_status map_gpt2(const cJSON *root, const char *src, ngpt_config *cfg)
{
    ngpt_config c = ngpt_config_default();
    int32_t n_inner = 0;
    ngpt_status st;
    if ((st = int_key(root, "vocab_size", 50257, src, &c.vocab_size)) ||
        (st = int_key(root, "n_positions", 1024, src, &c.context_len)) ||
        (st = int_key(root, "n_embd", 768, src, &c.d_model)) ||
        (st = int_key(root, "n_layer", 12, src, &c.n_layers)) ||
        (st = int_key(root, "n_head", 12, src, &c.n_heads)))
        return st;
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(root, "n_inner");
    if (inner && !cJSON_IsNull(inner) && (st = int_key(root, "n_inner", 0, src, &n_inner)))
        return st;
    if (n_inner == 0 && c.d_model > INT32_MAX / 4)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: 4 * n_embd does not fit in 32 bits", src);
    c.d_ff = n_inner ? n_inner : 4 * c.d_model;

    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "activation_function");
    const char *a = act ? (cJSON_IsString(act) ? act->valuestring : NULL) : "gelu_new";
    if (!a) return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: activation_function must be a string", src);
    if (!strcmp(a, "gelu_new") || !strcmp(a, "gelu_pytorch_tanh")) c.gelu = NGPT_GELU_TANH;
    else if (!strcmp(a, "gelu")) c.gelu = NGPT_GELU_EXACT;
    else
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: activation_function \"%.40s\" is not "
                         "supported; ngpt computes gelu_new and gelu_pytorch_tanh (GELU's tanh "
                         "form) and gelu (the exact erf form)", src, a);

    double eps, resid;
    bool tie, scale, by_layer, cross;
    if ((st = number_key(root, "layer_norm_epsilon", 1e-5, src, &eps)) ||
        (st = number_key(root, "resid_pdrop", 0.1, src, &resid)) ||
        (st = bool_key(root, "tie_word_embeddings", true, src, &tie)) ||
        (st = bool_key(root, "scale_attn_weights", true, src, &scale)) ||
        (st = bool_key(root, "scale_attn_by_inverse_layer_idx", false, src, &by_layer)) ||
        (st = bool_key(root, "add_cross_attention", false, src, &cross)))
        return st;
    if ((float)eps != 1e-5f) {
        char why[160];
        snprintf(why, sizeof why, "layer_norm_epsilon %g is not supported; ngpt's LayerNorm "
                 "uses 1e-5", eps);
        return unsupported(src, why);
    }
    if (!scale)
        return unsupported(src, "scale_attn_weights=false is not supported; ngpt scales "
                                "attention scores by 1/sqrt(head size)");
    if (by_layer)
        return unsupported(src, "scale_attn_by_inverse_layer_idx=true is not supported; ngpt "
                                "scales attention scores by 1/sqrt(head size) only");
    if (cross)
        return unsupported(src, "add_cross_attention=true is not supported (a decoder with "
                                "cross attention); ngpt runs GPT-2's language model");
    if (!(resid >= 0 && resid < 1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: resid_pdrop %g is not in [0, 1)", src, resid);
    c.dropout = (float)resid;
    c.pos = NGPT_POS_LEARNED;
    c.norm = NGPT_NORM_PRE;
    c.final_norm = true;
    c.qkv_bias = true;
    c.proj_bias = true;
    c.tie_lm_head = tie;
    c.weights = NGPT_WEIGHTS_F32;
    return checked(&c, src, cfg);
}

/* A key that may be null (or absent): *given false then. */
static ngpt_status nullable_int(const cJSON *root, const char *key, const char *src, bool *given,
                                int32_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *given = v && !cJSON_IsNull(v);
    return *given ? int_key(root, key, 0, src, out) : NGPT_OK;
}

/* A key that changes the math when present and not null (or false, 0). */
static bool set(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return v && !cJSON_IsNull(v) && !cJSON_IsFalse(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0);
}

/* rope_scaling, or the newest transformers' rope_parameters: only the
 * plain rotation (null, or rope_type "default" with its rope_theta). */
static ngpt_status rope_keys(const cJSON *root, const char *src, double *theta)
{
    if (set(root, "rope_scaling"))
        return unsupported(src, "rope_scaling is not supported (ngpt's RoPE has no scaling: "
                                "linear, dynamic, yarn, longrope and llama3 change the "
                                "frequencies); rope_scaling must be null");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
    if (!p || cJSON_IsNull(p)) return NGPT_OK;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "rope_type");
    if (!cJSON_IsObject(p) || !cJSON_IsString(type) || strcmp(type->valuestring, "default"))
        return unsupported(src, "rope_parameters other than rope_type \"default\" is not "
                                "supported (ngpt's RoPE has no scaling)");
    for (const cJSON *k = p->child; k; k = k->next)
        if (strcmp(k->string, "rope_type") && strcmp(k->string, "rope_theta"))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: rope_parameters.%.40s is not supported; "
                             "ngpt reads rope_type \"default\" and rope_theta", src, k->string);
    return number_key(p, "rope_theta", *theta, src, theta);
}

/* Llama's keys (LlamaConfig, defaults from transformers): hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads (null: the heads), head_dim (null: hidden / heads),
 * rms_norm_eps, rope_theta, max_position_embeddings (the context),
 * tie_word_embeddings, hidden_act (silu), attention_bias, mlp_bias,
 * vocab_size. Refused by name, as they change the math: rope scaling,
 * sliding windows, mixtures of experts, pretraining_tp > 1, another head
 * (architectures other than LlamaForCausalLM). Token ids, dtypes,
 * dropouts and initializer settings are ignored. */
static ngpt_status map_llama(const cJSON *root, const char *src, ngpt_config *cfg)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    if (arch && !cJSON_IsNull(arch)) {
        const cJSON *a = cJSON_IsArray(arch) ? arch->child : NULL;
        for (; a; a = a->next)
            if (!cJSON_IsString(a) || strcmp(a->valuestring, "LlamaForCausalLM"))
                break;
        if (a || !cJSON_IsArray(arch))
            return unsupported(src, "architectures other than [\"LlamaForCausalLM\"] are not "
                                    "supported; ngpt imports the causal language model");
    }
    static const char *const refused[][2] = {
        {"sliding_window", "sliding-window attention"},
        {"use_sliding_window", "sliding-window attention"},
        {"num_experts", "a mixture of experts"},
        {"num_local_experts", "a mixture of experts"},
        {"num_experts_per_tok", "a mixture of experts"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (set(root, refused[i][0]))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s is not supported (%s); ngpt runs "
                             "dense Llama models with full causal attention", src,
                             refused[i][0], refused[i][1]);
    ngpt_config c = ngpt_config_default();
    int32_t kv = 0, hd = 0, tp = 1;
    bool kv_given, hd_given, tie, attn_bias, mlp_bias;
    double eps, theta;
    ngpt_status st;
    if ((st = int_key(root, "vocab_size", 32000, src, &c.vocab_size)) ||
        (st = int_key(root, "max_position_embeddings", 2048, src, &c.context_len)) ||
        (st = int_key(root, "hidden_size", 4096, src, &c.d_model)) ||
        (st = int_key(root, "intermediate_size", 11008, src, &c.d_ff)) ||
        (st = int_key(root, "num_hidden_layers", 32, src, &c.n_layers)) ||
        (st = int_key(root, "num_attention_heads", 32, src, &c.n_heads)) ||
        (st = nullable_int(root, "num_key_value_heads", src, &kv_given, &kv)) ||
        (st = nullable_int(root, "head_dim", src, &hd_given, &hd)) ||
        (st = int_key(root, "pretraining_tp", 1, src, &tp)) ||
        (st = number_key(root, "rms_norm_eps", 1e-6, src, &eps)) ||
        (st = number_key(root, "rope_theta", 10000, src, &theta)) ||
        (st = rope_keys(root, src, &theta)) ||
        (st = bool_key(root, "tie_word_embeddings", false, src, &tie)) ||
        (st = bool_key(root, "attention_bias", false, src, &attn_bias)) ||
        (st = bool_key(root, "mlp_bias", false, src, &mlp_bias)))
        return st;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (act && (!cJSON_IsString(act) || strcmp(act->valuestring, "silu")))
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: hidden_act %s%.40s%s is not supported; ngpt's "
                         "SwiGLU computes silu", src, cJSON_IsString(act) ? "\"" : "",
                         cJSON_IsString(act) ? act->valuestring : "(not a string)",
                         cJSON_IsString(act) ? "\"" : "");
    if (tp > 1)
        return unsupported(src, "pretraining_tp > 1 is not supported (it splits the Linears "
                                "into slices summed in another order); it must be 1");
    if (!(eps > 0 && eps < 1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: rms_norm_eps %g is not in (0, 1)", src, eps);
    if (!(theta > 0 && theta < 1e30))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: rope_theta %g is not positive", src, theta);
    /* transformers: head_dim null is hidden_size // num_attention_heads */
    if (!hd_given) hd = c.d_model / c.n_heads;
    c.head_dim = (int64_t)hd * c.n_heads == c.d_model ? 0 : hd;
    c.n_kv_heads = !kv_given || kv == c.n_heads ? 0 : kv;
    c.norm_eps = (float)eps;
    c.rope_theta = (float)theta;
    c.dropout = 0;
    c.pos = NGPT_POS_ROPE;
    c.rope_pairs = NGPT_ROPE_HALVES;
    c.norm = NGPT_NORM_PRE;
    c.norm_type = NGPT_NORM_RMS;
    c.final_norm = true;
    c.mlp = NGPT_MLP_SWIGLU;
    c.mlp_bias = mlp_bias;
    c.qkv_bias = attn_bias;
    c.proj_bias = attn_bias;
    c.tie_lm_head = tie;
    c.weights = NGPT_WEIGHTS_F32;
    return checked(&c, src, cfg);
}

static ngpt_status map(const cJSON *root, const char *src, ngpt_config *cfg,
                       const ngpt_hf_family **fam)
{
    if (!cJSON_IsObject(root))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!cJSON_IsString(type))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no model_type (a string); ngpt imports "
                         "model_type \"gpt2\" and \"llama\"", src);
    const bool gpt2 = !strcmp(type->valuestring, "gpt2"),
               llama = !strcmp(type->valuestring, "llama");
    if (!gpt2 && !llama)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: model_type \"%.40s\" is not supported; ngpt "
                         "imports model_type \"gpt2\" and \"llama\"", src, type->valuestring);
    for (const cJSON *k = root->child; k; k = k->next)
        for (const cJSON *j = k->next; j; j = j->next)
            if (!strcmp(k->string, j->string))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s gives key \"%.40s\" twice", src,
                                 k->string);
    if (fam) *fam = gpt2 ? &ngpt_hf_gpt2 : &ngpt_hf_llama;
    return gpt2 ? map_gpt2(root, src, cfg) : map_llama(root, src, cfg);
}

ngpt_status ngpt_hf_config_parse(const void *text, size_t size, const char *src, ngpt_config *cfg,
                                 const ngpt_hf_family **fam)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, 0);
    if (!root) {
        size_t off = end && end >= (const char *)text && end <= (const char *)text + size
                         ? (size_t)(end - (const char *)text) : 0;
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not valid JSON (near byte %zu)", src, off);
    }
    for (const char *q = end; q < (const char *)text + size; q++)
        if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
            cJSON_Delete(root);
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not valid JSON: text after the object "
                             "(byte %zu)", src, (size_t)(q - (const char *)text));
        }
    ngpt_status st = map(root, src, cfg, fam);
    cJSON_Delete(root);
    return st;
}
