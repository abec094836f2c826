/* pool.c — the thread pool (pool.h). A job is published by bumping a
 * generation counter; workers poll it briefly (a job often follows the last
 * one within microseconds) and then sleep on a condition variable. Tasks are
 * handed out by an atomic counter, so a slow thread (the machine is shared)
 * takes fewer of them; the caller works too and then waits until every
 * worker has left the job, so the next job cannot race with this one. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "internal.h"
#include "pool.h"

/* Polls of the generation (worker) or busy count (caller) before sleeping:
 * a few tens of microseconds, short next to any job worth splitting. */
enum { SPIN_POLLS = 4096 };

/* Our kernels keep up to ~160 KiB of packing buffers on the stack; some C
 * libraries default to 128 KiB thread stacks, and sanitizers need more. */
enum { MIN_STACK = 2 << 20 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
    __asm__ __volatile__("yield");
#endif
}

void ngpt_pool_thread_fpmode(void) {}

/* Takes tasks of the current job until none is left. */
static void run_tasks(ngpt_pool *p, int thread)
{
    const ngpt_task_fn fn = p->fn;
    void *const arg = p->arg;
    const int n = p->n_tasks;
    for (int t; (t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < n;)
        fn(arg, t, thread);
}

static bool job_posted(ngpt_pool *p, unsigned seen)
{
    return atomic_load_explicit(&p->gen, memory_order_acquire) != seen ||
           atomic_load_explicit(&p->stop, memory_order_acquire);
}

static void *worker_main(void *arg)
{
    const ngpt_pool_worker *w = arg;
    ngpt_pool *p = w->pool;
    ngpt_pool_thread_fpmode();
    unsigned seen = 0;      /* the generation when the pool started: no job ran yet */
    for (;;) {
        for (int spins = 0; !job_posted(p, seen);) {
            if (++spins < SPIN_POLLS) {
                cpu_relax();
                continue;
            }
            pthread_mutex_lock(&p->lock);
            p->sleepers++;
            while (!job_posted(p, seen)) pthread_cond_wait(&p->wake, &p->lock);
            p->sleepers--;
            pthread_mutex_unlock(&p->lock);
        }
        /* stop is only set between jobs, so no job is left behind */
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) return NULL;
        /* the job and how many workers it needs, read together under the
         * lock: a worker it does not need is not waited for, so the caller
         * may already be posting the next job */
        pthread_mutex_lock(&p->lock);
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        const bool needed = w->index <= p->helpers;
        pthread_mutex_unlock(&p->lock);
        if (!needed) continue;
        run_tasks(p, w->index);
        if (atomic_fetch_sub_explicit(&p->busy, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->lock);
            if (p->caller_waits) pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

ngpt_status ngpt_pool_start(ngpt_pool *p, ngpt_pool_worker *workers, int threads)
{
    memset(p, 0, sizeof *p);
    p->threads = threads;
    p->workers = workers;
    p->inline_below = NGPT_POOL_INLINE_WORK;
    atomic_init(&p->next, 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->gen, 0u);
    atomic_init(&p->stop, false);
    if (threads <= 1) return NGPT_OK;
    int err = pthread_mutex_init(&p->lock, NULL);
    if (!err && (err = pthread_cond_init(&p->wake, NULL))) pthread_mutex_destroy(&p->lock);
    if (!err && (err = pthread_cond_init(&p->done, NULL))) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
    }
    if (err) {
        p->threads = 1;
        return ngpt_fail(NGPT_ERR_THREAD, "init: could not create the thread pool's lock (%s)",
                         strerror(err));
    }
    pthread_attr_t attr;
    size_t stack = 0;
    pthread_attr_init(&attr);
    if (!pthread_attr_getstacksize(&attr, &stack) && stack < MIN_STACK)
        pthread_attr_setstacksize(&attr, MIN_STACK);
    /* Workers block every signal, so the application's handlers (Ctrl-C)
     * run on its own threads; they inherit the mask set around creation. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < threads - 1 && !err; i++) {
        ngpt_pool_worker *w = &workers[i];
        w->pool = p;
        w->index = i + 1;
        err = pthread_create(&w->tid, &attr, worker_main, w);
        if (!err) p->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err) {
        int started = p->started;
        ngpt_pool_stop(p);
        return ngpt_fail(NGPT_ERR_THREAD, "init: could not start worker thread %d of %d (%s); "
                         "ask for fewer threads", started + 2, threads, strerror(err));
    }
    return NGPT_OK;
}

void ngpt_pool_run(ngpt_pool *p, ngpt_task_fn fn, void *arg, int n_tasks)
{
    if (p->threads <= 1 || n_tasks <= 1) {
        for (int t = 0; t < n_tasks; t++) fn(arg, t, 0);
        return;
    }
    /* every worker left the last job (busy == 0), so none reads these now */
    p->fn = fn;
    p->arg = arg;
    p->n_tasks = n_tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    /* workers 1..helpers take part (the others go back to waiting) */
    const int helpers = n_tasks < p->threads ? n_tasks - 1 : p->threads - 1;
    atomic_store_explicit(&p->busy, helpers, memory_order_relaxed);
    pthread_mutex_lock(&p->lock);
    p->helpers = helpers;
    atomic_fetch_add_explicit(&p->gen, 1u, memory_order_release);
    if (p->sleepers) pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);

    run_tasks(p, 0);
    for (int spins = 0; atomic_load_explicit(&p->busy, memory_order_acquire) != 0;) {
        if (++spins < SPIN_POLLS) {
            cpu_relax();
            continue;
        }
        pthread_mutex_lock(&p->lock);
        p->caller_waits = true;
        while (atomic_load_explicit(&p->busy, memory_order_acquire) != 0)
            pthread_cond_wait(&p->done, &p->lock);
        p->caller_waits = false;
        pthread_mutex_unlock(&p->lock);
    }
}

void ngpt_pool_stop(ngpt_pool *p)
{
    if (p->threads <= 1) return;
    pthread_mutex_lock(&p->lock);
    atomic_store_explicit(&p->stop, true, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->started; i++) pthread_join(p->workers[i].tid, NULL);
    p->started = 0;
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    p->threads = 1;
}
