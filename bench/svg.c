/* svg.c — a small hand-written SVG of a bench run for the README:
 * horizontal bars of tokens/s per workload, then GFLOP/s of the products
 * (at the run's first thread count) beside the FMA peak measured in the
 * same run. Each bar carries a min – max whisker and its median as text.
 * No dependencies. */
#include <stdio.h>
#include <string.h>

#include "ngpt_bench.h"

/* Bars and rows in pixels; text widths estimated at 12px sans-serif. */
enum { BAR_W = 380, BAR_H = 16, ROW_H = 22, VALUE_W = 200 };
static const double CHAR_W = 7.3;

typedef struct bar {
    char label[160];
    double value, lo, hi;
    const char *color;
    char note[32];              /* after the value, e.g. "41% of peak" */
} bar;

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

/* A panel of bars starting at y, labels right-aligned at label_w; returns
 * the y below it. */
static int panel(FILE *f, int y, int label_w, const char *title, const char *unit, const bar *bars,
                 int n)
{
    double max = 0;
    for (int i = 0; i < n; i++) if (bars[i].hi > max) max = bars[i].hi;
    if (max <= 0) max = 1;
    const double scale = BAR_W / max;
    fprintf(f, "<text x=\"10\" y=\"%d\" class=\"title\">", y + 16);
    xml_text(f, title);
    fprintf(f, "</text>\n");
    y += 28;
    for (int i = 0; i < n; i++, y += ROW_H) {
        const bar *b = &bars[i];
        const double x0 = label_w, w = b->value * scale;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", label_w - 8, y + 12);
        xml_text(f, b->label);
        fprintf(f, "</text>\n<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n",
                x0, y, w > 0.5 ? w : 0.5, BAR_H, b->color);
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"whisker\"/>\n",
                x0 + b->lo * scale, x0 + b->hi * scale, y + BAR_H / 2, y + BAR_H / 2);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.4g %s%s%s</text>\n", x0 + b->hi * scale + 6, y + 12,
                b->value, unit, b->note[0] ? ", " : "", b->note);
    }
    return y + 10;
}

void bench_print_svg(FILE *f, const bench_opts *o, const bench_report *r)
{
    static bar bars[2 * BENCH_MAX_ROWS];
    int nw = 0, nk = 0;
    for (int i = 0; i < r->n_work; i++, nw++) {
        const bench_workload *w = &r->work[i];
        bar *b = &bars[nw];
        char shape[48];
        bench_workload_shape(w, shape, sizeof shape);
        snprintf(b->label, sizeof b->label, "%s%s %s, %dt", w->test,
                 bench_weights_suffix(w->weights), shape, (int)w->threads);
        b->value = bench_tok_s(w, w->sec.median);
        b->lo = bench_tok_s(w, w->sec.max), b->hi = bench_tok_s(w, w->sec.min);
        b->color = !strncmp(w->test, "train", 5) ? "#c0504d" : !strncmp(w->test, "decode", 6) ? "#4f81bd" : "#9bbb59";
        b->note[0] = 0;
    }
    bar *kb = bars + nw;
    for (int i = 0; i < r->n_peak; i++, nk++) {
        const bench_peak *p = &r->peak[i];
        snprintf(kb[nk].label, sizeof kb[nk].label, "FMA %s, %dt",
                 p->kernels ? "(the kernels' width)" : "peak (probe)", (int)p->threads);
        kb[nk].value = p->flops / p->sec.median * 1e-9;
        kb[nk].lo = p->flops / p->sec.max * 1e-9, kb[nk].hi = p->flops / p->sec.min * 1e-9;
        kb[nk].color = "#7f7f7f";
        kb[nk].note[0] = 0;
    }
    for (int i = 0; i < r->n_kern; i++) {
        const bench_kernel *k = &r->kern[i];
        /* the products (GFLOP/s), at the first thread count: a chart, not the table */
        if (!k->exact || k->flops <= 0 || k->threads != o->threads[0]) continue;
        double peak = bench_peak_gflops(r, k->threads);
        snprintf(kb[nk].label, sizeof kb[nk].label, "%s %s, %dt", k->name, k->shape, (int)k->threads);
        const double work = bench_kernel_work(k) * k->flops * 1e-9;
        kb[nk].value = work / k->sec.median;
        kb[nk].lo = work / k->sec.max, kb[nk].hi = work / k->sec.min;
        kb[nk].color = "#8064a2";
        if (peak > 0) snprintf(kb[nk].note, sizeof kb[nk].note, "%.0f%% of peak", 100 * kb[nk].value / peak);
        else kb[nk].note[0] = 0;
        nk++;
    }
    size_t longest = 0;
    for (int i = 0; i < nw + nk; i++)
        if (strlen(bars[i].label) > longest) longest = strlen(bars[i].label);
    const int label_w = 16 + (int)(CHAR_W * (double)longest), width = label_w + BAR_W + VALUE_W;
    const int height = 70 + (nw + nk) * ROW_H + (nk ? 38 : 0) + 20;
    const ngpt_config *c = &o->cfg;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(f, "<style>.title{font-weight:bold;font-size:14px}.small{fill:#555;font-size:11px}"
               ".whisker{stroke:#222;stroke-width:1.5}</style>\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"10\" y=\"16\" class=\"small\">");
    xml_text(f, ngpt_build_info());
    fprintf(f, "</text>\n<text x=\"10\" y=\"31\" class=\"small\">");
    xml_text(f, r->cpu);
    fprintf(f, " — %s — V=%d T=%d C=%d L=%d H=%d d_ff=%d</text>\n", r->date, (int)c->vocab_size,
            (int)c->context_len, (int)c->d_model, (int)c->n_layers, (int)c->n_heads, (int)c->d_ff);
    int y = panel(f, 36, label_w, "tokens/s per workload (median; whisker: min – max)", "tok/s", bars, nw);
    if (nk)
        panel(f, y, label_w, "GFLOP/s of the products against the FMA peak measured in the same run",
              "GFLOP/s", kb, nk);
    fprintf(f, "</svg>\n");
}
