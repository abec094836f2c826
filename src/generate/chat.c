/* chat.c — a conversation's tokens (ngpt.h, "chat"): ChatML turns, and a
 * chat template's rendering (template/template.h). Either way the role
 * markers are the tokenizer's special tokens, found by name wherever their
 * ids are, and only where the template (not a message) wrote them:
 * everything between them is encoded as plain text, so no text a user
 * types can become a marker. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fpmode.h"
#include "template/template.h"
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
    ngpt_status st = ngpt_tokenizer_encode(t, text, len, s->ids && room ? s->ids + s->n : NULL,
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

/* ------------------------------------------------------------ a template's tokens */

typedef struct special {
    const uint8_t *name;
    size_t len;
    int32_t id;
} special;

static int longer_first(const void *a, const void *b)
{
    const special *x = a, *y = b;
    return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

/* The tokenizer's special tokens, longest name first (where two begin at
 * one place the longer is the token, as Hugging Face's split finds them). */
static special *specials_of(const ngpt_tokenizer *t, int32_t *n)
{
    special *v = malloc(((size_t)t->n_special + 1) * sizeof *v);
    if (!v) return NULL;
    *n = 0;
    for (int32_t i = 0, id; i < t->n_special; i++) {
        if (ngpt_tokenizer_special(t, i, &id)) continue;
        v[*n].name = ngpt_tok_bytes(t, id, &v[*n].len);
        v[*n].id = id;
        if (v[*n].len) ++*n;
    }
    qsort(v, (size_t)*n, sizeof *v, longer_first);
    return v;
}

typedef struct rendering {
    const ngpt_tmpl_text *text;
    const special *sp;
    int32_t n_sp;
    bool first[256];            /* the bytes a special token's name begins with */
} rendering;

/* The special token the template wrote at byte at (its length; *id), or 0. */
static size_t special_at(const rendering *r, size_t at, int32_t *id)
{
    const ngpt_tmpl_text *x = r->text;
    if (!r->first[(uint8_t)x->p[at]]) return 0;
    for (int32_t i = 0; i < r->n_sp; i++) {
        const special *s = &r->sp[i];
        if (s->len > x->n - at || (uint8_t)x->p[at] != s->name[0] || memcmp(x->p + at, s->name, s->len))
            continue;
        if (x->taint && memchr(x->taint + at, 1, s->len)) continue;    /* a message's text */
        *id = s->id;
        return s->len;
    }
    return 0;
}

/* How many of held's tokens spell the rendering's start up to a place
 * where its encoding starts afresh (a special token's start or end); *at:
 * that byte. Bare message on a bad id. */
static ngpt_status reusable(const rendering *r, const ngpt_tokenizer *t, const int32_t *held,
                            size_t n_held, size_t *k, size_t *at)
{
    const ngpt_tmpl_text *x = r->text;
    size_t pos = 0;
    *k = 0, *at = 0;
    for (size_t i = 0; i < n_held; i++) {
        if (held[i] < 0 || held[i] >= t->n_tokens)
            return ngpt_fail(NGPT_ERR_BAD_TOKEN, "held[%zu] = %d is not a token of the tokenizer "
                             "(0..%d)", i, (int)held[i], (int)t->n_tokens - 1);
        int32_t id;
        size_t len = 0;
        const size_t here = pos < x->n ? special_at(r, pos, &id) : 0;
        bool boundary;
        if (ngpt_tok_special(t, held[i])) {
            if (!here || id != held[i]) break;
            len = here, boundary = true;
        } else {
            const uint8_t *b = ngpt_tok_bytes(t, held[i], &len);
            if (here || len > x->n - pos || memcmp(x->p + pos, b, len)) break;
            bool inside = false;        /* no marker may begin inside the token */
            for (size_t j = pos + 1; j < pos + len && !inside; j++) inside = special_at(r, j, &id) > 0;
            if (inside) break;
            boundary = pos + len == x->n || special_at(r, pos + len, &id) > 0;
        }
        pos += len;
        if (boundary) *k = i + 1, *at = pos;
    }
    return NGPT_OK;
}

/* The rendering's tokens from byte at into out (grown; *n of them). */
static ngpt_status encode_from(const rendering *r, const ngpt_tokenizer *t, size_t at,
                               int32_t **out, size_t *n, size_t *cap)
{
    const ngpt_tmpl_text *x = r->text;
    for (size_t seg = at, p = at; p <= x->n; p++) {
        int32_t id = -1;
        const size_t len = p < x->n ? special_at(r, p, &id) : 0;
        if (!len && p < x->n) continue;
        size_t k = 0;           /* the plain text before it: at most one id a byte, and one more */
        if (*cap - *n < p - seg + 1) {
            size_t want = 2 * (*cap + p - seg + 1);
            int32_t *v = realloc(*out, want * sizeof *v);
            if (!v) return ngpt_fail(NGPT_ERR_NO_MEMORY, "no memory for %zu tokens", want);
            *out = v, *cap = want;
        }
        ngpt_status st = ngpt_tokenizer_encode(t, x->p + seg, p - seg, *out + *n, *cap - *n, &k);
        if (st) return ngpt_fail(st, "encoding the rendering failed: %s", ngpt_status_string(st));
        *n += k;
        if (len) (*out)[(*n)++] = id;
        p += len ? len - 1 : 0;
        seg = p + 1;
    }
    return NGPT_OK;
}

static ngpt_status template_tokens(const ngpt_template *tpl, const ngpt_tokenizer *t,
                                   const ngpt_chat_message *msgs, size_t n_msgs,
                                   const ngpt_template_options *opt, const int32_t *held,
                                   size_t n_held, int32_t **ids, size_t *n)
{
    ngpt_tmpl_text text;
    ngpt_status st = ngpt_tmpl_render(tpl, msgs, n_msgs, opt, &text);
    if (st) return st;
    rendering r = {&text, NULL, 0, {false}};
    r.sp = specials_of(t, &r.n_sp);
    for (int32_t i = 0; r.sp && i < r.n_sp; i++) r.first[r.sp[i].name[0]] = true;
    size_t keep = 0, at = 0, cap = text.n + n_held + 2;
    *n = 0;
    *ids = malloc(cap * sizeof **ids);
    if (!r.sp || !*ids) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "no memory for a rendering's tokens");
    ngpt_tokenizer_info info;
    if (!st) st = ngpt_tokenizer_describe(t, &info);
    int32_t first = -1;
    if (!st && info.bos_id >= 0 && !(text.n && special_at(&r, 0, &first) && first == info.bos_id)) {
        (*ids)[(*n)++] = info.bos_id;           /* a prompt begins with BOS, once */
        if (n_held && held[0] == info.bos_id) held++, n_held--;
    }
    if (!st && held) st = reusable(&r, t, held, n_held, &keep, &at);
    if (!st && keep) memcpy(*ids + *n, held, keep * sizeof **ids), *n += keep;
    if (!st) st = encode_from(&r, t, at, ids, n, &cap);
    free((void *)r.sp);
    ngpt_tmpl_text_free(&text);
    return st;
}

ngpt_status ngpt_template_render_tokens(const ngpt_template *t, const ngpt_tokenizer *tok,
                                        const ngpt_chat_message *msgs, size_t n,
                                        const ngpt_template_options *opt, const int32_t *held,
                                        size_t n_held, int32_t *ids, size_t cap, size_t *n_ids)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_template_render_tokens";
    if (!t || !tok || !n_ids || (!held && n_held))
        return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL argument", fn);
    ngpt_status st = ngpt_tmpl_check(msgs, n, opt);
    int32_t *all = NULL;
    size_t count = 0;
    if (!st) st = template_tokens(t, tok, msgs, n, opt, held, n_held, &all, &count);
    if (st) {
        free(all);
        return ngpt_prefixed(fn, st);
    }
    *n_ids = count;
    if (ids && count > cap)
        st = ngpt_fail(NGPT_ERR_TOO_LONG, "%s: the rendering makes %zu tokens but the buffer "
                       "holds %zu", fn, count, cap);
    else if (ids && count)
        memcpy(ids, all, count * sizeof *ids);
    free(all);
    return st;
}
