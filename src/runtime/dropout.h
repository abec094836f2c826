/* dropout.h — the dropout state of a context (ngpt_run_state.dropout),
 * changed only here (runtime/dropout.c), and the keys of its masks. */
#ifndef NGPT_RUNTIME_DROPOUT_H
#define NGPT_RUNTIME_DROPOUT_H

#include "runtime/context.h"

/* Sets whether later full forwards drop, and the (seed, step) of their masks. */
void ngpt_dropout_configure(ngpt_context *ctx, bool on, uint64_t seed, uint64_t step);

/* Turns dropout off for an evaluation or a generation; returns whether it
 * was on, for ngpt_dropout_resume. */
bool ngpt_dropout_pause(ngpt_context *ctx);
void ngpt_dropout_resume(ngpt_context *ctx, bool was_on);

/* Whether full forwards drop now. */
bool ngpt_dropout_active(const ngpt_context *ctx);

/* The key of the masks of one site (layer, NGPT_SITE_*; the embedding
 * uses layer L). */
ngpt_dropout_key ngpt_dropout_key_of(const ngpt_context *ctx, int layer, int site);

#endif
