/* cmd_info.c — `ngpt info FILE`: what a checkpoint holds and what it needs. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt info FILE\n\n"
    "Verifies a checkpoint and prints its config, parameter count, tokenizer and\n"
    "the arena bytes a context needs: inference (batch 1, seq T) and training\n"
    "(batch 32, seq T).\n";

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
    ngpt_config_format(&cfg, desc, sizeof desc);
    ngpt_config_param_count(&cfg, &n_params);
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER), st_ = ngpt_shape_default(NGPT_MODE_TRAIN);
    if ((st = ngpt_arena_size(&cfg, &si, &infer)) || (st = ngpt_arena_size(&cfg, &st_, &train)))
        return cli_library_failed(a.cmd);
    printf("file:        %s\n", path);
    printf("config:      %s\n", desc);
    printf("parameters:  %zu (%.2f MiB as float32)\n", n_params, n_params * 4.0 / 1048576.0);
    printf("arena infer: %zu bytes (%.1f MiB) at batch 1, seq %d\n", infer, infer / 1048576.0,
           (int)cfg.context_len);
    printf("arena train: %zu bytes (%.1f MiB) at batch 32, seq %d\n", train, train / 1048576.0,
           (int)cfg.context_len);
    return print_tokenizer(a.cmd, path);
}
