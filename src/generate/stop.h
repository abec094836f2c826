/* stop.h — the output side of generation, shared by sampling (generate.c)
 * and beam search (beam.c): stop-sequence matching on the generated tail,
 * and delivering output tokens to the caller's array and callback. */
#ifndef NGPT_GENERATE_STOP_H
#define NGPT_GENERATE_STOP_H

#include "runtime/context.h"

/* Stop sequences against the generated tail: prior_end[-1], prior_end[-2],
 * ... are the avail generated tokens before `tok` (the newest). Returns the
 * length of the longest stop sequence the tail now ends with (0: none) and,
 * in *hold (may be NULL), the longest tail that is a proper prefix of some
 * stop sequence (those tokens must not be streamed yet). Tokens >= 256 match
 * no byte. */
int32_t ngpt_stop_match(const ngpt_generate_config *gc, const int32_t *prior_end, int32_t avail,
                        int32_t tok, int32_t *hold);

/* Where output tokens go: out (or NULL) and the callback fn (or NULL). */
typedef struct ngpt_output {
    int32_t *out;
    ngpt_token_fn fn;
    void *user;
    int32_t n_out;              /* tokens delivered */
    int32_t pending;            /* generated but held back (a stop sequence may begin) */
    bool stopped;               /* the callback asked to stop */
} ngpt_output;

/* Delivers one token; false once the callback has asked to stop. */
bool ngpt_output_put(ngpt_output *sm, int32_t tok);

/* Delivers the held-back tokens older than the newest `keep`, oldest first:
 * the j-th newest generated token is tok for j = 0, else prior_end[-j]. */
void ngpt_output_release(ngpt_output *sm, const int32_t *prior_end, int32_t tok, int32_t keep);

#endif
