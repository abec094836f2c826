/* ngpt_bench.h — what `ngpt bench` measures and reports, for the command
 * that drives it (cli/cmd_bench.c: the options, the output files). run.c
 * runs the sections; measure.c times a call (warm-up, median of runs,
 * min–max) and draws the progress line; workloads.c measures prefill,
 * decode and training through the public API; peak_rows.c,
 * bandwidth_rows.c and kernel_rows.c turn the bench layer's probes and
 * kernel calls (bench.h,
 * kernel_bench.h) into rows; report.c prints the markdown tables and the
 * JSON; svg.c draws the chart. Nothing here knows the tool: the sections
 * print their own "ngpt bench: ..." errors and return exit codes. */
#ifndef NGPT_BENCH_NGPT_BENCH_H
#define NGPT_BENCH_NGPT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ngpt.h"

enum { BENCH_MAX_THREADS = 8, BENCH_MAX_RUNS = 64, BENCH_MAX_ROWS = 256 };

/* What a section returns: the exit codes of the tool (0, 1 failed, 2 bad usage). */
enum { BENCH_OK = 0, BENCH_FAILED = 1, BENCH_USAGE = 2 };

/* What one `ngpt bench` invocation measures and how. */
typedef struct bench_opts {
    ngpt_config cfg;
    const char *preset;             /* "default", "gpt2-small", "gpt2-124m", "smollm2-135m" */
    int32_t threads[BENCH_MAX_THREADS];
    int n_threads;
    int runs;                       /* timed runs per figure (after warm-up) */
    int warmup;                     /* untimed runs before them */
    double budget_s;                /* runs are cut (to 3) to fit a figure in this */
    double min_run_s;               /* a kernel run repeats its call at least this long */
    bool quick;
    bool big_train;                 /* measure training at B=32 T=256 too */
    int32_t decode_tokens;          /* new tokens per decode figure (256) */
    int32_t prompt_tokens;          /* the prefill's prompt (0: T/2) */
    const char *kernels;            /* "all", "none" or kernel names "gemm,softmax" */
    ngpt_weights weights[3];        /* the weights prefill and decode run with, in order */
    int n_weights;
    const char *model;              /* --model: its config and weights, or NULL */
    const ngpt_model *opened;       /* --model opened once (ngpt_model_open), or NULL */
    const char *tokenizer;          /* --tokenizer: V is its tokens, or NULL */
    const char *text;               /* the text its bytes per token are measured on */
    double bytes_per_token;         /* on that text (0: no tokenizer; bytes are tokens) */
    size_t bandwidth_bytes;         /* the read-bandwidth probe's array (0: no probe) */
    char command[512];              /* the command line, for the report */
} bench_opts;

/* Seconds per call over the timed runs. */
typedef struct bench_stat {
    double median, min, max;
    int runs;
} bench_stat;

/* One workload figure: `tokens` tokens processed per timed call. */
typedef struct bench_workload {
    char test[32];                  /* "prefill", "decode", "train" */
    char weights[4];                /* "f32", "q8", "q4" */
    int32_t batch, seq;             /* prompt length, new tokens, or window */
    int32_t threads;
    double tokens;                  /* per timed call */
    int32_t api_calls;              /* library calls in one timed call (decode: steps) */
    double weight_bytes;            /* decode B=1: an estimate of the weight bytes read
                                       per token (0: not estimated) */
    bench_stat sec;
} bench_workload;

/* One kernel figure: flops and bytes moved per timed call. */
typedef struct bench_kernel {
    char name[32];
    char shape[96];
    int32_t threads;
    double flops, bytes;            /* per kernel call; flops 0: not a product */
    double calls;                   /* kernel calls per thread in a timed call */
    bool exact;                     /* false: differs from the reference, no rate */
    bench_stat sec;
} bench_kernel;

/* The FMA probe's peak for a thread count: in the CPU's widest FMA, and
 * (kernels) in the narrower one the build's kernels use, when they do. */
typedef struct bench_peak {
    int32_t threads;
    bool kernels;                   /* false: the CPU's widest FMA, the peak */
    double flops;                   /* per call */
    bench_stat sec;
} bench_peak;

/* The read-bandwidth probe's figure: `bytes` read per timed call (0: not
 * measured). */
typedef struct bench_read_bw {
    size_t bytes;
    bench_stat sec;
} bench_read_bw;

typedef struct bench_arena {
    char mode[8];                   /* "infer", "train" */
    char weights[4];                /* "f32", "q8", "q4" */
    int32_t batch, seq, threads;
    size_t bytes;
} bench_arena;

typedef struct bench_report {
    bench_workload work[BENCH_MAX_ROWS];
    int n_work;
    bench_kernel kern[BENCH_MAX_ROWS];
    int n_kern;
    bench_peak peak[2 * BENCH_MAX_THREADS];
    int n_peak;
    bench_read_bw read_bw;          /* one thread */
    bench_arena arena[BENCH_MAX_ROWS];
    int n_arena;
    bool kernel_differs;            /* a kernel gave other bits than the reference */
    size_t peak_rss;                /* bytes, 0 if unknown */
    char cpu[128];
    char date[32];                  /* UTC, ISO 8601 */
    double wall_s;                  /* the whole run */
} bench_report;

/* ---- timing (measure.c) ---- */

/* A measured call: returns 0 (NGPT_OK) or the status that stopped it. */
typedef ngpt_status (*bench_fn)(void *arg);

/* Calls fn(arg) o->warmup times, then o->runs times, timing each call
 * (fewer runs when a figure would exceed o->budget_s). A timed run is `reps`
 * calls and *out is per call; reps 0 sets it from the warm-up so that a run
 * lasts at least o->min_run_s. `label` names the figure on the progress line. */
ngpt_status bench_time(const bench_opts *o, const char *label, bench_fn fn, void *arg, int reps,
                       bench_stat *out);
/* Calls per run so that a run lasts at least o->min_run_s (one untimed
 * call measures it); at least 1. */
int bench_calibrate(const bench_opts *o, bench_fn fn, void *arg, int *reps);

/* The bench's own failures, outside the library's statuses. */
#define BENCH_ERR_MEMORY ((ngpt_status)(NGPT_STATUS_COUNT + 1))
#define BENCH_ERR_THREAD ((ngpt_status)(NGPT_STATUS_COUNT + 2))

/* Runs work(args + i*stride) for i < n on n threads at once, the calling
 * thread being one of them (n = 1 starts no thread). BENCH_ERR_THREAD if a
 * thread could not be started (the others still ran). */
ngpt_status bench_parallel(int n, void *(*work)(void *), void *args, size_t stride);

/* Ends the progress line and prints "ngpt bench: <what>: <why>" (the
 * library's sentence, or the bench's own failure); returns BENCH_FAILED. */
int bench_failed(const char *what, ngpt_status st);
/* Prints "ngpt bench: <message>" to stderr; returns code. */
int bench_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Progress on stderr: a line rewritten in place on a terminal, one line per
 * figure otherwise. bench_progress_begin sets the number of figures. */
void bench_progress_begin(int figures);
void bench_progress(const char *label, int run, int runs);
void bench_progress_end(void);

/* The process's peak resident set in bytes (0 if unknown). */
size_t bench_peak_rss(void);
/* The CPU's model name ("unknown" when the system does not say). */
void bench_cpu_name(char *buf, size_t size);

/* ---- the run (run.c) ---- */

/* Measures every section o asks for into r (the caller checked o's
 * options; the library has accepted this CPU): returns an exit code, with
 * the failure printed. r is sorted for reading. */
int bench_run(const bench_opts *o, bench_report *r);

/* ---- workloads (workloads.c) ---- */

/* Prefill (T/2 prompt) and decode (batch 1 and 4) with each of o->weights,
 * training (float32; B=8 T=128 and, with o->big_train, B=32 T=256) for
 * every thread count, and the arena of every context used. Returns an exit code
 * (BENCH_OK, ...). */
int bench_workloads(const bench_opts *o, bench_report *r);
/* Figures bench_workloads will time (for the progress count). */
int bench_workloads_count(const bench_opts *o);

/* ---- the FMA peak (peak_rows.c) ---- */

/* Measures the peak for every thread count into r->peak. */
ngpt_status bench_peaks(const bench_opts *o, bench_report *r);
/* Figures bench_peaks will time. */
int bench_peak_count(const bench_opts *o);

/* ---- the read bandwidth (bandwidth_rows.c) ---- */

/* Measures one core's read bandwidth into r->read_bw (nothing when
 * o->bandwidth_bytes is 0). */
ngpt_status bench_bandwidth(const bench_opts *o, bench_report *r);
int bench_bandwidth_count(const bench_opts *o);
/* The probe's default array: 4x the last-level cache, at least 512 MiB. */
size_t bench_bandwidth_default_bytes(void);
/* The probe's median in GB/s; 0 if it did not run. */
double bench_read_gbps(const bench_report *r);

/* ---- kernels (kernel_rows.c) ---- */

/* Every kernel of the list at the default model's shapes, for every thread
 * count (t threads: t copies at once, each on its own inputs). Returns an exit code
 * (BENCH_OK, ...). A kernel that differs from the reference gets a row saying so
 * and sets r->kernel_differs. */
int bench_kernels(const bench_opts *o, bench_report *r);
int bench_kernels_count(const bench_opts *o);
/* Whether o->kernels names only kernels of the list (else prints which
 * does not, with the list, and returns false). */
bool bench_kernels_valid(const bench_opts *o);

/* ---- output (report.c, svg.c) ---- */

/* Orders the rows for reading: by test and shape, thread counts together. */
void bench_report_sort(bench_report *r);
void bench_print_markdown(FILE *f, const bench_opts *o, const bench_report *r);
void bench_print_json(FILE *f, const bench_opts *o, const bench_report *r);
void bench_print_svg(FILE *f, const bench_opts *o, const bench_report *r);

/* Kernel calls in a timed call: calls per thread x threads. */
double bench_kernel_work(const bench_kernel *k);

/* "B=1 prompt=128", "B=4 new=256", "B=32 T=256". */
void bench_workload_shape(const bench_workload *w, char *buf, size_t size);
/* Tokens per second of a workload: median, and min–max from the slowest
 * and fastest run. */
double bench_tok_s(const bench_workload *w, double sec);
/* The peak for a thread count (GFLOP/s): the best run of the probe in the
 * CPU's widest FMA, the closest estimate of what the hardware allows
 * (others' load only slows it); 0 if none was measured. */
double bench_peak_gflops(const bench_report *r, int32_t threads);

/* " q8", " q4", or "" for f32: a figure's label. */
static inline const char *bench_weights_suffix(const char *weights)
{
    return !strcmp(weights, "q8") ? " q8" : !strcmp(weights, "q4") ? " q4" : "";
}

#endif
