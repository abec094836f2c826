/* config.h — the model config's internal checks (runtime/config.c): the
 * public ngpt_config_* functions and every public function that takes a
 * config call these and put their own name in front of the message. */
#ifndef NGPT_RUNTIME_CONFIG_H
#define NGPT_RUNTIME_CONFIG_H

#include "base/error.h"
#include "runtime/derived.h"    /* the sizes the switches derive */

/* Validates every field (a bare message: the caller prefixes it). */
ngpt_status ngpt_config_check(const ngpt_config *cfg);

/* NGPT_ERR_CONFIG_MISMATCH naming the first field in which got (a
 * checkpoint's) differs from want (a context's), or OK. */
ngpt_status ngpt_config_compare(const ngpt_config *want, const ngpt_config *got);

/* The shortest of %g and %.9g that reads back as the same float v. */
void ngpt_format_float(char out[32], float v);

/* "f32", "q8" or "q4", as --config spells them. */
static inline const char *ngpt_weights_name(ngpt_weights w)
{
    return w == NGPT_WEIGHTS_Q8 ? "q8" : w == NGPT_WEIGHTS_Q4 ? "q4" : "f32";
}

#endif
