/* kernel_bench.h — the kernel section of `ngpt bench`: every kernel of the
 * list (src/kernels.inc) at its case's bench shapes (kcases/<op>.c,
 * the default model's), run from the active table. This layer prepares,
 * checks and runs the calls; the tool times them (bench/measure.c). It is
 * the one part of the tool below the public API: it measures the library's
 * internal kernels, as the tests do. */
#ifndef NGPT_KERNEL_BENCH_H
#define NGPT_KERNEL_BENCH_H

#include <stdbool.h>

/* One kernel at one shape, with its inputs ready. */
typedef struct kbench_call kbench_call;

typedef struct kbench_info {
    const char *kernel;         /* "gemm", the field of ngpt_kernels */
    char shape[96];             /* "m=256 n=768 k=256 layout=4", the case's dims */
    double flops, bytes;        /* one call's work; flops 0: not a product, not counted */
    bool exact;                 /* the active kernel gives the reference's bits here */
} kbench_info;

/* The (kernel, shape) pairs, in the list's order, and the kernel of pair i. */
int kbench_count(void);
const char *kbench_kernel(int i);

/* Prepares pair i: inputs that are a function of the shape only, and with
 * `check` a bit-for-bit check of the active kernel against the reference at
 * it (info->exact; without the check, true). */
kbench_call *kbench_open(int i, bool check, kbench_info *info);

/* One call of the active kernel (its outputs are overwritten each time). */
void kbench_run(kbench_call *call);

void kbench_close(kbench_call *call);

#endif
