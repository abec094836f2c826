/* tokens.c — a chat template's tokens (ngpt.h, "chat templates"): the
 * rendering (template/template.h) encoded with the tokenizer, for chat
 * (generation) and for conversations as training data alike. The role
 * markers are the tokenizer's special tokens, found by name wherever their
 * ids are, and only where the template (not a message) wrote them:
 * everything between them is encoded as plain text, so no text a user
 * types can become a marker (ChatML's turns: tokenizer/chatml.c). */
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/fpmode.h"
#include "template/template.h"
#include "tokenizer/tokenizer.h"

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
        /* not the ones never found in text, nor Gemma's runs of ▁, whose
         * model id is the merge that makes them from spaces */
        if (ngpt_tokenizer_special(t, i, &id) || !ngpt_tok_special(t, id) ||
            (t->added_flags && (t->added_flags[i] & NGPT_ADDED_UNMATCHED)))
            continue;
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

/* Room in out (grown; *cap) for want more tokens after its *n. */
static ngpt_status room_for(int32_t **out, size_t n, size_t *cap, size_t want)
{
    if (*cap - n >= want) return NGPT_OK;
    size_t grown;
    if (!ngpt_add_ok(*cap, want, &grown) || !ngpt_mul_ok(grown, 2, &grown) ||
        !ngpt_mul_ok(grown, sizeof **out, &grown))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "a rendering of more tokens than this machine can "
                         "address");
    int32_t *v = realloc(*out, grown);
    if (!v) return ngpt_fail(NGPT_ERR_NO_MEMORY, "no memory for %zu tokens", grown / sizeof *v);
    *out = v, *cap = grown / sizeof *v;
    return NGPT_OK;
}

/* The rendering's tokens from byte at into out (grown; *n of them): the
 * plain text between the template's special tokens encoded without
 * splitting special tokens out of it (a message's text that spells one is
 * text). */
static ngpt_status encode_from(const rendering *r, const ngpt_tokenizer *t, size_t at,
                               int32_t **out, size_t *n, size_t *cap)
{
    const ngpt_tmpl_text *x = r->text;
    for (size_t seg = at, p = at; p <= x->n; p++) {
        int32_t id = -1;
        const size_t len = p < x->n ? special_at(r, p, &id) : 0;
        if (!len && p < x->n) continue;
        /* the plain text before it: mostly at most one id a byte, and one
         * more; NFC may lengthen it, and then the count says how many */
        size_t k = p - seg;
        ngpt_status st = NGPT_ERR_TOO_LONG;
        for (int tries = 0; st == NGPT_ERR_TOO_LONG && tries < 2; tries++) {
            st = room_for(out, *n, cap, k + 1);
            if (!st) st = ngpt_tok_encode(t, x->p + seg, p - seg, false, *out + *n, *cap - *n - 1, &k);
        }
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
