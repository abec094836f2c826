/* lora.h — LoRA in the wiring (model/lora.c): the low-rank terms the
 * adapted Linears add in a pass, their gradients when an adapter trains,
 * and the backward through a frozen Linear (the model's weights as an
 * adapter's training context shares them: packed float32, 8-bit, 4-bit).
 * forward.c and backward.c call these around each Linear. */
#ifndef NGPT_MODEL_LORA_H
#define NGPT_MODEL_LORA_H

#include "runtime/context.h"

/* Whether layer l's Linear `which` has a LoRA term in this context's passes. */
bool ngpt_lora_on(const ngpt_context *ctx, int l, ngpt_linear which);

/* y (rows, out) += each term of layer l's Linear `which`: t = s A x' (x'
 * the input, or its dropout while an adapter trains), y[:, rows of the
 * module] += t B^T; a training context keeps t for the backward. */
void ngpt_lora_fwd(ngpt_context *ctx, int l, ngpt_linear which, float *y, const float *x,
                   int rows, int out);

/* The backward of a frozen Linear (training an adapter), from dy (rows,
 * out) and its input x (rows, in): the adapter's gradients of the Linear's
 * modules, then dx (rows, in) = dy W (W unpacked a block of columns at a
 * time: each dx one chain over out, as the float32 product's), then dx +=
 * each module's term. dx may be x's buffer (fc2's: the hidden layer). */
void ngpt_lora_linear_bwd(ngpt_context *ctx, int l, ngpt_linear which, float *dx,
                          const float *dy, const float *x, int rows, int in, int out);

/* Columns c0..c0+n-1 of layer l's W (out, in) of Linear `which`, as the
 * context holds it, into dst (out, n): packed float32 (runtime/weights.h:
 * full panels of 16 rows, then the last rows as they are), or the 8-bit or
 * 4-bit panels dequantized, (float)q * d (the value embed_q8 gives). */
void ngpt_lora_frozen_cols(const ngpt_context *ctx, int l, ngpt_linear which, int c0, int n,
                           int out, int in, float *dst);

#endif
