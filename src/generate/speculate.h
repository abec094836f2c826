/* speculate.h — the drafts of speculative generation: what proposes the
 * tokens the sampling loop (generate.c) then checks with the model in one
 * cached pass. A proposal is only a guess: the loop keeps one only when it
 * equals the token the model samples itself, so a draft changes the speed,
 * never the text. */
#ifndef NGPT_GENERATE_SPECULATE_H
#define NGPT_GENERATE_SPECULATE_H

#include "generate/constrain.h"

/* Prompt lookup: the text is prior[0..n_prior) then tok. Finds the longest
 * n <= max_ngram whose last n tokens also occur earlier (the latest such
 * place) and copies k of the tokens that followed them there into out,
 * going on past the text's end as the text from there repeats (a loop
 * shorter than k is proposed k tokens deep, not cut at the end). Returns
 * how many: k, or 0 when no n-gram repeats. */
int32_t ngpt_spec_lookup(const int32_t *prior, int32_t n_prior, int32_t tok,
                         int32_t max_ngram, int32_t k, int32_t *out);

/* A draft model: brings the draft context's slot 0 to prior[0..n_prior)
 * then tok (keeping the longest common prefix of what it holds), then
 * samples up to k tokens one at a time with sampler s, drawing index
 * first_index, first_index + 1, ... of sequence 0 (the draws the model will
 * make at those positions); under c's grammar (NULL: none; c->st the
 * state after tok) only tokens it allows, up to an end token or the
 * grammar's completion. Returns how many (fewer when the draft's context is
 * full or its sampler fails). */
int32_t ngpt_spec_draft(ngpt_context *draft, const ngpt_sampler *s, const int32_t *prior,
                        int32_t n_prior, int32_t tok, uint64_t first_index, int32_t k,
                        ngpt_constraint *c, int32_t *out);

#endif
