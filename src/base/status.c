/* status.c — status names, the per-thread error message, the abort hook. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/fpmode.h"

static _Thread_local char last_error[512];
static ngpt_abort_fn abort_fn;
static void *abort_user;

const char *ngpt_status_string(ngpt_status status)
{
    NGPT_FPMODE_SCOPE;
    static const char *const names[NGPT_STATUS_COUNT] = {
        [NGPT_OK] = "ok",
        [NGPT_ERR_NULL_ARG] = "null argument",
        [NGPT_ERR_BAD_ARG] = "bad argument",
        [NGPT_ERR_BAD_CONFIG] = "bad config",
        [NGPT_ERR_UNSUPPORTED] = "not supported",
        [NGPT_ERR_OVERFLOW] = "size overflow",
        [NGPT_ERR_ARENA_TOO_SMALL] = "arena too small",
        [NGPT_ERR_NO_MEMORY] = "out of memory",
        [NGPT_ERR_EXCEEDS_PLAN] = "exceeds the planned shape",
        [NGPT_ERR_BAD_TOKEN] = "bad token id",
        [NGPT_ERR_TOO_LONG] = "sequence too long",
        [NGPT_ERR_WRONG_MODE] = "wrong mode",
        [NGPT_ERR_IO] = "i/o error",
        [NGPT_ERR_BAD_FORMAT] = "bad checkpoint format",
        [NGPT_ERR_CHECKSUM] = "checksum mismatch",
        [NGPT_ERR_VERSION] = "unsupported checkpoint version",
        [NGPT_ERR_CONFIG_MISMATCH] = "config mismatch",
        [NGPT_ERR_NUMERIC] = "non-finite value",
        [NGPT_ERR_STOPPED] = "stopped",
        [NGPT_ERR_INTERNAL] = "internal error",
        [NGPT_ERR_THREAD] = "thread start failed",
    };
    if ((int)status < 0 || status >= NGPT_STATUS_COUNT) return "unknown status";
    return names[status];
}

const char *ngpt_last_error(void)
{
    NGPT_FPMODE_SCOPE;
    return last_error;
}

ngpt_status ngpt_prefixed(const char *fn, ngpt_status status)
{
    if (status == NGPT_OK) return status;
    /* shift the sentence right, cutting its end if it no longer fits */
    const size_t cap = sizeof last_error, pre = strlen(fn) + 2;
    if (pre >= cap) return status;
    size_t len = strlen(last_error);
    if (len > cap - 1 - pre) len = cap - 1 - pre;
    memmove(last_error + pre, last_error, len);
    last_error[pre + len] = '\0';
    memcpy(last_error, fn, pre - 2);
    memcpy(last_error + pre - 2, ": ", 2);
    return status;
}

ngpt_status ngpt_fail(ngpt_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void ngpt_abort_callback_set(ngpt_abort_fn fn, void *user)
{
    NGPT_FPMODE_SCOPE;
    abort_fn = fn;
    abort_user = user;
}

ngpt_status ngpt_internal_fail(const char *file, int line, const char *what)
{
    if (abort_fn) abort_fn(file, line, what, abort_user);
    return ngpt_fail(NGPT_ERR_INTERNAL, "internal invariant failed at %s:%d: %s", file, line, what);
}

ngpt_status ngpt_reserved_check(const char *what, const void *reserved, size_t bytes)
{
    const unsigned char *p = reserved;
    for (size_t i = 0; i < bytes; i++)
        if (p[i])
            return ngpt_fail(NGPT_ERR_BAD_ARG, "%s.reserved byte %zu is %u, not zero: start "
                             "the struct from its _default() function or from zero (a field "
                             "of a newer ngpt.h that this library, %d.%d.%d, does not have?)",
                             what, i, p[i], NGPT_VERSION_MAJOR, NGPT_VERSION_MINOR,
                             NGPT_VERSION_PATCH);
    return NGPT_OK;
}
