/* build.c — a tokenizer made from a spec (ngpt_tok_build): the spec checked
 * once (docs/FORMAT.md, "Validation"), the tables derived from it (pairs,
 * strings, joinable bytes, the tokens that encode to themselves), and the
 * file image it keeps for saves. Every table of the object is written here
 * and only read elsewhere. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdlib.h>
#include <string.h>

#include "tokenizer/bpe.h"
#include "tokenizer/tokenizer.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tokenizer files are little-endian; big-endian hosts are not supported"
#endif

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }


/* The smallest table size 2^bits with at least twice n slots (>= 16). */
static uint32_t table_bits(size_t n)
{
    uint32_t bits = 4;
    while (((size_t)1 << bits) < 2 * n) bits++;
    return bits;
}

/* Inserts (a, b) -> id; returns the id already there, or -1 when new. */
static int32_t pair_insert(ngpt_tokenizer *t, uint32_t a, uint32_t b, int32_t id)
{
    uint64_t key = (uint64_t)a << 32 | b;
    uint32_t mask = (1u << t->pair_bits) - 1;
    for (uint32_t i = ngpt_pair_slot(key, t->pair_bits);; i = (i + 1) & mask) {
        if (t->pair_key[i] == key) return t->pair_val[i];
        if (t->pair_key[i] == NGPT_PAIR_EMPTY) {
            t->pair_key[i] = key;
            t->pair_val[i] = id;
            return -1;
        }
    }
}

/* Every non-special token's bytes in the string table (the first of tokens
 * with the same bytes); false (message set) when the concat rule finds two
 * with the same bytes. */
static bool build_strings(ngpt_tokenizer *t, const char *src)
{
    int32_t n = 256 + t->n_merges;
    uint32_t mask = (1u << t->str_bits) - 1;
    for (int32_t id = 0; id < n; id++) {
        const uint8_t *s = t->bytes + t->off[id];
        size_t len = ngpt_tok_len(t, id);
        for (uint32_t i = ngpt_str_slot(s, len, t->str_bits);; i = (i + 1) & mask) {
            int32_t v = t->str_slot[i];
            if (v == 0) {
                t->str_slot[i] = id + 1;
                break;
            }
            if (ngpt_tok_len(t, v - 1) == len && !memcmp(t->bytes + t->off[v - 1], s, len)) {
                if (t->rule == NGPT_MERGE_PAIRS) break;
                ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: tokens %d and %d have the "
                          "same bytes, which the concat merge rule does not allow", src,
                          (int)(v - 1), (int)id);
                return false;
            }
        }
    }
    return true;
}

/* NGPT_MERGE_CONCAT: every split of every merge token into two tokens is a
 * pair that merges into it. */
static size_t concat_pair_count(ngpt_tokenizer *t, bool insert)
{
    size_t count = 0;
    for (int32_t id = 256; id < 256 + t->n_merges; id++) {
        const uint8_t *s = t->bytes + t->off[id];
        size_t len = ngpt_tok_len(t, id);
        for (size_t k = 1; k < len; k++) {
            int32_t a = ngpt_tok_lookup(t, s, k), b = ngpt_tok_lookup(t, s + k, len - k);
            if (a < 0 || b < 0) continue;
            count++;
            if (insert) pair_insert(t, (uint32_t)a, (uint32_t)b, id);
        }
    }
    return count;
}

/* t->whole (zeroed): the tokens whose bytes, merged alone, give the token
 * itself; the encoder takes a part that is such a token whole. */
static ngpt_status mark_whole(ngpt_tokenizer *t)
{
    ngpt_bpe_scratch s;
    ngpt_bpe_scratch_init(&s);
    int32_t out[NGPT_TOK_MAX_BYTES];
    ngpt_status st = NGPT_OK;
    for (int32_t id = 0; id < 256 + t->n_merges && !st; id++) {
        ngpt_bpe_writer w = {out, NGPT_TOK_MAX_BYTES, 0, NULL};
        st = ngpt_bpe_part(t, t->bytes + t->off[id], ngpt_tok_len(t, id), &w, &s);
        if (!st && w.n == 1 && out[0] == id) t->whole[id >> 3] |= (uint8_t)(1u << (id & 7));
    }
    ngpt_bpe_scratch_free(&s);
    return st;
}

/* spec->model_id: the bytes may lack one, merges and specials may not, and
 * the others are 0..V-1 once each, but that a merge may repeat an earlier
 * merge's (an alias: build checks that it makes the same bytes); *n_model
 * gets V and *n_alias the aliases. */
static ngpt_status check_model_ids(const ngpt_tok_spec *s, int32_t n, const char *src,
                                   int32_t *n_model, int32_t *n_alias)
{
    int32_t absent = 0, merges_end = 256 + s->n_merges;
    for (int32_t i = 0; i < 256; i++) absent += s->model_id[i] == -1;
    /* first[v]: 1 + the first token given model id v, 0 none yet */
    int32_t *first = calloc((size_t)n, sizeof *first);
    if (!first) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    *n_alias = 0;
    ngpt_status st = NGPT_OK;
    for (int32_t i = 0; i < n && !st; i++) {
        int32_t v = s->model_id[i];
        if (v == -1 && i < 256) continue;
        if (v == -1 && i < merges_end && (s->flags & NGPT_TOK_BYTE_FALLBACK)) {
            ++*n_alias;             /* part of a character: written as its bytes */
            continue;
        }
        if (v < 0 || v >= n)
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: token %d has model id %d, "
                           "outside 0..%d", src, (int)i, (int)v, (int)n - 1);
        else if (!first[v])
            first[v] = i + 1;
        else if (i >= 256 && i < merges_end && first[v] > 256 && first[v] <= merges_end)
            ++*n_alias;
        else if (i >= merges_end && (s->flags & NGPT_TOK_SPACE_MARK) && first[v] > 256 &&
                 first[v] <= merges_end)
            ++*n_alias;             /* Gemma's runs of ▁: matched in text, and merged from spaces */
        else
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: model id %d is given to two "
                           "tokens", src, (int)v);
    }
    *n_model = n - absent - *n_alias;
    for (int32_t v = 0; v < n && !st; v++)
        if (v >= *n_model && first[v])
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: token %d has model id %d, "
                           "outside 0..%d", src, (int)first[v] - 1, (int)v, (int)*n_model - 1);
        else if (v < *n_model && !first[v])
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: no token has model id %d "
                           "(of 0..%d)", src, (int)v, (int)*n_model - 1);
    free(first);
    for (int32_t k = 0; k < s->n_merges && !st; k++)
        for (int side = 0; side < 2; side++) {
            uint32_t a = s->merges[2 * k + side];
            if (a < 256 && s->model_id[a] == -1) {
                st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: merge %d joins byte "
                               "token %u, which has no model id", src, (int)k, a);
                break;
            }
        }
    return st;
}

/* The Hugging Face pieces around BPE (header byte 35): known flags, a BOS
 * that is a special token, special tokens' flags that read the same way
 * in every file (a normalized one is unchanged by NFC, and none begins or
 * ends with the white space lstrip or rstrip would cut from it). */
static ngpt_status check_pipeline(const ngpt_tok_spec *s, const char *src, int64_t n)
{
    if (s->flags & ~NGPT_TOK_FLAGS)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s sets unknown tokenizer flags 0x%x (header byte "
                         "35); it was written by a newer or broken writer", src, (unsigned)s->flags);
    if (s->flags & NGPT_TOK_HAS_BOS) {
        bool special = false;
        for (int64_t i = n - s->n_special; i < n; i++)
            special |= (s->model_id ? s->model_id[i] : (int32_t)i) == s->bos_id;
        if (!special)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: its BOS token %d is not "
                             "one of its special tokens", src, (int)s->bos_id);
    }
    if (!(s->flags & NGPT_TOK_SPLIT_ADDED)) return NGPT_OK;
    bool strips = false;
    for (int32_t i = 0; i < s->n_special; i++)
        strips |= (s->added_flags[i] & (NGPT_ADDED_LSTRIP | NGPT_ADDED_RSTRIP)) != 0;
    for (int32_t i = 0; i < s->n_special; i++) {
        const uint8_t *name = s->special[i], f = s->added_flags[i];
        const size_t len = s->special_len[i];
        const int64_t id = n - s->n_special + i;
        if (f & ~NGPT_ADDED_FLAGS)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s sets unknown flags 0x%x on special token "
                             "%lld", src, (unsigned)f, (long long)id);
        if (f & NGPT_ADDED_NORMALIZED) {
            uint8_t *buf = NULL;
            size_t cap = 0, nfc_len;
            const uint8_t *nfc = ngpt_tok_nfc(name, len, &nfc_len, &buf, &cap);
            const bool same = nfc && nfc_len == len && !memcmp(nfc, name, len);
            free(buf);
            if (!nfc)
                return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
            if (!(s->flags & NGPT_TOK_NFC) || !same)
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: special token %lld is matched in "
                                 "normalized text, but %s", src, (long long)id,
                                 same ? "the tokenizer has no normalizer" : "NFC changes it");
        }
        if (strips && (ngpt_tok_trim_start(name, len) != 0 || ngpt_tok_trim_end(name, len) != len))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: special token %lld begins or ends with "
                             "white space, which lstrip or rstrip would cut from it", src,
                             (long long)id);
    }
    return NGPT_OK;
}

static ngpt_status check_spec(const ngpt_tok_spec *s, const char *src, int32_t *n_model,
                              int32_t *n_alias)
{
    if (s->pretok < NGPT_PRETOK_NONE || s->pretok > NGPT_PRETOK_QWEN2)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s names an unknown pre-tokenizer %d", src,
                         (int)s->pretok);
    if (s->rule < NGPT_MERGE_PAIRS || s->rule > NGPT_MERGE_CONCAT)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s names an unknown merge rule %d", src,
                         (int)s->rule);
    if (s->n_special < 0 || s->n_special > NGPT_TOK_MAX_SPECIAL)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has %d special tokens; the limit is %d", src,
                         (int)s->n_special, NGPT_TOK_MAX_SPECIAL);
    int64_t n = 256 + (int64_t)s->n_merges + s->n_special;
    if (s->n_merges < 0 || n > NGPT_TOK_MAX_TOKENS)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has %lld tokens; the limit is %d", src,
                         (long long)n, NGPT_TOK_MAX_TOKENS);
    bool seen[256] = {false};
    for (int i = 0; i < 256; i++) {
        if (seen[s->id_byte[i]])
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: byte %d is token %d and "
                             "an earlier one; each byte must be exactly one of the ids 0..255",
                             src, s->id_byte[i], i);
        seen[s->id_byte[i]] = true;
    }
    for (int32_t i = 0; i < s->n_special; i++) {
        if (s->special_len[i] < 1 || s->special_len[i] > NGPT_TOK_MAX_BYTES)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "special token %d of %s has a name of %zu "
                             "bytes, not 1..%d", (int)(n - s->n_special + i), src,
                             s->special_len[i], NGPT_TOK_MAX_BYTES);
        for (int32_t j = 0; j < i; j++)
            if (s->special_len[j] == s->special_len[i] &&
                !memcmp(s->special[j], s->special[i], s->special_len[i]))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: special tokens %d "
                                 "and %d have the same name", src, (int)(n - s->n_special + j),
                                 (int)(n - s->n_special + i));
    }
    *n_model = (int32_t)n;
    *n_alias = 0;
    if (s->model_id) {
        ngpt_status st = check_model_ids(s, (int32_t)n, src, n_model, n_alias);
        if (st) return st;
    }
    int64_t first_special = n - s->n_special;
    const int32_t ids[2] = {s->end_id, s->pad_id};
    for (int k = 0; k < 2; k++) {
        bool special = false;
        for (int64_t i = first_special; i < n && ids[k] != -1; i++)
            special |= (s->model_id ? s->model_id[i] : (int32_t)i) == ids[k];
        if (ids[k] != -1 && !special)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: its %s token %d is not "
                             "one of its special tokens", src, k ? "padding" : "end",
                             (int)ids[k]);
    }
    if (s->end_id != -1 && s->end_id == s->pad_id)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: token %d is both the end and "
                         "the padding token", src, (int)s->end_id);
    if (s->n_end_extra < 0 || s->n_end_extra > NGPT_END_TOKENS_MAX - 1 ||
        (s->n_end_extra > 0 && s->end_id == -1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: %d more end tokens (0..%d, "
                         "and only beside an end token)", src, (int)s->n_end_extra,
                         NGPT_END_TOKENS_MAX - 1);
    for (int32_t k = 0; k < s->n_end_extra; k++) {
        const int32_t id = s->end_extra[k];
        bool special = false, again = id == s->end_id;
        for (int64_t i = first_special; i < n; i++)
            special |= (s->model_id ? s->model_id[i] : (int32_t)i) == id;
        for (int32_t j = 0; j < k; j++) again |= s->end_extra[j] == id;
        if (!special || again)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: end token %d is %s", src,
                             (int)id, again ? "listed twice" : "not one of its special tokens");
    }
    return check_pipeline(s, src, n);
}

static size_t tok_image(const ngpt_tokenizer *t, uint8_t *buf);

/* added_start and added_order (tables.h): the specials matched in text, by
 * pass and first byte, longest first (each match is the longest). */
static bool matched_in_pass(const ngpt_tokenizer *t, int32_t i, int p)
{
    return !(t->added_flags[i] & NGPT_ADDED_UNMATCHED) &&
           ((t->added_flags[i] & NGPT_ADDED_NORMALIZED) != 0) == p;
}

/* added_len (tables.h) from added_order, and every matched name in
 * special_slot; false when out of memory. */
static bool index_names(ngpt_tokenizer *t)
{
    const int32_t first = 256 + t->n_merges;
    t->special_bits = table_bits((size_t)t->n_special);
    t->special_slot = calloc((size_t)1 << t->special_bits, sizeof *t->special_slot);
    t->added_len = malloc(((size_t)t->n_special + 1) * sizeof *t->added_len);
    if (!t->special_slot || !t->added_len) return false;
    const uint32_t mask = (1u << t->special_bits) - 1;
    for (int32_t k = 0; k < t->n_special; k++) {
        if (t->added_flags[k] & NGPT_ADDED_UNMATCHED) continue;
        const uint8_t *name = t->bytes + t->off[first + k];
        uint32_t i = ngpt_str_slot(name, ngpt_tok_len(t, first + k), t->special_bits);
        while (t->special_slot[i]) i = (i + 1) & mask;
        t->special_slot[i] = (uint16_t)(k + 1);
    }
    uint32_t n = 0;
    for (int p = 0; p < 2; p++)
        for (int b = 0; b < 256; b++) {
            t->added_len_start[p][b] = n;
            for (uint16_t j = t->added_start[p][b]; j < t->added_start[p][b + 1]; j++) {
                const uint16_t len = (uint16_t)ngpt_tok_len(t, first + t->added_order[p][j]);
                if (n == t->added_len_start[p][b] || t->added_len[n - 1] != len) t->added_len[n++] = len;
            }
            t->added_len_start[p][b + 1] = n;
        }
    return true;
}

static bool index_added(ngpt_tokenizer *t)
{
    if (!t->added_flags) return true;
    const int32_t first = 256 + t->n_merges;
    for (int p = 0; p < 2; p++) {
        uint16_t *start = t->added_start[p];
        uint16_t *order = t->added_order[p];
        memset(start, 0, sizeof t->added_start[p]);
        for (int32_t i = 0; i < t->n_special; i++)
            if (matched_in_pass(t, i, p))
                start[t->bytes[t->off[first + i]] + 1]++;
        for (int b = 0; b < 256; b++) start[b + 1] += start[b];
        uint16_t fill[256];
        memcpy(fill, start, sizeof fill);
        for (int32_t i = 0; i < t->n_special; i++) {
            if (!matched_in_pass(t, i, p)) continue;
            const uint8_t b = t->bytes[t->off[first + i]];
            size_t at = fill[b]++;      /* insertion: the longer first */
            while (at > start[b] && ngpt_tok_len(t, first + order[at - 1]) < ngpt_tok_len(t, first + i)) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = (uint16_t)i;
        }
    }
    return index_names(t);
}

/* The bytes of every merge's token, from its two sides. Version 1: each
 * side is a byte or an earlier merge. A file with model ids (Hugging Face's,
 * whose ranks need not follow how tokens are built: Llama 3's merge rank k
 * may join a token that only a later merge makes) may join any token but
 * an alias (one the encoder never holds) or one made of the merge itself;
 * each pass over the merges finishes those whose sides are done. */
static ngpt_status merge_bytes(ngpt_tokenizer *t, const ngpt_tok_spec *s, const char *src)
{
    const size_t m = (size_t)t->n_merges;
    for (size_t k = 0; k < m; k++)
        for (int side = 0; side < 2; side++) {
            const uint32_t a = t->merges[2 * k + side], id = 256 + (uint32_t)k;
            if (a >= (uint32_t)t->n_internal - (uint32_t)t->n_special ||
                (!t->remapped && a >= id) || (t->merged && t->merged[a] != (int32_t)a))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: merge %zu joins token "
                                 "%u, but a merge may only join bytes and %s", src, k, a,
                                 t->remapped ? "merges' first tokens" : "earlier merges (ids "
                                 "below its own)");
        }
    /* lengths (0: not known yet) until no merge is left */
    uint32_t *len = calloc(256 + m, sizeof *len), *order = malloc((m ? m : 1) * sizeof *order);
    if (!len || !order) {
        free(len);
        free(order);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    }
    for (int i = 0; i < 256; i++) len[i] = 1;
    size_t done = 0, pass_start;
    ngpt_status st = NGPT_OK;
    do {
        pass_start = done;
        for (size_t k = 0; k < m && !st; k++) {
            const uint32_t a = t->merges[2 * k], b = t->merges[2 * k + 1];
            if (len[256 + k] || !len[a] || !len[b]) continue;
            len[256 + k] = len[a] + len[b];
            order[done++] = (uint32_t)k;
            if (len[256 + k] > NGPT_TOK_MAX_BYTES)
                st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: merge %zu makes a token "
                               "of %u bytes; the limit is %d", src, k, len[256 + k],
                               NGPT_TOK_MAX_BYTES);
        }
    } while (!st && done < m && done > pass_start);
    for (size_t k = 0; k < m && !st && done < m; k++)
        if (!len[256 + k])
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: merge %zu cannot be made: "
                           "its sides come back to it", src, k);
    t->off[0] = 0;
    for (int32_t id = 0; id < t->n_internal - t->n_special && !st; id++) {
        t->off[id + 1] = t->off[id] + len[id];
        if ((int32_t)len[id] > t->max_len) t->max_len = (int32_t)len[id];
    }
    free(len);
    if (!st) {
        for (int32_t i = 0; i < t->n_special; i++) {
            const int32_t id = 256 + t->n_merges + i;
            t->off[id + 1] = t->off[id] + (uint32_t)s->special_len[i];
        }
        if (!(t->bytes = malloc(t->off[t->n_internal] ? t->off[t->n_internal] : 1)))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    }
    for (int i = 0; i < 256 && !st; i++) t->bytes[i] = t->id_byte[i];
    for (size_t j = 0; j < m && !st; j++) {    /* sides first */
        const uint32_t k = order[j], a = t->merges[2 * k], b = t->merges[2 * k + 1];
        uint8_t *dst = t->bytes + t->off[256 + k];
        memcpy(dst, t->bytes + t->off[a], ngpt_tok_len(t, (int32_t)a));
        memcpy(dst + ngpt_tok_len(t, (int32_t)a), t->bytes + t->off[b], ngpt_tok_len(t, (int32_t)b));
    }
    free(order);
    return st;
}

ngpt_status ngpt_tok_build(ngpt_tokenizer **out, const ngpt_tok_spec *s, const char *src)
{
    *out = NULL;
    int32_t n_model, n_alias;
    ngpt_status st = check_spec(s, src, &n_model, &n_alias);
    if (st) return st;
    ngpt_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    t->n_merges = s->n_merges;
    t->n_special = s->n_special;
    t->n_internal = 256 + s->n_merges + s->n_special;
    t->n_tokens = n_model;
    t->n_alias = n_alias;
    t->remapped = s->model_id != NULL;
    t->end_id = s->end_id;
    t->pad_id = s->pad_id;
    if (s->end_id != -1) t->end_ids[t->n_end++] = s->end_id;
    for (int32_t k = 0; k < s->n_end_extra; k++) t->end_ids[t->n_end++] = s->end_extra[k];
    t->pretok = (ngpt_pretokenizer)s->pretok;
    t->rule = (ngpt_merge_rule)s->rule;
    t->flags = (uint8_t)s->flags;
    t->bos_id = s->flags & NGPT_TOK_HAS_BOS ? s->bos_id : -1;
    memcpy(t->id_byte, s->id_byte, 256);
    for (int i = 0; i < 256; i++) t->byte_id[s->id_byte[i]] = i;
    size_t m = (size_t)s->n_merges;
    t->merges = malloc((m ? m : 1) * 2 * sizeof *t->merges);
    t->off = malloc(((size_t)t->n_internal + 1) * sizeof *t->off);
    t->model_id = malloc((size_t)t->n_internal * sizeof *t->model_id);
    t->internal_id = malloc((size_t)(t->n_tokens ? t->n_tokens : 1) * sizeof *t->internal_id);
    t->pair_bits = table_bits(m);
    t->pair_key = malloc(((size_t)1 << t->pair_bits) * sizeof *t->pair_key);
    t->pair_val = malloc(((size_t)1 << t->pair_bits) * sizeof *t->pair_val);
    if (n_alias) t->merged = malloc((size_t)t->n_internal * sizeof *t->merged);
    if (s->flags & NGPT_TOK_SPLIT_ADDED) t->added_flags = malloc(s->n_special ? (size_t)s->n_special : 1);
    if (!t->merges || !t->off || !t->model_id || !t->internal_id || !t->pair_key || !t->pair_val ||
        (n_alias && !t->merged) || ((s->flags & NGPT_TOK_SPLIT_ADDED) && !t->added_flags))
        goto no_memory;
    for (int32_t v = 0; v < t->n_tokens; v++) t->internal_id[v] = -1;
    for (int32_t i = 0; i < t->n_internal; i++) {
        int32_t v = s->model_id ? s->model_id[i] : i;
        t->model_id[i] = v;
        if (v >= 0 && t->internal_id[v] < 0) t->internal_id[v] = i;    /* an alias's first */
        if (v < 0 && i < 256) t->absent[t->id_byte[i] >> 3] |= (uint8_t)(1u << (t->id_byte[i] & 7));
        if (t->merged) t->merged[i] = v >= 0 ? t->internal_id[v] : i;
    }
    t->has_absent = t->n_tokens + t->n_alias < t->n_internal;
    if (m) memcpy(t->merges, s->merges, m * 2 * sizeof *t->merges);
    memset(t->pair_key, 0xFF, ((size_t)1 << t->pair_bits) * sizeof *t->pair_key);
    if (t->added_flags) memcpy(t->added_flags, s->added_flags, (size_t)s->n_special);

    /* no pair twice; the tokens' bytes (merge_bytes: no token too long) */
    for (size_t k = 0; k < m; k++) {
        uint32_t a = t->merges[2 * k], b = t->merges[2 * k + 1], id = 256 + (uint32_t)k;
        int32_t twice = a < (uint32_t)t->n_internal && b < (uint32_t)t->n_internal ?
                        pair_insert(t, a, b, (int32_t)id) : -1;
        if (twice >= 0) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: merges %d and %zu both join "
                           "tokens %u and %u", src, (int)(twice - 256), k, a, b);
            goto fail;
        }
    }
    t->max_len = 1;
    if ((st = merge_bytes(t, s, src))) goto fail;
    for (int32_t i = 0; i < s->n_special; i++)
        memcpy(t->bytes + t->off[256 + s->n_merges + i], s->special[i], s->special_len[i]);
    for (size_t k = 0; t->merged && k < m; k++) {
        const int32_t id = 256 + (int32_t)k, first = t->merged[id];
        if (first != id && (ngpt_tok_len(t, id) != ngpt_tok_len(t, first) ||
                            memcmp(t->bytes + t->off[id], t->bytes + t->off[first],
                                   ngpt_tok_len(t, id)))) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: merge %zu has the model id "
                           "of merge %d, whose bytes differ", src, k, (int)first - 256);
            goto fail;
        }
    }
    for (size_t id = 256; id < 256 + m; id++)
        for (uint32_t i = t->off[id] + 1; i < t->off[id + 1]; i++) {
            unsigned bit = (unsigned)t->bytes[i - 1] << 8 | t->bytes[i];
            t->joinable[bit >> 3] |= (uint8_t)(1u << (bit & 7));
        }
    if (!index_added(t)) goto no_memory;

    t->str_bits = table_bits(256 + m);
    t->str_slot = calloc((size_t)1 << t->str_bits, sizeof *t->str_slot);
    t->whole = calloc(((size_t)t->n_internal + 7) / 8, 1);
    if (!t->str_slot || !t->whole) goto no_memory;
    if (!build_strings(t, src)) {
        st = NGPT_ERR_BAD_FORMAT;
        goto fail;
    }
    if (t->rule == NGPT_MERGE_CONCAT) {
        /* the merges' own pairs are among the splits: a table for all of them */
        size_t pairs = concat_pair_count(t, false);
        free(t->pair_key);
        free(t->pair_val);
        t->pair_bits = table_bits(pairs);
        t->pair_key = malloc(((size_t)1 << t->pair_bits) * sizeof *t->pair_key);
        t->pair_val = malloc(((size_t)1 << t->pair_bits) * sizeof *t->pair_val);
        if (!t->pair_key || !t->pair_val) goto no_memory;
        memset(t->pair_key, 0xFF, ((size_t)1 << t->pair_bits) * sizeof *t->pair_key);
        concat_pair_count(t, true);
    }
    if ((st = mark_whole(t))) goto fail;
    t->image_size = tok_image(t, NULL);
    if (!(t->image = malloc(t->image_size))) goto no_memory;
    tok_image(t, t->image);
    memcpy(&t->checksum, t->image + t->image_size - 8, 8);
    *out = t;
    return NGPT_OK;
no_memory:
    st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
fail:
    ngpt_tokenizer_free(t);
    return st;
}

/* The file image (docs/FORMAT.md): returns its size; writes it into buf
 * (which holds that many bytes) unless buf is NULL. */
static size_t tok_image(const ngpt_tokenizer *t, uint8_t *buf)
{
    size_t size = NGPT_TOK_HEADER + 256 + (size_t)t->n_merges * 8 + 8;
    for (int32_t i = 0; i < t->n_special; i++) size += 4 + ngpt_tok_len(t, 256 + t->n_merges + i);
    const int32_t n_extra = t->n_end > 0 ? t->n_end - 1 : 0;
    size += (size_t)n_extra * 4;
    if (t->added_flags) size += (size_t)t->n_special;
    if (t->remapped) size += (size_t)t->n_internal * 4;
    if (!buf) return size;
    uint8_t *p = buf;
    memset(p, 0, NGPT_TOK_HEADER);
    memcpy(p, NGPT_TOK_MAGIC, 8);
    put_u32(p + 8, t->remapped ? NGPT_TOK_VERSION_IDS : NGPT_TOK_VERSION);
    put_u32(p + 12, (uint32_t)t->n_tokens);
    put_u32(p + 16, (uint32_t)t->n_merges);
    put_u32(p + 20, (uint32_t)t->n_special);
    put_u32(p + 24, (uint32_t)t->end_id);
    put_u32(p + 28, (uint32_t)t->pad_id);
    p[32] = (uint8_t)t->pretok;
    p[33] = (uint8_t)t->rule;
    p[34] = (uint8_t)n_extra;       /* 0 in every file before the list */
    p[35] = t->flags;               /* and these three before Hugging Face's pipelines */
    put_u64(p + 40, size);
    put_u32(p + 48, (uint32_t)t->n_alias);
    if (t->flags & NGPT_TOK_HAS_BOS) put_u32(p + 52, (uint32_t)t->bos_id);
    p += NGPT_TOK_HEADER;
    memcpy(p, t->id_byte, 256);
    p += 256;
    for (size_t k = 0; k < 2 * (size_t)t->n_merges; k++, p += 4) put_u32(p, t->merges[k]);
    for (int32_t i = 0; i < t->n_special; i++) {
        int32_t id = 256 + t->n_merges + i;
        size_t len = ngpt_tok_len(t, id);
        put_u32(p, (uint32_t)len);
        memcpy(p + 4, t->bytes + t->off[id], len);
        p += 4 + len;
    }
    for (int32_t k = 1; k <= n_extra; k++, p += 4) put_u32(p, (uint32_t)t->end_ids[k]);
    if (t->added_flags) {
        memcpy(p, t->added_flags, (size_t)t->n_special);
        p += t->n_special;
    }
    for (int32_t i = 0; t->remapped && i < t->n_internal; i++, p += 4)
        put_u32(p, (uint32_t)t->model_id[i]);
    put_u64(p, (uint64_t)XXH3_64bits(buf, size - 8));
    return size;
}
