/* hf_tokenizer.c — a byte-level BPE tokenizer from a Hugging Face directory
 * (hf_tokenizer.h): vocab.json + merges.txt go to the GPT-2 loader as they
 * are; tokenizer.json is checked to be a tokenizer ngpt reproduces exactly
 * (GPT-2's or SmolLM2's pipeline), then, in GPT-2's id layout, its
 * model.vocab (with its added tokens) and model.merges are written out as
 * the same two texts and read by the same loader, so that both routes make
 * one tokenizer; any other layout keeps its ids (hf_tokenizer_ids.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "import/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"

ngpt_status ngpt_hf_tokenizer_files(ngpt_tokenizer **tok, const char *vocab, const char *merges)
{
    uint8_t *json = NULL, *bpe = NULL;
    size_t json_size = 0, bpe_size = 0;
    ngpt_status st = ngpt_tok_read_file(vocab, &json, &json_size);
    if (!st) st = ngpt_tok_read_file(merges, &bpe, &bpe_size);
    if (!st) st = ngpt_tok_load_gpt2(tok, json, json_size, vocab, bpe, bpe_size, merges);
    free(json);
    free(bpe);
    return st;
}

static ngpt_status refuse(const char *src, const char *what, const char *detail)
{
    return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s%.60s%s; ngpt imports byte-level BPE with "
                     "GPT-2's or SmolLM2's pre-tokenizer (ByteLevel without prefix space, "
                     "optionally after Digits with individual_digits; no normalizer)", src, what,
                     detail ? detail : "", detail ? "\"" : "");
}

/* The "type" of a component, or "" when it has none. */
static const char *type_of(const cJSON *c)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static bool is_null(const cJSON *c) { return !c || cJSON_IsNull(c); }

static bool flag(const cJSON *c, const char *key, bool dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

static bool empty_string(const cJSON *v)
{
    return is_null(v) || (cJSON_IsString(v) && !v->valuestring[0]);
}

static ngpt_status check_byte_level(const cJSON *pre, const char *src)
{
    if (strcmp(type_of(pre), "ByteLevel")) return refuse(src, "pre_tokenizer \"", type_of(pre));
    if (flag(pre, "add_prefix_space", true))
        return refuse(src, "a ByteLevel pre_tokenizer with add_prefix_space=true", NULL);
    if (!flag(pre, "use_regex", true))
        return refuse(src, "a ByteLevel pre_tokenizer with use_regex=false", NULL);
    return NGPT_OK;
}

/* ByteLevel (GPT-2's), or Sequence[Digits(individual_digits=true),
 * ByteLevel] (SmolLM2's: the digits apart first, GPT-2's split inside the
 * rest): *pretok gets which. */
static ngpt_status check_pre_tokenizer(const cJSON *pre, ngpt_pretokenizer *pretok,
                                       const char *src)
{
    if (is_null(pre)) return refuse(src, "no pre_tokenizer", NULL);
    *pretok = NGPT_PRETOK_GPT2;
    if (strcmp(type_of(pre), "Sequence")) return check_byte_level(pre, src);
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(pre, "pretokenizers");
    if (cJSON_GetArraySize(steps) != 2 || strcmp(type_of(steps->child), "Digits"))
        return refuse(src, "a pre_tokenizer \"Sequence\" other than [Digits, ByteLevel]",
                      NULL);
    if (!flag(steps->child, "individual_digits", false))
        return refuse(src, "a Digits pre_tokenizer with individual_digits=false", NULL);
    *pretok = NGPT_PRETOK_DIGITS;
    return check_byte_level(steps->child->next, src);
}

/* The components around the model: only what encodes as GPT-2 or SmolLM2 do. */
static ngpt_status check_pipeline(const cJSON *root, const cJSON *model, ngpt_pretokenizer *pretok,
                                  const char *src)
{
    if (!cJSON_IsObject(model))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a tokenizer.json: it has no model (an "
                         "object)", src);
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    if (!is_null(norm)) return refuse(src, "normalizer \"", type_of(norm));
    ngpt_status st = check_pre_tokenizer(cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"),
                                         pretok, src);
    if (st) return st;
    const cJSON *post = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
    if (!is_null(post) && strcmp(type_of(post), "ByteLevel"))
        return refuse(src, "post_processor \"", type_of(post));
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    if (!is_null(dec) && strcmp(type_of(dec), "ByteLevel"))
        return refuse(src, "decoder \"", type_of(dec));
    const char *type = type_of(model);
    if (type[0] && strcmp(type, "BPE")) return refuse(src, "model \"", type);
    if (!is_null(cJSON_GetObjectItemCaseSensitive(model, "dropout")))
        return refuse(src, "a BPE model with dropout", NULL);
    if (flag(model, "byte_fallback", false))
        return refuse(src, "a BPE model with byte_fallback", NULL);
    if (flag(model, "ignore_merges", false))
        return refuse(src, "a BPE model with ignore_merges=true", NULL);
    if (!empty_string(cJSON_GetObjectItemCaseSensitive(model, "continuing_subword_prefix")) ||
        !empty_string(cJSON_GetObjectItemCaseSensitive(model, "end_of_word_suffix")))
        return refuse(src, "a BPE model with a subword prefix or word suffix", NULL);
    return NGPT_OK;
}

/* The added tokens join the vocabulary (GPT-2's "<|endoftext|>" is in both). */
static ngpt_status add_tokens(cJSON *vocab, const cJSON *added, const char *src)
{
    if (is_null(added)) return NGPT_OK;
    if (!cJSON_IsArray(added))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: added_tokens is not a list", src);
    for (const cJSON *a = added->child; a; a = a->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(a, "content");
        if (!cJSON_IsNumber(id) || !cJSON_IsString(content))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: an added token lacks its id or content",
                             src);
        const cJSON *have = cJSON_GetObjectItemCaseSensitive(vocab, content->valuestring);
        if (have) {
            if (!cJSON_IsNumber(have) || have->valuedouble != id->valuedouble)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: added token \"%.40s\" has id %g but "
                                 "the vocabulary gives it another", src, content->valuestring,
                                 id->valuedouble);
            continue;
        }
        if (!cJSON_AddNumberToObject(vocab, content->valuestring, id->valuedouble))
            return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    }
    return NGPT_OK;
}

/* model.merges as merges.txt: "a b" strings, or ["a", "b"] pairs. */
static ngpt_status merges_text(const cJSON *merges, const char *src, char **out, size_t *size)
{
    if (!cJSON_IsArray(merges))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: model.merges is not a list", src);
    size_t cap = 16, n = 0;
    for (const cJSON *m = merges->child; m; m = m->next) {
        if (cJSON_IsString(m)) cap += strlen(m->valuestring) + 1;
        else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 &&
                 cJSON_IsString(m->child) && cJSON_IsString(m->child->next))
            cap += strlen(m->child->valuestring) + strlen(m->child->next->valuestring) + 2;
        else
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: a merge of model.merges is neither "
                             "\"a b\" nor [\"a\", \"b\"]", src);
    }
    char *t = malloc(cap);
    if (!t) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    for (const cJSON *m = merges->child; m; m = m->next) {
        const char *a = cJSON_IsString(m) ? m->valuestring : m->child->valuestring;
        const char *b = cJSON_IsString(m) ? NULL : m->child->next->valuestring;
        /* a side holding a space or line break cannot be written as "a b" */
        if (strchr(a, '\n') || (b && (strchr(a, ' ') || strchr(b, ' ') || strchr(b, '\n')))) {
            free(t);
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: a merge of model.merges holds a space "
                             "or line break, which no GPT-2 byte character is", src);
        }
        n += (size_t)sprintf(t + n, b ? "%s %s\n" : "%s\n", a, b);
    }
    *out = t, *size = n;
    return NGPT_OK;
}

ngpt_status ngpt_hf_tokenizer_json(ngpt_tokenizer **tok, const void *text, size_t size,
                                   const char *src)
{
    cJSON *root = cJSON_ParseWithLength(text, size), *vocab = NULL;
    char *json = NULL, *bpe = NULL;
    size_t bpe_size = 0;
    ngpt_status st = NGPT_OK;
    if (!cJSON_IsObject(root)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
        goto done;
    }
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    ngpt_pretokenizer pretok = NGPT_PRETOK_GPT2;
    bool gpt2_layout = false;
    if ((st = check_pipeline(root, model, &pretok, src)) ||
        (st = ngpt_hf_tokenizer_ids(tok, root, model, pretok, &gpt2_layout, src)) || !gpt2_layout)
        goto done;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!cJSON_IsObject(v)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: model.vocab is not an object", src);
        goto done;
    }
    if (!(vocab = cJSON_Duplicate(v, true))) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
        goto done;
    }
    if ((st = add_tokens(vocab, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), src)) ||
        (st = merges_text(cJSON_GetObjectItemCaseSensitive(model, "merges"), src, &bpe, &bpe_size)))
        goto done;
    if (!(json = cJSON_PrintUnformatted(vocab))) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
        goto done;
    }
    char vsrc[300], msrc[300];
    snprintf(vsrc, sizeof vsrc, "%s (model.vocab)", src);
    snprintf(msrc, sizeof msrc, "%s (model.merges)", src);
    st = ngpt_tok_load_gpt2(tok, (const uint8_t *)json, strlen(json), vsrc, (const uint8_t *)bpe,
                            bpe_size, msrc);
done:
    free(json);
    free(bpe);
    cJSON_Delete(vocab);
    cJSON_Delete(root);
    return st;
}

ngpt_status ngpt_tokenizer_load_hf_mem(ngpt_tokenizer **tok, const void *tokenizer_json,
                                       size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_hf_mem: NULL argument");
    *tok = NULL;
    if (!tokenizer_json)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_hf_mem: NULL argument");
    return ngpt_prefixed("ngpt_tokenizer_load_hf_mem",
                         ngpt_hf_tokenizer_json(tok, tokenizer_json, size, "the buffer"));
}

ngpt_status ngpt_tokenizer_load_hf(ngpt_tokenizer **tok, const char *tokenizer_json)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_hf: NULL argument");
    *tok = NULL;
    if (!tokenizer_json) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_hf: NULL argument");
    uint8_t *text = NULL;
    size_t size = 0;
    ngpt_status st = ngpt_tok_read_file(tokenizer_json, &text, &size);
    if (!st) st = ngpt_hf_tokenizer_json(tok, text, size, tokenizer_json);
    free(text);
    return ngpt_prefixed("ngpt_tokenizer_load_hf", st);
}
