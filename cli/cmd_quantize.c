/* cmd_quantize.c — `ngpt quantize IN OUT`: a float32 model's 8-bit twin. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt quantize IN OUT\n\n"
    "Reads the float32 model IN and writes OUT with 8-bit weights (weights=q8):\n"
    "every Linear's weight and the lm_head (tied: the embedding too) become int8\n"
    "with one float scale per group of 32 inputs, about a quarter of the bytes;\n"
    "LayerNorms, biases and positions stay float32. Every machine writes the same\n"
    "bytes. OUT runs with generate, chat, trace, eval, checksum and bench like any\n"
    "model (the same logits on every build); it cannot be trained: train IN and\n"
    "quantize again. docs/FORMAT.md describes the file, docs/BENCH.md its speed.\n";

static long long file_bytes(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

int cli_cmd_quantize(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *in = NULL, *out = NULL;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
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
    ngpt_config cfg;
    ngpt_status st = ngpt_checkpoint_config(in, &cfg);
    if (st) return cli_library_failed(a.cmd);
    if (cfg.weights == NGPT_WEIGHTS_Q8)
        return cli_error(a.cmd, CLI_FAILED, "%s holds 8-bit weights already", in);
    cfg.weights = NGPT_WEIGHTS_Q8;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = 1;      /* no forward runs: the smallest arena holding the weights */
    ngpt_context *ctx;
    ngpt_tokenizer *tok = NULL;     /* a BPE model's: the 8-bit file carries it too */
    if ((st = ngpt_context_init(&ctx, &cfg, &shape, NULL, 0))) return cli_library_failed(a.cmd);
    if (!(st = ngpt_checkpoint_tokenizer(in, &tok)) && tok) st = ngpt_context_tokenizer_set(ctx, tok);
    if (!st && !(st = ngpt_checkpoint_load(ctx, in))) st = ngpt_checkpoint_save(ctx, out);
    ngpt_context_free(ctx);
    ngpt_tokenizer_free(tok);
    if (st) return cli_library_failed(a.cmd);
    const long long before = file_bytes(in), after = file_bytes(out);
    ngpt_train_state ts = {0};
    ngpt_checkpoint_train_state(in, &cfg, &ts);
    printf("wrote %s: 8-bit weights, %lld bytes (%s: %lld bytes%s, %.2fx smaller)\n", out, after,
           in, before, ts.has_state ? " with its optimizer state, which an 8-bit model does not keep" : "",
           after > 0 ? (double)before / (double)after : 0.0);
    return CLI_OK;
}
