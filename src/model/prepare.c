/* prepare.c — ngpt_context_prepare: the one-time work of a first pass,
 * done on request (touching the arena's pages, packing the weights in
 * place). */
#include <stdint.h>

#include "base/checked.h"
#include "base/fpmode.h"
#include "model/kv.h"
#include "runtime/pool.h"
#include "runtime/weights.h"

enum { PAGE = 4096 };

ngpt_status ngpt_context_prepare(ngpt_context *ctx)
{
    NGPT_FPMODE_SCOPE;
    if (!ctx) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_context_prepare: NULL context");
    /* One byte per page, read and written back as it is: the system maps
     * the page and no value changes. The pool's own pages are skipped (its
     * sleeping threads wait on them; init touched them when it started the
     * threads). */
    volatile unsigned char *base = (volatile unsigned char *)ctx;
    const uintptr_t pool_lo = (uintptr_t)ctx->plan.threads.pool;
    uintptr_t pool_hi = pool_lo + sizeof(ngpt_pool);
    if (ctx->shape.threads > 1) {   /* the workers follow the pool */
        const uintptr_t end = (uintptr_t)(ctx->plan.threads.workers + ctx->shape.threads - 1);
        if (end > pool_hi) pool_hi = end;
    }
    for (size_t at = 0; at < ctx->plan.bytes - NGPT_ALIGN; at += PAGE) {
        const uintptr_t page = (uintptr_t)(base + at);
        if (page + PAGE > pool_lo && page < pool_hi) continue;
        base[at] = base[at];
    }
    ngpt_weights_settle(ctx);
    return NGPT_OK;
}
