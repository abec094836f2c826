/* cmd_init.c — `ngpt init`: a model with fresh weights, saved to a file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt init --out FILE [--seed S] [--config key=value ...] [--tokenizer FILE]\n\n"
    "Creates a model with weights drawn from Philox keyed by the seed (the same\n"
    "model on every machine) and saves it atomically.\n\n"
    "  --out FILE         checkpoint to write (required)\n"
    "  --tokenizer FILE   a model of this BPE tokenizer's tokens (a tokenizer file or a\n"
    "                     checkpoint that carries one): V = its tokens, and the file\n"
    "                     carries it\n"
    "  --seed S           weight seed (default 42)\n"
    "  --config key=value set a config field (repeatable): V T C L H d_ff dropout\n"
    "                     rope_theta (defaults V=256 T=256 C=256 L=4 H=4 d_ff=1024\n"
    "                     dropout=0.1 rope_theta=10000), and the variants\n"
    "                     qkv_bias proj_bias tie_lm_head final_norm norm=pre|post|sandwich\n"
    "                     pos=rope|sinusoidal|learned gelu=exact|tanh\n"
    "                     norm_type=layer|rms norm_eps mlp=gelu|swiglu|geglu mlp_bias\n"
    "                     kv_heads head_dim rope_pairs=interleaved|halves\n"
    "                     weights=f32|q8 (README, \"Config keys\")\n";

int cli_cmd_init(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    ngpt_config cfg = ngpt_config_default();
    uint64_t seed = 42;
    const char *out = NULL, *tok_path = NULL, *v;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--out", &v)) {
            out = v;
        } else if (cli_opt(&a, "--tokenizer", &v)) {
            tok_path = v;
        } else if (cli_opt(&a, "--seed", &v)) {
            if (v && !cli_parse_u64(a.cmd, "--seed", v, &seed)) return CLI_USAGE;
        } else if (cli_opt(&a, "--config", &v)) {
            ngpt_status st;
            if (v && (st = ngpt_config_set(&cfg, v)))
                return cli_error(a.cmd, CLI_USAGE, "%s", cli_library_error());
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!out) return cli_error(a.cmd, CLI_USAGE, "--out FILE is required (see ngpt init --help)");
    ngpt_tokenizer *tok = NULL;
    ngpt_tokenizer_info ti;
    if (tok_path) {
        int rc = cli_load_tokenizer(a.cmd, tok_path, &tok);
        if (rc) return rc;
        ngpt_tokenizer_describe(tok, &ti);
        cfg.vocab_size = ti.n_tokens;
    }
    ngpt_status st = ngpt_config_validate(&cfg);
    if (st) {
        ngpt_tokenizer_free(tok);
        return cli_error(a.cmd, CLI_USAGE, "%s", cli_library_error());
    }

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = 1;      /* no forward runs: the smallest arena holding the parameters */
    ngpt_context *ctx;
    if ((st = ngpt_context_init(&ctx, NULL, &cfg, &shape, NULL, 0))) {
        ngpt_tokenizer_free(tok);
        return cli_library_failed(a.cmd);
    }
    if (!(st = ngpt_context_params_init(ctx, seed)) && !(st = ngpt_context_tokenizer_set(ctx, tok)))
        st = ngpt_context_save(ctx, out);
    size_t n_params = 0;
    ngpt_config_param_count(&cfg, &n_params);
    ngpt_context_free(ctx);
    ngpt_tokenizer_free(tok);
    if (st) return cli_library_failed(a.cmd);
    char desc[768];
    ngpt_config_format(&cfg, desc, sizeof desc);
    printf("wrote %s: %zu parameters, seed %llu, %s\n", out, n_params, (unsigned long long)seed, desc);
    return CLI_OK;
}
