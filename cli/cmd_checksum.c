/* cmd_checksum.c — `ngpt checksum FILE`: XXH3 checksums that must be the same
 * on every build and machine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt checksum FILE [--prompt TEXT] [--seed S] [--step N] [--threads N]\n\n"
    "Prints one name=<16 hex digits> line each for:\n"
    "  params        all parameters\n"
    "  logits_eval   the logits over the prompt's tokens (its bytes for a byte-level\n"
    "                model), eval mode\n"
    "  logits_train  the same with dropout on, masks keyed by (seed, step)\n"
    "Every build (scalar, AVX2, NEON; x86 or ARM; any thread count) prints the\n"
    "same lines for the same file and arguments.\n\n"
    "  --prompt TEXT   text to run (default \"Hello, ngpt!\"), at most T tokens\n"
    "  --seed S        dropout seed (default 42)\n"
    "  --step N        dropout step (default 0)\n"
    CLI_THREADS_HELP;

int cli_cmd_checksum(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *path = NULL, *prompt = "Hello, ngpt!", *v;
    uint64_t seed = 42, step = 0;
    int32_t threads = 0;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--prompt", &v)) {
            prompt = v;
        } else if (cli_opt(&a, "--seed", &v)) {
            if (v && !cli_parse_u64(a.cmd, "--seed", v, &seed)) return CLI_USAGE;
        } else if (cli_opt(&a, "--step", &v)) {
            if (v && !cli_parse_u64(a.cmd, "--step", v, &step)) return CLI_USAGE;
        } else if (cli_opt(&a, "--threads", &v)) {
            if (v && !cli_parse_threads(a.cmd, v, &threads)) return CLI_USAGE;
        } else if (cli_arg(&a)[0] != '-' && !path) {
            path = cli_arg(&a);
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!path) return cli_error(a.cmd, CLI_USAGE, "a checkpoint FILE is required (see ngpt checksum --help)");
    if (!prompt[0]) return cli_error(a.cmd, CLI_USAGE, "--prompt must not be empty");

    ngpt_config cfg;
    ngpt_model *m;
    const ngpt_tokenizer *tk = NULL;
    ngpt_status st = ngpt_model_open(&m, path);     /* the one read of the file */
    if (!st) st = ngpt_model_config(m, &cfg);
    if (!st) st = ngpt_model_tokenizer(m, &tk);
    if (st) {
        ngpt_model_close(m);
        return cli_library_failed(a.cmd);
    }
    int32_t *tokens;
    size_t n;
    int rc = cli_encode(a.cmd, tk, prompt, strlen(prompt), &tokens, &n);
    if (!rc && n > (size_t)cfg.context_len)
        rc = cli_error(a.cmd, CLI_USAGE, "the prompt has %zu %s but the model's context is T=%d",
                       n, tk ? "tokens" : "bytes", (int)cfg.context_len);
    if (rc) {
        free(tokens);
        ngpt_model_close(m);
        return rc;
    }
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = (int32_t)n;
    shape.logits_rows = NGPT_LOGITS_ALL;    /* the checksum covers every position */
    shape.threads = threads;
    ngpt_context *ctx;
    if ((st = cli_model_context(m, &shape, &ctx))) {
        free(tokens);
        ngpt_model_close(m);
        return cli_library_failed(a.cmd);
    }
    uint64_t h_params = 0, h_eval = 0, h_train = 0;
    ngpt_context_params_checksum(ctx, &h_params);
    if (!(st = ngpt_context_forward(ctx, tokens, 1, (int32_t)n, NULL, NULL))) {
        ngpt_context_logits_checksum(ctx, &h_eval);
        ngpt_context_dropout_set(ctx, true, seed, step);
        if (!(st = ngpt_context_forward(ctx, tokens, 1, (int32_t)n, NULL, NULL)))
            ngpt_context_logits_checksum(ctx, &h_train);
    }
    cli_close_model(m, ctx);
    free(tokens);
    if (st) return cli_library_failed(a.cmd);
    printf("params=%016" PRIx64 "\nlogits_eval=%016" PRIx64 "\nlogits_train=%016" PRIx64 "\n",
           h_params, h_eval, h_train);
    return CLI_OK;
}
