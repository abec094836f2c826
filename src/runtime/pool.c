/* pool.c — the thread pool (pool.h). A job is one atomic word holding its
 * task count and the next task; every thread (the caller included) claims
 * tasks from it until none is left, then the caller waits for the claimed
 * ones to finish. A worker that wakes late finds nothing to claim and is not
 * waited for, so a descheduled or sleeping worker (the machine is shared)
 * never holds the caller up unless it is running a task. Idle workers poll
 * the word briefly (a job often follows the last one within microseconds)
 * and then sleep on a condition variable.
 *
 * While the workers poll, a post and the end of a job take no lock (a
 * decode step posts about 21 jobs of a few microseconds each): the lock and
 * the condition variables are used only when someone sleeps. No wake-up is
 * lost: a sleeper first counts itself (sleepers, caller_waits) and then
 * checks for work (the job word, the done count), while the poster first
 * publishes the work and then checks for sleepers, all four sequentially
 * consistent; so either the sleeper sees the work and does not sleep, or
 * the poster sees the sleeper and signals it under the lock, which the
 * sleeper holds from its count to its wait. Each side's first step is a
 * read-modify-write (an exchange or an add), not a plain store: C11 needs
 * no more than a seq_cst store, but qemu-user runs an AArch64 store-release
 * and load-acquire on an x86 host as a plain store and load, which the
 * host may reorder, and CI's ARM suite hung on that lost wake-up once.
 * An atomic read-modify-write is a full barrier there too. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "base/error.h"
#include "base/fpmode.h"
#include "runtime/pool.h"

/* Polls of the job word (worker) or done count (caller) before sleeping:
 * a few tens of microseconds, short next to any job worth splitting. */
enum { SPIN_POLLS = 4096 };

/* Tasks one job word holds (16 bits each for the count and the next). */
enum { MAX_TASKS = 0xffff };

/* The kernels keep a few KiB on the stack, but some C libraries default to
 * 128 KiB thread stacks and the sanitizers need much more: at least 2 MiB
 * (address space only; pages are touched as they are used). */
enum { MIN_STACK = 2 << 20 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
    __asm__ __volatile__("yield");
#endif
}

/* A new thread inherits its creator's mode (the caller's, at context init),
 * so each worker sets the library's once, for good (src/base/fpmode.h). */
void ngpt_pool_thread_fpmode(void) { ngpt_fpmode_set_library(); }

static bool has_task(unsigned job) { return (job & 0xffff) < job >> 16; }

/* Claims and runs tasks of the live job until none is left to claim. */
static void run_tasks(ngpt_pool *p, int thread)
{
    unsigned job = atomic_load_explicit(&p->job, memory_order_acquire);
    while (has_task(job)) {
        if (!atomic_compare_exchange_weak_explicit(&p->job, &job, job + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;       /* job now holds the current word: try again */
        p->fn(p->arg, p->base + (int)(job & 0xffff), thread);
        const int n = (int)(job >> 16);
        if (atomic_fetch_add_explicit(&p->done, 1, memory_order_seq_cst) + 1 == n &&
            thread != 0 && atomic_load_explicit(&p->caller_waits, memory_order_seq_cst)) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->finished);
            pthread_mutex_unlock(&p->lock);
        }
        job = atomic_load_explicit(&p->job, memory_order_acquire);
    }
}

static bool worker_wanted(ngpt_pool *p)
{
    return has_task(atomic_load_explicit(&p->job, memory_order_seq_cst)) ||
           atomic_load_explicit(&p->stop, memory_order_seq_cst);
}

static void *worker_main(void *arg)
{
    const ngpt_pool_worker *w = arg;
    ngpt_pool *p = w->pool;
    ngpt_pool_thread_fpmode();
    for (;;) {
        for (int spins = 0; !worker_wanted(p);) {
            if (++spins < SPIN_POLLS) {
                cpu_relax();
                continue;
            }
            /* counted before the check: a post after it sees the count */
            pthread_mutex_lock(&p->lock);
            atomic_fetch_add_explicit(&p->sleepers, 1, memory_order_seq_cst);
            while (!worker_wanted(p)) pthread_cond_wait(&p->wake, &p->lock);
            atomic_fetch_sub_explicit(&p->sleepers, 1, memory_order_seq_cst);
            pthread_mutex_unlock(&p->lock);
        }
        /* stop is only set between jobs, so no task is left behind */
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) return NULL;
        run_tasks(p, w->index);
    }
}

ngpt_status ngpt_pool_start(ngpt_pool *p, ngpt_pool_worker *workers, int threads)
{
    memset(p, 0, sizeof *p);
    p->threads = threads;
    p->workers = workers;
    p->inline_below = NGPT_POOL_INLINE_WORK;
    atomic_init(&p->job, 0u);
    atomic_init(&p->done, 0);
    atomic_init(&p->stop, false);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->caller_waits, false);
    if (threads <= 1) return NGPT_OK;
    int err = pthread_mutex_init(&p->lock, NULL);
    if (!err && (err = pthread_cond_init(&p->wake, NULL))) pthread_mutex_destroy(&p->lock);
    if (!err && (err = pthread_cond_init(&p->finished, NULL))) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
    }
    if (err) {
        p->threads = 1;
        return ngpt_fail(NGPT_ERR_THREAD, "ngpt_context_init: could not create the thread "
                         "pool's lock (%s)", strerror(err));
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
        return ngpt_fail(NGPT_ERR_THREAD, "ngpt_context_init: could not start worker thread %d "
                         "of %d (%s); ask for fewer threads", started + 2, threads,
                         strerror(err));
    }
    return NGPT_OK;
}

/* One job of n <= MAX_TASKS tasks base..base+n-1. */
static void run_job(ngpt_pool *p, ngpt_task_fn fn, void *arg, int base, int n)
{
    /* the last job is over: every task was claimed and is done */
    p->fn = fn;
    p->arg = arg;
    p->base = base;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    atomic_exchange_explicit(&p->job, (unsigned)n << 16, memory_order_seq_cst);
    if (atomic_load_explicit(&p->sleepers, memory_order_seq_cst)) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }

    run_tasks(p, 0);
    for (int spins = 0; atomic_load_explicit(&p->done, memory_order_acquire) != n;) {
        if (++spins < SPIN_POLLS) {
            cpu_relax();
            continue;
        }
        pthread_mutex_lock(&p->lock);
        atomic_exchange_explicit(&p->caller_waits, true, memory_order_seq_cst);
        while (atomic_load_explicit(&p->done, memory_order_seq_cst) != n)
            pthread_cond_wait(&p->finished, &p->lock);
        atomic_store_explicit(&p->caller_waits, false, memory_order_relaxed);
        pthread_mutex_unlock(&p->lock);
    }
}

void ngpt_pool_run(ngpt_pool *p, ngpt_task_fn fn, void *arg, int n_tasks)
{
    if (p->threads <= 1 || n_tasks <= 1) {
        for (int t = 0; t < n_tasks; t++) fn(arg, t, 0);
        return;
    }
    for (int base = 0; base < n_tasks; base += MAX_TASKS)
        run_job(p, fn, arg, base, n_tasks - base < MAX_TASKS ? n_tasks - base : MAX_TASKS);
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
    pthread_cond_destroy(&p->finished);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    p->threads = 1;
}
