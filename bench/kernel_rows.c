/* kernel_rows.c — ngpt bench's kernel table: every (kernel, shape) pair
 * of the kernel list (bench/kernel_bench.h) timed like every other figure.
 * With t threads, t copies of the call run at once, each on its own inputs:
 * the rate is their sum, set against the t-thread FMA peak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngpt_bench.h"
#include "kernel_bench.h"

typedef struct kjob {
    kbench_call *call;
    long calls;                 /* per timed call of run_copies */
} kjob;

typedef struct kcopies {
    int threads;
    kjob *jobs;                 /* one per thread */
} kcopies;

static void *run_job(void *arg)
{
    kjob *j = arg;
    for (long i = 0; i < j->calls; i++) kbench_run(j->call);
    return NULL;
}

static ngpt_status run_copies(void *arg)
{
    kcopies *k = arg;
    return bench_parallel(k->threads, run_job, k->jobs, sizeof k->jobs[0]);
}

/* Whether `name` is one of the comma-separated names of `list`. */
static bool listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0)) return true;
    }
    return false;
}

static bool selected(const bench_opts *o, int i)
{
    return !strcmp(o->kernels, "all") || listed(o->kernels, kbench_kernel(i));
}

bool bench_kernels_valid(const bench_opts *o)
{
    if (!strcmp(o->kernels, "all") || !strcmp(o->kernels, "none")) return true;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", o->kernels);
    for (char *name = strtok(buf, ","); name; name = strtok(NULL, ",")) {
        bool known = false;
        for (int i = 0; i < kbench_count() && !known; i++) known = !strcmp(name, kbench_kernel(i));
        if (!known) {
            char names[1024] = "";
            for (int i = 0; i < kbench_count(); i++)
                if (!listed(names, kbench_kernel(i)))
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                             names[0] ? "," : "", kbench_kernel(i));
            bench_error(BENCH_USAGE, "--kernels: no kernel \"%s\" in the list (%s)", name, names);
            return false;
        }
    }
    return true;
}

int bench_kernels_count(const bench_opts *o)
{
    int n = 0;
    for (int i = 0; i < kbench_count(); i++) n += selected(o, i);
    return n * o->n_threads;
}

/* Pair i at t threads: one row. */
static int bench_pair(const bench_opts *o, bench_report *r, int i, int32_t t, bool *differs)
{
    kcopies k = {t, calloc((size_t)t, sizeof(kjob))};
    if (!k.jobs) return bench_error(BENCH_FAILED, "out of memory");
    kbench_info info = {0};
    int rc = BENCH_OK;
    for (int c = 0; c < t && !rc; c++) {     /* t copies, one checked against the reference */
        kbench_info copy;
        k.jobs[c].calls = 1;
        if (!(k.jobs[c].call = kbench_open(i, c == 0, c == 0 ? &info : &copy)))
            rc = bench_error(BENCH_FAILED, "out of memory");
    }
    bench_kernel *row = &r->kern[r->n_kern];
    if (!rc && r->n_kern == BENCH_MAX_ROWS) rc = bench_error(BENCH_FAILED, "too many figures");
    if (!rc) {
        snprintf(row->name, sizeof row->name, "%s", info.kernel);
        snprintf(row->shape, sizeof row->shape, "%s", info.shape);
        row->threads = t;
        row->exact = info.exact;
        if (!info.exact) *differs = true;
        /* a timed call of run_copies lasts about a run: calls per copy */
        int reps;
        ngpt_status st = bench_calibrate(o, run_copies, &k, &reps);
        for (int c = 0; c < t; c++) k.jobs[c].calls = reps;
        char label[160];
        snprintf(label, sizeof label, "kernel %s %s, %d thread%s", info.kernel, info.shape, (int)t,
                 t > 1 ? "s" : "");
        if (!st) st = bench_time(o, label, run_copies, &k, 1, &row->sec);
        if (st) {
            rc = bench_failed(label, st);
        } else {
            row->flops = info.flops;
            row->bytes = info.bytes;
            row->calls = reps;
            r->n_kern++;
        }
    }
    for (int c = 0; c < t; c++) kbench_close(k.jobs[c].call);
    free(k.jobs);
    return rc;
}

int bench_kernels(const bench_opts *o, bench_report *r)
{
    bool differs = false;
    const int n = kbench_count();
    for (int t = 0; t < o->n_threads; t++)
        for (int i = 0; i < n; i++) {
            if (!selected(o, i)) continue;
            int rc = bench_pair(o, r, i, o->threads[t], &differs);
            if (rc) return rc;
        }
    r->kernel_differs = differs;
    return BENCH_OK;
}
