/* stop.h — the output side of generation, shared by sampling (generate.c)
 * and beam search (beam.c): stop-sequence matching on the generated text,
 * and delivering output tokens to the caller's array and callback. */
#ifndef NGPT_GENERATE_STOP_H
#define NGPT_GENERATE_STOP_H

#include "runtime/context.h"

/* The tokens that end generation (*ids, the count returned): gc's end
 * tokens, or with none given the tokenizer's (tk NULL: none); none with
 * ignore_end. */
int32_t ngpt_stop_ends(const ngpt_generate_config *gc, const ngpt_tokenizer *tk,
                       const int32_t **ids);

/* Whether tok ends generation: one of gc's end tokens, or with none given
 * the tokenizer's (tk NULL: none); never with ignore_end. */
bool ngpt_stop_is_end(const ngpt_generate_config *gc, const ngpt_tokenizer *tk, int32_t tok);

/* Stop sequences against the generated text. prior_end[-1], prior_end[-2],
 * ... are the avail generated tokens before `tok` (the newest); tk is the
 * context's tokenizer, which gives each token's bytes (a special token
 * holds none), or NULL: token t < 256 is byte t, any other holds none. A
 * stop sequence never spans a token that holds no bytes.
 *
 * The bytes of tok are taken one at a time: at the first after which the
 * text ends with a stop sequence (the longest, when several end there),
 * returns the number of newest tokens that hold it, from the one where it
 * begins to tok, and sets *keep_bytes (may be NULL) to the bytes of that
 * first one before it (0: it begins where a token begins). Returns 0 when
 * none ends in tok; then *hold (may be NULL) is the number of newest tokens
 * that hold the longest tail of the text that is a proper prefix of some
 * stop sequence: those must not be streamed yet. With bytes for tokens the
 * count is the stop sequence's length and *keep_bytes is 0. */
int32_t ngpt_stop_match(const ngpt_generate_config *gc, const ngpt_tokenizer *tk,
                        const int32_t *prior_end, int32_t avail, int32_t tok, int32_t *hold,
                        int32_t *keep_bytes);

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

/* Delivers the first keep_bytes bytes (0 < keep_bytes < its length) of
 * token id of tokenizer tk as the tokens of its merge tree that hold them
 * (ngpt_tok_prefix: at most keep_bytes tokens). */
void ngpt_output_prefix(ngpt_output *sm, const ngpt_tokenizer *tk, int32_t id, int32_t keep_bytes);

/* Delivers the held-back tokens older than the newest `keep`, oldest first:
 * the j-th newest generated token is tok for j = 0, else prior_end[-j]. */
void ngpt_output_release(ngpt_output *sm, const int32_t *prior_end, int32_t tok, int32_t keep);

/* Ends the output before a stop sequence ngpt_stop_match found in the newest
 * m tokens: the held-back tokens older than them, then the keep_bytes bytes
 * of the oldest of them that come before it (ngpt_output_prefix). */
void ngpt_output_stop(ngpt_output *sm, const ngpt_tokenizer *tk, const int32_t *prior_end,
                      int32_t tok, int32_t m, int32_t keep_bytes);

#endif
