/* cmd_info.c — `ngpt info FILE`: what a checkpoint holds and what it needs. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt info FILE\n\n"
    "Verifies a checkpoint and prints its size, config, weight type (f32, q8 or q4),\n"
    "parameter count, tokenizer and the arena bytes a context needs: inference\n"
    "(batch 1, seq T) and training (batch 32, seq T; float32 models only).\n";

/* The tokenizer line: what the checkpoint carries, or bytes. */
static int print_tokenizer(const char *cmd, const char *path)
{
    ngpt_tokenizer *tok;
    ngpt_tokenizer_info ti;
    if (ngpt_checkpoint_tokenizer(path, &tok)) return cli_library_failed(cmd);
    if (!tok) {
        printf("tokenizer:   none: tokens are bytes\n");
        return CLI_OK;
    }
    ngpt_tokenizer_describe(tok, &ti);
    printf("tokenizer:   BPE, %d tokens (%d merges, %d special; end %d), checksum %016llx "
           "(ngpt tokenizer info %s)\n", (int)ti.n_tokens, (int)ti.n_merges, (int)ti.n_special,
           (int)ti.end_id, (unsigned long long)ti.checksum, path);
    ngpt_tokenizer_free(tok);
    return CLI_OK;
}

int cli_cmd_info(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *path = NULL;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_arg(&a)[0] != '-' && !path) {
            path = cli_arg(&a);
        } else {
            return cli_unknown(&a);
        }
    }
    if (!path) return cli_error(a.cmd, CLI_USAGE, "a checkpoint FILE is required (see ngpt info --help)");
    ngpt_config cfg;
    ngpt_status st = ngpt_checkpoint_config(path, &cfg);
    if (st) return cli_library_failed(a.cmd);
    char desc[256];
    size_t n_params = 0, infer = 0, train = 0;
    const bool q8 = cfg.weights != NGPT_WEIGHTS_F32;    /* quantized: 8-bit or 4-bit */
    ngpt_config_format(&cfg, desc, sizeof desc);
    ngpt_config_param_count(&cfg, &n_params);
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER), st_ = ngpt_shape_default(NGPT_MODE_TRAIN);
    if ((st = ngpt_arena_size(&cfg, &si, &infer)) || (!q8 && (st = ngpt_arena_size(&cfg, &st_, &train))))
        return cli_library_failed(a.cmd);
    struct stat sb;
    const double file = stat(path, &sb) == 0 ? (double)sb.st_size : 0.0;
    printf("file:        %s, %.0f bytes (%.2f MiB)\n", path, file, file / 1048576.0);
    printf("config:      %s\n", desc);
    printf("weights:     %s\n",
           cfg.weights == NGPT_WEIGHTS_Q8 ? "q8: 8-bit Linear weights and lm_head, one float scale "
                                            "per 32 inputs (inference only)"
           : cfg.weights == NGPT_WEIGHTS_Q4 ? "q4: 4-bit Linear weights in the blocks, one float "
                                              "scale per 32 inputs; the lm_head (tied: the "
                                              "embedding) stays 8-bit, which keeps its quality "
                                              "(inference only)"
                                            : "f32: float32");
    printf("parameters:  %zu (%.2f MiB as float32)\n", n_params, n_params * 4.0 / 1048576.0);
    printf("arena infer: %zu bytes (%.1f MiB) at batch 1, seq %d\n", infer, infer / 1048576.0,
           (int)cfg.context_len);
    if (q8)
        printf("arena train: none: a quantized model is not trained (train its float32 original)\n");
    else
        printf("arena train: %zu bytes (%.1f MiB) at batch 32, seq %d\n", train, train / 1048576.0,
               (int)cfg.context_len);
    return print_tokenizer(a.cmd, path);
}
