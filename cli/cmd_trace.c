/* cmd_trace.c — `ngpt trace`: the attention maps of a prompt (pre-dropout
 * probabilities of a full forward, docs/DESIGN.md §1) as an SVG with one heatmap per
 * head, or as a text table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lora.h"

static const char *const HELP =
    "usage: ngpt trace --model FILE --prompt TEXT [--layer L] (--svg OUT.svg | --text)\n"
    "                  [--adapter FILE[:S] ...] [--threads N]\n\n"
    "Runs the prompt's tokens (its bytes for a byte-level model) through the model\n"
    "and draws each head's attention probabilities (rows: queries, columns: keys;\n"
    "darker = more attention), labelled with each token's text (a space as U+2423,\n"
    "control bytes and bytes that are not UTF-8 as \\n \\t \\xNN).\n"
    "  --layer L   only layer L (default: every layer, one row of heads each)\n"
    "  --svg F     write an SVG picture to F\n"
    "  --text      print the maps as tables of probabilities\n"
    CLI_ADAPTER_HELP
    CLI_THREADS_HELP;

/* The length of the valid UTF-8 sequence of 2..4 bytes at p (n left), or 0. */
static size_t utf8_len(const uint8_t *p, size_t n)
{
    size_t len = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (p[0] >= 0xF5 || len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0) ||  /* overlong, surrogate */
        (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))    /* overlong, > U+10FFFF */
        return 0;
    return len;
}

enum { LABEL = 4 * 256 + 1 };      /* the longest escaped token */

/* A printable label for token id: its bytes, a space as U+2423 (open box),
 * control bytes and bytes outside valid UTF-8 as C-style escapes. */
static void label(const ngpt_tokenizer *tok, int32_t id, char out[LABEL])
{
    size_t n, o = 0;
    const uint8_t *b = cli_token_bytes(tok, id, &n);
    if (!b) {                   /* an id >= 256 of a byte-level model */
        snprintf(out, LABEL, "#%d", (int)id);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t u = b[i] >= 0x80 ? utf8_len(b + i, n - i) : 0;
        if (u) {
            memcpy(out + o, b + i, u);
            o += u, i += u;
            continue;
        }
        const uint8_t c = b[i++];
        if (c == '\n') o += (size_t)snprintf(out + o, LABEL - o, "\\n");
        else if (c == '\t') o += (size_t)snprintf(out + o, LABEL - o, "\\t");
        else if (c == ' ') o += (size_t)snprintf(out + o, LABEL - o, "\xe2\x90\xa3");
        else if (c < 32 || c >= 127) o += (size_t)snprintf(out + o, LABEL - o, "\\x%02x", c);
        else out[o++] = (char)c;
    }
    out[o] = 0;
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

/* The columns a label takes (UTF-8 aware). */
static int label_cols(const char *lb)
{
    int cols = 0;
    for (const char *p = lb; *p; p++) cols += ((unsigned char)*p & 0xC0) != 0x80;
    return cols;
}

/* Prints a label right-aligned in `width` columns. */
static void print_label(const char *lb, int width)
{
    int cols = label_cols(lb);
    printf("%*s%s", width - cols > 0 ? width - cols : 0, "", lb);
}

enum { CELL = 16, PAD = 40 };

static void svg_map(FILE *f, const ngpt_tokenizer *tk, const float *p, const int32_t *tok, int n,
                    int x0, int y0, int layer, int head)
{
    char lb[LABEL];
    fprintf(f, "<g transform=\"translate(%d,%d)\">\n", x0, y0);
    fprintf(f, "<text x=\"0\" y=\"-%d\" font-weight=\"bold\">layer %d head %d</text>\n",
            PAD - 12, layer, head);
    for (int j = 0; j < n; j++) {     /* key labels on top, query labels on the left */
        label(tk, tok[j], lb);
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
    cli_adapters ads = {0};
    int r;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if ((r = cli_adapter_option(&a, &ads)) != 0) {
            if (r < 0) return CLI_USAGE;
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
    if (!prompt[0]) return cli_error(a.cmd, CLI_USAGE, "the prompt is empty");
    ngpt_config cfg;
    ngpt_model *m = NULL;
    const ngpt_tokenizer *tk = NULL;
    ngpt_status st = ngpt_model_open(&m, model);       /* the one read of the file */
    if (!st) st = ngpt_model_config(m, &cfg);
    if (!st) st = ngpt_model_tokenizer(m, &tk);
    if (st) {
        ngpt_model_close(m);
        return cli_library_failed(a.cmd);
    }
    int32_t *tok;
    size_t n;
    int rc = cli_encode(a.cmd, tk, prompt, strlen(prompt), &tok, &n);
    const char *unit = tk ? "tokens" : "bytes";
    if (rc) {
        ngpt_model_close(m);
        return rc;
    }
    if (n > (size_t)cfg.context_len || only >= cfg.n_layers) {
        free(tok);
        ngpt_model_close(m);
        if (only >= cfg.n_layers)
            return cli_error(a.cmd, CLI_USAGE, "--layer %d: the model has layers 0..%d", (int)only,
                             (int)cfg.n_layers - 1);
        return cli_error(a.cmd, CLI_USAGE, "the prompt has %zu %s but the model's context is T=%d",
                         n, unit, (int)cfg.context_len);
    }
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = (int32_t)n;
    shape.trace = NGPT_TRACE_FULL;
    shape.threads = threads;
    ngpt_context *ctx = NULL;
    if ((rc = cli_adapters_open(a.cmd, &ads, &shape))) {
        free(tok);
        ngpt_model_close(m);
        return rc;
    }
    if ((st = cli_model_context(m, &shape, &ctx)) ||
        (rc = cli_adapters_apply(a.cmd, &ads, ctx, model)) ||
        (st = ngpt_context_forward(ctx, tok, 1, (int32_t)n, NULL, NULL))) {
        free(tok);
        cli_close_model(m, ctx);
        cli_adapters_close(&ads);
        return rc ? rc : cli_library_failed(a.cmd);
    }
    const int H = cfg.n_heads, first = only < 0 ? 0 : only, last = only < 0 ? cfg.n_layers - 1 : only;
    const int side = (int)n * CELL + PAD + 8;
    char lb[LABEL];
    int width = 6;              /* the text table's columns: the widest label, at least 6 */
    for (size_t j = 0; j < n; j++) {
        label(tk, tok[j], lb);
        if (label_cols(lb) + 1 > width) width = label_cols(lb) + 1;
    }
    FILE *f = NULL;
    if (svg) {
        if (!(f = fopen(svg, "w"))) {
            free(tok);
            cli_close_model(m, ctx);
            cli_adapters_close(&ads);
            return cli_error(a.cmd, CLI_FAILED, "cannot write %s", svg);
        }
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                "width=\"%d\" height=\"%d\" font-family=\"monospace\" font-size=\"10\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                H * side + PAD, (last - first + 1) * side + PAD);
    }
    for (int l = first; l <= last; l++) {
        const float *p;
        size_t count;
        if ((st = ngpt_context_trace(ctx, l, &p, &count))) break;
        for (int h = 0; h < H; h++) {
            const float *m = p + (size_t)h * n * n;
            if (f) svg_map(f, tk, m, tok, (int)n, PAD + h * side, PAD + (l - first) * side, l, h);
            if (!text) continue;
            printf("layer %d head %d\n%*s", l, h, width, "");
            for (size_t j = 0; j < n; j++) label(tk, tok[j], lb), print_label(lb, width);
            putchar('\n');
            for (size_t i = 0; i < n; i++) {
                label(tk, tok[i], lb);
                print_label(lb, width);
                for (size_t j = 0; j < n; j++) printf("%*.3f", width, (double)m[i * n + j]);
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
    cli_close_model(m, ctx);
    cli_adapters_close(&ads);
    if (st) return cli_library_failed(a.cmd);
    if (write_failed) return cli_error(a.cmd, CLI_FAILED, "cannot finish writing %s", svg);
    if (svg) fprintf(stderr, "ngpt trace: wrote %s\n", svg);
    return CLI_OK;
}
