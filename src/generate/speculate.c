/* speculate.c — the drafts of speculative generation (speculate.h): prompt
 * lookup and a draft model kept in step with the text. */
#include <string.h>

#include "generate/constrain.h"
#include "generate/sampler.h"
#include "generate/speculate.h"
#include "generate/stop.h"
#include "model/kv.h"
#include "model/model.h"

/* Token j of the text prior[0..n_prior) then tok. */
static int32_t text_at(const int32_t *prior, int32_t n_prior, int32_t tok, int32_t j)
{
    return j < n_prior ? prior[j] : tok;
}

int32_t ngpt_spec_lookup(const int32_t *prior, int32_t n_prior, int32_t tok,
                         int32_t max_ngram, int32_t k, int32_t *out)
{
    const int32_t n = n_prior + 1;
    for (int32_t m = max_ngram < n - 1 ? max_ngram : n - 1; m >= 1; m--) {
        /* the latest earlier start p with text[p..p+m) == the last m tokens
         * and at least one token after it */
        for (int32_t p = n - m - 1; p >= 0; p--) {
            int32_t j = 0;
            while (j < m && text_at(prior, n_prior, tok, p + j) ==
                                text_at(prior, n_prior, tok, n - m + j))
                j++;
            if (j < m) continue;
            /* what followed there, then on past the text's end as the
             * stretch from p repeats: position q >= n is proposal q - n */
            int32_t got = 0;
            for (int32_t q = p + m; got < k; q++)
                out[got++] = q < n ? text_at(prior, n_prior, tok, q) : out[q - n];
            return got;
        }
    }
    return 0;
}

/* The draft's next token under c's grammar, from the draft's copy of the
 * state (c->spec), which it then advances; false: none may follow. */
static bool draft_constrained(ngpt_context *draft, const ngpt_sampler *s, const float *row,
                              ngpt_constraint *c, uint64_t index, int32_t *tok)
{
    if (ngpt_gm_complete(c->spec) || !ngpt_constraint_mask(c, c->spec)) return false;
    if (ngpt_context_sample_masked(draft, s, row, ngpt_kv_tokens(draft, 0), ngpt_kv_len(draft, 0),
                                   0, index, c->mask, tok))
        return false;
    if (ngpt_constraint_advance(c, c->spec, *tok, c->spec_next) != NGPT_GM_OK) return false;
    uint32_t *t = c->spec;
    c->spec = c->spec_next, c->spec_next = t;
    return true;
}

int32_t ngpt_spec_draft(ngpt_context *draft, const ngpt_sampler *s, const int32_t *prior,
                        int32_t n_prior, int32_t tok, uint64_t first_index, int32_t k,
                        ngpt_constraint *c, int32_t *out)
{
    const int32_t T = draft->cfg.context_len;
    if (n_prior + k > T) return 0;      /* the text and k-1 proposals must fit */
    /* keep what the draft already holds of the text, but feed at least tok
     * again: its row is the one to sample from */
    const int32_t *held = ngpt_kv_tokens(draft, 0);
    int32_t same = 0, len = ngpt_kv_len(draft, 0);
    while (same < len && same < n_prior && held[same] == prior[same]) same++;
    ngpt_model_truncate(draft, 0, same);
    /* the text's last few tokens and tok in one pass (after a round whose
     * proposals were all kept: the last proposal and the model's bonus
     * token), which reads the draft's weights once instead of once a token;
     * a longer rest (the prompt) goes before it in prefill passes */
    int32_t tail = n_prior - same, max_tail = draft->shape.seq - 1;
    if (max_tail > NGPT_DRAFT_TOKENS_MAX) max_tail = NGPT_DRAFT_TOKENS_MAX;
    if (tail > max_tail) tail = max_tail;
    const float *row;
    if (same < n_prior - tail) ngpt_model_prefill(draft, 0, prior + same, n_prior - tail - same, &row);
    int32_t feed[NGPT_DRAFT_TOKENS_MAX + 1];
    memcpy(feed, prior + n_prior - tail, (size_t)tail * sizeof *feed);
    feed[tail] = tok;
    ngpt_model_append(draft, 0, 1, feed, tail + 1);
    row = draft->plan.logits + (size_t)(draft->run.pass.rows - 1) * (size_t)draft->cfg.vocab_size;
    int32_t got = 0;
    if (c) ngpt_gm_copy(c->spec, c->st);
    while (got < k) {
        const uint64_t index = first_index + (uint64_t)got;
        if (c) {
            if (!draft_constrained(draft, s, row, c, index, &out[got])) break;
            if (ngpt_stop_is_end(c->gc, c->tk, out[got])) return got + 1;
        } else if (ngpt_context_sample_unchecked(draft, s, row, ngpt_kv_tokens(draft, 0),
                                                 ngpt_kv_len(draft, 0), 0, index, &out[got])) {
            break;
        }
        if (++got < k) {
            ngpt_model_append(draft, 0, 1, &out[got - 1], 1);
            row = draft->plan.logits;
        }
    }
    return got;
}
