/* kernel_bench.c — the kernel section of `ngpt bench` (kernel_bench.h):
 * every kernel of the list from the active table at the default model's
 * shapes of its case. Rates come from the case: GFLOP/s for the products
 * (2 per multiply-add), GB/s of the arrays each call reads and writes once.
 * Each shape is first run with the reference too and compared bit for bit,
 * so the tool can give a rate only to a kernel that gives the reference's
 * bits. */
#include <stdio.h>
#include <stdlib.h>

#include "kcase.h"
#include "kernel_bench.h"

struct kbench_call {
    const kc_entry *e;
    kc_state st;
};

/* Every (case, bench shape) pair, made once. */
typedef struct pair {
    const kc_entry *e;
    kc_shape shape;
} pair;

static pair *pairs;
static int n_pairs = -1;

static void list_pairs(void)
{
    if (n_pairs >= 0) return;
    int cap = 0;
    n_pairs = 0;
    for (int i = 0; i < kc_count; i++) {
        kc_shapes shapes = {0};
        kc_all[i].c->bench_shapes(&shapes);
        for (int j = 0; j < shapes.count; j++) {
            if (n_pairs == cap) {
                cap = cap ? 2 * cap : 64;
                pairs = realloc(pairs, (size_t)cap * sizeof *pairs);
                if (!pairs) abort();            /* as the cases do */
            }
            pairs[n_pairs++] = (pair){&kc_all[i], shapes.at[j]};
        }
        free(shapes.at);
    }
}

int kbench_count(void)
{
    list_pairs();
    return n_pairs;
}

const char *kbench_kernel(int i)
{
    list_pairs();
    return i >= 0 && i < n_pairs ? pairs[i].e->kernel : NULL;
}

/* The active kernel against the reference at this shape, every slot. */
static bool exact(const kc_entry *e, const kc_shape *s)
{
    kc_state want = {.shape = *s}, got = want;
    e->c->setup(&want), e->c->setup(&got);
    e->c->run(&want, &ngpt_kernels_ref), e->c->run(&got, &ngpt_kernels_active);
    int slot;
    size_t i;
    const bool same = kc_same(&got, &want, &slot, &i);
    kc_free(&want), kc_free(&got);
    return same;
}

kbench_call *kbench_open(int i, bool check, kbench_info *info)
{
    list_pairs();
    if (i < 0 || i >= n_pairs) return NULL;
    kbench_call *call = calloc(1, sizeof *call);
    if (!call) return NULL;
    call->e = pairs[i].e;
    call->st.shape = pairs[i].shape;
    call->e->c->setup(&call->st);
    info->kernel = call->e->kernel;
    kc_format(info->shape, sizeof info->shape, call->e->c, &call->st.shape);
    info->flops = call->st.flops;
    info->bytes = call->st.bytes;
    info->exact = !check || exact(call->e, &call->st.shape);
    return call;
}

void kbench_run(kbench_call *call) { call->e->c->run(&call->st, &ngpt_kernels_active); }

void kbench_close(kbench_call *call)
{
    if (!call) return;
    kc_free(&call->st);
    free(call);
}
