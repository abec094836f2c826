/* measure.c — how `ngpt bench` times a figure: warm-up calls, then the
 * median of several timed runs with their min and max (the machine may be
 * shared: a median resists the odd slow run), the progress line, and the
 * bench's error lines. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "ngpt_bench.h"

ngpt_status bench_time(const bench_opts *o, const char *label, bench_fn fn, void *arg, int reps,
                       bench_stat *out)
{
    double t[BENCH_MAX_RUNS];
    int runs = o->runs < BENCH_MAX_RUNS ? o->runs : BENCH_MAX_RUNS;
    const bool auto_reps = reps < 1;
    if (auto_reps) reps = 1;
    for (int w = 0; w < o->warmup; w++) {
        bench_progress(label, -1, runs);
        double t0 = bench_now();
        for (int i = 0; i < reps; i++) {
            ngpt_status st = fn(arg);
            if (st) return st;
        }
        const double call = (bench_now() - t0) / reps;
        /* a fast call repeats so that a run is long enough to time */
        if (auto_reps && call > 0 && call * reps < o->min_run_s) reps = (int)(o->min_run_s / call) + 1;
        /* a slow figure gets fewer runs (never fewer than 3): its budget */
        int fit = call > 0 ? (int)(o->budget_s / (call * reps)) : runs;
        if (fit < runs) runs = fit < 3 ? (o->runs < 3 ? o->runs : 3) : fit;
    }
    for (int r = 0; r < runs; r++) {
        bench_progress(label, r, runs);
        double t0 = bench_now();
        for (int i = 0; i < reps; i++) {
            ngpt_status st = fn(arg);
            if (st) return st;
        }
        t[r] = (bench_now() - t0) / reps;
    }
    bench_stats(t, runs, &out->median, &out->min, &out->max);
    out->runs = runs;
    return NGPT_OK;
}

int bench_calibrate(const bench_opts *o, bench_fn fn, void *arg, int *reps)
{
    double t0 = bench_now();
    ngpt_status st = fn(arg);
    double dt = bench_now() - t0;
    if (st) return st;
    double n = dt > 0 ? o->min_run_s / dt : 1e6;
    *reps = n < 1 ? 1 : n > 1e6 ? 1000000 : (int)n + 1;
    return NGPT_OK;
}

ngpt_status bench_parallel(int n, void *(*work)(void *), void *args, size_t stride)
{
    pthread_t *tid = n > 1 ? malloc((size_t)(n - 1) * sizeof *tid) : NULL;
    if (n > 1 && !tid) return BENCH_ERR_MEMORY;
    int started = 0;
    for (; started < n - 1; started++)
        if (pthread_create(&tid[started], NULL, work, (char *)args + (size_t)(started + 1) * stride))
            break;
    work(args);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    free(tid);
    return started == n - 1 ? NGPT_OK : BENCH_ERR_THREAD;
}

int bench_error(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("ngpt bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

/* The library's last message without its "ngpt_<function>: " prefix: the
 * bench's user did not call that function (the rule of the tool's messages,
 * cli/args.c's cli_library_error). */
static const char *library_sentence(void)
{
    const char *m = ngpt_last_error();
    if (strncmp(m, "ngpt_", 5) != 0) return m;
    size_t n = 5 + strspn(m + 5, "abcdefghijklmnopqrstuvwxyz0123456789_");
    return m[n] == ':' && m[n + 1] == ' ' ? m + n + 2 : m;
}

int bench_failed(const char *what, ngpt_status st)
{
    bench_progress_end();
    const char *why = st == BENCH_ERR_MEMORY ? "out of memory"
                      : st == BENCH_ERR_THREAD ? "a thread could not be started"
                      : library_sentence();
    return bench_error(BENCH_FAILED, "%s: %s", what, why);
}
/* ---- progress ---- */

static struct {
    int figures, done;
    double t0;
    bool tty;
    char last[96];
    int width;                  /* characters of the line on screen */
} progress;

void bench_progress_begin(int figures)
{
    progress.figures = figures;
    progress.done = 0;
    progress.t0 = bench_now();
    progress.tty = isatty(STDERR_FILENO);
    progress.last[0] = 0;
    progress.width = 0;
}

void bench_progress(const char *label, int run, int runs)
{
    bool new_figure = strcmp(label, progress.last) != 0;
    if (new_figure) {
        snprintf(progress.last, sizeof progress.last, "%s", label);
        progress.done++;
    }
    double el = bench_now() - progress.t0;
    if (progress.tty) {
        char line[160];
        int n = snprintf(line, sizeof line, "ngpt bench: [%d/%d] %s: %s %d/%d  (%.0f s)",
                         progress.done, progress.figures, label, run < 0 ? "warm-up" : "run",
                         run < 0 ? 1 : run + 1, runs, el);
        if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
        fprintf(stderr, "\r%s%*s", line, progress.width > n ? progress.width - n : 0, "");
        progress.width = n;
        fflush(stderr);
    } else if (new_figure) {
        fprintf(stderr, "ngpt bench: [%d/%d] %s (%.0f s)\n", progress.done, progress.figures, label, el);
    }
}

void bench_progress_end(void)
{
    if (progress.tty && progress.width) fprintf(stderr, "\r%*s\r", progress.width, "");
    progress.width = 0;
}

/* ---- the machine ---- */

size_t bench_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#if defined(__APPLE__)
    return (size_t)ru.ru_maxrss;            /* bytes on macOS */
#else
    return (size_t)ru.ru_maxrss * 1024;     /* KiB on Linux and the BSDs */
#endif
}

void bench_cpu_name(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[256];
    /* x86: "model name"; ARM: "Model" (the board) or "CPU part" only */
    const char *keys[] = {"model name", "Model", "Hardware"};
    char found[3][128] = {{0}};
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        for (int k = 0; k < 3; k++) {
            size_t n = strlen(keys[k]);
            if (found[k][0] || strncmp(line, keys[k], n) != 0 || (line[n] != ' ' && line[n] != '\t'))
                continue;
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t') v++;
            v[strcspn(v, "\n")] = 0;
            snprintf(found[k], sizeof found[k], "%s", v);
        }
    }
    fclose(f);
    for (int k = 0; k < 3; k++)
        if (found[k][0]) {
            snprintf(buf, size, "%s", found[k]);
            break;
        }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, ", %ld CPUs", cpus);
    }
}
