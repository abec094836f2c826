/* hf_config.c — a config.json as an ngpt config (hf_config.h): GPT-2's
 * (transformers' GPT2Config), Llama's (LlamaConfig, below map_llama) or
 * Gemma 3's (Gemma3TextConfig, map_gemma3).
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

/* architectures, when given: [want] only. */
static ngpt_status architectures(const cJSON *root, const char *src, const char *want)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    if (!arch || cJSON_IsNull(arch)) return NGPT_OK;
    const cJSON *a = cJSON_IsArray(arch) ? arch->child : NULL;
    for (; a; a = a->next)
        if (!cJSON_IsString(a) || strcmp(a->valuestring, want)) break;
    if (a || !cJSON_IsArray(arch))
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: architectures other than [\"%s\"] are not "
                         "supported; ngpt imports the causal language model", src, want);
    return NGPT_OK;
}

/* What the Llama-like families share: RMSNorm (eps), RoPE on halves
 * (theta), head_dim (hd) and the key/value heads (kv, if given) as ngpt
 * stores them (0: the default), no dropout, a final norm, float32; T the
 * board's context (NGPT_IMPORT_CONTEXT_DEFAULT) unless config.json's is
 * shorter, which *positions keeps. */
static void llama_common(ngpt_config *c, int32_t hd, bool kv_given, int32_t kv, double eps,
                         double theta, int32_t *positions)
{
    c->head_dim = (int64_t)hd * c->n_heads == c->d_model ? 0 : hd;
    c->n_kv_heads = !kv_given || kv == c->n_heads ? 0 : kv;
    c->norm_eps = (float)eps;
    c->rope_theta = (float)theta;
    c->dropout = 0;
    c->pos = NGPT_POS_ROPE;
    c->rope_pairs = NGPT_ROPE_HALVES;
    c->norm_type = NGPT_NORM_RMS;
    c->final_norm = true;
    c->weights = NGPT_WEIGHTS_F32;
    /* RoPE has no position table: T only plans the arena. A board's
     * context unless the import asks for more (Llama 3.2 gives 131072) */
    *positions = c->context_len;
    if (c->context_len > NGPT_IMPORT_CONTEXT_DEFAULT) c->context_len = NGPT_IMPORT_CONTEXT_DEFAULT;
}

/* The Llama-like families: model_type "llama", "qwen2", "qwen3". */
typedef enum family { FAM_LLAMA, FAM_QWEN2, FAM_QWEN3 } family;
static const char *const FAMILY_ARCH[] = {"LlamaForCausalLM", "Qwen2ForCausalLM",
                                          "Qwen3ForCausalLM"};

/* rope_scaling's (or rope_parameters') llama3 keys into c; every other key
 * refused by name. */
static ngpt_status llama3_keys(const cJSON *p, const char *obj, const char *src, ngpt_config *c,
                               double *theta)
{
    static const char *const need[4] = {"factor", "low_freq_factor", "high_freq_factor",
                                        "original_max_position_embeddings"};
    double v[4];
    for (int i = 0; i < 4; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(p, need[i]);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s of rope_type \"llama3\" needs %s (a "
                             "number)", src, obj, need[i]);
        v[i] = x->valuedouble;
    }
    for (const cJSON *k = p->child; k; k = k->next) {
        bool known = !strcmp(k->string, "rope_type") || !strcmp(k->string, "type");
        for (int i = 0; i < 4; i++) known = known || !strcmp(k->string, need[i]);
        if (!strcmp(k->string, "rope_theta")) {     /* (rope_parameters holds it) */
            if (!cJSON_IsNumber(k))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s.rope_theta must be a number",
                                 src, obj);
            *theta = k->valuedouble, known = true;
        }
        if (!known)
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s.%.40s is not supported; ngpt reads "
                             "llama3's factor, low_freq_factor, high_freq_factor and "
                             "original_max_position_embeddings", src, obj, k->string);
    }
    if (!(v[0] >= 1 && v[0] < 1e30) || !(v[1] > 0) || !(v[2] > v[1] && v[2] < 1e30) ||
        !(v[3] >= 1 && v[3] <= 2147483647.0) || v[3] != floor(v[3]))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s of rope_type \"llama3\" needs factor >= 1, "
                         "0 < low_freq_factor < high_freq_factor and a positive integer "
                         "original_max_position_embeddings", src, obj);
    c->rope_scaling = NGPT_ROPE_SCALING_LLAMA3;
    c->rope_factor = (float)v[0], c->rope_low_freq_factor = (float)v[1];
    c->rope_high_freq_factor = (float)v[2], c->rope_original_context = (int32_t)v[3];
    if ((double)c->rope_factor != v[0] || (double)c->rope_low_freq_factor != v[1] ||
        (double)c->rope_high_freq_factor != v[2])
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s's factors must be floats exactly (ngpt "
                         "keeps them as float32)", src, obj);
    return NGPT_OK;
}

/* rope_scaling, or the newest transformers' rope_parameters: the plain
 * rotation (null, or rope_type "default" with its rope_theta) or Llama
 * 3's (rope_type "llama3"); any other type is refused by name. */
static ngpt_status rope_keys(const cJSON *root, const char *src, ngpt_config *c, double *theta)
{
    static const char *const objs[2] = {"rope_scaling", "rope_parameters"};
    for (int o = 0; o < 2; o++) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, objs[o]);
        if (!p || cJSON_IsNull(p)) continue;
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "rope_type");
        if (!type) type = cJSON_GetObjectItemCaseSensitive(p, "type");
        if (!cJSON_IsObject(p) || !cJSON_IsString(type))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s must be null or an object with a "
                             "rope_type", src, objs[o]);
        if (!strcmp(type->valuestring, "llama3")) {
            ngpt_status st = llama3_keys(p, objs[o], src, c, theta);
            if (st) return st;
            continue;
        }
        if (strcmp(type->valuestring, "default"))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s of rope_type \"%.40s\" is not "
                             "supported (ngpt's RoPE has the plain frequencies and llama3's; "
                             "linear, dynamic, yarn and longrope change them otherwise)", src,
                             objs[o], type->valuestring);
        for (const cJSON *k = p->child; k; k = k->next)
            if (strcmp(k->string, "rope_type") && strcmp(k->string, "type") &&
                strcmp(k->string, "rope_theta"))
                return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s.%.40s is not supported; ngpt "
                                 "reads rope_type \"default\" and rope_theta", src, objs[o],
                                 k->string);
        ngpt_status st = number_key(p, "rope_theta", *theta, src, theta);
        if (st) return st;
    }
    return NGPT_OK;
}

/* Qwen's layer_types (newer saves), if any: every layer full attention. */
static ngpt_status layer_types(const cJSON *root, const char *src)
{
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (!lt || cJSON_IsNull(lt)) return NGPT_OK;
    const cJSON *a = cJSON_IsArray(lt) ? lt->child : NULL;
    for (; a; a = a->next)
        if (!cJSON_IsString(a) || strcmp(a->valuestring, "full_attention"))
            return unsupported(src, "layer_types other than \"full_attention\" (sliding-window "
                                    "layers) are not supported; ngpt runs full causal attention");
    return cJSON_IsArray(lt) ? NGPT_OK
                             : ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layer_types must be a list",
                                         src);
}

/* Llama's keys (LlamaConfig, defaults from transformers): hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads,
 * num_key_value_heads (null: the heads), head_dim (null: hidden / heads),
 * rms_norm_eps, rope_theta, max_position_embeddings (the context),
 * tie_word_embeddings, hidden_act (silu), attention_bias, mlp_bias,
 * vocab_size, rope_scaling of type llama3. Qwen2's (Qwen2Config) are the
 * same with q, k and v always biased (not o) and no mlp_bias; Qwen3's
 * (Qwen3Config) add the per-head q and k norms, head_dim 128 by default
 * and attention_bias on q, k, v and o; both have sliding-window keys that
 * are ignored while use_sliding_window is false. Refused by name, as they
 * change the math: other rope scaling, sliding windows, mixtures of
 * experts, a vision tower, pretraining_tp > 1, another head (architectures
 * other than the family's ForCausalLM). Token ids, dtypes, dropouts and
 * initializer settings are ignored. */
static ngpt_status map_llama(const cJSON *root, const char *src, family fam, ngpt_config *cfg,
                             int32_t *positions)
{
    ngpt_status st = architectures(root, src, FAMILY_ARCH[fam]);
    if (st) return st;
    const bool qwen = fam != FAM_LLAMA;
    static const char *const refused[][2] = {
        {"sliding_window", "sliding-window attention"},
        {"use_sliding_window", "sliding-window attention"},
        {"num_experts", "a mixture of experts"},
        {"num_local_experts", "a mixture of experts"},
        {"num_experts_per_tok", "a mixture of experts"},
        {"moe_intermediate_size", "a mixture of experts"},
        {"vision_config", "a vision tower"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        /* Qwen's sliding_window is ignored unless use_sliding_window is true */
        if (qwen && !strcmp(refused[i][0], "sliding_window")) continue;
        if (set(root, refused[i][0]))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s is not supported (%s); ngpt runs "
                             "dense models with full causal attention", src,
                             refused[i][0], refused[i][1]);
    }
    ngpt_config c = ngpt_config_default();
    int32_t kv = 0, hd = 0, tp = 1;
    bool kv_given, hd_given, tie, attn_bias, mlp_bias;
    double eps, theta;
    if ((st = int_key(root, "vocab_size", qwen ? 151936 : 32000, src, &c.vocab_size)) ||
        (st = int_key(root, "max_position_embeddings", qwen ? 32768 : 2048, src,
                      &c.context_len)) ||
        (st = int_key(root, "hidden_size", 4096, src, &c.d_model)) ||
        (st = int_key(root, "intermediate_size", qwen ? 22016 : 11008, src, &c.d_ff)) ||
        (st = int_key(root, "num_hidden_layers", 32, src, &c.n_layers)) ||
        (st = int_key(root, "num_attention_heads", 32, src, &c.n_heads)) ||
        (st = nullable_int(root, "num_key_value_heads", src, &kv_given, &kv)) ||
        (st = nullable_int(root, "head_dim", src, &hd_given, &hd)) ||
        (st = int_key(root, "pretraining_tp", 1, src, &tp)) ||
        (st = number_key(root, "rms_norm_eps", 1e-6, src, &eps)) ||
        (st = number_key(root, "rope_theta", 10000, src, &theta)) ||
        (st = rope_keys(root, src, &c, &theta)) ||
        (st = bool_key(root, "tie_word_embeddings", false, src, &tie)) ||
        (st = bool_key(root, "attention_bias", false, src, &attn_bias)) ||
        (st = bool_key(root, "mlp_bias", false, src, &mlp_bias)) ||
        (st = layer_types(root, src)))
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
    if (qwen && mlp_bias)
        return unsupported(src, "mlp_bias is not a Qwen key (Qwen's MLP has no biases); it "
                                "must be absent or false");
    if (!(eps > 0 && eps < 1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: rms_norm_eps %g is not in (0, 1)", src, eps);
    if (!(theta > 0 && theta < 1e30))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: rope_theta %g is not positive", src, theta);
    /* transformers: head_dim null is hidden_size // num_attention_heads
     * (Qwen3Config: 128 when absent); Qwen2Config's num_key_value_heads
     * defaults to 32 */
    if (!hd_given) hd = fam == FAM_QWEN3 && !cJSON_GetObjectItemCaseSensitive(root, "head_dim")
                            ? 128 : c.d_model / c.n_heads;
    if (!kv_given && qwen && !cJSON_GetObjectItemCaseSensitive(root, "num_key_value_heads"))
        kv = 32, kv_given = true;
    llama_common(&c, hd, kv_given, kv, eps, theta, positions);
    c.norm = NGPT_NORM_PRE;
    c.mlp = NGPT_MLP_SWIGLU;
    c.mlp_bias = mlp_bias;
    /* Qwen2: q, k and v biased, o not (Qwen2Attention's); Qwen3 and
     * Llama: attention_bias on all four */
    c.qkv_bias = fam == FAM_QWEN2 || attn_bias;
    c.proj_bias = fam != FAM_QWEN2 && attn_bias;
    c.qk_norm = fam == FAM_QWEN3;
    c.tie_lm_head = tie;
    return checked(&c, src, cfg);
}

/* x rounded to nearest even at `bits` bits of mantissa (bf16: 7, f16: 10),
 * as torch's .to(dtype) rounds a float32 (x normal and in range). */
static float round_mantissa(float x, int bits)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    const int drop = 23 - bits;
    const uint32_t half = 1u << (drop - 1), low = u & ((1u << drop) - 1);
    u &= ~((1u << drop) - 1);
    if (low > half || (low == half && (u >> drop) & 1u)) u += 1u << drop;
    memcpy(&x, &u, 4);
    return x;
}

/* Gemma's embedding factor: sqrt(hidden_size) as transformers makes it,
 * a float32 tensor cast to the model's dtype (config.json's torch_dtype,
 * or dtype): bfloat16 and float16 round it (sqrt(640) = 25.2982 is 25.25
 * in bfloat16), float32 keeps it. */
static ngpt_status embed_scale(const cJSON *root, const char *src, int32_t hidden, float *out)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "torch_dtype");
    if (!dt) dt = cJSON_GetObjectItemCaseSensitive(root, "dtype");
    const char *name = cJSON_IsString(dt) ? dt->valuestring : "float32";
    if (dt && !cJSON_IsString(dt) && !cJSON_IsNull(dt))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: torch_dtype must be a string", src);
    const float f = (float)sqrt((double)hidden);
    if (!strcmp(name, "bfloat16")) *out = round_mantissa(f, 7);
    else if (!strcmp(name, "float16")) *out = round_mantissa(f, 10);
    else if (!strcmp(name, "float32")) *out = f;
    else
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: torch_dtype \"%.40s\" is not supported; "
                         "Gemma's embedding factor is rounded to bfloat16, float16 or float32",
                         src, name);
    return NGPT_OK;
}

/* Gemma 3's local layers: layer_types (newer saves) if given, else the
 * pattern (sliding_window_pattern, or _sliding_window_pattern; 6): layer i
 * is local iff (i + 1) % pattern != 0, as Gemma3TextConfig makes
 * layer_types. A list ngpt's pattern cannot say is refused by name. */
static ngpt_status gemma_layers(const cJSON *root, const char *src, int32_t L, int32_t *pattern,
                                bool *any_local)
{
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (!lt || cJSON_IsNull(lt)) {
        ngpt_status st = int_key(root, "sliding_window_pattern", 6, src, pattern);
        if (!st && !cJSON_GetObjectItemCaseSensitive(root, "sliding_window_pattern"))
            st = int_key(root, "_sliding_window_pattern", 6, src, pattern);
        if (st) return st;
        if (*pattern > 255)
            return unsupported(src, "sliding_window_pattern above 255 is not supported");
        *any_local = *pattern != 1;
        return NGPT_OK;
    }
    if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) != L)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layer_types must be a list of "
                         "num_hidden_layers (%d) strings", src, (int)L);
    int32_t first_full = -1, i = 0;
    for (const cJSON *a = lt->child; a; a = a->next, i++) {
        const bool full = cJSON_IsString(a) && !strcmp(a->valuestring, "full_attention");
        if (!full && !(cJSON_IsString(a) && !strcmp(a->valuestring, "sliding_attention")))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layer_types[%d] must be "
                             "\"sliding_attention\" or \"full_attention\"", src, (int)i);
        if (full && first_full < 0) first_full = i;
    }
    *pattern = first_full < 0 ? 0 : first_full + 1;     /* 0: every layer local */
    i = 0;
    for (const cJSON *a = lt->child; a; a = a->next, i++) {
        const bool full = !strcmp(a->valuestring, "full_attention");
        if (full != (*pattern > 0 && (i + 1) % *pattern == 0) || *pattern > 255)
            return unsupported(src, "layer_types that do not repeat one pattern (sliding "
                                    "layers, then a full one) are not supported");
    }
    *any_local = *pattern != 1;
    return NGPT_OK;
}

/* Gemma 3's text model (Gemma3TextConfig, model_type "gemma3_text", its
 * defaults from transformers): Llama's keys (hidden_size ...
 * num_key_value_heads, head_dim 256, rms_norm_eps, rope_theta 1e6,
 * max_position_embeddings, attention_bias, vocab_size 262208,
 * tie_word_embeddings, true when absent) and Gemma's: hidden_activation
 * (gelu_pytorch_tanh), query_pre_attn_scalar (256), sliding_window (4096)
 * with layer_types or sliding_window_pattern (6), rope_local_base_freq
 * (10000), final_logit_softcapping (null), torch_dtype (the embedding
 * factor's rounding). attn_logit_softcapping is not applied by
 * transformers' Gemma 3 and is ignored, as there. Refused by name:
 * use_bidirectional_attention, rope scaling other than llama3's, the
 * newest per-layer-type rope_parameters, another architecture. */
static ngpt_status map_gemma3(const cJSON *root, const char *src, ngpt_config *cfg,
                              int32_t *positions)
{
    ngpt_status st = architectures(root, src, "Gemma3ForCausalLM");
    if (st) return st;
    if (set(root, "use_bidirectional_attention"))
        return unsupported(src, "use_bidirectional_attention is not supported (an encoder, "
                                "EmbeddingGemma); ngpt runs causal attention");
    if (cJSON_GetObjectItemCaseSensitive(root, "rope_parameters"))
        return unsupported(src, "rope_parameters (per layer type) is not supported; ngpt reads "
                                "rope_theta, rope_local_base_freq and rope_scaling");
    ngpt_config c = ngpt_config_default();
    int32_t kv = 0, hd = 0, window = 0, pattern = 0;
    bool kv_given, hd_given, tie, attn_bias, any_local = false;
    double eps, theta, local, scalar, softcap = 0;
    if ((st = int_key(root, "vocab_size", 262208, src, &c.vocab_size)) ||
        (st = int_key(root, "max_position_embeddings", 131072, src, &c.context_len)) ||
        (st = int_key(root, "hidden_size", 2304, src, &c.d_model)) ||
        (st = int_key(root, "intermediate_size", 9216, src, &c.d_ff)) ||
        (st = int_key(root, "num_hidden_layers", 26, src, &c.n_layers)) ||
        (st = int_key(root, "num_attention_heads", 8, src, &c.n_heads)) ||
        (st = nullable_int(root, "num_key_value_heads", src, &kv_given, &kv)) ||
        (st = nullable_int(root, "head_dim", src, &hd_given, &hd)) ||
        (st = number_key(root, "rms_norm_eps", 1e-6, src, &eps)) ||
        (st = number_key(root, "rope_theta", 1e6, src, &theta)) ||
        (st = rope_keys(root, src, &c, &theta)) ||
        (st = number_key(root, "rope_local_base_freq", 10000, src, &local)) ||
        (st = number_key(root, "query_pre_attn_scalar", 256, src, &scalar)) ||
        (st = int_key(root, "sliding_window", 4096, src, &window)) ||
        (st = bool_key(root, "tie_word_embeddings", true, src, &tie)) ||
        (st = bool_key(root, "attention_bias", false, src, &attn_bias)) ||
        (st = gemma_layers(root, src, c.n_layers, &pattern, &any_local)) ||
        (st = embed_scale(root, src, c.d_model, &c.emb_scale)))
        return st;
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(root, "final_logit_softcapping");
    if (cap && !cJSON_IsNull(cap) && (st = number_key(root, "final_logit_softcapping", 0, src,
                                                      &softcap)))
        return st;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "hidden_activation");
    const char *a = act ? (cJSON_IsString(act) ? act->valuestring : "") : "gelu_pytorch_tanh";
    if (!strcmp(a, "gelu_pytorch_tanh") || !strcmp(a, "gelu_new")) c.gelu = NGPT_GELU_TANH;
    else if (!strcmp(a, "gelu")) c.gelu = NGPT_GELU_EXACT;
    else
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: hidden_activation \"%.40s\" is not "
                         "supported; ngpt's GeGLU computes gelu_pytorch_tanh and gelu", src, a);
    if (!(eps > 0 && eps < 1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: rms_norm_eps %g is not in (0, 1)", src, eps);
    const double pos[4] = {theta, local, scalar, softcap};
    static const char *const pos_names[4] = {"rope_theta", "rope_local_base_freq",
                                             "query_pre_attn_scalar", "final_logit_softcapping"};
    for (int i = 0; i < 4; i++)
        if (!(pos[i] >= (i == 3 ? 0 : 1e-30) && pos[i] < 1e30))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s %g is not positive", src, pos_names[i],
                             pos[i]);
    if (!hd_given) hd = cJSON_GetObjectItemCaseSensitive(root, "head_dim") ? c.d_model / c.n_heads
                                                                           : 256;
    if (!kv_given && !cJSON_GetObjectItemCaseSensitive(root, "num_key_value_heads"))
        kv = 4, kv_given = true;
    llama_common(&c, hd, kv_given, kv, eps, theta, positions);
    c.norm = NGPT_NORM_SANDWICH;
    c.norm_offset = true;
    c.mlp = NGPT_MLP_GEGLU;
    c.mlp_bias = false;
    c.qkv_bias = c.proj_bias = attn_bias;
    c.qk_norm = true;
    c.tie_lm_head = tie;
    c.attn_scalar = (float)scalar;
    c.logit_softcap = (float)softcap;
    if (any_local) {    /* (a model of global layers only needs no window) */
        c.sliding_window = window;
        c.sliding_pattern = pattern;
        c.rope_local_theta = (float)local;
    }
    return checked(&c, src, cfg);
}

static ngpt_status map(const cJSON *root, const char *src, ngpt_config *cfg,
                       const ngpt_hf_family **fam, int32_t *positions)
{
    if (!cJSON_IsObject(root))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!cJSON_IsString(type))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no model_type (a string); ngpt imports "
                         "model_type \"gpt2\", \"llama\", \"qwen2\" and \"qwen3\"", src);
    const bool gpt2 = !strcmp(type->valuestring, "gpt2");
    const bool gemma3 = !strcmp(type->valuestring, "gemma3_text");
    static const char *const llama_types[] = {"llama", "qwen2", "qwen3"};
    int fam_i = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(type->valuestring, llama_types[i])) fam_i = i;
    if (!strcmp(type->valuestring, "gemma3"))
        return unsupported(src, "model_type \"gemma3\" (Gemma 3 with its vision tower) is not "
                                "supported; ngpt imports the text-only \"gemma3_text\" "
                                "checkpoints (Gemma-3-270M, Gemma-3-1B)");
    if (!gpt2 && !gemma3 && fam_i < 0)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: model_type \"%.40s\" is not supported; ngpt "
                         "imports model_type \"gpt2\", \"llama\", \"qwen2\", \"qwen3\" and "
                         "\"gemma3_text\"", src, type->valuestring);
    for (const cJSON *k = root->child; k; k = k->next)
        for (const cJSON *j = k->next; j; j = j->next)
            if (!strcmp(k->string, j->string))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s gives key \"%.40s\" twice", src,
                                 k->string);
    if (fam) *fam = gpt2 ? &ngpt_hf_gpt2 : gemma3 ? &ngpt_hf_gemma3 : fam_i == 0 ? &ngpt_hf_llama
                                        : fam_i == 1 ? &ngpt_hf_qwen2 : &ngpt_hf_qwen3;
    if (gemma3) return map_gemma3(root, src, cfg, positions);
    if (!gpt2) return map_llama(root, src, (family)fam_i, cfg, positions);
    ngpt_status st = map_gpt2(root, src, cfg);
    if (!st) *positions = cfg->context_len;     /* learned positions: the table's rows */
    return st;
}

ngpt_status ngpt_hf_config_parse(const void *text, size_t size, const char *src, ngpt_config *cfg,
                                 const ngpt_hf_family **fam, int32_t *positions)
{
    int32_t own = 0;
    if (!positions) positions = &own;
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
    ngpt_status st = map(root, src, cfg, fam, positions);
    cJSON_Delete(root);
    return st;
}
