/* hf_config.c — GPT-2's config.json (transformers' GPT2Config) as an ngpt
 * config (hf_config.h). Keys ngpt reads: model_type, vocab_size,
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

static ngpt_status map(const cJSON *root, const char *src, ngpt_config *cfg)
{
    if (!cJSON_IsObject(root))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!cJSON_IsString(type))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no model_type (a string); ngpt imports "
                         "model_type \"gpt2\"", src);
    if (strcmp(type->valuestring, "gpt2") != 0)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: model_type \"%.40s\" is not supported; ngpt "
                         "imports model_type \"gpt2\"", src, type->valuestring);
    for (const cJSON *k = root->child; k; k = k->next)
        for (const cJSON *j = k->next; j; j = j->next)
            if (!strcmp(k->string, j->string))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s gives key \"%.40s\" twice", src,
                                 k->string);
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
    if ((st = ngpt_config_check(&c))) {
        char why[400];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(st, "%s describes a model ngpt cannot plan: %s", src, why);
    }
    *cfg = c;
    return NGPT_OK;
}

ngpt_status ngpt_hf_config_parse(const void *text, size_t size, const char *src, ngpt_config *cfg)
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
    ngpt_status st = map(root, src, cfg);
    cJSON_Delete(root);
    return st;
}
