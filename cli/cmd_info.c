/* cmd_info.c — `ngpt info FILE` or `ngpt info --config ...`: what a model
 * holds and what it needs: parameters, file sizes (float32 and 8-bit) and
 * arenas (inference with either weights, fine-tuning at a batch shape). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt info FILE [--batch B] [--seq T] [--threads N]\n"
    "       ngpt info config.json [--batch B] [--seq T] [--threads N]\n"
    "       ngpt info --config key=value ... [--tokenizer FILE] [--batch B] [--seq T]\n\n"
    "Verifies a checkpoint and prints its size, config, weight type (f32 or q8),\n"
    "parameter count, tokenizer, the file sizes of its float32 and 8-bit forms\n"
    "and the arena bytes a context needs: inference (batch 1, seq T) with float32\n"
    "and with 8-bit weights, and training or fine-tuning (ngpt train --init) at\n"
    "--batch B (32) and --seq T (the context). With --config instead of FILE it\n"
    "sizes a model that does not exist yet (ngpt init --help lists the keys;\n"
    "--tokenizer adds that tokenizer to the file sizes), and with a Hugging Face\n"
    "GPT-2 config.json the model ngpt import would make of it (sizes without the\n"
    "tokenizer), before downloading its weights. The arenas are exact\n"
    "(ngpt_arena_size): weights, gradients, AdamW moments, activations, KV cache.\n"
    "  --threads N        the thread count the arenas are planned for (1)\n";

static double mib(size_t bytes) { return (double)bytes / 1048576.0; }

/* The tokenizer line: what the checkpoint carries, or bytes. */
static void print_tokenizer(const ngpt_tokenizer *tok, const char *path)
{
    ngpt_tokenizer_info ti;
    if (!tok) {
        printf("tokenizer:   none: tokens are bytes\n");
        return;
    }
    ngpt_tokenizer_describe(tok, &ti);
    printf("tokenizer:   BPE, %d tokens (%d merges, %d special; end %d), checksum %016llx "
           "(ngpt tokenizer info %s)\n", (int)ti.n_tokens, (int)ti.n_merges, (int)ti.n_special,
           (int)ti.end_id, (unsigned long long)ti.checksum, path);
}

/* What a model of some config takes: its parameters, files and arenas. */
typedef struct sizes {
    size_t params, file_f32, file_q8, infer_f32, infer_q8, train;
} sizes;

/* Computes every size first, so that a bad shape prints nothing but the error. */
static int compute_sizes(const char *cmd, const ngpt_config *cfg, const ngpt_tokenizer *tok,
                         int32_t batch, int32_t seq, int32_t threads, sizes *z)
{
    ngpt_config f32 = *cfg, i8 = *cfg;
    f32.weights = NGPT_WEIGHTS_F32, i8.weights = NGPT_WEIGHTS_Q8;
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER), stt = ngpt_shape_default(NGPT_MODE_TRAIN);
    si.threads = stt.threads = threads;
    stt.batch = batch, stt.seq = seq;
    if (ngpt_config_param_count(cfg, &z->params) || ngpt_checkpoint_size(&f32, tok, &z->file_f32) ||
        ngpt_checkpoint_size(&i8, tok, &z->file_q8) || ngpt_arena_size(&f32, &si, &z->infer_f32) ||
        ngpt_arena_size(&i8, &si, &z->infer_q8) || ngpt_arena_size(&f32, &stt, &z->train))
        return cli_library_failed(cmd);
    return CLI_OK;
}

static void print_sizes(const ngpt_config *cfg, const ngpt_tokenizer *tok, const sizes *z,
                        int32_t batch, int32_t seq, int32_t threads)
{
    const bool q8 = cfg->weights == NGPT_WEIGHTS_Q8;
    const int T = (int)cfg->context_len, S = (int)(seq ? seq : T);
    const char *th = threads > 1 ? "s" : "";
    const size_t own = q8 ? z->infer_q8 : z->infer_f32, other = q8 ? z->infer_f32 : z->infer_q8;
    printf("parameters:  %zu (%.2f MiB as float32)\n", z->params, mib(z->params * 4));
    printf("file size:   f32 %zu bytes (%.1f MiB), q8 %zu bytes (%.1f MiB)%s\n", z->file_f32,
           mib(z->file_f32), z->file_q8, mib(z->file_q8), tok ? ", with the tokenizer" : "");
    printf("arena infer: %zu bytes (%.1f MiB) at batch 1, seq %d with %s weights; %s %zu bytes "
           "(%.1f MiB) (%d thread%s)\n", own, mib(own), T, q8 ? "q8" : "f32", q8 ? "f32" : "q8",
           other, mib(other), (int)threads, th);
    if (q8)
        printf("arena train: none: an 8-bit model is not trained (its float32 original needs %zu "
               "bytes (%.1f MiB) at batch %d, seq %d)\n", z->train, mib(z->train), (int)batch, S);
    else
        printf("arena train: %zu bytes (%.1f MiB) at batch %d, seq %d (%d thread%s; ngpt train "
               "--init fine-tunes it)\n", z->train, mib(z->train), (int)batch, S, (int)threads, th);
}

/* A checkpoint: verified, its own size, then print_sizes. */
static int info_file(const char *cmd, const char *path, int32_t batch, int32_t seq, int32_t threads)
{
    ngpt_config cfg;
    ngpt_tokenizer *tok = NULL;
    if (ngpt_checkpoint_config(path, &cfg) || ngpt_checkpoint_tokenizer(path, &tok))
        return cli_library_failed(cmd);
    sizes z;
    int rc = compute_sizes(cmd, &cfg, tok, batch, seq, threads, &z);
    if (rc) {
        ngpt_tokenizer_free(tok);
        return rc;
    }
    char desc[512];
    ngpt_config_format(&cfg, desc, sizeof desc);
    struct stat sb;
    const double file = stat(path, &sb) == 0 ? (double)sb.st_size : 0.0;
    printf("file:        %s, %.0f bytes (%.2f MiB)\n", path, file, file / 1048576.0);
    printf("config:      %s\n", desc);
    printf("weights:     %s\n", cfg.weights == NGPT_WEIGHTS_Q8
                                ? "q8: 8-bit Linear weights and lm_head, one float scale per "
                                  "32 inputs (inference only)"
                                : "f32: float32");
    print_sizes(&cfg, tok, &z, batch, seq, threads);
    print_tokenizer(tok, path);
    ngpt_tokenizer_free(tok);
    return CLI_OK;
}

/* --config: a model that does not exist yet. */
static int info_config(const char *cmd, const ngpt_config *cfg, const char *tok_path,
                       int32_t batch, int32_t seq, int32_t threads)
{
    ngpt_tokenizer *tok = NULL;
    if (tok_path) {
        int rc = cli_load_tokenizer(cmd, tok_path, &tok);
        if (rc) return rc;
    }
    sizes z;
    int rc = compute_sizes(cmd, cfg, tok, batch, seq, threads, &z);
    if (!rc) {
        char desc[512];
        ngpt_config_format(cfg, desc, sizeof desc);
        printf("config:      %s\n", desc);
        print_sizes(cfg, tok, &z, batch, seq, threads);
    }
    ngpt_tokenizer_free(tok);
    return rc;
}

int cli_cmd_info(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *path = NULL, *tok_path = NULL, *v;
    ngpt_config cfg = ngpt_config_default();
    bool cfg_given = false, ok = true;
    int32_t batch = 32, seq = 0, threads = 1;
    while (cli_next(&a) && ok) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--config", &v)) {
            if (v && ngpt_config_set(&cfg, v))
                return cli_error(a.cmd, CLI_USAGE, "%s", cli_library_error());
            cfg_given = true;
        } else if (cli_opt(&a, "--tokenizer", &v)) {
            tok_path = v;
        } else if (cli_opt(&a, "--batch", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--batch", v, 1, 1 << 16, &batch);
        } else if (cli_opt(&a, "--seq", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--seq", v, 1, 1 << 20, &seq);
        } else if (cli_opt(&a, "--threads", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--threads", v, 1, 1024, &threads);
        } else if (cli_arg(&a)[0] != '-' && !path) {
            path = cli_arg(&a);
        } else {
            return cli_unknown(&a);
        }
    }
    if (!ok || a.failed) return CLI_USAGE;
    if (path && (cfg_given || tok_path))
        return cli_error(a.cmd, CLI_USAGE, "give a checkpoint FILE or --config (with an "
                         "optional --tokenizer), not both");
    if (!path && !cfg_given)
        return cli_error(a.cmd, CLI_USAGE, "a checkpoint FILE or --config key=value is required "
                         "(see ngpt info --help)");
    const size_t n = path ? strlen(path) : 0;
    if (n >= 5 && !strcmp(path + n - 5, ".json")) {     /* a Hugging Face config.json */
        if (ngpt_import_hf_config(path, &cfg)) return cli_library_failed(a.cmd);
        return info_config(a.cmd, &cfg, NULL, batch, seq, threads);
    }
    if (path) return info_file(a.cmd, path, batch, seq, threads);
    if (ngpt_config_validate(&cfg)) return cli_error(a.cmd, CLI_USAGE, "%s", cli_library_error());
    return info_config(a.cmd, &cfg, tok_path, batch, seq, threads);
}
