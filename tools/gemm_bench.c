/* gemm_bench.c — the matrix products of the default model (C=256, d_ff=1024,
 * V=256) at the training shapes (rows = B*T, 8192 by default) and the decode
 * shapes, single thread: GFLOP/s (median of --reps runs after a warm-up) and
 * % of an FMA peak measured by the probe (bench/peak.c, as ngpt bench's) in
 * the same run. Columns:
 *   new     the active table's gemm / gemm_packed (this build)
 *   ref     the reference, when --ref is given (slow)
 *   base    a baseline commit's gemm (make bench-gemm GEMM_BASELINE=<commit>)
 *   blas    cblas_sgemm/sgemv when built with OpenBLAS (OPENBLAS_NUM_THREADS=1;
 *           the header names the OpenBLAS kernels, OPENBLAS_CORETYPE's choice)
 * Decode (m <= 8 rows on packed weights) cycles through enough copies of each
 * matrix that none stays in L2, as a decode step streams the whole model; it
 * prints GB/s of packed weights.
 *
 *   ngpt-gemm-bench [--reps N] [--rows M] [--ref] [--best] [--only "fc2 dW"]
 *
 * --best reports each variant's best round (on a busy machine the median
 * measures the neighbours as much as the kernel). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kernels.h"
#include "model_shapes.h"

#ifdef NGPT_BENCH_CBLAS
#include <cblas.h>
#endif
#ifdef NGPT_BENCH_BASELINE
#include "gemm_baseline.h"
#endif

static const ngpt_kernels *K = &ngpt_kernels_active;
static bool best_of;            /* --best: the best round instead of the median */
static int reps = 5;
static float *work;

static float *alloc_floats(size_t n, float scale)
{
    float *p = NULL;
    if (posix_memalign((void **)&p, 64, (n ? n : 1) * sizeof(float))) {
        fprintf(stderr, "gemm-bench: out of memory\n");
        exit(1);
    }
    unsigned s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = ((float)(s >> 8) / 16777216.0f - 0.5f) * scale;
    }
    return p;
}

/* ---- what is timed: one call of a product, described by a closure */
typedef struct op {
    int which;                  /* see run() */
    int m, n, k;
    const float *a, *b, *bias;
    ptrdiff_t a_rs, a_cs, b_rs, b_cs;
    float *c;
    ptrdiff_t c_rs;
    bool acc;
    const float *wp;            /* packed weights (decode: copy 0) */
    size_t copies;              /* decode: cycle through copies of the weights */
    size_t b_stride, wp_stride; /* floats between copies of b and of wp */
    size_t call;
} op;

enum { NEW_GEMM, NEW_PACKED, REF_GEMM, BASE_GEMM, BLAS_GEMM, BLAS_GEMV };

static void run(op *o)
{
    const size_t cp = o->copies ? o->call++ % o->copies : 0;
    const float *wp = o->wp ? o->wp + cp * o->wp_stride : NULL;
    const float *b = o->b + cp * o->b_stride;
    switch (o->which) {
    case NEW_GEMM:
        K->gemm(o->m, o->n, o->k, o->a, o->a_rs, o->a_cs, b, o->b_rs, o->b_cs, o->bias, o->c,
                o->c_rs, o->acc, work);
        break;
    case NEW_PACKED: K->gemm_packed(o->m, o->n, o->k, o->a, o->a_rs, wp, o->bias, o->c, o->c_rs); break;
    case REF_GEMM:
        ngpt_f32_gemm_ref(o->m, o->n, o->k, o->a, o->a_rs, o->a_cs, b, o->b_rs, o->b_cs, o->bias,
                          o->c, o->c_rs, o->acc, NULL);
        break;
#ifdef NGPT_BENCH_BASELINE
    case BASE_GEMM:
        ngpt_base_gemm(o->m, o->n, o->k, o->a, o->a_rs, o->a_cs, b, o->b_rs, o->b_cs, o->bias, o->c,
                       o->c_rs, o->acc
#ifdef NGPT_BENCH_BASELINE_WORK
                       , work
#endif
                       );
        break;
#endif
#ifdef NGPT_BENCH_CBLAS
    case BLAS_GEMM: {   /* same strides as ours: row-major with transposes */
        const bool at = o->a_cs != 1, bt = o->b_cs != 1;
        cblas_sgemm(CblasRowMajor, at ? CblasTrans : CblasNoTrans, bt ? CblasTrans : CblasNoTrans,
                    o->m, o->n, o->k, 1.0f, o->a, (int)(at ? o->a_cs : o->a_rs), b,
                    (int)(bt ? o->b_cs : o->b_rs), o->acc ? 1.0f : 0.0f, o->c, (int)o->c_rs);
        break;
    }
    case BLAS_GEMV:     /* y = W x, W (n, k) row-major */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, o->n, o->k, 1.0f, b, (int)o->b_cs, o->a, 1, 0.0f,
                    o->c, 1);
        break;
#endif
    default: break;
    }
}

/* Per variant: the median seconds per call and the median ratio of its rate
 * to the FMA probe's in the same round. One warm-up call each, then `reps`
 * rounds that time `inner` calls of every variant in turn and a probe of
 * about the same length (a busy machine slows all of them alike). */
static long probe_iters = 1000000;

static void time_ops(op *o, const int *which, int nv, int inner, double flops, double *sec,
                     double *ratio)
{
    double t[8][64], q[8][64], peak_best = 0;
    const int r = reps > 64 ? 64 : reps;
    for (int v = 0; v < nv; v++) o->which = which[v], run(o);
    for (int i = 0; i < r; i++) {
        double t0 = bench_now();
        const double pf = bench_fma_probe(probe_iters), peak_now = pf / (bench_now() - t0);
        if (peak_now > peak_best) peak_best = peak_now;
        for (int v = 0; v < nv; v++) {
            o->which = which[v];
            t0 = bench_now();
            for (int j = 0; j < inner; j++) run(o);
            t[v][i] = (bench_now() - t0) / inner;
            q[v][i] = flops / t[v][i] / peak_now;
        }
    }
    for (int v = 0; v < nv; v++) {
        sec[v] = bench_median(t[v], r), ratio[v] = bench_median(q[v], r);
        if (best_of) sec[v] = t[v][0], ratio[v] = flops / t[v][0] / peak_best;  /* t sorted */
    }
}

static bool with_ref;
static const char *only;        /* --only "fc2 dW": just that row */

static bool wanted(const char *name, const char *kind)
{
    char label[64];
    snprintf(label, sizeof label, "%s %s", name, kind);
    return !only || !strcmp(only, label);
}

/* Times the variants of one row and prints GFLOP/s with % of peak, or with
 * GB/s when bytes > 0; which[v] < 0 prints an empty cell. */
static void cells(op *o, const int *which, int nv, double flops, double bytes, int inner)
{
    int live[8], nl = 0;
    double sec[8], ratio[8];
    for (int v = 0; v < nv; v++)
        if (which[v] >= 0) live[nl++] = which[v];
    time_ops(o, live, nl, inner, flops, sec, ratio);
    for (int v = 0, l = 0; v < nv; v++) {
        if (which[v] < 0) {
            printf(" %13s |", "-");
            continue;
        }
        const double s = sec[l], g = flops / s * 1e-9, pct = 100.0 * ratio[l++];
        if (bytes > 0) printf(" %7.1f %5.1f |", g, bytes / s * 1e-9);
        else printf(" %7.1f %4.0f%% |", g, pct);
    }
    printf("\n");
    fflush(stdout);
}

/* One training product: forward x W^T (with the same W packed too), dX = dY W,
 * dW += dY^T X. (n, k) as the Linear's (out, in). */
static void training_row(const char *name, const char *kind, int rows, int out, int in)
{
    if (!wanted(name, kind)) return;
    const size_t M = (size_t)rows;
    float *x = alloc_floats(M * in, 2.0f), *dy = alloc_floats(M * out, 2.0f);
    float *w = alloc_floats((size_t)out * in, 0.1f), *bias = alloc_floats((size_t)out, 0.1f);
    float *y = alloc_floats(M * (out > in ? out : in), 0.0f), *dw = alloc_floats((size_t)out * in, 0.0f);
    float *wp = alloc_floats(ngpt_packed_w_floats(out, in), 0.0f);
    K->pack_w(wp, w, out, in, in);
    op o = {0};
    const double flops = 2.0 * (double)M * out * in;
    if (!strcmp(kind, "fwd"))
        o = (op){.m = rows, .n = out, .k = in, .a = x, .a_rs = in, .a_cs = 1, .b = w, .b_rs = 1,
                 .b_cs = in, .bias = bias, .c = y, .c_rs = out, .wp = wp};
    else if (!strcmp(kind, "dX"))
        o = (op){.m = rows, .n = in, .k = out, .a = dy, .a_rs = out, .a_cs = 1, .b = w,
                 .b_rs = in, .b_cs = 1, .c = y, .c_rs = in};
    else
        o = (op){.m = out, .n = in, .k = rows, .a = dy, .a_rs = 1, .a_cs = out, .b = x,
                 .b_rs = in, .b_cs = 1, .c = dw, .c_rs = in, .acc = true};
    printf("| %-8s %-3s | %5d %5d %5d |", name, kind, o.m, o.n, o.k);
    int which[8], nv = 0;
    which[nv++] = NEW_GEMM;
    which[nv++] = !strcmp(kind, "fwd") ? NEW_PACKED : -1;
#ifdef NGPT_BENCH_BASELINE
    which[nv++] = BASE_GEMM;
#endif
    if (with_ref) which[nv++] = REF_GEMM;
#ifdef NGPT_BENCH_CBLAS
    which[nv++] = BLAS_GEMM;
#endif
    cells(&o, which, nv, flops, 0, 1);
    free(x), free(dy), free(w), free(bias), free(y), free(dw), free(wp);
}

/* Decode: m rows against a (out, in) weight, cycling through copies so that
 * the weights come from L3 or memory, as in a decode step. */
static void decode_row(const char *name, int m, int out, int in)
{
    char kind[16];
    snprintf(kind, sizeof kind, "m=%d", m);
    if (!wanted(name, kind)) return;
    const size_t wfl = (size_t)out * in, pfl = ngpt_packed_w_floats(out, in);
    const size_t copies = (12u << 20) / (pfl * sizeof(float)) + 1;   /* 12 MiB, the model */
    float *w = alloc_floats(wfl * copies, 0.1f), *wp = alloc_floats(pfl * copies, 0.0f);
    float *x = alloc_floats((size_t)m * in, 2.0f), *y = alloc_floats((size_t)m * out, 0.0f);
    for (size_t c = 0; c < copies; c++) K->pack_w(wp + c * pfl, w + c * wfl, out, in, in);
    op o = {.m = m, .n = out, .k = in, .a = x, .a_rs = in, .a_cs = 1, .b = w, .b_rs = 1,
            .b_cs = in, .c = y, .c_rs = out, .wp = wp, .copies = copies, .b_stride = wfl, .wp_stride = pfl};
    const double flops = 2.0 * m * out * in, bytes = (double)pfl * sizeof(float);
    const int inner = (int)copies * 4;
    printf("| %-8s m=%d | %5d %5d %5d |", name, m, m, out, in);
    int which[8], nv = 0;
    which[nv++] = NEW_PACKED;
    which[nv++] = NEW_GEMM;
#ifdef NGPT_BENCH_BASELINE
    which[nv++] = BASE_GEMM;
#endif
#ifdef NGPT_BENCH_CBLAS
    which[nv++] = m == 1 ? BLAS_GEMV : BLAS_GEMM;
#endif
    cells(&o, which, nv, flops, bytes, inner);
    free(w), free(wp), free(x), free(y);
}

int main(int argc, char **argv)
{
    int rows = KC_TRAIN_ROWS;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) rows = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ref")) with_ref = true;
        else if (!strcmp(argv[i], "--best")) best_of = true;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: ngpt-gemm-bench [--reps N] [--rows M] [--ref] [--best] [--only \"fc2 dW\"]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    if (rows < 1) rows = 1;
    work = alloc_floats(NGPT_GEMM_WORK_FLOATS, 0.0f);
    /* the probe: about 10 ms per round; its best rate is the peak shown */
    double t0 = bench_now(), pf = bench_fma_probe(probe_iters), best = 0;
    probe_iters = (long)((double)probe_iters * 0.01 / (bench_now() - t0)) + 1;
    for (int i = 0; i < 5; i++) {
        t0 = bench_now(), pf = bench_fma_probe(probe_iters);
        if (pf / (bench_now() - t0) > best) best = pf / (bench_now() - t0);
    }
    printf("gemm bench: kernels %s, FMA peak probe %.1f GFLOP/s (%s, one core), %s of %d, "
           "workspace %zu KiB\n", K->name, best * 1e-9, bench_fma_isa(), best_of ? "best" : "median",
           reps, (size_t)NGPT_GEMM_WORK_BYTES / 1024);
#ifdef NGPT_BENCH_CBLAS
    /* make bench-gemm sets OPENBLAS_CORETYPE=SkylakeX for an avx512 build
     * unless the caller set it (docs/BENCH.md): say what OpenBLAS runs */
    const char *core = getenv("OPENBLAS_CORETYPE");
    printf("OpenBLAS: %s kernels (OPENBLAS_CORETYPE=%s)\n", openblas_get_corename(),
           core ? core : "unset: its own choice");
#endif
    printf("%% of peak: %s\n\n", best_of ? "the best rate / the probe's best rate"
                                          : "median over rounds of the rate / the probe's rate in "
                                            "the same round");

    const kc_linear *lin = kc_linears;     /* the model's products, as ngpt bench's */
    printf("training products, GFLOP/s and %% of peak\n");
    printf("| product      |     m     n     k |      gemm     |  gemm_packed  |");
#ifdef NGPT_BENCH_BASELINE
    printf("   baseline    |");
#endif
    if (with_ref) printf("   reference   |");
#ifdef NGPT_BENCH_CBLAS
    printf(" OpenBLAS sgemm|");
#endif
    printf("\n");
    const char *kinds[] = {"fwd", "dX", "dW"};
    for (int kd = 0; kd < 3; kd++)
        for (int l = 0; l < KC_LINEARS; l++) training_row(lin[l].name, kinds[kd], rows, lin[l].out, lin[l].in);

    printf("\ndecode on weights from L3/memory: GFLOP/s and GB/s of weights read\n");
    printf("| product      |     m     n     k |  gemm_packed  |  gemm (W)     |");
#ifdef NGPT_BENCH_BASELINE
    printf("   baseline    |");
#endif
#ifdef NGPT_BENCH_CBLAS
    printf(" OpenBLAS      |");
#endif
    printf("\n");
    for (int m = 1; m <= 8; m++)
        for (int l = 0; l < KC_LINEARS; l++) {
            if (m > 1 && m != 2 && m != 4 && m != 8 && l > 0) continue;
            decode_row(lin[l].name, m, lin[l].out, lin[l].in);
        }
    free(work);
    return 0;
}
