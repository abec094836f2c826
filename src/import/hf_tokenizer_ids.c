/* hf_tokenizer_ids.c — a byte-level BPE tokenizer.json with its own id
 * layout (SmolLM2's: special tokens at 0..16, the bytes and merges after,
 * in the vocabulary's order) as an ngpt tokenizer that keeps those ids as
 * its model ids (hf_tokenizer.h). Every vocabulary token must be a byte, a
 * merge's result or an added token; a merge joins bytes and tokens that
 * merges make (in any order; several merges may make one token); a byte
 * the vocabulary lacks is dropped when encoding, as Hugging Face's BPE
 * without an unknown token does.
 * Anything else is refused by name. hf_tokenizer.c checks the pipeline
 * around the model first. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

#define SPACE_MARK "\xe2\x96\x81"        /* U+2581, SentencePiece's word mark */

typedef struct vocab_entry {
    uint8_t bytes[NGPT_TOK_MAX_BYTES];
    size_t len;
    int32_t id;
} vocab_entry;

static int cmp_entry(const void *x, const void *y)
{
    const vocab_entry *a = x, *b = y;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return memcmp(a->bytes, b->bytes, a->len);
}

/* The bytes a byte-level token's characters stand for; false when a
 * character stands for none or the token is too long. A SentencePiece-style
 * token (sp: Gemma's) is its UTF-8 with a space for each ▁ (it may hold no
 * space of its own). */
static bool token_bytes(const char *s, bool sp, uint8_t *out, size_t *len)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s), k = 0;
    for (size_t i = 0; sp && i < n; i++) {
        const bool mark = i + 2 < n && !memcmp(p + i, "\xe2\x96\x81", 3);
        if (k == NGPT_TOK_MAX_BYTES || p[i] == ' ') return false;
        out[k++] = mark ? ' ' : p[i];
        i += mark ? 2 : 0;
    }
    for (size_t i = 0; !sp && i < n;) {
        uint32_t cp;
        size_t step = ngpt_utf8_decode(p + i, n - i, &cp);
        int b = step ? ngpt_tok_char_byte(cp) : -1;
        if (b < 0 || k == NGPT_TOK_MAX_BYTES) return false;
        out[k++] = (uint8_t)b;
        i += step;
    }
    *len = k;
    return k > 0;
}

/* The byte of a byte fallback token's name ("<0x0A>"), or -1. */
static int fallback_byte(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const char *hi = strlen(s) == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' && s[3] ? strchr(hex, s[3]) : NULL;
    const char *lo = hi && s[4] ? strchr(hex, s[4]) : NULL;
    return lo ? (int)((hi - hex) << 4 | (lo - hex)) : -1;
}

/* The model id of the token whose characters are s, or -1. */
static int32_t find(const vocab_entry *v, size_t n, bool sp, const char *s)
{
    vocab_entry key;
    if (!token_bytes(s, sp, key.bytes, &key.len)) return -1;
    const vocab_entry *e = bsearch(&key, v, n, sizeof *v, cmp_entry);
    return e ? e->id : -1;
}

static ngpt_status unsupported(const char *src, const char *what, const char *token)
{
    return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s \"%.60s\"; ngpt reproduces byte-level BPE "
                     "exactly or not at all", src, what, token);
}

static bool flag_set(const cJSON *c, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, key));
}

/* The added tokens, at ids of their own, into names[id] (NULL elsewhere)
 * and flags[id]. With GPT-2's and SmolLM2's pipelines each is special and
 * never made from text (as before); the Split pipelines (split: Llama 3's,
 * Qwen's) match each in text first by its flags, as Hugging Face's
 * tokenizers do, non-special ones too, a normalized one in the text after
 * the normalizer (nfc; without one, in the text as it is). */
static ngpt_status read_added(const cJSON *added, const char **names, uint8_t *flags, int32_t cap,
                              bool split, bool nfc, bool sp, int32_t *n_special, int32_t *max_id,
                              const char *src)
{
    *n_special = 0;
    if (!added || cJSON_IsNull(added)) return NGPT_OK;
    if (!cJSON_IsArray(added))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: added_tokens is not a list", src);
    for (const cJSON *a = added->child; a; a = a->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(a, "content");
        if (!cJSON_IsNumber(id) || !cJSON_IsString(content) || id->valuedouble < 0 ||
            id->valuedouble >= cap || id->valuedouble != (double)(int32_t)id->valuedouble)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: an added token lacks its content or an "
                             "id in 0..%d", src, (int)cap - 1);
        const char *name = content->valuestring;
        const bool special = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "special"));
        if (!special && !split)
            return unsupported(src, "an added token that is not special (it would be matched "
                               "in text)", name);
        static const char *const keys[] = {"lstrip", "rstrip", "single_word"};
        for (int f = 0; f < 3; f++)
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, keys[f])) && (f == 2 || !split))
                return unsupported(src, f == 0 ? "an added token with lstrip" : f == 1 ?
                                   "an added token with rstrip" : "an added token with "
                                   "single_word", name);
        size_t len = strlen(name);
        if (len < 1 || len > NGPT_TOK_MAX_BYTES)
            return unsupported(src, "an added token whose name is not 1..256 bytes", name);
        int32_t i = (int32_t)id->valuedouble;
        if (names[i])
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: added tokens \"%.40s\" and \"%.40s\" "
                             "share id %d", src, names[i], name, (int)i);
        if (++*n_special > NGPT_TOK_MAX_SPECIAL)
            return unsupported(src, "more than 8192 added tokens, the last", name);
        names[i] = name;
        /* "normalized" defaults to not special (transformers.js's AddedToken) */
        const cJSON *norm = cJSON_GetObjectItemCaseSensitive(a, "normalized");
        const bool normalized = cJSON_IsBool(norm) ? cJSON_IsTrue(norm) : !special;
        /* matched in the text as it is: the same places, unless Gemma's
         * Replace normalizer would change the name */
        if (normalized && sp && (strchr(name, ' ') || strstr(name, "\xe2\x96\x81")))
            return unsupported(src, "a normalized added token that holds a space or \u2581", name);
        flags[i] = (uint8_t)((flag_set(a, "lstrip") ? NGPT_ADDED_LSTRIP : 0) |
                             (flag_set(a, "rstrip") ? NGPT_ADDED_RSTRIP : 0) |
                             (normalized && nfc ? NGPT_ADDED_NORMALIZED : 0) |
                             (sp && !special ? NGPT_ADDED_PLAIN : 0));
        if (i > *max_id) *max_id = i;
    }
    return NGPT_OK;
}

/* The vocabulary without the added tokens (sp: nor the byte fallback
 * tokens, whose ids go to byte_tok), sorted by bytes; *max_id gets the
 * largest id. */
static ngpt_status read_vocab(const cJSON *vocab, const char **names, bool sp, int32_t *byte_tok,
                              vocab_entry **out, size_t *n_out, int32_t *max_id, int32_t *both,
                              const char *src)
{
    size_t n = (size_t)cJSON_GetArraySize(vocab), k = 0;
    vocab_entry *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    ngpt_status st = NGPT_OK;
    for (const cJSON *e = vocab->child; e && !st; e = e->next) {
        double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (d < 0 || d >= NGPT_TOK_MAX_TOKENS || d != (double)(int32_t)d) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: model.vocab gives \"%.40s\" no id in "
                           "0..%d", src, e->string, NGPT_TOK_MAX_TOKENS - 1);
            break;
        }
        int32_t id = (int32_t)d;
        if (id > *max_id) *max_id = id;
        if (names[id]) {            /* an added token: its name, as GPT-2's "<|endoftext|>" */
            if (strcmp(names[id], e->string))
                st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: id %d is \"%.40s\" in model.vocab but "
                               "added token \"%.40s\"", src, (int)id, e->string, names[id]);
            /* sp: Gemma's runs of ▁ are added tokens matched in text as they
             * are, and the merges make them from spaces too */
            if (!sp || !strstr(names[id], SPACE_MARK)) continue;
            ++*both;
        }
        const int b = sp ? fallback_byte(e->string) : -1;
        if (b >= 0) {
            byte_tok[b] = id;
            continue;
        }
        if (!token_bytes(e->string, sp, v[k].bytes, &v[k].len))
            st = unsupported(src, sp ? "a model.vocab token that holds a space or is too long" :
                             "a model.vocab token that is not byte-level characters", e->string);
        v[k++].id = id;
    }
    if (!st) qsort(v, k, sizeof *v, cmp_entry);
    for (size_t i = 1; i < k && !st; i++)   /* sp: "a▁" and "a " would be one */
        if (!cmp_entry(&v[i - 1], &v[i]))
            st = ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: model.vocab tokens %d and %d have the same "
                           "bytes once \u2581 is a space", src, (int)v[i - 1].id, (int)v[i].id);
    if (st) {
        free(v);
        return st;
    }
    *out = v;
    *n_out = k;
    return NGPT_OK;
}

/* Merge k's two sides ("a b" or ["a", "b"]). */
static bool merge_sides(const cJSON *m, char *buf, size_t cap, const char **a, const char **b)
{
    if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(m->child) &&
        cJSON_IsString(m->child->next)) {
        *a = m->child->valuestring;
        *b = m->child->next->valuestring;
        return true;
    }
    if (!cJSON_IsString(m) || strlen(m->valuestring) >= cap) return false;
    strcpy(buf, m->valuestring);
    char *sp = strchr(buf, ' ');
    if (!sp || strchr(sp + 1, ' ')) return false;
    *sp = 0;
    *a = buf;
    *b = sp + 1;
    return true;
}

/* The work of ngpt_hf_tokenizer_ids, on arrays it frees. */
typedef struct layout {
    bool sp;                    /* Gemma's SentencePiece-style tokens (NGPT_TOK_SPACE_MARK) */
    int32_t byte_tok[256];      /* sp: the model id of each byte fallback token <0xXX>, or -1 */
    int32_t n_chars;            /* sp: the merges that build characters, before the file's */
    const char **names;         /* (V) added tokens' names */
    uint8_t *flags;             /* (V) added tokens' NGPT_ADDED_* */
    int32_t *internal;          /* (V) internal id of each model id, -1 none yet */
    int32_t *model_id;          /* (256 + merges + specials) */
    uint32_t *merges;
    vocab_entry *v;
    size_t n_v;
    const char **added;         /* sp: the added tokens without ▁, sorted (strcmp) */
    size_t n_added;
} layout;

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* sp: whether s is an added token that read_vocab left out of L->v (one
 * without ▁): every one is split out of text before BPE, so no piece holds
 * it and a merge that joins or makes it never happens. */
static bool added_only(const layout *L, const char *s)
{
    return L->sp && bsearch(&s, L->added, L->n_added, sizeof *L->added, cmp_name);
}

/* The merges: merge k makes internal id 256 + k (sp: after the characters'
 * merges, and without the merges that never happen: added_only), the first merge of a token
 * is that token's internal id (the others are its aliases: Llama 3's file
 * lists every way tiktoken's ranks build a token), and a merge may join a
 * token that a later merge makes (its rank is still its place), as Hugging
 * Face's BPE reads them. */
static ngpt_status map_merges(layout *L, const cJSON *merges, int32_t *n_merges, const char *src)
{
    char buf[4 * 2 * NGPT_TOK_MAX_BYTES + 2];
    for (int pass = 0; pass < 2; pass++) {  /* the tokens made first, then the sides */
        int32_t k = 0, file_k = -1;
        for (const cJSON *m = merges->child; m; m = m->next) {
            const char *a, *b;
            file_k++;
            if (!merge_sides(m, buf, sizeof buf, &a, &b))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: merge %d of model.merges is neither "
                                 "\"a b\" nor [\"a\", \"b\"]", src, (int)file_k);
            int32_t ia = find(L->v, L->n_v, L->sp, a), ib = find(L->v, L->n_v, L->sp, b);
            int32_t internal = 256 + L->n_chars + k;
            char ab[sizeof buf];
            snprintf(ab, sizeof ab, "%s%s", a, b);
            int32_t iab = find(L->v, L->n_v, L->sp, ab);
            if ((ia < 0 && added_only(L, a)) || (ib < 0 && added_only(L, b)) ||
                (iab < 0 && added_only(L, ab)))
                continue;
            if (ia < 0 || ib < 0 || iab < 0)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: merge %d (\"%.40s\" \"%.40s\") joins or "
                                 "makes a token that model.vocab lacks", src, (int)file_k, a, b);
            if (internal >= NGPT_TOK_MAX_TOKENS)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has more merges than %d tokens allow",
                                 src, NGPT_TOK_MAX_TOKENS);
            if (pass == 0) {
                if (L->internal[iab] < 0) L->internal[iab] = internal;
                L->model_id[internal] = iab;
                k++;
                continue;
            }
            int32_t ka = L->internal[ia], kb = L->internal[ib];
            if (ka < 0 || kb < 0)
                return unsupported(src, "a merge that joins a token no merge makes, in merge",
                                   ka < 0 ? a : b);
            L->merges[2 * (L->n_chars + k)] = (uint32_t)ka;
            L->merges[2 * (L->n_chars + k) + 1] = (uint32_t)kb;
            k++;
        }
        *n_merges = L->n_chars + k;
    }
    return NGPT_OK;
}

/* sp: the merges that build each character of more than one byte that the
 * vocabulary holds from its bytes (a character, not a byte, is where
 * SentencePiece's BPE starts): before the file's merges, so every one has
 * happened before any of those; a character's last merge makes it, the
 * others make its first bytes, which have no model id (a character the
 * vocabulary lacks leaves them, written as their bytes' fallback tokens).
 * Counts them into L->n_chars, and writes them when write is set. Within
 * valid UTF-8 no such merge joins across characters: its right side is a
 * continuation byte. */
static void char_merges(layout *L, bool write)
{
    int32_t n = 0, part[4] = {0};       /* part[j]: the token of the first j + 1 bytes */
    const vocab_entry *prev = NULL;
    for (size_t i = 0; i < L->n_v; i++) {
        const vocab_entry *e = &L->v[i];
        uint32_t cp;
        if (e->len < 2 || ngpt_utf8_decode(e->bytes, e->len, &cp) != e->len) continue;
        size_t common = 0;              /* the first bytes the previous one's merges made */
        while (prev && prev->len == e->len && common + 1 < e->len &&
               prev->bytes[common] == e->bytes[common])
            common++;
        part[0] = e->bytes[0];
        for (size_t j = common > 1 ? common : 1; j < e->len; j++, n++) {
            const int32_t internal = 256 + n;
            if (write) {
                L->merges[2 * n] = (uint32_t)part[j - 1];
                L->merges[2 * n + 1] = e->bytes[j];
                L->model_id[internal] = j + 1 == e->len ? e->id : -1;
                if (j + 1 == e->len) L->internal[e->id] = internal;
            }
            part[j] = internal;
        }
        prev = e;
    }
    L->n_chars = n;
}

static int32_t id_above(const cJSON *id, int32_t bound)
{
    return cJSON_IsNumber(id) && id->valuedouble >= bound && id->valuedouble < NGPT_TOK_MAX_TOKENS
               ? (int32_t)id->valuedouble + 1 : bound;
}

/* 1 + the largest id in 0..NGPT_TOK_MAX_TOKENS-1 that an added token or a
 * vocabulary entry gives (the reading refuses any other): how many names
 * by id to hold, not the 8 MiB of a table of every possible id. */
static int32_t id_bound(const cJSON *added, const cJSON *vocab)
{
    int32_t bound = 0;
    const cJSON *e;
    if (cJSON_IsArray(added))
        cJSON_ArrayForEach(e, added) bound = id_above(cJSON_GetObjectItemCaseSensitive(e, "id"), bound);
    cJSON_ArrayForEach(e, vocab) bound = id_above(e, bound);
    return bound;
}

ngpt_status ngpt_hf_tokenizer_ids(ngpt_tokenizer **tok, const cJSON *root, const cJSON *model,
                                  const ngpt_hf_pipeline *pipe, bool *gpt2_layout, const char *src)
{
    *tok = NULL;
    *gpt2_layout = false;
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: model.vocab is not an object or model.merges "
                         "not a list", src);
    layout L = {.sp = (pipe->flags & NGPT_TOK_BYTE_FALLBACK) != 0};
    int32_t both = 0;               /* sp: added tokens that merges make too */
    int32_t vocab_max = -1;         /* model.vocab's largest id */
    for (int b = 0; b < 256; b++) L.byte_tok[b] = -1;
    ngpt_status st = NGPT_OK;
    ngpt_tok_spec *spec = calloc(1, sizeof *spec);  /* room for 8192 specials: not the stack */
    int32_t n_special = 0, max_id = -1, n_merges = 0;
    size_t n_merge_entries = (size_t)cJSON_GetArraySize(merges);
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    const size_t n_names = (size_t)id_bound(added, vocab) + 1;
    L.names = calloc(n_names, sizeof *L.names);
    L.flags = calloc(n_names, sizeof *L.flags);
    if (!L.names || !L.flags || !spec) {
        free(L.names);
        free(L.flags);
        free(spec);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    }
    if ((st = read_added(added, L.names, L.flags, NGPT_TOK_MAX_TOKENS,
                         pipe->flags & NGPT_TOK_SPLIT_ADDED, pipe->flags & NGPT_TOK_NFC, L.sp,
                         &n_special, &max_id, src)) ||
        (st = read_vocab(vocab, L.names, L.sp, L.byte_tok, &L.v, &L.n_v, &vocab_max, &both, src)))
        goto done;
    int32_t V = (max_id > vocab_max ? max_id : vocab_max) + 1;
    /* sp: an added token past model.vocab (Gemma's <image_soft_token>, which
     * the processor puts where an image goes, and the model has no row
     * for) is never made from text */
    for (int32_t id = vocab_max + 1; L.sp && id < V; id++)
        if (L.names[id]) L.flags[id] |= NGPT_ADDED_UNMATCHED;
    /* sp: a byte's token is its character's, or else its fallback token;
     * the fallback tokens of bytes that are characters are decoded only */
    char one_byte[256][2] = {{0}};
    int32_t byte_chars = 0;
    for (int b = 0; L.sp && b < 256; b++) {
        vocab_entry key = {.len = 1};
        key.bytes[0] = (uint8_t)b;
        if (L.byte_tok[b] < 0) {
            char name[8];
            snprintf(name, sizeof name, "<0x%02X>", b);
            st = unsupported(src, "a BPE model with byte_fallback whose model.vocab lacks", name);
            goto done;
        }
        if (!bsearch(&key, L.v, L.n_v, sizeof *L.v, cmp_entry)) continue;
        if (b == 0 || n_special == NGPT_TOK_MAX_SPECIAL) {
            st = unsupported(src, "more added tokens and fallback tokens of bytes that are "
                             "characters than ngpt's 8192 special tokens, or a NUL character:", "");
            goto done;
        }
        one_byte[b][0] = (char)b;
        L.names[L.byte_tok[b]] = one_byte[b];
        L.flags[L.byte_tok[b]] = NGPT_ADDED_UNMATCHED;
        n_special++, byte_chars++;
    }
    if (L.sp && !(L.added = malloc((size_t)(V > 0 ? V : 1) * sizeof *L.added))) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
        goto done;
    }
    for (int32_t id = 0; L.sp && id < V; id++)
        if (L.names[id] && !strstr(L.names[id], SPACE_MARK)) L.added[L.n_added++] = L.names[id];
    if (L.sp) qsort(L.added, L.n_added, sizeof *L.added, cmp_name);
    if (L.sp) char_merges(&L, false);
    size_t n_internal = 256 + (size_t)L.n_chars + n_merge_entries + (size_t)n_special;
    L.internal = malloc((size_t)(V > 0 ? V : 1) * sizeof *L.internal);
    L.model_id = malloc(n_internal * sizeof *L.model_id);
    L.merges = malloc((L.n_chars + n_merge_entries + 1) * 2 * sizeof *L.merges);
    if (!L.internal || !L.model_id || !L.merges) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
        goto done;
    }
    for (int32_t i = 0; i < V; i++) L.internal[i] = -1;
    /* bytes: internal id = the byte; one the vocabulary lacks has no model
     * id, or (sp) its fallback token's */
    int absent = 0;
    for (int b = 0; b < 256; b++) {
        uint8_t one = (uint8_t)b;
        vocab_entry key = {.len = 1};
        key.bytes[0] = one;
        const vocab_entry *e = bsearch(&key, L.v, L.n_v, sizeof *L.v, cmp_entry);
        const int32_t id = e ? e->id : L.byte_tok[b];
        spec->id_byte[b] = one;
        L.model_id[b] = id;
        if (id >= 0) L.internal[id] = b;
        absent += id < 0;
    }
    if (L.sp) char_merges(&L, true);
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    if (absent && cJSON_IsString(unk)) {
        st = unsupported(src, "bytes missing from model.vocab with an unknown token (they would "
                         "become it)", unk->valuestring);
        goto done;
    }
    if ((st = map_merges(&L, merges, &n_merges, src))) goto done;
    /* the added tokens in id order follow the merges */
    int32_t s = 0;
    for (int32_t id = 0; id < V; id++) {
        if (!L.names[id]) continue;
        int32_t internal = 256 + n_merges + s;
        L.internal[id] = internal;
        L.model_id[internal] = id;
        spec->special[s] = (const uint8_t *)L.names[id];
        spec->special_len[s] = strlen(L.names[id]);
        spec->added_flags[s] = L.flags[id];
        s++;
    }
    for (size_t i = 0; i < L.n_v; i++)
        if (L.internal[L.v[i].id] < 0) {
            char what[128];
            snprintf(what, sizeof what, "a model.vocab token (id %d) that is no byte, no "
                     "merge's result and no added token", (int)L.v[i].id);
            st = unsupported(src, what, "");
            goto done;
        }
    int32_t covered = 0;
    for (int32_t id = 0; id < V; id++) covered += L.internal[id] >= 0;
    const size_t fallback_bytes = L.sp ? (size_t)(256 - byte_chars) : 0;
    if (covered != V || (size_t)covered + (size_t)both != L.n_v + (size_t)n_special + fallback_bytes) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: the ids of model.vocab and added_tokens are "
                       "not 0..%d, each once", src, (int)V - 1);
        goto done;
    }
    /* GPT-2's own layout: the caller reads it as GPT-2's files, one tokenizer either way */
    bool gpt2 = pipe->pretok == NGPT_PRETOK_GPT2 && pipe->flags == 0 && absent == 0;
    for (int32_t i = 0; i < 256 + n_merges + n_special && gpt2; i++)
        gpt2 = i < 256 ? L.model_id[i] < 256 : L.model_id[i] == i;
    if (gpt2) {
        *gpt2_layout = true;
        goto done;
    }
    spec->merges = L.merges;
    spec->n_merges = n_merges;
    spec->n_special = n_special;
    spec->model_id = L.model_id;
    spec->end_id = spec->pad_id = spec->bos_id = -1;
    for (int32_t i = 0; i < n_special; i++) {
        if (spec->special_len[i] == 13 && !memcmp(spec->special[i], "<|endoftext|>", 13))
            spec->end_id = L.model_id[256 + n_merges + i];
        if (pipe->bos && !strcmp((const char *)spec->special[i], pipe->bos))
            spec->bos_id = L.model_id[256 + n_merges + i];
    }
    spec->flags = pipe->flags;
    if (pipe->bos && spec->bos_id < 0) {
        st = unsupported(src, "a post_processor that begins every text with a token that is not "
                         "an added token:", pipe->bos);
        goto done;
    }
    spec->pretok = pipe->pretok;
    spec->rule = NGPT_MERGE_PAIRS;   /* Hugging Face's BPE: a pair's rank is its merge's index */
    st = ngpt_tok_build(tok, spec, src);
done:
    free(L.names);
    free(L.flags);
    free(L.internal);
    free(L.model_id);
    free(L.merges);
    free(L.v);
    free(L.added);
    free(spec);
    return st;
}
