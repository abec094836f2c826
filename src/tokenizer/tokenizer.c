/* tokenizer.c — the tokenizer object (tokenizer.h) once made (build.c
 * makes it): its accessors, internal (ngpt_tok_prefix) and public
 * (describe, token, decode, free). */
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "tokenizer/bpe.h"
#include "tokenizer/scored.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/trie.h"

void ngpt_tokenizer_free(ngpt_tokenizer *t)
{
    NGPT_FPMODE_SCOPE;
    if (!t) return;
    free(t->merges);
    free(t->off);
    free(t->bytes);
    free(t->pair_key);
    free(t->pair_val);
    free(t->str_slot);
    free(t->whole);
    free(t->merged);
    free(t->added_flags);
    free(t->special_slot);
    free(t->added_len);
    free(t->model_id);
    free(t->internal_id);
    free(t->image);
    ngpt_tok_scored_free(t->scored);
    ngpt_tok_trie_free(atomic_load(&t->trie));
    free(t);
}

int32_t ngpt_tok_prefix(const ngpt_tokenizer *t, int32_t model_id, size_t k, int32_t *out)
{
    if (t->scored) return ngpt_tok_scored_prefix(t, model_id, k, out);
    int32_t id = t->internal_id[model_id];
    /* every part of a merge tree is a model token (merges join no absent
     * byte), but part of a character (byte fallback): its bytes' tokens */
    ngpt_bpe_writer w = {out, k, 0, t->flags & NGPT_TOK_BYTE_FALLBACK ? t : NULL};
    while (k > 0) {
        if ((size_t)ngpt_tok_len(t, id) == k) {      /* the whole token (a byte always is) */
            ngpt_bpe_emit(&w, id);
            break;
        }
        const int32_t left = (int32_t)t->merges[2 * (id - 256)];
        const int32_t right = (int32_t)t->merges[2 * (id - 256) + 1];
        const size_t ll = ngpt_tok_len(t, left);
        if (k <= ll) {
            id = left;
        } else {
            ngpt_bpe_emit(&w, left);
            k -= ll;
            id = right;
        }
    }
    for (size_t i = 0; i < w.n; i++) out[i] = t->model_id[out[i]];
    return (int32_t)w.n;
}

/* The bytes of ids[i] that decoding skips: a scored tokenizer drops the
 * leading ' ' (the dummy prefix) of the token after BOS, as run.c does. */
/* The internal id of the first special token: a BPE tokenizer's come last,
 * a scored one's (<unk>, BOS, EOS) first. */
static int32_t first_special(const ngpt_tokenizer *t)
{
    return t->scored ? 0 : 256 + t->n_merges;
}

static size_t skipped(const ngpt_tokenizer *t, const int32_t *ids, size_t i)
{
    return t->scored && i > 0 && ids[i - 1] == t->bos_id &&     /* the piece: <0x20> is kept */
           t->scored->bytes[t->scored->off[ids[i]]] == ' ';
}

/* ---------------------------------------------------------------- public */

ngpt_status ngpt_tokenizer_describe(const ngpt_tokenizer *t, ngpt_tokenizer_info *info)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !info) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_describe: NULL argument");
    memset(info, 0, sizeof *info);      /* the padding after bos_id too: callers compare bytes */
    info->n_tokens = t->n_tokens;
    info->n_merges = t->n_merges - t->n_alias;
    info->n_special = t->n_special;
    info->end_id = t->end_id;
    info->pad_id = t->pad_id;
    info->max_token_bytes = t->max_len;
    for (int32_t i = 0; i < t->n_special; i++) {
        int32_t len = (int32_t)ngpt_tok_len(t, first_special(t) + i);
        if (len > info->max_token_bytes) info->max_token_bytes = len;
    }
    info->pretok = t->pretok;
    info->rule = t->scored ? NGPT_MERGE_SCORES : t->rule;
    info->checksum = t->checksum;
    info->bos_id = t->bos_id;
    info->n_end_tokens = t->n_end;
    info->normalizer = t->flags & NGPT_TOK_NFC ? NGPT_NORMALIZER_NFC :
                       t->flags & NGPT_TOK_SPACE_MARK ? NGPT_NORMALIZER_SPACE_MARK : NGPT_NORMALIZER_NONE;
    info->ignore_merges = (t->flags & NGPT_TOK_IGNORE_MERGES) != 0;
    info->split_special = (t->flags & NGPT_TOK_SPLIT_ADDED) != 0;
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_end_tokens(const ngpt_tokenizer *t, const int32_t **ids, int32_t *n)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !ids || !n)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_end_tokens: NULL argument");
    *ids = t->end_ids;
    *n = t->n_end;
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_token(const ngpt_tokenizer *t, int32_t id, const uint8_t **bytes,
                                 size_t *len)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !bytes || !len) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_token: NULL argument");
    if (id < 0 || id >= t->n_tokens)
        return ngpt_fail(NGPT_ERR_BAD_TOKEN, "ngpt_tokenizer_token: id %d is outside the "
                         "vocabulary (0..%d)", (int)id, (int)t->n_tokens - 1);
    *bytes = ngpt_tok_bytes(t, id, len);
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_special(const ngpt_tokenizer *t, int32_t i, int32_t *id)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !id) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_special: NULL argument");
    if (i < 0 || i >= t->n_special)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_tokenizer_special: the tokenizer has %d special "
                         "tokens; %d is not one of 0..%d", (int)t->n_special, (int)i,
                         (int)t->n_special - 1);
    *id = t->model_id[first_special(t) + i];
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_special_id(const ngpt_tokenizer *t, const char *name, int32_t *id)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !name || !id)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_special_id: NULL argument");
    size_t n = strlen(name);
    for (int32_t i = first_special(t); i < first_special(t) + t->n_special; i++)
        if (ngpt_tok_len(t, i) == n && !memcmp(t->bytes + t->off[i], name, n)) {
            *id = t->model_id[i];
            return NGPT_OK;
        }
    return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_tokenizer_special_id: the tokenizer has no special "
                     "token named \"%.64s\"", name);
}

ngpt_status ngpt_tokenizer_decode(const ngpt_tokenizer *t, const int32_t *ids, size_t n,
                                  void *out, size_t cap, size_t *n_bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !n_bytes || (!ids && n > 0))
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_decode: NULL argument");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_tokens)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "ngpt_tokenizer_decode: id %d at index %zu is "
                             "outside the vocabulary (0..%d)", (int)ids[i], i,
                             (int)t->n_tokens - 1);
        if (!ngpt_add_ok(total, ngpt_tok_len(t, t->internal_id[ids[i]]) - skipped(t, ids, i), &total))
            return ngpt_fail(NGPT_ERR_OVERFLOW, "ngpt_tokenizer_decode: the text of %zu ids is "
                             "longer than this machine can address", n);
    }
    *n_bytes = total;
    if (!out) return NGPT_OK;
    uint8_t *o = out;
    size_t at = 0;
    for (size_t i = 0; i < n && at < cap; i++) {
        const size_t skip = skipped(t, ids, i);
        size_t len;
        const uint8_t *b = ngpt_tok_bytes(t, ids[i], &len) + skip;
        len -= skip;
        const size_t k = len < cap - at ? len : cap - at;
        memcpy(o + at, b, k);
        at += k;
    }
    if (total > cap)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_tokenizer_decode: the text has %zu bytes but "
                         "the buffer holds %zu", total, cap);
    return NGPT_OK;
}
