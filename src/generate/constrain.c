/* constrain.c — a grammar in generation (constrain.h). */
#include <string.h>

#include "generate/constrain.h"
#include "generate/sampler.h"
#include "generate/stop.h"
#include "tokenizer/tokenizer.h"

bool ngpt_constraint_greedy_shortcut = true;

ngpt_status ngpt_constraint_check(const ngpt_context *ctx, const ngpt_generate_config *gc)
{
    const ngpt_grammar *g = gc->grammar;
    if (!g) return NGPT_OK;
    const ngpt_tokenizer *tk = ctx->tokenizer;
    if (!g->tok && tk)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "the grammar was compiled for a byte-level "
                         "model (no tokenizer) but the context's model has a tokenizer of %d "
                         "tokens; compile it with that tokenizer (ngpt_context_tokenizer)",
                         (int)tk->n_tokens);
    if (g->tok && (!tk || tk->checksum != g->tok->checksum))
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "the grammar was compiled for another "
                         "vocabulary than the context's (%s); compile it with the context's "
                         "tokenizer (ngpt_context_tokenizer)", tk ? "another tokenizer" : "bytes");
    if (ctx->cfg.vocab_size < g->n_vocab)
        return ngpt_fail(NGPT_ERR_CONFIG_MISMATCH, "the grammar reads tokens 0..%d as bytes but "
                         "the model has V=%d", (int)g->n_vocab - 1, (int)ctx->cfg.vocab_size);
    return NGPT_OK;
}

void ngpt_constraint_start(ngpt_constraint *c, ngpt_context *ctx, const ngpt_generate_config *gc)
{
    const ngpt_plan *p = &ctx->plan;
    const int32_t B = ctx->shape.batch;
    memset(c, 0, sizeof *c);
    c->g = gc->grammar;
    if (!c->g) return;
    c->gc = gc;
    c->tk = ctx->tokenizer;
    c->V = ctx->cfg.vocab_size;
    c->words = p->gram.state_words;
    c->beam = p->gram.states;
    uint32_t *s = p->gram.states + 2 * (size_t)B * c->words;
    c->st = s, c->next = s + c->words, c->spec = s + 2 * c->words, c->spec_next = s + 3 * c->words;
    for (int i = 0; i < 3; i++) c->w.s[i] = s + (size_t)(4 + i) * c->words;
    c->w.lim = (ngpt_gm_limits){ctx->shape.grammar_depth, NGPT_GRAMMAR_STACKS};
    c->w.gbuf = p->gram.walk;
    c->w.gcap = ngpt_gram_walk_words(c->words);
    c->w.tmp = p->gram.tmp;
    c->mask = p->gram.mask;
    ngpt_gm_start(&c->g->a, c->st);
}

bool ngpt_constraint_mask(ngpt_constraint *c, const uint32_t *st)
{
    ngpt_grammar_mask(c->g, st, c->mask, &c->w);
    const size_t words = ((size_t)c->g->n_vocab + 63) / 64, all = ((size_t)c->V + 63) / 64;
    if (all > words) memset(c->mask + words, 0, (all - words) * sizeof *c->mask);
    bool any = false;
    for (size_t k = 0; k < words && !any; k++) any = c->mask[k];
    if (ngpt_gm_can_end(st)) {
        const int32_t *ends;
        const int32_t n = ngpt_stop_ends(c->gc, c->tk, &ends);
        for (int32_t i = 0; i < n; i++) ngpt_mask_set(c->mask, ends[i]);
        any |= n > 0;
    }
    return any;
}

int ngpt_constraint_advance(ngpt_constraint *c, const uint32_t *st, int32_t tok, uint32_t *dst)
{
    if (ngpt_stop_is_end(c->gc, c->tk, tok)) return ngpt_gm_can_end(st) ? NGPT_GM_OK : NGPT_GM_DEAD;
    return ngpt_grammar_advance(c->g, st, tok, dst, &c->w);
}

ngpt_status ngpt_constraint_sample(ngpt_constraint *c, ngpt_context *ctx, const ngpt_sampler *s,
                                   const float *row, const int32_t *recent, int32_t n_recent,
                                   uint64_t index, int32_t *tok, int *rc)
{
    ngpt_status st;
    /* greedy: the argmax of all tokens, when the grammar allows it, is the
     * argmax of the allowed ones (ties go to the lower id in both) */
    if (s->temperature == 0.0f && ngpt_constraint_greedy_shortcut) {
        st = ngpt_context_sample_masked(ctx, s, row, recent, n_recent, 0, index, NULL, tok);
        if (st) return st;
        if ((*rc = ngpt_constraint_advance(c, c->st, *tok, c->next)) != NGPT_GM_DEAD)
            return NGPT_OK;
    }
    if (!ngpt_constraint_mask(c, c->st))
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "no token of the vocabulary can continue the "
                         "grammar here, and it cannot end (the end tokens are off)");
    st = ngpt_context_sample_masked(ctx, s, row, recent, n_recent, 0, index, c->mask, tok);
    if (!st) *rc = ngpt_constraint_advance(c, c->st, *tok, c->next);
    return st;
}
