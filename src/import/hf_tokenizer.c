/* hf_tokenizer.c — a byte-level BPE tokenizer from a Hugging Face directory
 * (hf_tokenizer.h): vocab.json + merges.txt go to the GPT-2 loader as they
 * are; tokenizer.json is checked to be a tokenizer ngpt reproduces exactly
 * (GPT-2's, SmolLM2's, Llama 3's, Qwen's or Gemma's pipeline), then, in GPT-2's id
 * layout, its model.vocab (with its added tokens) and model.merges are written out as
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
    return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s%.300s%s; ngpt imports byte-level BPE with "
                     "GPT-2's, SmolLM2's, Llama 3's or Qwen's pre-tokenizer (ByteLevel without "
                     "prefix space, optionally after Digits with individual_digits; or GPT-4's "
                     "Split pattern, then ByteLevel without its regex), optionally after NFC, "
                     "and Gemma's SentencePiece-style BPE with byte_fallback",
                     src, what, detail ? detail : "", detail ? "\"" : "");
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

/* use_regex: GPT-2's own (the whole pre-tokenizer), or none (after Split). */
static ngpt_status check_byte_level(const cJSON *pre, bool use_regex, const char *src)
{
    if (strcmp(type_of(pre), "ByteLevel")) return refuse(src, "pre_tokenizer \"", type_of(pre));
    if (flag(pre, "add_prefix_space", true))
        return refuse(src, "a ByteLevel pre_tokenizer with add_prefix_space=true", NULL);
    if (flag(pre, "use_regex", true) != use_regex)
        return refuse(src, use_regex ? "a ByteLevel pre_tokenizer with use_regex=false" :
                      "a ByteLevel pre_tokenizer with use_regex=true after Split", NULL);
    return NGPT_OK;
}

/* GPT-4's pattern as Llama 3's and Qwen's files write it (the digits: at
 * most three in a piece, or one): the regexes ngpt's pre-tokenizers are. */
static const struct {
    const char *regex;
    ngpt_pretokenizer pretok;
} SPLIT_PATTERNS[] = {
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NGPT_PRETOK_LLAMA3},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", NGPT_PRETOK_QWEN2},
};

/* Split(one of SPLIT_PATTERNS, Isolated), not inverted. */
static ngpt_status check_split(const cJSON *split, ngpt_pretokenizer *pretok, const char *src)
{
    const cJSON *pattern = cJSON_GetObjectItemCaseSensitive(split, "pattern");
    const cJSON *regex = cJSON_GetObjectItemCaseSensitive(pattern, "Regex");
    const cJSON *behavior = cJSON_GetObjectItemCaseSensitive(split, "behavior");
    if (!cJSON_IsString(regex)) {
        const cJSON *string = cJSON_GetObjectItemCaseSensitive(pattern, "String");
        return refuse(src, "a Split pre_tokenizer on the string \"",
                      cJSON_IsString(string) ? string->valuestring : "");
    }
    size_t k = 0;
    while (k < sizeof SPLIT_PATTERNS / sizeof SPLIT_PATTERNS[0] &&
           strcmp(regex->valuestring, SPLIT_PATTERNS[k].regex))
        k++;
    if (k == sizeof SPLIT_PATTERNS / sizeof SPLIT_PATTERNS[0])
        return refuse(src, "a Split pre_tokenizer with the regex \"", regex->valuestring);
    if (!cJSON_IsString(behavior) || strcmp(behavior->valuestring, "Isolated"))
        return refuse(src, "a Split pre_tokenizer with behavior \"",
                      cJSON_IsString(behavior) ? behavior->valuestring : "");
    if (flag(split, "invert", false)) return refuse(src, "a Split pre_tokenizer with invert=true", NULL);
    *pretok = SPLIT_PATTERNS[k].pretok;
    return NGPT_OK;
}

/* ByteLevel (GPT-2's), Sequence[Digits(individual_digits=true), ByteLevel]
 * (SmolLM2's: the digits apart first, GPT-2's split inside the rest), or
 * Sequence[Split(GPT-4's pattern), ByteLevel(use_regex=false)] (Llama 3's,
 * Qwen's: their special tokens are split out of text first, as Hugging
 * Face's tokenizers do): the pre-tokenizer into *pipe. */
static ngpt_status check_pre_tokenizer(const cJSON *pre, ngpt_hf_pipeline *pipe, const char *src)
{
    if (is_null(pre)) return refuse(src, "no pre_tokenizer", NULL);
    pipe->pretok = NGPT_PRETOK_GPT2;
    if (strcmp(type_of(pre), "Sequence")) return check_byte_level(pre, true, src);
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(pre, "pretokenizers");
    const char *first = cJSON_GetArraySize(steps) == 2 ? type_of(steps->child) : "";
    if (!strcmp(first, "Split")) {
        ngpt_status st = check_split(steps->child, &pipe->pretok, src);
        pipe->flags |= NGPT_TOK_SPLIT_ADDED;
        return st ? st : check_byte_level(steps->child->next, false, src);
    }
    if (strcmp(first, "Digits"))
        return refuse(src, "a pre_tokenizer \"Sequence\" other than [Digits, ByteLevel] or "
                      "[Split, ByteLevel]", NULL);
    if (!flag(steps->child, "individual_digits", false))
        return refuse(src, "a Digits pre_tokenizer with individual_digits=false", NULL);
    pipe->pretok = NGPT_PRETOK_DIGITS;
    return check_byte_level(steps->child->next, true, src);
}

/* A post-processor that changes no ids (ByteLevel's offsets) or begins the
 * encoding with a special token (TemplateProcessing: [SpecialToken,
 * Sequence A], Llama 3's BOS), or a Sequence of those. */
static ngpt_status check_post_processor(const cJSON *post, ngpt_hf_pipeline *pipe, const char *src)
{
    if (is_null(post) || !strcmp(type_of(post), "ByteLevel")) return NGPT_OK;
    if (!strcmp(type_of(post), "Sequence")) {
        const cJSON *steps = cJSON_GetObjectItemCaseSensitive(post, "processors");
        if (!cJSON_IsArray(steps)) return refuse(src, "a post_processor \"Sequence\" without processors", NULL);
        ngpt_status st = NGPT_OK;
        for (const cJSON *p = steps->child; p && !st; p = p->next) st = check_post_processor(p, pipe, src);
        return st;
    }
    if (strcmp(type_of(post), "TemplateProcessing")) return refuse(src, "post_processor \"", type_of(post));
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(post, "single");
    const int n = cJSON_GetArraySize(single);
    const cJSON *last = n > 0 ? cJSON_GetArrayItem(single, n - 1) : NULL;
    const cJSON *seq = cJSON_GetObjectItemCaseSensitive(last, "Sequence");
    const cJSON *bos = n == 2 ? cJSON_GetObjectItemCaseSensitive(single->child, "SpecialToken") : NULL;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(bos, "id");
    if (!cJSON_IsArray(single) || n < 1 || n > 2 || !cJSON_IsObject(seq) ||
        (n == 2 && !cJSON_IsString(name)) || pipe->bos)
        return refuse(src, "a post_processor \"TemplateProcessing\" other than [a special token, "
                      "the text] or [the text]", NULL);
    if (n == 2) {
        pipe->bos = name->valuestring;
        pipe->flags |= NGPT_TOK_HAS_BOS;
    }
    return NGPT_OK;
}

/* Whether c is {"type": type, "pattern": {"String": from}, "content": to}
 * (a Replace; Split has no content: to NULL). */
static bool string_rule(const cJSON *c, const char *type, const char *from, const char *to)
{
    const cJSON *pattern = cJSON_GetObjectItemCaseSensitive(c, "pattern");
    const cJSON *string = cJSON_GetObjectItemCaseSensitive(pattern, "String");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(c, "content");
    return !strcmp(type_of(c), type) && cJSON_IsString(string) && !strcmp(string->valuestring, from) &&
           (!to || (cJSON_IsString(content) && !strcmp(content->valuestring, to)));
}

#define SPACE_MARK "\xe2\x96\x81"        /* U+2581, SentencePiece's word mark */

/* Gemma's SentencePiece-style pipeline around a BPE with byte_fallback: the
 * normalizer Replace(" " -> "▁"), the pre_tokenizer Split(" ",
 * MergedWithPrevious) (which then finds no space: the text between added
 * tokens is one piece), and the decoder [Replace("▁" -> " "), ByteFallback,
 * Fuse]. ngpt holds its tokens with a space for each ▁ and reads a ▁ in
 * text as a space (NGPT_TOK_SPACE_MARK): the same ids, and decoding is the
 * tokens' bytes; a byte fallback token <0xXX> is its byte. */
static ngpt_status check_sentencepiece(const cJSON *root, ngpt_hf_pipeline *pipe, const char *src)
{
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    const cJSON *behavior = cJSON_GetObjectItemCaseSensitive(pre, "behavior");
    if (!string_rule(cJSON_GetObjectItemCaseSensitive(root, "normalizer"), "Replace", " ", SPACE_MARK))
        return refuse(src, "a normalizer \"Replace\" other than \" \" -> \"\\u2581\"", NULL);
    if (!is_null(pre) && (!string_rule(pre, "Split", " ", NULL) || !cJSON_IsString(behavior) ||
                          strcmp(behavior->valuestring, "MergedWithPrevious") ||
                          flag(pre, "invert", false)))
        return refuse(src, "with the Replace normalizer, a pre_tokenizer other than Split(\" \", "
                      "MergedWithPrevious)", NULL);
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(dec, "decoders");
    const cJSON *d = cJSON_IsArray(steps) && cJSON_GetArraySize(steps) == 3 ? steps->child : NULL;
    if (strcmp(type_of(dec), "Sequence") || !d || !string_rule(d, "Replace", SPACE_MARK, " ") ||
        strcmp(type_of(d->next), "ByteFallback") || strcmp(type_of(d->next->next), "Fuse"))
        return refuse(src, "with the Replace normalizer, a decoder other than [Replace(\"\\u2581\" "
                      "-> \" \"), ByteFallback, Fuse]", NULL);
    pipe->pretok = NGPT_PRETOK_NONE;
    pipe->flags = NGPT_TOK_SPACE_MARK | NGPT_TOK_BYTE_FALLBACK | NGPT_TOK_SPLIT_ADDED;
    return NGPT_OK;
}

/* The components around the model: only what encodes as GPT-2, SmolLM2,
 * Llama 3, Qwen or Gemma do; *pipe gets what they ask. */
static ngpt_status check_pipeline(const cJSON *root, const cJSON *model, ngpt_hf_pipeline *pipe,
                                  const char *src)
{
    if (!cJSON_IsObject(model))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a tokenizer.json: it has no model (an "
                         "object)", src);
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    const bool sentencepiece = !strcmp(type_of(norm), "Replace");
    if (sentencepiece != flag(model, "byte_fallback", false))
        return sentencepiece ? refuse(src, "a normalizer \"Replace\" without byte_fallback", NULL)
                             : refuse(src, "a BPE model with byte_fallback without Gemma's Replace "
                                      "normalizer", NULL);
    if (!is_null(norm) && !sentencepiece && strcmp(type_of(norm), "NFC"))
        return refuse(src, "normalizer \"", type_of(norm));
    pipe->flags = is_null(norm) ? 0 : NGPT_TOK_NFC;
    ngpt_status st = sentencepiece ? check_sentencepiece(root, pipe, src) :
                     check_pre_tokenizer(cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"),
                                         pipe, src);
    if (st || (st = check_post_processor(cJSON_GetObjectItemCaseSensitive(root, "post_processor"),
                                         pipe, src)))
        return st;
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    if (!sentencepiece && !is_null(dec) && strcmp(type_of(dec), "ByteLevel"))
        return refuse(src, "decoder \"", type_of(dec));
    const char *type = type_of(model);
    if (type[0] && strcmp(type, "BPE")) return refuse(src, "model \"", type);
    if (!is_null(cJSON_GetObjectItemCaseSensitive(model, "dropout")))
        return refuse(src, "a BPE model with dropout", NULL);
    if (flag(model, "ignore_merges", false)) pipe->flags |= NGPT_TOK_IGNORE_MERGES;
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
    ngpt_hf_pipeline pipe = {NGPT_PRETOK_GPT2, 0, NULL};
    bool gpt2_layout = false;
    if ((st = check_pipeline(root, model, &pipe, src)) ||
        (st = ngpt_hf_tokenizer_ids(tok, root, model, &pipe, &gpt2_layout, src)) || !gpt2_layout)
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
