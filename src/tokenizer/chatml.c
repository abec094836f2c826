/* chatml.c — ChatML turns (ngpt.h, "chat"): the role markers are the
 * tokenizer's special tokens, looked up by name wherever their ids are, and
 * everything between them is encoded as plain text, so no text a user types
 * can become a marker. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fpmode.h"
#include "tokenizer/tokenizer.h"

#define IM_START "<|im_start|>"
#define IM_END "<|im_end|>"

/* The id of the special token called name, or -1 (a token that merely
 * spells it is not special and does not count). */
static int32_t special_id(const ngpt_tokenizer *t, const char *name)
{
    const size_t n = strlen(name);
    for (int32_t id = 0; id < t->n_tokens; id++) {
        size_t len;
        const uint8_t *b = ngpt_tok_bytes(t, id, &len);
        if (len == n && ngpt_tok_special(t, id) && !memcmp(b, name, n)) return id;
    }
    return -1;
}

/* Bare message naming the missing marker. */
static ngpt_status find_specials(const ngpt_tokenizer *t, int32_t *start, int32_t *end)
{
    *start = special_id(t, IM_START);
    *end = special_id(t, IM_END);
    if (*start < 0 || *end < 0)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "the tokenizer has no special token %s, so it "
                         "cannot write ChatML", *start < 0 ? IM_START : IM_END);
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_chatml_specials(const ngpt_tokenizer *tok, int32_t *im_start, int32_t *im_end)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_chatml_specials: NULL argument");
    int32_t start, end;
    ngpt_status st = find_specials(tok, &start, &end);
    if (st) return ngpt_prefixed("ngpt_tokenizer_chatml_specials", st);
    if (im_start) *im_start = start;
    if (im_end) *im_end = end;
    return NGPT_OK;
}

/* The ids being written: those past cap are counted, not stored. */
typedef struct sink {
    int32_t *ids;
    size_t cap, n;
} sink;

static void put(sink *s, int32_t id)
{
    if (s->ids && s->n < s->cap) s->ids[s->n] = id;
    s->n++;
}

/* Appends the plain-text tokens of len bytes of text; bare message. */
static ngpt_status put_text(sink *s, const ngpt_tokenizer *t, const void *text, size_t len)
{
    const size_t room = s->n < s->cap ? s->cap - s->n : 0;
    size_t k = 0;
    ngpt_status st = ngpt_tok_encode(t, text, len, false, s->ids && room ? s->ids + s->n : NULL,
                                     room, &k);
    if (st && st != NGPT_ERR_TOO_LONG)                  /* too long: counted, reported later */
        return ngpt_fail(st, "encoding %zu bytes of text failed: %s", len, ngpt_status_string(st));
    s->n += k;
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_chatml_turn(const ngpt_tokenizer *tok, const char *role, const void *text,
                           size_t len, bool open, int32_t *ids, size_t cap, size_t *n_ids)
{
    NGPT_FPMODE_SCOPE;
    if (!tok || !role || !n_ids || (!text && len > 0))
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_chatml_turn: NULL argument");
    const size_t role_len = strlen(role);
    if (role_len == 0 || memchr(role, '\n', role_len))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_tokenizer_chatml_turn: the role must be one non-empty "
                         "line (it was \"%.40s\")", role);
    int32_t start, end;
    ngpt_status st = find_specials(tok, &start, &end);
    if (st) return ngpt_prefixed("ngpt_tokenizer_chatml_turn", st);
    size_t body_len;
    if (!ngpt_add_ok(role_len + 1, len, &body_len))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "ngpt_tokenizer_chatml_turn: a text of %zu bytes is longer "
                         "than this machine can address", len);
    /* "role\ntext" is encoded whole: Hugging Face's template renders it as
     * one stretch of text between two markers */
    char *body = malloc(body_len);
    if (!body) return ngpt_fail(NGPT_ERR_NO_MEMORY, "ngpt_tokenizer_chatml_turn: no memory for a turn of "
                                "%zu bytes", body_len);
    memcpy(body, role, role_len);
    body[role_len] = '\n';
    if (len) memcpy(body + role_len + 1, text, len);
    sink s = {ids, ids ? cap : 0, 0};
    put(&s, start);
    st = put_text(&s, tok, body, body_len);
    free(body);
    if (!st && !open) {
        put(&s, end);
        st = put_text(&s, tok, "\n", 1);
    }
    if (st) return ngpt_prefixed("ngpt_tokenizer_chatml_turn", st);
    *n_ids = s.n;
    if (ids && s.n > cap)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "ngpt_tokenizer_chatml_turn: the turn makes %zu ids but the "
                         "buffer holds %zu", s.n, cap);
    return NGPT_OK;
}
