/* cmd_info.c — `ngpt info FILE` or `ngpt info --config ...`: what a model
 * holds and what it needs: parameters, file sizes (f32, q8 and q4) and
 * arenas (inference with each weight type, fine-tuning at a batch shape). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt info FILE [--batch B] [--seq T] [--threads N]\n"
    "       ngpt info config.json [--batch B] [--seq T] [--threads N]\n"
    "       ngpt info MODEL.bin [--batch B] [--seq T] [--threads N]\n"
    "       ngpt info --config key=value ... [--tokenizer FILE] [--batch B] [--seq T]\n\n"
    "Verifies a model file and prints its size, config, weight type (f32, q8 or q4),\n"
    "parameter count, tokenizer, the file sizes of its float32, 8-bit and 4-bit\n"
    "forms and the arena bytes a context holding the weights needs: inference with\n"
    "each weight type in the library's default plan (arena infer: batch 1, passes of\n"
    "at most 512 positions, the logits of the last one: what generation needs, and\n"
    "what ngpt generate and chat plan), the full plan (arena full: one pass of T,\n"
    "every position's logits), and training or fine-tuning (ngpt train --init) at\n"
    "--batch B (32) and --seq T (the context). With --config instead of FILE it\n"
    "sizes a model that does not exist yet (ngpt init --help lists the keys;\n"
    "--tokenizer adds that tokenizer to the file sizes), and with a Hugging Face\n"
    "GPT-2 config.json the model ngpt import would make of it (sizes without the\n"
    "tokenizer), before downloading its weights; a llama2.c MODEL.bin (a name ending\n"
    "in .bin) is sized from its header alone, as ngpt import --llama2c would\n"
    "make it (the header is enough: the file need not be complete). The arenas are exact\n"
    "(ngpt_context_arena_size): weights, gradients, AdamW moments, activations, KV\n"
    "cache (a model file's inference contexts share its weights instead).\n"
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
    if (ti.rule == NGPT_MERGE_SCORES) {
        printf("tokenizer:   scored (llama2.c's), %d tokens (BOS %d, end %d), checksum %016llx "
               "(ngpt tokenizer info %s)\n", (int)ti.n_tokens, (int)ti.bos_id, (int)ti.end_id,
               (unsigned long long)ti.checksum, path);
        return;
    }
    char bos[32] = "";
    if (ti.bos_id >= 0) snprintf(bos, sizeof bos, "BOS %d, ", (int)ti.bos_id);
    printf("tokenizer:   BPE, %d tokens (%d merges, %d special; %send %d), checksum %016llx "
           "(ngpt tokenizer info %s)\n", (int)ti.n_tokens, (int)ti.n_merges, (int)ti.n_special,
           bos, (int)ti.end_id, (unsigned long long)ti.checksum, path);
}

/* What a model of some config takes: its parameters, and its files and
 * inference arenas with each weight type (f32, q8, q4), and the training arena. */
enum { N_KINDS = 3 };
static const ngpt_weights KINDS[N_KINDS] = {NGPT_WEIGHTS_F32, NGPT_WEIGHTS_Q8, NGPT_WEIGHTS_Q4};
static const char *const KIND_NAMES[N_KINDS] = {"f32", "q8", "q4"};
typedef struct sizes {
    size_t params, file[N_KINDS], infer[N_KINDS], full[N_KINDS], train;
} sizes;

/* An arena or file that does not fit in size_t here (a 32-bit build) is
 * TOO_LARGE: its line says so and the other sizes are still printed. */
#define TOO_LARGE SIZE_MAX
static ngpt_status size_or_too_large(ngpt_status st, size_t *bytes)
{
    if (st == NGPT_ERR_OVERFLOW) *bytes = TOO_LARGE;
    return st == NGPT_ERR_OVERFLOW ? NGPT_OK : st;
}

/* "N bytes (M MiB)", or why there is no N. */
static const char *bytes_text(char buf[96], size_t bytes)
{
    if (bytes == TOO_LARGE)
        snprintf(buf, 96, "too large for this machine's size_t (a 32-bit build)");
    else
        snprintf(buf, 96, "%zu bytes (%.1f MiB)", bytes, mib(bytes));
    return buf;
}

/* Computes every size first, so that a bad shape prints nothing but the error. */
static int compute_sizes(const char *cmd, const ngpt_config *cfg, const ngpt_tokenizer *tok,
                         int32_t batch, int32_t seq, int32_t threads, sizes *z)
{
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER), stt = ngpt_shape_default(NGPT_MODE_TRAIN);
    si.threads = stt.threads = threads;
    ngpt_shape sf = si;         /* the full plan: one pass of T, every position's logits */
    sf.seq = cfg->context_len, sf.logits_rows = NGPT_LOGITS_ALL;
    stt.batch = batch, stt.seq = seq;
    ngpt_config c = *cfg;
    if (ngpt_config_param_count(cfg, &z->params)) return cli_library_failed(cmd);
    for (int i = 0; i < N_KINDS; i++) {
        c.weights = KINDS[i];
        if (size_or_too_large(ngpt_config_file_size(&c, tok, &z->file[i]), &z->file[i]) ||
            size_or_too_large(ngpt_context_arena_size(NULL, &c, &si, &z->infer[i]), &z->infer[i]) ||
            size_or_too_large(ngpt_context_arena_size(NULL, &c, &sf, &z->full[i]), &z->full[i]))
            return cli_library_failed(cmd);
    }
    c.weights = NGPT_WEIGHTS_F32;
    if (size_or_too_large(ngpt_context_arena_size(NULL, &c, &stt, &z->train), &z->train))
        return cli_library_failed(cmd);
    return CLI_OK;
}

static void print_sizes(const ngpt_config *cfg, const ngpt_tokenizer *tok, const sizes *z,
                        int32_t batch, int32_t seq, int32_t threads)
{
    const int own = cfg->weights == NGPT_WEIGHTS_Q8 ? 1 : cfg->weights == NGPT_WEIGHTS_Q4 ? 2 : 0;
    const int T = (int)cfg->context_len, S = (int)(seq ? seq : T);
    const char *th = threads > 1 ? "s" : "";
    char b0[96], b1[96], b2[96];
    printf("parameters:  %zu (%.2f MiB as float32)\n", z->params, mib(z->params * 4));
    printf("file size:   f32 %s, q8 %s, q4 %s%s\n", bytes_text(b0, z->file[0]),
           bytes_text(b1, z->file[1]), bytes_text(b2, z->file[2]), tok ? ", with the tokenizer" : "");
    const int pass = T < NGPT_SEQ_INFER_DEFAULT ? T : NGPT_SEQ_INFER_DEFAULT;
    printf("arena infer: %s at batch 1 with %s weights", bytes_text(b0, z->infer[own]),
           KIND_NAMES[own]);
    for (int i = 0, sep = 0; i < N_KINDS; i++)
        if (i != own) printf("%s %s %s", sep++ ? "," : ";", KIND_NAMES[i], bytes_text(b0, z->infer[i]));
    printf(" (the default plan: passes of at most %d positions, the logits of the last one; "
           "%d thread%s)\n", pass, (int)threads, th);
    printf("arena full: %s at batch 1, seq %d with %s weights", bytes_text(b0, z->full[own]), T,
           KIND_NAMES[own]);
    for (int i = 0, sep = 0; i < N_KINDS; i++)
        if (i != own) printf("%s %s %s", sep++ ? "," : ";", KIND_NAMES[i], bytes_text(b0, z->full[i]));
    printf(" (one pass of T, every position's logits)\n");
    if (own)
        printf("arena train: none: %s model is not trained (its float32 original needs %s at "
               "batch %d, seq %d)\n", own == 1 ? "an 8-bit" : "a 4-bit", bytes_text(b0, z->train),
               (int)batch, S);
    else
        printf("arena train: %s at batch %d, seq %d (%d thread%s; ngpt train --init fine-tunes "
               "it)\n", bytes_text(b0, z->train), (int)batch, S, (int)threads, th);
}

/* A model file: opened (verified) once, its own size, then print_sizes. */
static int info_file(const char *cmd, const char *path, int32_t batch, int32_t seq, int32_t threads)
{
    ngpt_config cfg;
    ngpt_model *m;
    const ngpt_tokenizer *tok = NULL;
    if (ngpt_model_open(&m, path) || ngpt_model_config(m, &cfg) || ngpt_model_tokenizer(m, &tok)) {
        ngpt_model_close(m);
        return cli_library_failed(cmd);
    }
    sizes z;
    int rc = compute_sizes(cmd, &cfg, tok, batch, seq, threads, &z);
    if (rc) {
        ngpt_model_close(m);
        return rc;
    }
    char desc[512];
    ngpt_config_format(&cfg, desc, sizeof desc);
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
    print_sizes(&cfg, tok, &z, batch, seq, threads);
    print_tokenizer(tok, path);
    ngpt_model_close(m);
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
    if (n >= 4 && !strcmp(path + n - 4, ".bin")) {      /* llama2.c's model.bin, by its header */
        if (ngpt_import_llama2c_config(path, &cfg)) return cli_library_failed(a.cmd);
        return info_config(a.cmd, &cfg, NULL, batch, seq, threads);
    }
    if (path) return info_file(a.cmd, path, batch, seq, threads);
    if (ngpt_config_validate(&cfg)) return cli_error(a.cmd, CLI_USAGE, "%s", cli_library_error());
    return info_config(a.cmd, &cfg, tok_path, batch, seq, threads);
}
