/* ngpt_bench.h — what `ngpt bench` measures and reports, for the command
 * that drives it (cli/cmd_bench.c: the options, the output files). run.c
 * runs the sections; measure.c times a call (warm-up, median of runs,
 * min–max) and draws the progress line; workloads.c measures prefill,
 * decode and training through the public API; peak_rows.c,
 * bandwidth_rows.c and kernel_rows.c turn the bench layer's probes and
 * kernel calls (bench.h,
 * kernel_bench.h) into rows; report.c prints the markdown tables and the
 * JSON; svg.c draws the chart. The options and the figures they fill:
 * figures.h. Nothing here knows the tool: the sections print their own
 * "ngpt bench: ..." errors and return exit codes. */
#ifndef NGPT_BENCH_NGPT_BENCH_H
#define NGPT_BENCH_NGPT_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "figures.h"    /* what is asked (bench_opts) and what is measured (bench_report) */
#include "ngpt.h"

/* What a section returns: the exit codes of the tool (0, 1 failed, 2 bad usage). */
enum { BENCH_OK = 0, BENCH_FAILED = 1, BENCH_USAGE = 2 };

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

/* An estimate of the weight bytes one decode step of ctx (whose config is
 * cfg) reads at batch 1 (bench/workloads.c). Activations, the KV cache and
 * what a cache holds over from the last step are not counted. */
double bench_weight_bytes(const ngpt_context *ctx, const ngpt_config *cfg);

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

/* Measures the read bandwidth of one core into r->read_bw and of two at
 * once into r->read_bw2 (nothing when o->bandwidth_bytes is 0). */
ngpt_status bench_bandwidth(const bench_opts *o, bench_report *r);
int bench_bandwidth_count(const bench_opts *o);
/* The probe's default array: 4x the last-level cache, at least 512 MiB. */
size_t bench_bandwidth_default_bytes(void);
/* The probe's median in GB/s at a thread count (2 and more: the two-thread
 * probe); 0 if it did not run. */
double bench_read_gbps(const bench_report *r, int32_t threads);

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

/* " q8", " q4", " q4h" (lm_head_q4), or "" for f32: a figure's label. */
static inline const char *bench_weights_suffix(const char *weights)
{
    return !strcmp(weights, "q8") ? " q8" : !strcmp(weights, "q4") ? " q4"
                                         : !strcmp(weights, "q4h") ? " q4h" : "";
}

#endif
