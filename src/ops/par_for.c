/* par_for.c — the ops' thread dispatch (par_for.h): a range cut into parts,
 * each part one task of a job on the context's pool (runtime/pool.c). */
#include "ops/par_for.h"
#include "runtime/pool.h"

typedef struct range_job {
    ngpt_range_fn fn;
    void *arg;
    size_t n, chunk;
} range_job;

static void range_task(void *p, int task, int thread)
{
    const range_job *j = p;
    size_t begin = (size_t)task * j->chunk;
    size_t end = j->n - begin < j->chunk ? j->n : begin + j->chunk;
    j->fn(j->arg, begin, end, thread);
}

void ngpt_par_for_at_most(ngpt_context *ctx, size_t n, size_t align, double unit_work,
                          size_t max_tasks, ngpt_range_fn fn, void *arg)
{
    if (n == 0) return;
    ngpt_pool *pool = ctx->plan.threads.pool;
    const double work = (double)n * unit_work;
    const size_t pieces = (n + align - 1) / align;
    size_t tasks = max_tasks;
    if (pool->inline_below > 0 && work / pool->inline_below < (double)tasks)
        tasks = (size_t)(work / pool->inline_below);    /* each task worth a wake-up */
    if (tasks > pieces) tasks = pieces;
    if (pool->threads <= 1 || tasks <= 1) {
        fn(arg, 0, n, 0);
        return;
    }
    range_job j = {fn, arg, n, (pieces + tasks - 1) / tasks * align};
    ngpt_pool_run(pool, range_task, &j, (int)((n + j.chunk - 1) / j.chunk));
}

void ngpt_par_for(ngpt_context *ctx, size_t n, size_t align, double unit_work, ngpt_range_fn fn,
                  void *arg)
{
    ngpt_par_for_at_most(ctx, n, align, unit_work,
                         (size_t)ctx->plan.threads.pool->threads * NGPT_TASKS_PER_THREAD, fn, arg);
}
