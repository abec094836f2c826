/* pool.h — the context's thread pool: threads-1 pthreads created once by
 * ngpt_context_init (the caller's thread is worker 0), asleep between jobs,
 * joined by ngpt_context_free. Its state lives in the arena (plan.c plans
 * it), so the pool allocates nothing: a thread's stack is mmap'd by the C
 * library when the thread is created, at init, and never after.
 *
 * A job is n_tasks calls fn(arg, task, thread) with task in [0, n_tasks),
 * taken in any order by any thread; thread in [0, threads) names the caller
 * (0) or a worker, so a task may use that thread's scratch. ngpt_pool_run
 * returns when every task is done. Which thread runs which task is not
 * deterministic, so tasks must write disjoint outputs and never depend on
 * each other: then the result is the same for any thread count (docs/DESIGN.md §4).
 */
#ifndef NGPT_RUNTIME_POOL_H
#define NGPT_RUNTIME_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "ngpt.h"

typedef void (*ngpt_task_fn)(void *arg, int task, int thread);

typedef struct ngpt_pool ngpt_pool;

/* One worker thread (threads-1 of them, in the arena). */
typedef struct ngpt_pool_worker {
    pthread_t tid;
    ngpt_pool *pool;
    int index;                  /* 1..threads-1 */
} ngpt_pool_worker;

struct ngpt_pool {
    int threads;                /* caller + workers */
    int started;                /* workers running (they are joined by ngpt_pool_stop) */
    ngpt_pool_worker *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake;        /* tasks to take (or stop), for sleeping workers */
    pthread_cond_t finished;    /* the last task of the job is done */
    /* Who sleeps, so that a post and a job's end touch the lock only then:
     * written under lock, read without it (pool.c says why no wake-up is
     * lost). */
    atomic_int sleepers;        /* workers waiting on wake */
    atomic_bool caller_waits;   /* the caller sleeps on finished */
    /* the current job: (n_tasks << 16) | next task. A thread claims a task
     * with a compare-and-swap of the whole word, so it can only claim a task
     * of the job that is live; fn/arg/base, written before the word, are read
     * after the claim, when the job cannot end (its claimed task is not done). */
    atomic_uint job;
    atomic_int done;            /* tasks of the job finished */
    ngpt_task_fn fn;
    void *arg;
    int base;                   /* task index of the job's first task */
    atomic_bool stop;
    /* ops/par_for.c runs a job inline on the caller when its work (about
     * one unit per multiply-add or element) is below this: waking the
     * workers costs microseconds. A tuning knob that cannot change a result;
     * tests set it to 0 so that even tiny jobs are split. */
    double inline_below;
};

#define NGPT_POOL_INLINE_WORK 32768.0

/* Starts threads-1 workers (workers: threads-1 entries in the arena). On
 * failure the started workers are stopped and joined, and the status says
 * which thread could not be created. */
ngpt_status ngpt_pool_start(ngpt_pool *pool, ngpt_pool_worker *workers, int threads);

/* Runs fn for tasks 0..n_tasks-1 across the pool; returns when all are done.
 * With one thread or one task everything runs on the caller. */
void ngpt_pool_run(ngpt_pool *pool, ngpt_task_fn fn, void *arg, int n_tasks);

/* Wakes and joins every worker. Safe on a pool that failed to start. */
void ngpt_pool_stop(ngpt_pool *pool);

/* The library's floating-point mode on a worker (src/base/fpmode.h: IEEE
 * subnormals, round to nearest): each worker calls it once when it starts,
 * before any task. Work on the caller's thread (worker 0, and every job run
 * inline) gets the same mode from NGPT_FPMODE_SCOPE at the library's entry
 * points, which saves and restores the caller's. */
void ngpt_pool_thread_fpmode(void);

#endif
