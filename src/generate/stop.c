/* stop.c — stop sequences and the delivery of generated tokens (stop.h).
 * Stop sequences are byte strings: the generated tokens are read as the
 * bytes they stand for, so a stop sequence may begin or end inside a token
 * and span several. */
#include <string.h>

#include "generate/stop.h"
#include "tokenizer/tokenizer.h"

int32_t ngpt_stop_ends(const ngpt_generate_config *gc, const ngpt_tokenizer *tk,
                       const int32_t **ids)
{
    *ids = gc->end_tokens;
    if (gc->ignore_end) return 0;
    if (gc->n_end_tokens == 0 && tk) {
        *ids = tk->end_ids;
        return tk->n_end;
    }
    return gc->n_end_tokens;
}

bool ngpt_stop_is_end(const ngpt_generate_config *gc, const ngpt_tokenizer *tk, int32_t tok)
{
    const int32_t *ends;
    const int32_t n = ngpt_stop_ends(gc, tk, &ends);
    for (int32_t i = 0; i < n; i++)
        if (ends[i] == tok) return true;
    return false;
}

/* The j-th newest generated token: j = 0 is tok, j >= 1 is prior_end[-j]. */
static int32_t gen_at(const int32_t *prior_end, int32_t tok, int32_t j)
{
    return j == 0 ? tok : prior_end[-j];
}

/* Byte b of a model without a tokenizer is token b. */
#define B4(n) n, n + 1, n + 2, n + 3
#define B16(n) B4(n), B4(n + 4), B4(n + 8), B4(n + 12)
#define B64(n) B16(n), B16(n + 16), B16(n + 32), B16(n + 48)
static const uint8_t BYTE_OF[256] = {B64(0), B64(64), B64(128), B64(192)};

/* The generated text, newest token first. */
typedef struct text {
    const ngpt_tokenizer *tk;
    const int32_t *prior_end;
    int32_t tok, avail;
} text;

/* The bytes of the j-th newest token (*len of them), or NULL when it holds
 * none. */
static const uint8_t *bytes_of(const text *x, int32_t j, size_t *len)
{
    const int32_t id = gen_at(x->prior_end, x->tok, j);
    *len = 0;
    if (!x->tk) return id >= 0 && id < 256 ? (*len = 1, &BYTE_OF[id]) : NULL;
    return ngpt_tok_special(x->tk, id) ? NULL : ngpt_tok_bytes(x->tk, id, len);
}

/* Whether the text that ends after byte e of the newest token ends with
 * s[0..m); if so, it begins at byte *at of the *j-th newest token. */
static bool ends_with(const text *x, size_t e, const uint8_t *s, size_t m, int32_t *j, size_t *at)
{
    size_t len, pos = e;
    const uint8_t *b = bytes_of(x, 0, &len);
    int32_t k = 0;
    for (size_t q = m; q-- > 0;) {
        while (pos == 0) {     /* the token before: generated, and holding bytes */
            if (++k > x->avail || !(b = bytes_of(x, k, &len))) return false;
            pos = len;
        }
        if (b[--pos] != s[q]) return false;
    }
    *j = k, *at = pos;
    return true;
}

int32_t ngpt_stop_match(const ngpt_generate_config *gc, const ngpt_tokenizer *tk,
                        const int32_t *prior_end, int32_t avail, int32_t tok, int32_t *hold,
                        int32_t *keep_bytes)
{
    const text x = {tk, prior_end, tok, avail};
    size_t n, at;
    int32_t j;
    if (hold) *hold = 0;
    if (keep_bytes) *keep_bytes = 0;
    if (!bytes_of(&x, 0, &n)) return 0;
    for (size_t e = 1; e <= n; e++) {       /* the first byte after which one ends */
        size_t best = 0;
        int32_t best_j = 0;
        size_t best_at = 0;
        for (int32_t s = 0; s < gc->n_stop; s++) {
            const size_t m = strlen(gc->stop[s]);
            if (m > best && ends_with(&x, e, (const uint8_t *)gc->stop[s], m, &j, &at))
                best = m, best_j = j, best_at = at;
        }
        if (best) {
            if (keep_bytes) *keep_bytes = (int32_t)best_at;
            return best_j + 1;
        }
    }
    size_t partial = 0;     /* the longest tail that is a proper prefix */
    for (int32_t s = 0; s < gc->n_stop; s++)
        for (size_t k = strlen(gc->stop[s]) - 1; k > partial; k--)
            if (ends_with(&x, n, (const uint8_t *)gc->stop[s], k, &j, &at)) {
                partial = k;
                if (hold) *hold = j + 1;
                break;
            }
    return 0;
}

bool ngpt_output_put(ngpt_output *sm, int32_t tok)
{
    if (sm->stopped) return false;
    if (sm->out) sm->out[sm->n_out] = tok;
    sm->n_out++;
    if (sm->fn && sm->fn(tok, sm->user)) sm->stopped = true;
    return !sm->stopped;
}

void ngpt_output_prefix(ngpt_output *sm, const ngpt_tokenizer *tk, int32_t id, int32_t keep_bytes)
{
    int32_t parts[NGPT_TOK_MAX_BYTES];
    const int32_t n = ngpt_tok_prefix(tk, id, (size_t)keep_bytes, parts);
    for (int32_t i = 0; i < n && ngpt_output_put(sm, parts[i]); i++) {}
}

void ngpt_output_release(ngpt_output *sm, const int32_t *prior_end, int32_t tok, int32_t keep)
{
    for (int32_t j = sm->pending - 1; j >= keep && !sm->stopped; j--) {
        ngpt_output_put(sm, gen_at(prior_end, tok, j));
        sm->pending = j;
    }
    if (!sm->stopped && sm->pending > keep) sm->pending = keep;
}

void ngpt_output_stop(ngpt_output *sm, const ngpt_tokenizer *tk, const int32_t *prior_end,
                      int32_t tok, int32_t m, int32_t keep_bytes)
{
    ngpt_output_release(sm, prior_end, tok, m);
    if (keep_bytes > 0 && !sm->stopped)
        ngpt_output_prefix(sm, tk, gen_at(prior_end, tok, m - 1), keep_bytes);
}
