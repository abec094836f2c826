/* error.h — how the library fails (base/status.c).
 *
 * Messages (ngpt.h, Conventions): ngpt_last_error() reads
 * "ngpt_<function>: <one sentence>", named after the public function the
 * user called. A public function writes its own checks' messages with that
 * prefix; an internal function that fails (a validator, the checkpoint
 * reader, ...) leaves the bare sentence, and the public function that called
 * it returns ngpt_prefixed("ngpt_<function>", status), so the prefix is
 * written once, at the boundary. */
#ifndef NGPT_BASE_ERROR_H
#define NGPT_BASE_ERROR_H

#include "ngpt.h"

/* Records a message for ngpt_last_error() and returns status. */
ngpt_status ngpt_fail(ngpt_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Puts "fn: " in front of the current (bare) message when status is a
 * failure; returns status either way. */
ngpt_status ngpt_prefixed(const char *fn, ngpt_status status);

/* Internal invariant: calls the abort hook and returns NGPT_ERR_INTERNAL. */
ngpt_status ngpt_internal_fail(const char *file, int line, const char *what);
#define NGPT_CHECK_INTERNAL(cond) \
    do { if (!(cond)) return ngpt_internal_fail(__FILE__, __LINE__, #cond); } while (0)

/* A public struct's reserved bytes (ngpt.h, "Structs that grow") are
 * zero: NGPT_OK, else NGPT_ERR_BAD_ARG naming what (e.g. "shape"), a bare
 * message. Nonzero ones are fields of a newer header this library lacks. */
#define NGPT_RESERVED_CHECK(what, s) ngpt_reserved_check(what, (s)->reserved, sizeof (s)->reserved)
ngpt_status ngpt_reserved_check(const char *what, const void *reserved, size_t bytes);

#endif
