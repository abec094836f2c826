/* generate.h — pieces shared by sampling generation and beam search. */
#ifndef NGPT_GENERATE_H
#define NGPT_GENERATE_H

#include "internal.h"

/* Stop sequences against the generated tail: prior_end[-1], prior_end[-2],
 * ... are the avail generated tokens before `tok` (the newest). Returns the
 * length of the longest stop sequence the tail now ends with (0: none) and,
 * in *hold, the longest tail that is a proper prefix of some stop sequence
 * (those tokens must not be streamed yet). Tokens >= 256 match no byte. */
int32_t ngpt_stop_match(const ngpt_generate_config *gc, const int32_t *prior_end, int32_t avail,
                        int32_t tok, int32_t *hold);

/* Processes `len` tokens into slot `slot` in chunks of the planned seq; the
 * last chunk's logits are in ngpt_logits_data, its last row at *last_row. */
ngpt_status ngpt_gen_prefill(ngpt_context *ctx, int32_t slot, const int32_t *tokens, int32_t len,
                             const float **last_row);

/* Beam search (beam.c); arguments already validated by ngpt_model_generate. */
ngpt_status ngpt_beam_search(ngpt_context *ctx, const ngpt_generate_config *gc,
                             const int32_t *prompt, int32_t prompt_len, int32_t *out,
                             ngpt_token_fn fn, void *user, ngpt_generate_result *res);

#endif
