/* par_for.h — how the ops hand their parts to the context's thread pool
 * (ops/par_for.c): a range of items [0, n) cut into parts of whole aligned
 * pieces, as many as the work is worth (a job below pool->inline_below runs
 * whole on the calling thread), each part one task of a pool job. Which
 * thread runs a part, and how many parts there are, cannot change a bit:
 * each op computes every output in exactly one part (ops.h). */
#ifndef NGPT_OPS_PAR_FOR_H
#define NGPT_OPS_PAR_FOR_H

#include "runtime/context.h"

/* Tasks per thread: dynamic hand-out balances uneven parts and a shared
 * machine; more tasks would only add overhead. */
enum { NGPT_TASKS_PER_THREAD = 4 };

/* Calls fn(arg, begin, end, thread) on ranges covering [0, n) once, across
 * the pool; every range but the last is a multiple of align. unit_work is
 * the work of one item (about one unit per multiply-add). */
typedef void (*ngpt_range_fn)(void *arg, size_t begin, size_t end, int thread);
void ngpt_par_for(ngpt_context *ctx, size_t n, size_t align, double unit_work, ngpt_range_fn fn,
                  void *arg);

/* As ngpt_par_for, in at most max_tasks parts (a product whose every part
 * packs an operand again takes fewer, larger ones). */
void ngpt_par_for_at_most(ngpt_context *ctx, size_t n, size_t align, double unit_work,
                          size_t max_tasks, ngpt_range_fn fn, void *arg);

#endif
