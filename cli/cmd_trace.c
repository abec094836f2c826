/* cmd_trace.c — `ngpt trace`: the attention maps of a prompt (pre-dropout
 * probabilities of a full forward, docs/DESIGN.md §1) as an SVG with one heatmap per
 * head, or as a text table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt trace --model FILE --prompt TEXT [--layer L] (--svg OUT.svg | --text)\n"
    "                  [--threads N]\n\n"
    "Runs the prompt's bytes through the model and draws each head's attention\n"
    "probabilities (rows: queries, columns: keys; darker = more attention).\n"
    "  --layer L   only layer L (default: every layer, one row of heads each)\n"
    "  --svg F     write an SVG picture to F\n"
    "  --text      print the maps as tables of probabilities\n"
    CLI_THREADS_HELP;

/* A printable label for byte b: itself, or a C-style escape. */
static void label(int b, char out[8])
{
    if (b == '\n') strcpy(out, "\\n");
    else if (b == '\t') strcpy(out, "\\t");
    else if (b == ' ') strcpy(out, "\xe2\x90\xa3");     /* U+2423 open box */
    else if (b < 32 || b >= 127) snprintf(out, 8, "\\x%02x", b);
    else snprintf(out, 8, "%c", b);
}

/* Writes s with XML's special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Prints a label right-aligned in `width` columns (UTF-8 aware). */
static void print_label(const char *lb, int width)
{
    int cols = 0;
    for (const char *p = lb; *p; p++) cols += ((unsigned char)*p & 0xC0) != 0x80;
    printf("%*s%s", width - cols > 0 ? width - cols : 0, "", lb);
}

enum { CELL = 16, PAD = 40 };

static void svg_map(FILE *f, const float *p, const int32_t *tok, int n, int x0, int y0, int layer,
                    int head)
{
    char lb[8];
    fprintf(f, "<g transform=\"translate(%d,%d)\">\n", x0, y0);
    fprintf(f, "<text x=\"0\" y=\"-%d\" font-weight=\"bold\">layer %d head %d</text>\n",
            PAD - 12, layer, head);
    for (int j = 0; j < n; j++) {     /* key labels on top, query labels on the left */
        label(tok[j], lb);
        fprintf(f, "<text x=\"%d\" y=\"-4\" text-anchor=\"middle\">", j * CELL + CELL / 2);
        xml_text(f, lb);
        fputs("</text>\n", f);
        fprintf(f, "<text x=\"-4\" y=\"%d\" text-anchor=\"end\">", j * CELL + CELL - 4);
        xml_text(f, lb);
        fputs("</text>\n", f);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float v = p[(size_t)i * n + j];
            int shade = 255 - (int)(v * 255.0f + 0.5f);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,255)\">"
                    "<title>q %d k %d: %.4f</title></rect>\n", j * CELL, i * CELL, CELL, CELL,
                    shade, shade, i, j, (double)v);
        }
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
            n * CELL, n * CELL);
    fputs("</g>\n", f);
}

int cli_cmd_trace(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *model = NULL, *prompt = NULL, *svg = NULL, *v;
    bool text = false;
    int32_t only = -1, threads = 0;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--model", &v)) {
            model = v;
        } else if (cli_opt(&a, "--prompt", &v)) {
            prompt = v;
        } else if (cli_opt(&a, "--svg", &v)) {
            svg = v;
        } else if (cli_opt(&a, "--layer", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--layer", v, 0, 1 << 20, &only)) return CLI_USAGE;
        } else if (cli_flag(&a, "--text")) {
            text = true;
        } else if (cli_opt(&a, "--threads", &v)) {
            if (!v || !cli_parse_threads(a.cmd, v, &threads)) return CLI_USAGE;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!model || !prompt) return cli_error(a.cmd, CLI_USAGE, "--model and --prompt are required");
    if (!svg && !text) return cli_error(a.cmd, CLI_USAGE, "give --svg OUT.svg or --text");
    size_t n = strlen(prompt);
    if (n == 0) return cli_error(a.cmd, CLI_USAGE, "the prompt is empty");
    ngpt_config cfg;
    ngpt_status st = ngpt_checkpoint_config(model, &cfg);
    if (st) return cli_library_failed(a.cmd);
    if (n > (size_t)cfg.context_len)
        return cli_error(a.cmd, CLI_USAGE, "the prompt has %zu bytes but the model's context is T=%d",
                         n, (int)cfg.context_len);
    if (only >= cfg.n_layers)
        return cli_error(a.cmd, CLI_USAGE, "--layer %d: the model has layers 0..%d", (int)only,
                         (int)cfg.n_layers - 1);
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = (int32_t)n;
    shape.trace = NGPT_TRACE_FULL;
    shape.threads = threads;
    ngpt_context *ctx;
    if ((st = cli_open_model(model, &shape, &ctx))) return cli_library_failed(a.cmd);
    int32_t *tok = malloc(n * sizeof(int32_t));
    if (!tok) return cli_error(a.cmd, CLI_FAILED, "out of memory");
    for (size_t i = 0; i < n; i++) tok[i] = (unsigned char)prompt[i];
    if ((st = ngpt_model_forward(ctx, tok, 1, (int32_t)n, NULL, NULL))) {
        free(tok);
        ngpt_context_free(ctx);
        return cli_library_failed(a.cmd);
    }
    const int H = cfg.n_heads, first = only < 0 ? 0 : only, last = only < 0 ? cfg.n_layers - 1 : only;
    const int side = (int)n * CELL + PAD + 8;
    FILE *f = NULL;
    if (svg) {
        if (!(f = fopen(svg, "w"))) {
            free(tok);
            ngpt_context_free(ctx);
            return cli_error(a.cmd, CLI_FAILED, "cannot write %s", svg);
        }
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                "width=\"%d\" height=\"%d\" font-family=\"monospace\" font-size=\"10\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                H * side + PAD, (last - first + 1) * side + PAD);
    }
    char lb[8];
    for (int l = first; l <= last; l++) {
        const float *p;
        size_t count;
        if ((st = ngpt_trace_data(ctx, l, &p, &count))) break;
        for (int h = 0; h < H; h++) {
            const float *m = p + (size_t)h * n * n;
            if (f) svg_map(f, m, tok, (int)n, PAD + h * side, PAD + (l - first) * side, l, h);
            if (!text) continue;
            printf("layer %d head %d\n%6s", l, h, "");
            for (size_t j = 0; j < n; j++) label(tok[j], lb), print_label(lb, 6);
            putchar('\n');
            for (size_t i = 0; i < n; i++) {
                label(tok[i], lb);
                print_label(lb, 6);
                for (size_t j = 0; j < n; j++) printf(" %5.3f", (double)m[i * n + j]);
                putchar('\n');
            }
        }
    }
    bool write_failed = false;
    if (f) {
        fputs("</svg>\n", f);
        write_failed = fclose(f) != 0;
    }
    free(tok);
    ngpt_context_free(ctx);
    if (st) return cli_library_failed(a.cmd);
    if (write_failed) return cli_error(a.cmd, CLI_FAILED, "cannot finish writing %s", svg);
    if (svg) fprintf(stderr, "ngpt trace: wrote %s\n", svg);
    return CLI_OK;
}
