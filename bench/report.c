/* report.c — `ngpt bench`'s output: markdown tables whose columns are
 * as wide as their widest cell (llama-bench style), and the same figures as
 * JSON with stable keys (docs/BENCH.md lists them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ngpt_bench.h"

double bench_kernel_work(const bench_kernel *k) { return k->calls * k->threads; }

double bench_tok_s(const bench_workload *w, double sec) { return sec > 0 ? w->tokens / sec : 0; }

double bench_peak_gflops(const bench_report *r, int32_t threads)
{
    for (int i = 0; i < r->n_peak; i++)
        if (r->peak[i].threads == threads && !r->peak[i].kernels) return r->peak[i].flops / r->peak[i].sec.min * 1e-9;
    return 0;
}

static double probe_gbps(const bench_read_bw *b)
{
    return b->bytes && b->sec.median > 0 ? (double)b->bytes / b->sec.median * 1e-9 : 0;
}

double bench_read_gbps(const bench_report *r, int32_t threads)
{
    return probe_gbps(threads >= 2 ? &r->read_bw2 : &r->read_bw);
}

/* Decode's estimated weight traffic in GB/s at a run of `sec` seconds. */
static double weight_gbps(const bench_workload *w, double sec)
{
    return w->weight_bytes * bench_tok_s(w, sec) * 1e-9;
}

/* Rows grouped by what they measure, thread counts side by side. */
static bool is_generation(const char *test)
{
    return !strcmp(test, "generate") || !strncmp(test, "spec ", 5);
}

static int test_rank(const char *test)
{
    return !strcmp(test, "prefill") ? 0 : !strncmp(test, "decode", 6) ? 1 : is_generation(test) ? 3 : 2;
}

static int cmp_i32(int32_t a, int32_t b) { return (a > b) - (a < b); }

/* f32, q8, q4: the order of --weights' default and of the bytes read */
static int weights_rank(const char *w) { return !strcmp(w, "f32") ? 0 : !strcmp(w, "q8") ? 1 : 2; }

static int cmp_work(const void *pa, const void *pb)
{
    const bench_workload *a = pa, *b = pb;
    int c = test_rank(a->test) - test_rank(b->test);
    if (!c) c = cmp_i32(a->batch, b->batch);
    if (!c) c = cmp_i32(a->seq, b->seq);
    if (!c) c = cmp_i32(a->threads, b->threads);
    if (!c) c = weights_rank(a->weights) - weights_rank(b->weights);    /* f32, q8, q4 */
    if (!c) c = strcmp(a->test, b->test);     /* "decode", then "decode lora" */
    return c;
}

static int cmp_arena(const void *pa, const void *pb)
{
    const bench_arena *a = pa, *b = pb;
    int c = strcmp(a->mode, b->mode);
    if (!c) c = cmp_i32(a->batch, b->batch);
    if (!c) c = cmp_i32(a->seq, b->seq);
    if (!c) c = cmp_i32(a->threads, b->threads);
    if (!c) c = weights_rank(a->weights) - weights_rank(b->weights);
    return c;
}

void bench_report_sort(bench_report *r)
{
    /* keys are unique per row (one figure per test, shape and thread count) */
    qsort(r->work, (size_t)r->n_work, sizeof r->work[0], cmp_work);
    qsort(r->arena, (size_t)r->n_arena, sizeof r->arena[0], cmp_arena);
}

void bench_workload_shape(const bench_workload *w, char *buf, size_t size)
{
    const char *n = !strcmp(w->test, "prefill")                                 ? "prompt"
                    : !strncmp(w->test, "decode", 6) || is_generation(w->test) ? "new"
                                                                                : "T";
    snprintf(buf, size, "B=%d %s=%d", (int)w->batch, n, (int)w->seq);
}

/* About four significant digits, never exponent notation. */
static void fmt_num(char *buf, size_t size, double v)
{
    double a = v < 0 ? -v : v;
    snprintf(buf, size, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.3f", v);
}

static void fmt_range(char *buf, size_t size, double lo, double hi)
{
    size_t n;
    fmt_num(buf, size, lo);
    n = strlen(buf);
    snprintf(buf + n, size - n, " – ");
    n = strlen(buf);
    fmt_num(buf + n, size - n, hi);
}

/* ---- a markdown table: cells first, widths from them ---- */

enum { MD_COLS = 8, MD_CELL = 112 };

typedef struct md_table {
    int cols, rows;
    const char *head[MD_COLS];
    bool right[MD_COLS];
    char (*cell)[MD_COLS][MD_CELL];     /* rows x cols */
} md_table;

/* Display width: "–" and "×" are one column but several bytes. */
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static char *md_cell(md_table *t, int row, int col) { return t->cell[row][col]; }

static void md_print(FILE *f, const md_table *t)
{
    int width[MD_COLS];
    for (int c = 0; c < t->cols; c++) {
        width[c] = text_width(t->head[c]);
        if (width[c] < 3) width[c] = 3;
        for (int r = 0; r < t->rows; r++) {
            int w = text_width(t->cell[r][c]);
            if (w > width[c]) width[c] = w;
        }
    }
    for (int r = -2; r < t->rows; r++) {
        for (int c = 0; c < t->cols; c++) {
            fputs("| ", f);
            if (r == -1) {      /* the rule: dashes, a colon marks right alignment */
                for (int i = 0; i < width[c] - 1; i++) fputc('-', f);
                fputc(t->right[c] ? ':' : '-', f);
            } else {
                const char *s = r < 0 ? t->head[c] : t->cell[r][c];
                int pad = width[c] - text_width(s);
                if (t->right[c] && r >= 0) fprintf(f, "%*s%s", pad, "", s);
                else fprintf(f, "%s%*s", s, pad, "");
            }
            fputc(' ', f);
        }
        fputs("|\n", f);
    }
}

static bool md_alloc(md_table *t, int rows)
{
    t->rows = 0;
    t->cell = calloc((size_t)(rows > 0 ? rows : 1), sizeof *t->cell);
    return t->cell != NULL;
}

static void workload_table(FILE *f, const bench_report *r)
{
    md_table t = {.cols = 6, .head = {"test", "shape", "threads", "tok/s", "min – max", "ms/call"},
                  .right = {false, false, true, true, true, true}};
    if (!md_alloc(&t, r->n_work)) return;
    for (int i = 0; i < r->n_work; i++, t.rows++) {
        const bench_workload *w = &r->work[i];
        snprintf(md_cell(&t, i, 0), MD_CELL, "%s%s", w->test, bench_weights_suffix(w->weights));
        bench_workload_shape(w, md_cell(&t, i, 1), MD_CELL);
        snprintf(md_cell(&t, i, 2), MD_CELL, "%d", (int)w->threads);
        fmt_num(md_cell(&t, i, 3), MD_CELL, bench_tok_s(w, w->sec.median));
        fmt_range(md_cell(&t, i, 4), MD_CELL, bench_tok_s(w, w->sec.max), bench_tok_s(w, w->sec.min));
        fmt_num(md_cell(&t, i, 5), MD_CELL, w->sec.median * 1e3 / w->api_calls);
    }
    md_print(f, &t);
    free(t.cell);
}

static void kernel_table(FILE *f, const bench_report *r)
{
    md_table t = {.cols = 8,
                  .head = {"kernel", "shape", "threads", "µs/call", "min – max", "GFLOP/s", "% peak",
                           "GB/s"},
                  .right = {false, false, true, true, true, true, true, true}};
    if (!md_alloc(&t, r->n_peak + r->n_kern)) return;
    for (int i = 0; i < r->n_peak; i++, t.rows++) {
        const bench_peak *p = &r->peak[i];
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, p->kernels ? "fma (the kernels' width)" : "fma peak (probe)");
        snprintf(md_cell(&t, t.rows, 1), MD_CELL, "%s", p->kernels ? bench_fma_isa_kernels() : bench_fma_isa());
        snprintf(md_cell(&t, t.rows, 2), MD_CELL, "%d", (int)p->threads);
        fmt_num(md_cell(&t, t.rows, 5), MD_CELL, p->flops / p->sec.median * 1e-9);
        /* the peak's row: its median against its best (how steady the
         * machine was); the kernels' probe: its median against the peak */
        const double peak = bench_peak_gflops(r, p->threads);
        if (!p->kernels) fmt_num(md_cell(&t, t.rows, 6), MD_CELL, 100 * p->sec.min / p->sec.median);
        else if (peak > 0) fmt_num(md_cell(&t, t.rows, 6), MD_CELL, 100 * p->flops / p->sec.median * 1e-9 / peak);
    }
    for (int i = 0; i < r->n_kern; i++, t.rows++) {
        const bench_kernel *k = &r->kern[i];
        const double n = bench_kernel_work(k), gf = n * k->flops / k->sec.median * 1e-9,
                     peak = bench_peak_gflops(r, k->threads);
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, "%s", k->name);
        snprintf(md_cell(&t, t.rows, 1), MD_CELL, "%s", k->shape);
        snprintf(md_cell(&t, t.rows, 2), MD_CELL, "%d", (int)k->threads);
        if (!k->exact) {
            snprintf(md_cell(&t, t.rows, 3), MD_CELL, "DIFFERS from the reference");
            continue;
        }
        fmt_num(md_cell(&t, t.rows, 3), MD_CELL, k->sec.median / k->calls * 1e6);
        fmt_range(md_cell(&t, t.rows, 4), MD_CELL, k->sec.min / k->calls * 1e6, k->sec.max / k->calls * 1e6);
        if (k->flops > 0) {     /* products: the case counts 2 flops per multiply-add */
            fmt_num(md_cell(&t, t.rows, 5), MD_CELL, gf);
            if (peak > 0) fmt_num(md_cell(&t, t.rows, 6), MD_CELL, 100 * gf / peak);
        }
        if (k->bytes > 0) fmt_num(md_cell(&t, t.rows, 7), MD_CELL, n * k->bytes / k->sec.median * 1e-9);
    }
    md_print(f, &t);
    free(t.cell);
}

/* The read bandwidth and each decode figure at batch 1 as bytes of weights
 * read per token (an estimate, workloads.c) x tok/s, against it. */
static void traffic_table(FILE *f, const bench_report *r)
{
    md_table t = {.cols = 7,
                  .head = {"traffic", "shape", "threads", "MiB/token", "GB/s", "min – max", "% read bw"},
                  .right = {false, false, true, true, true, true, true}};
    if (!md_alloc(&t, r->n_work + 2)) return;
    for (int32_t threads = 1; threads <= 2; threads++) {
        const bench_read_bw *b = threads == 1 ? &r->read_bw : &r->read_bw2;
        if (probe_gbps(b) <= 0) continue;
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, "read bandwidth (probe)");
        snprintf(md_cell(&t, t.rows, 1), MD_CELL, "sum of %zu MiB", b->bytes >> 20);
        snprintf(md_cell(&t, t.rows, 2), MD_CELL, "%d", (int)threads);
        fmt_num(md_cell(&t, t.rows, 4), MD_CELL, probe_gbps(b));
        fmt_range(md_cell(&t, t.rows, 5), MD_CELL, (double)b->bytes / b->sec.max * 1e-9,
                  (double)b->bytes / b->sec.min * 1e-9);
        t.rows++;
    }
    for (int i = 0; i < r->n_work; i++) {
        const bench_workload *w = &r->work[i];
        if (w->weight_bytes <= 0) continue;
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, "weight bytes, decode%s", bench_weights_suffix(w->weights));
        bench_workload_shape(w, md_cell(&t, t.rows, 1), MD_CELL);
        snprintf(md_cell(&t, t.rows, 2), MD_CELL, "%d", (int)w->threads);
        fmt_num(md_cell(&t, t.rows, 3), MD_CELL, w->weight_bytes / 1048576.0);
        fmt_num(md_cell(&t, t.rows, 4), MD_CELL, weight_gbps(w, w->sec.median));
        fmt_range(md_cell(&t, t.rows, 5), MD_CELL, weight_gbps(w, w->sec.max), weight_gbps(w, w->sec.min));
        const double bw = bench_read_gbps(r, w->threads);
        if (bw > 0) fmt_num(md_cell(&t, t.rows, 6), MD_CELL, 100 * weight_gbps(w, w->sec.median) / bw);
        t.rows++;
    }
    if (t.rows) {
        md_print(f, &t);
        fputc('\n', f);
    }
    free(t.cell);
}

/* The row of a test at batch 1 with w's weights and thread count (seq 0:
 * any), or NULL. */
static const bench_workload *find_work(const bench_report *r, const char *test,
                                       const bench_workload *w, int32_t seq)
{
    for (int i = 0; i < r->n_work; i++) {
        const bench_workload *x = &r->work[i];
        if (!strcmp(x->test, test) && !strcmp(x->weights, w->weights) && x->threads == w->threads &&
            x->batch == 1 && (!seq || x->seq == seq))
            return x;
    }
    return NULL;
}

/* A pass of a few positions against one decode step (the cost of a
 * speculative check), and the speculative workload against plain
 * generation: acceptance, and tok/s as a multiple of plain's. */
static void speculative_table(FILE *f, const bench_report *r)
{
    md_table t = {.cols = 6, .head = {"speculative", "shape", "threads", "tok/s", "accepted", "× plain"},
                  .right = {false, false, true, true, true, true}};
    if (!md_alloc(&t, r->n_work)) return;
    for (int i = 0; i < r->n_work; i++) {
        const bench_workload *w = &r->work[i], *step = find_work(r, "decode", w, 0);
        if (strcmp(w->test, "prefill") || w->seq > 16 || !step || step->sec.median <= 0) continue;
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, "%d-position pass ÷ decode step%s", (int)w->seq,
                 bench_weights_suffix(w->weights));
        snprintf(md_cell(&t, t.rows, 1), MD_CELL, "B=1");
        snprintf(md_cell(&t, t.rows, 2), MD_CELL, "%d", (int)w->threads);
        fmt_num(md_cell(&t, t.rows, 5), MD_CELL, w->sec.median / (step->sec.median / step->api_calls));
        t.rows++;
    }
    for (int i = 0; i < r->n_work; i++) {
        const bench_workload *w = &r->work[i], *plain = find_work(r, "generate", w, w->seq);
        if (!is_generation(w->test)) continue;
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, "%s%s", w->test, bench_weights_suffix(w->weights));
        bench_workload_shape(w, md_cell(&t, t.rows, 1), MD_CELL);
        snprintf(md_cell(&t, t.rows, 2), MD_CELL, "%d", (int)w->threads);
        fmt_num(md_cell(&t, t.rows, 3), MD_CELL, bench_tok_s(w, w->sec.median));
        if (w->proposed > 0)
            snprintf(md_cell(&t, t.rows, 4), MD_CELL, "%d of %d (%.0f%%)", (int)w->accepted,
                     (int)w->proposed, 100.0 * w->accepted / w->proposed);
        if (plain && bench_tok_s(plain, plain->sec.median) > 0)
            fmt_num(md_cell(&t, t.rows, 5), MD_CELL,
                    bench_tok_s(w, w->sec.median) / bench_tok_s(plain, plain->sec.median));
        t.rows++;
    }
    if (t.rows) {
        md_print(f, &t);
        fputc('\n', f);
    }
    free(t.cell);
}

static void memory_table(FILE *f, const bench_report *r)
{
    md_table t = {.cols = 5, .head = {"memory", "shape", "threads", "bytes", "MiB"},
                  .right = {false, false, true, true, true}};
    if (!md_alloc(&t, r->n_arena + 1)) return;
    for (int i = 0; i < r->n_arena; i++, t.rows++) {
        const bench_arena *a = &r->arena[i];
        snprintf(md_cell(&t, i, 0), MD_CELL, "arena, %s%s", a->mode, bench_weights_suffix(a->weights));
        snprintf(md_cell(&t, i, 1), MD_CELL, "B=%d seq=%d", (int)a->batch, (int)a->seq);
        snprintf(md_cell(&t, i, 2), MD_CELL, "%d", (int)a->threads);
        snprintf(md_cell(&t, i, 3), MD_CELL, "%zu", a->bytes);
        fmt_num(md_cell(&t, i, 4), MD_CELL, (double)a->bytes / 1048576.0);
    }
    if (r->peak_rss) {
        snprintf(md_cell(&t, t.rows, 0), MD_CELL, "peak RSS (process)");
        snprintf(md_cell(&t, t.rows, 3), MD_CELL, "%zu", r->peak_rss);
        fmt_num(md_cell(&t, t.rows, 4), MD_CELL, (double)r->peak_rss / 1048576.0);
        t.rows++;
    }
    md_print(f, &t);
    free(t.cell);
}

/* With a tokenizer: each workload's rate in bytes of text per second. */
static void bytes_line(FILE *f, const bench_opts *o, const bench_report *r)
{
    if (o->bytes_per_token <= 0) return;
    fprintf(f, "\nTokenizer %s: %.3f bytes per token on %s; bytes/s = tok/s x %.3f:", o->tokenizer,
            o->bytes_per_token, o->text, o->bytes_per_token);
    for (int i = 0; i < r->n_work; i++) {
        const bench_workload *w = &r->work[i];
        char shape[64], num[32];
        bench_workload_shape(w, shape, sizeof shape);
        fmt_num(num, sizeof num, bench_tok_s(w, w->sec.median) * o->bytes_per_token);
        fprintf(f, "%s %s%s %s, %d thread%s: %s bytes/s", i ? ";" : "", w->test,
                bench_weights_suffix(w->weights), shape, (int)w->threads, w->threads > 1 ? "s" : "", num);
    }
    fputc('\n', f);
}

void bench_print_markdown(FILE *f, const bench_opts *o, const bench_report *r)
{
    char cfg[768];
    ngpt_config_format(&o->cfg, cfg, sizeof cfg);
    fprintf(f, "- build: %s\n- threads:", ngpt_build_info());
    for (int t = 0; t < o->n_threads; t++) fprintf(f, "%s %d", t ? "," : "", (int)o->threads[t]);
    fprintf(f, "\n- cpu: %s\n- config: %s (%s %s%s)\n", r->cpu, cfg, o->model ? "model" : "preset",
            o->model ? o->model : o->preset, o->quick ? ", --quick" : "");
    fprintf(f, "- each figure: median of up to %d runs after %d warm-up (fewer for a slow figure, "
               "at least 3), min – max over the runs\n", o->runs, o->warmup);
    fprintf(f, "- date: %s, %.0f s; command: %s\n\n", r->date, r->wall_s, o->command);
    workload_table(f, r);
    bytes_line(f, o, r);
    fputc('\n', f);
    if (r->n_peak + r->n_kern > 0) {
        kernel_table(f, r);
        fputc('\n', f);
    }
    traffic_table(f, r);
    speculative_table(f, r);
    memory_table(f, r);
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* {"median": m, "min": lo, "max": hi} of value = num / seconds (num 0: seconds) */
static void json_stat(FILE *f, const char *key, const bench_stat *s, double num, double scale)
{
    double med = num ? num / s->median : s->median, lo = num ? num / s->max : s->min,
           hi = num ? num / s->min : s->max;
    fprintf(f, "\"%s\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}", key, med * scale,
            lo * scale, hi * scale);
}

void bench_print_json(FILE *f, const bench_opts *o, const bench_report *r)
{
    const ngpt_config *c = &o->cfg;
    fprintf(f, "{\n  \"schema\": \"ngpt-bench/1\",\n  \"date\": ");
    json_str(f, r->date);
    fprintf(f, ",\n  \"command\": ");
    json_str(f, o->command);
    fprintf(f, ",\n  \"build_info\": ");
    json_str(f, ngpt_build_info());
    fprintf(f, ",\n  \"cpu\": ");
    json_str(f, r->cpu);
    fprintf(f, ",\n  \"preset\": ");
    json_str(f, o->preset);
    if (o->model) {
        fprintf(f, ",\n  \"model\": ");
        json_str(f, o->model);
    }
    fprintf(f, ",\n  \"config\": {\"V\": %d, \"T\": %d, \"C\": %d, \"L\": %d, \"H\": %d, "
               "\"d_ff\": %d, \"dropout\": %.7g, \"rope_theta\": %.7g},\n",
            (int)c->vocab_size, (int)c->context_len, (int)c->d_model, (int)c->n_layers,
            (int)c->n_heads, (int)c->d_ff, (double)c->dropout, (double)c->rope_theta);
    fprintf(f, "  \"quick\": %s,\n  \"runs\": %d,\n  \"warmup\": %d,\n",
            o->quick ? "true" : "false", o->runs, o->warmup);
    if (o->bytes_per_token > 0) {
        fprintf(f, "  \"tokenizer\": ");
        json_str(f, o->tokenizer);
        fprintf(f, ",\n  \"bytes_per_token\": %.9g,\n", o->bytes_per_token);
    }
    fprintf(f, "  \"threads\": [");
    for (int t = 0; t < o->n_threads; t++) fprintf(f, "%s%d", t ? ", " : "", (int)o->threads[t]);
    fprintf(f, "],\n  \"workloads\": [");
    for (int i = 0; i < r->n_work; i++) {
        const bench_workload *w = &r->work[i];
        fprintf(f, "%s\n    {\"test\": \"%s\", \"weights\": \"%s\", \"batch\": %d, \"n\": %d, "
                   "\"threads\": %d, \"tokens\": %.0f, \"calls\": %d, \"runs\": %d, ",
                i ? "," : "", w->test, w->weights, (int)w->batch, (int)w->seq, (int)w->threads,
                w->tokens, (int)w->api_calls, w->sec.runs);
        json_stat(f, "seconds", &w->sec, 0, 1);
        fputs(", ", f);
        json_stat(f, "tokens_per_s", &w->sec, w->tokens, 1);
        fprintf(f, ", \"ms_per_call\": %.9g", w->sec.median * 1e3 / w->api_calls);
        if (w->weight_bytes > 0) {      /* decode B=1: the estimated weight traffic */
            fprintf(f, ", \"weight_bytes_per_token\": %.9g, ", w->weight_bytes);
            json_stat(f, "weight_gbps", &w->sec, w->tokens * w->weight_bytes, 1e-9);
            if (bench_read_gbps(r, w->threads) > 0)
                fprintf(f, ", \"read_bw_pct\": %.9g",
                        100 * weight_gbps(w, w->sec.median) / bench_read_gbps(r, w->threads));
        }
        if (is_generation(w->test))
            fprintf(f, ", \"proposed\": %d, \"accepted\": %d", (int)w->proposed, (int)w->accepted);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"peak\": [");
    for (int i = 0; i < r->n_peak; i++) {
        const bench_peak *p = &r->peak[i];
        fprintf(f, "%s\n    {\"threads\": %d, \"isa\": \"%s\", \"widest\": %s, \"flops\": %.9g, "
                "\"runs\": %d, ", i ? "," : "", (int)p->threads,
                p->kernels ? bench_fma_isa_kernels() : bench_fma_isa(), p->kernels ? "false" : "true",
                p->flops, p->sec.runs);
        json_stat(f, "gflops", &p->sec, p->flops, 1e-9);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n");
    if (r->read_bw.bytes) {
        fprintf(f, "  \"read_bandwidth\": {\"threads\": 1, \"bytes\": %zu, \"runs\": %d, ", r->read_bw.bytes,
                r->read_bw.sec.runs);
        json_stat(f, "gbps", &r->read_bw.sec, (double)r->read_bw.bytes, 1e-9);
        fprintf(f, "},\n");
    }
    if (r->read_bw2.bytes) {
        fprintf(f, "  \"read_bandwidth_2\": {\"threads\": 2, \"bytes\": %zu, \"runs\": %d, ",
                r->read_bw2.bytes, r->read_bw2.sec.runs);
        json_stat(f, "gbps", &r->read_bw2.sec, (double)r->read_bw2.bytes, 1e-9);
        fprintf(f, "},\n");
    }
    fprintf(f, "  \"kernels\": [");
    for (int i = 0; i < r->n_kern; i++) {
        const bench_kernel *k = &r->kern[i];
        const double peak = bench_peak_gflops(r, k->threads), n = bench_kernel_work(k);
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_str(f, k->name);
        fprintf(f, ", \"shape\": ");
        json_str(f, k->shape);
        fprintf(f, ", \"threads\": %d, \"exact\": %s, \"calls\": %.0f, \"bytes\": %.9g, "
                   "\"runs\": %d, ", (int)k->threads, k->exact ? "true" : "false", k->calls, k->bytes,
                k->sec.runs);
        json_stat(f, "seconds", &k->sec, 0, 1);
        fprintf(f, ", \"us_per_call\": %.9g", k->sec.median / k->calls * 1e6);
        if (k->flops > 0) {     /* products only */
            fprintf(f, ", \"flops\": %.9g, ", k->flops);
            json_stat(f, "gflops", &k->sec, n * k->flops, 1e-9);
            if (peak > 0) fprintf(f, ", \"peak_pct\": %.9g", 100 * n * k->flops / k->sec.median * 1e-9 / peak);
        }
        if (k->bytes > 0) {
            fputs(", ", f);
            json_stat(f, "gbps", &k->sec, n * k->bytes, 1e-9);
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"arena\": [");
    for (int i = 0; i < r->n_arena; i++) {
        const bench_arena *a = &r->arena[i];
        fprintf(f, "%s\n    {\"mode\": \"%s\", \"weights\": \"%s\", \"batch\": %d, \"seq\": %d, "
                   "\"threads\": %d, \"bytes\": %zu}", i ? "," : "", a->mode, a->weights,
                (int)a->batch, (int)a->seq, (int)a->threads, a->bytes);
    }
    fprintf(f, "\n  ],\n  \"peak_rss_bytes\": %zu,\n  \"wall_s\": %.3f\n}\n", r->peak_rss, r->wall_s);
}
