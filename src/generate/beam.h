/* beam.h — beam search (beam.c), called by ngpt_context_generate. */
#ifndef NGPT_GENERATE_BEAM_H
#define NGPT_GENERATE_BEAM_H

#include "runtime/context.h"

/* Beam search of width gc->beam_width over KV slots 0..W-1, which are empty.
 * Trusts its arguments: ngpt_context_generate has validated them. Fills
 * res->n_tokens, n_generated and reason. */
ngpt_status ngpt_beam_search(ngpt_context *ctx, const ngpt_generate_config *gc,
                             const int32_t *prompt, int32_t prompt_len, int32_t *out,
                             ngpt_token_fn fn, void *user, ngpt_generate_result *res);

#endif
