/* kernels.c — the per-kernel bench: every kernel of the list
 * (src/kernels.inc) from the active table, at the default model's shapes of
 * its case (tests/kernels/<op>.c), as the median time per call of several
 * timed batches. Rates: GFLOP/s for the products (2 per multiply-add), GB/s
 * of the arrays each call reads and writes once. Each shape is first run
 * with the reference too and compared bit for bit: a rate is printed only
 * for a kernel that gives the reference's bits. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "kcase.h"

/* Seconds per call of `calls` calls in a row. */
static double batch(const kc_entry *e, kc_state *st, long calls)
{
    const double t0 = bench_now();
    for (long i = 0; i < calls; i++) e->c->run(st, &ngpt_kernels_active);
    return (bench_now() - t0) / (double)calls;
}

/* 0: the active kernel gives the reference's bits at this shape. */
static int check(const kc_entry *e, const kc_shape *s)
{
    kc_state want = {.shape = *s}, got = want;
    e->c->setup(&want), e->c->setup(&got);
    e->c->run(&want, &ngpt_kernels_ref), e->c->run(&got, &ngpt_kernels_active);
    int slot;
    size_t i;
    const bool same = kc_same(&got, &want, &slot, &i);
    kc_free(&want), kc_free(&got);
    return same ? 0 : 1;
}

static int bench_shape(const kc_entry *e, const kc_shape *s, int reps)
{
    char shape[128];
    kc_format(shape, sizeof shape, e->c, s);
    printf("| %-13s | %-32s |", e->kernel, shape);
    if (check(e, s)) {
        printf(" differs from the reference |\n");
        return 1;
    }
    kc_state st = {.shape = *s};
    e->c->setup(&st);
    long calls = 1;     /* a batch of at least 2 ms */
    while (batch(e, &st, calls) * (double)calls < 2e-3 && calls < (1l << 24)) calls *= 2;
    double t[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps; r++) t[r] = batch(e, &st, calls);
    const double sec = bench_median(t, reps);
    printf(" %10.2f |", sec * 1e6);
    if (st.flops > 0) printf(" %8.2f |", st.flops / sec * 1e-9);
    else printf(" %8s |", "");
    printf(" %7.2f |\n", st.bytes / sec * 1e-9);
    kc_free(&st);
    return 0;
}

int bench_kernels(int reps)
{
    printf("\nkernels: %s, median of %d batches\n\n", ngpt_kernels_active.name, reps);
    printf("| kernel        | shape                            |    us/call |  GFLOP/s |    GB/s |\n");
    printf("|---------------|----------------------------------|------------|----------|---------|\n");
    int rc = 0;
    for (int i = 0; i < kc_count; i++) {
        kc_shapes shapes = {0};
        kc_all[i].c->bench_shapes(&shapes);
        for (int j = 0; j < shapes.count; j++) rc |= bench_shape(&kc_all[i], &shapes.at[j], reps);
        free(shapes.at);
    }
    return rc;
}
