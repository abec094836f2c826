/* encode.c — text to token ids (ngpt_tokenizer_encode): the pre-tokenizer
 * cuts the text into pieces (pretok.c), and BPE cuts each piece into tokens
 * (bpe.c). Two shortcuts with the same result: a part that is a token which
 * encodes to itself (the tokenizer's `whole` table) is that token, and a
 * long piece is cut where no token spans two bytes. */
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "tokenizer/bpe.h"
#include "tokenizer/scored.h"
#include "tokenizer/tokenizer.h"

/* Bytes that no token spans out of: a token which encodes to itself, or
 * what BPE makes of them. */
static ngpt_status encode_part(const ngpt_tokenizer *t, const uint8_t *p, size_t m,
                               ngpt_bpe_writer *w, ngpt_bpe_scratch *s)
{
    int32_t id = ngpt_tok_lookup(t, p, m);
    if (id >= 0 && ngpt_tok_whole(t, id)) {
        ngpt_bpe_emit(w, id);
        return NGPT_OK;
    }
    return ngpt_bpe_part(t, p, m, w, s);
}

static ngpt_status encode_piece(const ngpt_tokenizer *t, const uint8_t *p, size_t m,
                                ngpt_bpe_writer *w, ngpt_bpe_scratch *s)
{
    if (m > 1 && t->rule == NGPT_MERGE_CONCAT) {    /* tiktoken: a piece that is a token */
        int32_t id = ngpt_tok_lookup(t, p, m);
        if (id >= 0) {
            ngpt_bpe_emit(w, id);
            return NGPT_OK;
        }
    }
    if (m <= NGPT_BPE_SCAN) return encode_part(t, p, m, w, s);
    /* Every symbol BPE makes is a token, so none spans two bytes that no
     * token holds side by side: the parts between such places are encoded
     * apart, with the same result (and short parts instead of one long). */
    size_t start = 0;
    ngpt_status st = NGPT_OK;
    for (size_t i = 1; i < m && !st; i++)
        if (!ngpt_tok_joinable(t, p[i - 1], p[i])) {
            st = encode_part(t, p + start, i - start, w, s);
            start = i;
        }
    return st ? st : encode_part(t, p + start, m - start, w, s);
}

/* Hugging Face's BPE drops a byte its vocabulary lacks before merging (its
 * neighbours then meet): the piece without those bytes, into *buf (grown to
 * the text's length once). NULL when out of memory. */
static const uint8_t *drop_absent(const ngpt_tokenizer *t, const uint8_t *p, size_t *m,
                                  uint8_t **buf, size_t len)
{
    size_t i = 0;
    while (i < *m && !ngpt_tok_byte_absent(t, p[i])) i++;
    if (i == *m) return p;
    if (!*buf && !(*buf = malloc(len))) return NULL;
    size_t n = 0;
    for (i = 0; i < *m; i++)
        if (!ngpt_tok_byte_absent(t, p[i])) (*buf)[n++] = p[i];
    *m = n;
    return *buf;
}

ngpt_status ngpt_tokenizer_encode(const ngpt_tokenizer *t, const void *text, size_t len,
                                  int32_t *ids, size_t cap, size_t *n_ids)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !n_ids || (!text && len > 0))
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_encode: NULL argument");
    const uint8_t *s8 = text;
    if (t->scored) {
        ngpt_status st = ngpt_tok_scored_encode(t, s8, len, ids, ids ? cap : 0, n_ids);
        if (st) return ngpt_prefixed("ngpt_tokenizer_encode", st);
        if (ids && *n_ids > cap)
            return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_tokenizer_encode: the text makes %zu ids "
                             "but the buffer holds %zu", *n_ids, cap);
        return NGPT_OK;
    }
    ngpt_bpe_writer w = {ids, ids ? cap : 0, 0};
    ngpt_bpe_scratch s;
    ngpt_bpe_scratch_init(&s);
    ngpt_status st = NGPT_OK;
    uint8_t *kept = NULL;
    for (size_t i = 0; i < len && !st;) {
        size_t end = ngpt_pretok_next(t->pretok, s8, len, i), m = end - i;
        const uint8_t *piece = s8 + i;
        if (t->has_absent && !(piece = drop_absent(t, piece, &m, &kept, len)))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory encoding %zu bytes", len);
        else if (m)
            st = encode_piece(t, piece, m, &w, &s);
        i = end;
    }
    free(kept);
    ngpt_bpe_scratch_free(&s);
    /* the internal ids (bytes, then merges by rank) as the model's */
    for (size_t k = 0; t->remapped && ids && k < w.n && k < cap; k++) ids[k] = t->model_id[ids[k]];
    if (st) return ngpt_prefixed("ngpt_tokenizer_encode", st);
    *n_ids = w.n;
    if (ids && w.n > cap)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_tokenizer_encode: the text makes %zu ids but "
                         "the buffer holds %zu", w.n, cap);
    return NGPT_OK;
}
