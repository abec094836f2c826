/* hf_tokenizer_config.c — tokenizer_config.json and generation_config.json
 * (hf_tokenizer_config.h): the end token a model stops at (SmolLM2-Instruct's
 * <|im_end|>, the base model's <|endoftext|>), the BOS prompts begin with
 * (add_bos_token) and whether the chat template is ChatML. Only these keys are read; the rest (padding side,
 * model_max_length, ...) changes nothing ngpt computes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "import/hf_tokenizer_config.h"
#include "io/tmpl_tensor.h"
#include "tokenizer/tokenizer.h"

/* A special token's name: a string, or an AddedToken {"content": ...}. */
static ngpt_status token_name(const cJSON *root, const char *key, char *out, size_t cap,
                              const char *src)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    out[0] = 0;
    if (!v || cJSON_IsNull(v)) return NGPT_OK;
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItemCaseSensitive(v, "content");
    if (!cJSON_IsString(v))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s is neither a string nor an object with "
                         "a \"content\" string", src, key);
    if (strlen(v->valuestring) >= cap)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s is longer than %zu bytes", src, key,
                         cap - 1);
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return NGPT_OK;
}

/* The template text of tokenizer_config.json's chat_template: a string, or
 * the "default" of a list of named templates (older files); NULL: none. */
static const cJSON *template_of(const cJSON *root)
{
    const cJSON *tpl = cJSON_GetObjectItemCaseSensitive(root, "chat_template");
    if (!cJSON_IsArray(tpl)) return cJSON_IsString(tpl) ? tpl : NULL;
    for (const cJSON *t = tpl->child; t; t = t->next) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(t, "template");
        if (cJSON_IsString(name) && !strcmp(name->valuestring, "default") && cJSON_IsString(text))
            return text;
    }
    return NULL;
}

ngpt_status ngpt_hf_tok_config_parse(const void *text, size_t size, const char *src,
                                     ngpt_hf_tokenizer_config *out)
{
    memset(out, 0, sizeof *out);
    cJSON *root = cJSON_ParseWithLength(text, size);
    ngpt_status st = NGPT_OK;
    if (!cJSON_IsObject(root)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
        goto done;
    }
    if ((st = token_name(root, "eos_token", out->end_token, sizeof out->end_token, src)) ||
        (st = token_name(root, "bos_token", out->bos_token, sizeof out->bos_token, src)))
        goto done;
    const cJSON *add = cJSON_GetObjectItemCaseSensitive(root, "add_bos_token");
    if (add && !cJSON_IsBool(add) && !cJSON_IsNull(add)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: add_bos_token is not true or false", src);
        goto done;
    }
    out->add_bos = cJSON_IsTrue(add);
    /* an EOS appended to every encoding is not what a prompt is */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "add_eos_token"))) {
        st = ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: add_eos_token=true (every encoding ending "
                       "with \"%.60s\"); ngpt encodes text without adding tokens", src,
                       out->end_token);
        goto done;
    }
    const cJSON *tpl = template_of(root), *any = cJSON_GetObjectItemCaseSensitive(root, "chat_template");
    if (tpl)
        out->chat_template = strstr(tpl->valuestring, "<|im_start|>") &&
                             strstr(tpl->valuestring, "<|im_end|>") ? NGPT_TEMPLATE_CHATML
                                                                    : NGPT_TEMPLATE_OTHER;
    else if (any && !cJSON_IsNull(any) && !cJSON_IsArray(any))
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: chat_template is neither a string nor a list "
                       "with a \"default\" template", src);
done:
    cJSON_Delete(root);
    return st;
}

enum { MAX_EOS = 16 };

/* generation_config.json's eos_token_id: one id or a list, into ids. */
static ngpt_status generation_eos(const void *text, size_t size, const char *src,
                                  int32_t *ids, int *n)
{
    *n = 0;
    cJSON *root = cJSON_ParseWithLength(text, size);
    ngpt_status st = NGPT_OK;
    if (!cJSON_IsObject(root)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
        goto done;
    }
    const cJSON *eos = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
    if (!eos || cJSON_IsNull(eos)) goto done;
    const cJSON *one = cJSON_IsArray(eos) ? eos->child : eos;
    for (; one; one = cJSON_IsArray(eos) ? one->next : NULL) {
        if (!cJSON_IsNumber(one) || one->valuedouble < 0 ||
            one->valuedouble >= NGPT_TOK_MAX_TOKENS ||
            one->valuedouble != (double)(int32_t)one->valuedouble || *n == MAX_EOS) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: eos_token_id is not a token id or a list "
                           "of at most %d", src, MAX_EOS);
            goto done;
        }
        ids[(*n)++] = (int32_t)one->valuedouble;
    }
done:
    cJSON_Delete(root);
    return st;
}

static bool is_special(const ngpt_tokenizer *t, int32_t id)
{
    int32_t s;
    for (int32_t i = 0; i < t->n_special; i++)
        if (!ngpt_tokenizer_special(t, i, &s) && s == id) return true;
    return false;
}

ngpt_status ngpt_hf_tok_config_apply(ngpt_tokenizer **tok, const ngpt_hf_tokenizer_config *cfg,
                                     const char *cfg_src, const void *gen, size_t gen_size,
                                     const char *gen_src)
{
    if (cfg && cfg->add_bos) {          /* prompts begin with bos_token */
        int32_t bos = -1;
        if (ngpt_tokenizer_special_id(*tok, cfg->bos_token, &bos))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: add_bos_token=true, but bos_token "
                             "\"%.60s\" is not a special token of the tokenizer", cfg_src,
                             cfg->bos_token);
        if ((*tok)->bos_id >= 0 && (*tok)->bos_id != bos)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: bos_token \"%.60s\" (id %d) is not the "
                             "token the tokenizer's post-processor begins with (id %d)", cfg_src,
                             cfg->bos_token, (int)bos, (int)(*tok)->bos_id);
        ngpt_status st = ngpt_tok_with_bos(tok, bos, cfg_src);
        if (st) return st;
    }
    int32_t end = (*tok)->end_id, eos[MAX_EOS], ends[NGPT_END_TOKENS_MAX];
    int n_eos = 0;
    if (cfg && cfg->end_token[0]) {
        if (ngpt_tokenizer_special_id(*tok, cfg->end_token, &end))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: eos_token \"%.60s\" is not a special "
                             "token of the tokenizer", cfg_src, cfg->end_token);
    }
    ngpt_status st = gen ? generation_eos(gen, gen_size, gen_src, eos, &n_eos) : NGPT_OK;
    if (st) return st;
    if (n_eos && cfg && cfg->end_token[0]) {
        bool listed = false;
        for (int i = 0; i < n_eos; i++) listed |= eos[i] == end;
        if (!listed)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s's eos_token \"%.60s\" (id %d) is not among "
                             "%s's eos_token_id", cfg_src, cfg->end_token, (int)end, gen_src);
    } else if (n_eos) {
        end = eos[0];
        if (!is_special(*tok, end))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: eos_token_id %d is not a special token of "
                             "the tokenizer", gen_src, (int)end);
    }
    /* the end of text first, then generation_config.json's other ids */
    int32_t n_end = end >= 0;
    ends[0] = end;
    for (int i = 0; i < n_eos; i++) {
        bool seen = false;
        for (int32_t k = 0; k < n_end; k++) seen |= ends[k] == eos[i];
        if (seen) continue;
        if (!is_special(*tok, eos[i]))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: eos_token_id %d is not a special token of "
                             "the tokenizer", gen_src, (int)eos[i]);
        if (n_end == NGPT_END_TOKENS_MAX)
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: eos_token_id lists more than %d end "
                             "tokens, more than ngpt keeps", gen_src, NGPT_END_TOKENS_MAX);
        ends[n_end++] = eos[i];
    }
    return ngpt_tok_with_ends(tok, ends, n_end, cfg_src ? cfg_src : gen_src);
}

ngpt_status ngpt_import_hf_tokenizer_config(const char *path, ngpt_hf_tokenizer_config *out)
{
    NGPT_FPMODE_SCOPE;
    if (!path || !out)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_hf_tokenizer_config: NULL argument");
    uint8_t *text = NULL;
    size_t size = 0;
    ngpt_status st = ngpt_tok_read_file(path, &text, &size);
    if (!st) st = ngpt_hf_tok_config_parse(text, size, path, out);
    free(text);
    return ngpt_prefixed("ngpt_import_hf_tokenizer_config", st);
}

ngpt_status ngpt_hf_chat_template(const void *cfg, size_t cfg_size, const char *cfg_src,
                                  const void *jinja, size_t jinja_size, char **blob,
                                  size_t *blob_size)
{
    static const char *const specials[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                           "pad_token", "cls_token", "mask_token"};
    *blob = NULL, *blob_size = 0;
    cJSON *root = cfg ? cJSON_ParseWithLength(cfg, cfg_size) : NULL;
    cJSON *out = cJSON_CreateObject();
    ngpt_status st = NGPT_OK;
    if (cfg && !cJSON_IsObject(root))
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", cfg_src);
    char *text = NULL;
    if (!st && jinja) {
        if (memchr(jinja, 0, jinja_size) || !(text = malloc(jinja_size + 1)))
            st = ngpt_fail(memchr(jinja, 0, jinja_size) ? NGPT_ERR_BAD_FORMAT : NGPT_ERR_NO_MEMORY,
                           "chat_template.jinja is not text");
        else memcpy(text, jinja, jinja_size), text[jinja_size] = '\0';
    }
    const cJSON *tpl = root ? template_of(root) : NULL;
    if (st || (!text && !tpl)) goto done;
    if (!out || !cJSON_AddStringToObject(out, "chat_template", text ? text : tpl->valuestring)) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; root && i < sizeof specials / sizeof specials[0] && !st; i++) {
        char name[260];
        if ((st = token_name(root, specials[i], name, sizeof name, cfg_src))) break;
        if (name[0] && !cJSON_AddStringToObject(out, specials[i], name))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    }
    char *printed = st ? NULL : cJSON_PrintUnformatted(out);
    if (!st && (!printed || !(*blob = strdup(printed)))) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    cJSON_free(printed);
    if (!st && (*blob_size = strlen(*blob)) > NGPT_CKPT_TEMPLATE_MAX)
        st = ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: the chat template has %zu bytes, more than "
                       "ngpt keeps (%zu)", cfg_src, *blob_size, NGPT_CKPT_TEMPLATE_MAX);
    if (st) {
        free(*blob);
        *blob = NULL, *blob_size = 0;
    }
done:
    free(text);
    cJSON_Delete(out);
    cJSON_Delete(root);
    return st;
}
