/* cmd_quantize.c — `ngpt quantize IN OUT [--weights q8|q4] [--lm-head q8|q4]`:
 * a float32 model's 8-bit or 4-bit twin. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt quantize IN OUT [--weights q8|q4] [--lm-head q8|q4]\n\n"
    "Reads the float32 model IN and writes OUT with quantized weights:\n"
    "  --weights q8  (the default) every Linear's weight and the lm_head (tied: the\n"
    "                embedding too) become int8 with one float scale per group of\n"
    "                32 inputs, about a quarter of the bytes;\n"
    "  --weights q4  the blocks' Linear weights become 4-bit (-8..7, one float scale\n"
    "                per 32 inputs, 5 bits a weight); the lm_head stays 8-bit\n"
    "                unless --lm-head q4;\n"
    "  --lm-head q4  (with --weights q4) the lm_head (tied: the embedding) 4-bit too:\n"
    "                fewer bytes read per token (Qwen2.5-0.5B: 18%), coarser logits.\n"
    "LayerNorms, biases and positions stay float32. Every machine writes the same\n"
    "bytes. OUT runs with generate, chat, trace, eval, checksum and bench like any\n"
    "model (the same logits on every build); it cannot be trained: train IN and\n"
    "quantize again. A q8 model does not become q4: quantize its float32 original.\n"
    "docs/FORMAT.md describes the file, docs/BENCH.md its speed.\n";

/* On a terminal: the quantizing as a percentage on stderr, rewritten in
 * place (the library's progress callback, stage NGPT_PROGRESS_QUANTIZE). */
static bool show_progress(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    if (stage != NGPT_PROGRESS_QUANTIZE) return true;
    *(bool *)user = done < total;
    fprintf(stderr, "\rngpt quantize: %3d%% of %.1f M weights",
            total ? (int)(done * 100 / total) : 100, (double)total / 1e6);
    if (done == total) fputc('\n', stderr);
    return true;
}

static long long file_bytes(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

int cli_cmd_quantize(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *in = NULL, *out = NULL, *weights = "q8", *v;
    bool head4 = false;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--weights", &weights)) {
        } else if (cli_opt(&a, "--lm-head", &v)) {
            if (!cli_parse_lm_head(a.cmd, v, &head4)) return CLI_USAGE;
        } else if (cli_arg(&a)[0] != '-' && !in) {
            in = cli_arg(&a);
        } else if (cli_arg(&a)[0] != '-' && !out) {
            out = cli_arg(&a);
        } else {
            return cli_unknown(&a);
        }
    }
    if (!in || !out)
        return cli_error(a.cmd, CLI_USAGE, "an input and an output FILE are required (see ngpt "
                         "quantize --help)");
    const bool q4 = !strcmp(weights, "q4");
    if (!q4 && strcmp(weights, "q8"))
        return cli_error(a.cmd, CLI_USAGE, "--weights expects q8 or q4, got \"%s\"", weights);
    if (head4 && !q4)
        return cli_error(a.cmd, CLI_USAGE, "--lm-head q4 needs --weights q4 (an 8-bit model "
                         "keeps an 8-bit lm_head)");
    /* the file is read once: the model answers config and state */
    ngpt_model *model = NULL;
    ngpt_config cfg;
    ngpt_train_state ts = {0};
    if (ngpt_model_open(&model, in) || ngpt_model_config(model, &cfg) ||
        ngpt_model_train_state(model, &ts)) {
        ngpt_model_close(model);
        return cli_library_failed(a.cmd);
    }
    int rc = CLI_OK;
    if (cfg.weights == NGPT_WEIGHTS_Q8 && q4)
        rc = cli_error(a.cmd, CLI_FAILED, "%s holds 8-bit weights (weights=q8), which do not "
                       "become 4-bit (rounding rounded values again loses more than either): "
                       "quantize its float32 original with --weights q4", in);
    else if (cfg.weights != NGPT_WEIGHTS_F32)
        rc = cli_error(a.cmd, CLI_FAILED, "%s holds %s weights already", in,
                       cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit");
    if (rc) {
        ngpt_model_close(model);
        return rc;
    }
    cfg.weights = q4 ? NGPT_WEIGHTS_Q4 : NGPT_WEIGHTS_Q8;
    cfg.lm_head_q4 = head4;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = 1;      /* no forward runs: the smallest arena holding the weights */
    ngpt_context *ctx = NULL;
    bool open_line = false;
    if (isatty(fileno(stderr))) ngpt_progress_callback_set(show_progress, &open_line);
    /* the model's weights quantized as they are copied; its tokenizer kept */
    ngpt_status st = ngpt_context_init(&ctx, model, &cfg, &shape, NULL, 0);
    if (!st) st = ngpt_context_save(ctx, out);
    ngpt_progress_callback_set(NULL, NULL);
    if (open_line) fputc('\n', stderr);
    ngpt_context_free(ctx);
    ngpt_model_close(model);
    if (st) return cli_library_failed(a.cmd);
    const long long before = file_bytes(in), after = file_bytes(out);
    printf("wrote %s: %s weights%s, %lld bytes (%s: %lld bytes%s, %.2fx smaller)\n", out,
           q4 ? "4-bit" : "8-bit", head4 ? " and lm_head" : "", after, in, before,
           ts.has_state ? " with its optimizer state, which a quantized model does not keep" : "",
           after > 0 ? (double)before / (double)after : 0.0);
    return CLI_OK;
}
