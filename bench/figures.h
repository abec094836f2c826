/* figures.h — what one `ngpt bench` is asked (bench_opts, which
 * cli/cmd_bench.c fills from the options) and what it measures
 * (bench_report: a row per figure, by kind), for the sections that fill it
 * and the outputs that print it (ngpt_bench.h). */
#ifndef NGPT_BENCH_FIGURES_H
#define NGPT_BENCH_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ngpt.h"

enum { BENCH_MAX_THREADS = 8, BENCH_MAX_RUNS = 64, BENCH_MAX_ROWS = 256 };

/* What one `ngpt bench` invocation measures and how. */
typedef struct bench_opts {
    ngpt_config cfg;
    const char *preset;             /* a name of cli/cmd_bench.c's PRESETS, e.g. "gpt2-124m" */
    int32_t threads[BENCH_MAX_THREADS];
    int n_threads;
    int runs;                       /* timed runs per figure (after warm-up) */
    int warmup;                     /* untimed runs before them */
    double budget_s;                /* runs are cut (to 3) to fit a figure in this */
    double min_run_s;               /* a kernel run repeats its call at least this long */
    bool quick;
    bool no_train;                  /* --no-train: no training and no LoRA figures */
    bool big_train;                 /* measure training at B=32 T=256 too */
    int32_t decode_tokens;          /* new tokens per decode figure (256) */
    int32_t prompt_tokens;          /* the prefill's prompt (0: T/2) */
    int32_t decode_at;              /* decode after a prompt this long, float32 and 8-bit
                                       KV caches (0: not measured) */
    const char *kernels;            /* "all", "none" or kernel names "gemm,softmax" */
    ngpt_weights weights[3];        /* the weights prefill and decode run with, in order */
    int n_weights;
    bool lm_head_q4;                /* --lm-head q4: the q4 runs' lm_head 4-bit too ("q4h") */
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
    char test[32];                  /* "prefill", "decode", "train", "train lora", "decode lora",
                                       "decode at N (kv f32|q8)", "generate", "spec lookup",
                                       "spec draft" */
    char weights[4];                /* "f32", "q8", "q4" */
    int32_t batch, seq;             /* prompt length, new tokens, or window */
    int32_t threads;
    double tokens;                  /* per timed call */
    int32_t api_calls;              /* library calls in one timed call (decode: steps) */
    double weight_bytes;            /* decode B=1: an estimate of the weight bytes read
                                       per token (0: not estimated) */
    int32_t proposed, accepted;     /* speculative: the draft's proposals checked, kept */
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
    char mode[8];                   /* "infer", "train", "lora" (an adapter's training) */
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
    bench_read_bw read_bw2;         /* two threads at once, each on half the array */
    bench_arena arena[BENCH_MAX_ROWS];
    int n_arena;
    bool kernel_differs;            /* a kernel gave other bits than the reference */
    size_t peak_rss;                /* bytes, 0 if unknown */
    char cpu[128];
    char date[32];                  /* UTC, ISO 8601 */
    double wall_s;                  /* the whole run */
} bench_report;

#endif
