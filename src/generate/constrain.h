/* constrain.h — a grammar in generation (constrain.c): the matcher state of
 * the text generated so far, kept in the arena (plan.gram), the tokens it
 * allows each step (the end tokens where it may end), and sampling under
 * it, shared by the sampling loop (generate.c), beam search (beam.c) and
 * the drafts (speculate.c). */
#ifndef NGPT_GENERATE_CONSTRAIN_H
#define NGPT_GENERATE_CONSTRAIN_H

#include "grammar/grammar.h"
#include "runtime/context.h"

typedef struct ngpt_constraint {
    const ngpt_grammar *g;      /* NULL: generation is free */
    const ngpt_generate_config *gc;
    const ngpt_tokenizer *tk;   /* the context's: its end tokens */
    ngpt_gwork w;
    uint32_t *st, *next;        /* the text's state; the one after the token being checked */
    uint32_t *spec, *spec_next; /* a draft's copy */
    uint32_t *beam;             /* (2 * batch) states of plan.gram.state_words */
    size_t words;
    uint64_t *mask;             /* (V bits) */
    int32_t V;
} ngpt_constraint;

/* Whether gc's grammar can run on ctx (compiled for its vocabulary), and
 * its depth fits the plan. Bare messages. */
ngpt_status ngpt_constraint_check(const ngpt_context *ctx, const ngpt_generate_config *gc);

/* c for gc on ctx: the grammar's start in c->st (g NULL without one). */
void ngpt_constraint_start(ngpt_constraint *c, ngpt_context *ctx, const ngpt_generate_config *gc);

/* The i-th beam state of a double buffer (which 0 or 1). */
static inline uint32_t *ngpt_constraint_beam(const ngpt_constraint *c, int32_t which, int32_t i,
                                             int32_t batch)
{
    return c->beam + ((size_t)which * batch + i) * c->words;
}

/* The tokens allowed after st into c->mask: the grammar's, and the end
 * tokens where it may end. false: none is. */
bool ngpt_constraint_mask(ngpt_constraint *c, const uint32_t *st);

/* st after tok into dst (NGPT_GM_OK, _DEAD, _OVERFLOW); an end token is
 * NGPT_GM_OK where st may end (dst unchanged), else _DEAD. */
int ngpt_constraint_advance(ngpt_constraint *c, const uint32_t *st, int32_t tok, uint32_t *dst);

/* One token from a row of logits under the grammar, from state c->st: the
 * sampler's pipeline on the allowed tokens (greedy takes the argmax when the
 * grammar allows it: the same token), *rc its advance, into c->next.
 * Otherwise as ngpt_context_sample_unchecked. */
ngpt_status ngpt_constraint_sample(ngpt_constraint *c, ngpt_context *ctx, const ngpt_sampler *s,
                                   const float *row, const int32_t *recent, int32_t n_recent,
                                   uint64_t index, int32_t *tok, int *rc);

/* Greedy decoding's shortcut (on): tests turn it off to compare it with
 * masking every step. */
extern bool ngpt_constraint_greedy_shortcut;

/* c->st takes the state c->next holds (after an accepted token). */
static inline void ngpt_constraint_take(ngpt_constraint *c)
{
    uint32_t *t = c->st;
    c->st = c->next;
    c->next = t;
}

#endif
