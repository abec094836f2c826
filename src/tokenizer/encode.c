/* encode.c — text to token ids (ngpt_tokenizer_encode): special tokens
 * written in the text are split out first (a Hugging Face file's), the rest
 * is normalized (normalize.c), the pre-tokenizer cuts it into pieces
 * (pretok.c), and BPE cuts each piece into tokens (bpe.c). Two shortcuts
 * with the same result: a part that is a token which encodes to itself (the
 * tokenizer's `whole` table) is that token, and a long piece is cut where no
 * token spans two bytes. */
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
    /* tiktoken, and Hugging Face's ignore_merges: a piece that is a token */
    if (m > 1 && (t->rule == NGPT_MERGE_CONCAT || (t->flags & NGPT_TOK_IGNORE_MERGES))) {
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

/* One call's work: where the ids go, BPE's scratch, and the buffers that
 * dropping absent bytes and normalizing take (allocated when first needed). */
typedef struct encoder {
    const ngpt_tokenizer *t;
    bool plain_only;                /* a chat turn's content: only the plain added tokens */
    ngpt_bpe_writer w;
    ngpt_bpe_scratch s;
    uint8_t *kept, *nfc;
    size_t kept_cap, nfc_cap;
} encoder;

/* Hugging Face's BPE drops a byte its vocabulary lacks before merging (its
 * neighbours then meet): the piece without those bytes, into e->kept. NULL
 * when out of memory. */
static const uint8_t *drop_absent(encoder *e, const uint8_t *p, size_t *m)
{
    const ngpt_tokenizer *t = e->t;
    size_t i = 0;
    while (i < *m && !ngpt_tok_byte_absent(t, p[i])) i++;
    if (i == *m) return p;
    if (*m > e->kept_cap) {
        uint8_t *b = realloc(e->kept, *m);
        if (!b) return NULL;
        e->kept = b, e->kept_cap = *m;
    }
    size_t n = 0;
    for (i = 0; i < *m; i++)
        if (!ngpt_tok_byte_absent(t, p[i])) e->kept[n++] = p[i];
    *m = n;
    return e->kept;
}

/* Text without special tokens: pre-tokenized, each piece merged. */
static ngpt_status encode_text(encoder *e, const uint8_t *p, size_t n)
{
    const ngpt_tokenizer *t = e->t;
    ngpt_status st = NGPT_OK;
    for (size_t i = 0; i < n && !st;) {
        size_t end = ngpt_pretok_next(t->pretok, p, n, i), m = end - i;
        const uint8_t *piece = p + i;
        if (t->has_absent && !(piece = drop_absent(e, piece, &m)))
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory encoding %zu bytes", n);
        else if (m)
            st = encode_piece(t, piece, m, &e->w, &e->s);
        i = end;
    }
    return st;
}

/* ---- special tokens in text (NGPT_TOK_SPLIT_ADDED): Hugging Face's added
 * tokens, split out before anything else, as its tokenizers (the reference:
 * transformers.js) do. Pass 0 finds the ones matched in the text as it is;
 * the text between them is normalized, and pass 1 finds the normalized ones
 * in it. A match is the leftmost, then the longest. */

/* The special token (0..n_special-1, not an unmatched one) whose name is
 * all of s[0..n), or -1. */
static int32_t special_named(const ngpt_tokenizer *t, const uint8_t *s, size_t n)
{
    if (!t->special_slot || n == 0 || n > NGPT_TOK_MAX_BYTES) return -1;
    const uint32_t mask = (1u << t->special_bits) - 1, first = 256 + (uint32_t)t->n_merges;
    for (uint32_t i = ngpt_str_slot(s, n, t->special_bits);; i = (i + 1) & mask) {
        const int32_t k = (int32_t)t->special_slot[i] - 1;
        if (k < 0) return -1;
        if (ngpt_tok_len(t, (int32_t)first + k) == n && !memcmp(t->bytes + t->off[first + k], s, n))
            return k;
    }
}

/* The first special token (0..n_special-1) matched in p[from..n) by pass,
 * at *at; -1 (*at = n) when none is. */
static int32_t next_special(const ngpt_tokenizer *t, bool plain_only, int pass, const uint8_t *p,
                            size_t n, size_t from, size_t *at)
{
    const uint16_t *start = t->added_start[pass];
    const uint32_t *lens = t->added_len_start[pass];
    const int32_t first = 256 + t->n_merges;
    if (!start[256]) {
        *at = n;
        return -1;
    }
    const uint8_t lead = t->bytes[t->off[first + t->added_order[pass][0]]];   /* when every one begins so */
    const bool one_lead = start[lead + 1] - start[lead] == start[256];
    for (size_t i = from; i < n; i++) {
        if (one_lead) {                 /* Qwen's, Llama 3's and Gemma's all begin with '<' */
            const uint8_t *at_lead = memchr(p + i, lead, n - i);
            if (!at_lead) break;
            i = (size_t)(at_lead - p);
        }
        for (uint32_t j = lens[p[i]]; j < lens[p[i] + 1]; j++) {     /* the longest first */
            const size_t len = t->added_len[j];
            const int32_t k = len <= n - i ? special_named(t, p + i, len) : -1;
            if (k >= 0 && ((t->added_flags[k] & NGPT_ADDED_NORMALIZED) != 0) == pass &&
                (!plain_only || (t->added_flags[k] & NGPT_ADDED_PLAIN))) {
                *at = i;
                return k;
            }
        }
    }
    *at = n;
    return -1;
}

static ngpt_status split_specials(encoder *e, const uint8_t *p, size_t n, int pass);

/* A stretch between special tokens: itself a special token's name (as the
 * reference checks), or normalized, then (pass 0) split again, then encoded. */
static ngpt_status encode_stretch(encoder *e, const uint8_t *p, size_t n, int pass, bool specials)
{
    const ngpt_tokenizer *t = e->t;
    const bool split = t->added_flags && specials;
    int32_t k = split && n <= (size_t)NGPT_TOK_MAX_BYTES ? special_named(t, p, n) : -1;
    if (k >= 0 && e->plain_only && !(t->added_flags[k] & NGPT_ADDED_PLAIN)) k = -1;
    if (k >= 0) {
        ngpt_bpe_emit(&e->w, 256 + t->n_merges + k);
        return NGPT_OK;
    }
    if (pass == 0 && (t->flags & NGPT_TOK_SPACE_MARK)) {
        size_t m;
        const uint8_t *q = ngpt_tok_space_mark(p, n, &m, &e->nfc, &e->nfc_cap);
        if (!q) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory normalizing %zu bytes", n);
        return encode_text(e, q, m);
    }
    if (pass == 0 && (t->flags & NGPT_TOK_NFC)) {
        size_t m;
        const uint8_t *q = ngpt_tok_nfc(p, n, &m, &e->nfc, &e->nfc_cap);
        if (!q) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory normalizing %zu bytes", n);
        return split ? split_specials(e, q, m, 1) : encode_text(e, q, m);
    }
    return encode_text(e, p, n);
}

/* The special tokens of pass in p[0..n) and the stretches between them; a
 * token with lstrip takes the white space before it, one with rstrip the
 * white space after it (JavaScript's trim(): the tokens themselves neither
 * begin nor end with white space then, build.c checks). */
static ngpt_status split_specials(encoder *e, const uint8_t *p, size_t n, int pass)
{
    const ngpt_tokenizer *t = e->t;
    ngpt_status st = NGPT_OK;
    bool rstrip = false;            /* the token before `at` takes the white space after it */
    for (size_t at = 0; !st;) {
        size_t match;
        const int32_t k = next_special(t, e->plain_only, pass, p, n, at, &match);
        size_t start = at, end = match;
        if (rstrip) start += ngpt_tok_trim_start(p + at, match - at);
        if (k >= 0 && (t->added_flags[k] & NGPT_ADDED_LSTRIP))
            end = start + ngpt_tok_trim_end(p + start, match - start);
        if (end > start) st = encode_stretch(e, p + start, end - start, pass, true);
        if (k < 0) break;
        ngpt_bpe_emit(&e->w, 256 + t->n_merges + k);
        at = match + ngpt_tok_len(t, 256 + t->n_merges + k);
        rstrip = (t->added_flags[k] & NGPT_ADDED_RSTRIP) != 0;
    }
    return st;
}

ngpt_status ngpt_tokenizer_encode(const ngpt_tokenizer *t, const void *text, size_t len,
                                  int32_t *ids, size_t cap, size_t *n_ids)
{
    NGPT_FPMODE_SCOPE;
    return ngpt_tok_encode(t, text, len, true, ids, cap, n_ids);
}

ngpt_status ngpt_tok_encode(const ngpt_tokenizer *t, const void *text, size_t len, bool specials,
                            int32_t *ids, size_t cap, size_t *n_ids)
{
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
    encoder e = {.t = t, .w = {ids, ids ? cap : 0, 0, t->flags & NGPT_TOK_BYTE_FALLBACK ? t : NULL}};
    ngpt_bpe_scratch_init(&e.s);
    /* a chat turn's content: no marker, but Gemma's plain added tokens */
    e.plain_only = !specials && (t->flags & NGPT_TOK_BYTE_FALLBACK);
    if (e.plain_only) specials = true;
    ngpt_status st = t->added_flags && specials ? split_specials(&e, s8, len, 0)
                                                : encode_stretch(&e, s8, len, 0, specials);
    free(e.kept);
    free(e.nfc);
    ngpt_bpe_scratch_free(&e.s);
    /* the internal ids (bytes, then merges by rank) as the model's */
    for (size_t k = 0; t->remapped && ids && k < e.w.n && k < cap; k++) ids[k] = t->model_id[ids[k]];
    if (st) return ngpt_prefixed("ngpt_tokenizer_encode", st);
    *n_ids = e.w.n;
    if (ids && e.w.n > cap)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_tokenizer_encode: the text makes %zu ids but "
                         "the buffer holds %zu", e.w.n, cap);
    return NGPT_OK;
}
