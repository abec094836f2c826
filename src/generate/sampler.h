/* sampler.h — sampler pieces shared with generation and beam search. */
#ifndef NGPT_GENERATE_SAMPLER_H
#define NGPT_GENERATE_SAMPLER_H

#include "runtime/context.h"

/* Validates a sampler for a vocabulary of vocab_size (a bare message: the
 * callers prefix it). */
ngpt_status ngpt_sampler_check(const ngpt_sampler *s, int32_t vocab_size);

/* Sorts idx[0..n) by z descending, ties by the lower id (a total order, so
 * the result is unique; z holds no NaN). keys: 2n scratch. */
void ngpt_sort_desc(const float *z, int32_t *idx, uint64_t *keys, int32_t n);

/* The sampler's internal steps. They trust their arguments (the sampler
 * validated, recent tokens in range): ngpt_context_sample and
 * ngpt_context_generate validate once at the boundary. */

/* Index of the first of the n_recent tokens the repetition penalty reads. */
int32_t ngpt_sampler_window_start(const ngpt_sampler *s, int32_t n_recent);

/* Steps 1-2 of the pipeline (ban, bias, repetition penalty) into z (V),
 * after a grammar's mask: the tokens whose bit is clear in allowed (V bits;
 * NULL: none) get -inf first. Fails on non-finite logits or when every
 * token is banned. */
ngpt_status ngpt_sampler_adjust(ngpt_context *ctx, const ngpt_sampler *s, const float *logits,
                                const int32_t *recent, int32_t n_recent, const uint64_t *allowed,
                                float *z);

/* Steps 3-6 (temperature > 0, top-k, top-p, min-p) on z from
 * ngpt_sampler_adjust: the survivors are plan.samp.idx[0..*n) in descending
 * order with probabilities plan.samp.p[0..*n). */
void ngpt_sampler_filter(ngpt_context *ctx, const ngpt_sampler *s, float *z, int32_t *n);

/* The whole pipeline on one row of logits under a grammar's mask (allowed,
 * V bits; NULL: none). */
ngpt_status ngpt_context_sample_masked(ngpt_context *ctx, const ngpt_sampler *s, const float *logits,
                               const int32_t *recent, int32_t n_recent, int32_t sequence,
                               uint64_t index, const uint64_t *allowed, int32_t *token);

/* The whole pipeline on one row of logits: ngpt_context_sample without its
 * checks. */
ngpt_status ngpt_context_sample_unchecked(ngpt_context *ctx, const ngpt_sampler *s,
                                          const float *logits, const int32_t *recent,
                                          int32_t n_recent, int32_t sequence, uint64_t index,
                                          int32_t *token);

#endif
