/* cmd_info.c — `ngpt info FILE` or `ngpt info --config ...`: what a model
 * holds and what it needs: parameters, file sizes (f32, q8 and q4) and
 * arenas (inference with each weight type, fine-tuning and training a LoRA
 * adapter at a batch shape); or what a LoRA adapter file is (info_adapter). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lora.h"

static const char *const HELP =
    "usage: ngpt info FILE [--batch B] [--seq T] [--threads N] [--lora key=value ...]\n"
    "                 [--grad-checkpoint] [--loss-chunk N] [--kv f32|q8] [--kv-k T] [--kv-v T]\n"
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
    "A model file's \"lora train\" line sizes training a LoRA adapter of it (ngpt\n"
    "train --init FILE --lora ...): the adapter's floats, their gradients and\n"
    "moments, and the activations, beside the model's weights, frozen and shared.\n"
    "An adapter FILE (ngpt train --lora) is described instead: its LoRA config,\n"
    "floats, the model it belongs to (config and identity) and its training state.\n\n"
    "  --threads N        the thread count the arenas are planned for (1)\n"
    "  --lora key=value   the adapter the lora train line sizes (default r=8\n"
    "                     alpha=16 targets=q_proj,v_proj; see ngpt train --help)\n"
    "  --grad-checkpoint, --loss-chunk N  the training arenas with train's options\n"
    "  --kv f32|q8        the inference arenas with this KV cache (generate's --kv;\n"
    "                     --kv-k T, --kv-v T: keys or values alone); the kv cache line\n"
    "                     gives the cache's bytes at T both ways\n";

/* --kv, --kv-k, --kv-v: the inference arenas' KV cache. */
static int16_t info_kv_k, info_kv_v;

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
                         const ngpt_shape *ts, sizes *z)
{
    ngpt_shape si = ngpt_shape_default(NGPT_MODE_INFER), stt = *ts;
    si.threads = ts->threads;
    si.kv_k = info_kv_k, si.kv_v = info_kv_v;
    ngpt_shape sf = si;         /* the full plan: one pass of T, every position's logits */
    sf.seq = cfg->context_len, sf.logits_rows = NGPT_LOGITS_ALL;
    ngpt_config c = *cfg;
    if (ngpt_config_param_count(cfg, &z->params)) return cli_library_failed(cmd);
    for (int i = 0; i < N_KINDS; i++) {
        c.weights = KINDS[i];
        c.lm_head_q4 = KINDS[i] == NGPT_WEIGHTS_Q4 && cfg->lm_head_q4;     /* q4's column: its own */
        if (size_or_too_large(ngpt_config_file_size(&c, tok, &z->file[i]), &z->file[i]) ||
            size_or_too_large(ngpt_context_arena_size(NULL, &c, &si, &z->infer[i]), &z->infer[i]) ||
            size_or_too_large(ngpt_context_arena_size(NULL, &c, &sf, &z->full[i]), &z->full[i]))
            return cli_library_failed(cmd);
    }
    c.weights = NGPT_WEIGHTS_F32, c.lm_head_q4 = false;
    if (size_or_too_large(ngpt_context_arena_size(NULL, &c, &stt, &z->train), &z->train))
        return cli_library_failed(cmd);
    return CLI_OK;
}

/* What a training shape saves, as train's options: "" or ", --grad-checkpoint, --loss-chunk N". */
static const char *savings(const ngpt_shape *ts, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s", ts->recompute ? ", --grad-checkpoint" : "");
    if (ts->loss_chunk) snprintf(buf + n, cap - (size_t)n, ", --loss-chunk %d", (int)ts->loss_chunk);
    return buf;
}

static void print_sizes(const ngpt_config *cfg, const ngpt_tokenizer *tok, const sizes *z,
                        const ngpt_shape *ts)
{
    const int32_t batch = ts->batch, seq = ts->seq, threads = ts->threads;
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
    /* the cache of one sequence at T: T rows of keys and of values a layer,
     * or a local layer's ring of 2 (W + pass) when fewer (docs/GENERATION.md,
     * "Sliding windows: rings") */
    const int64_t KV = cfg->n_kv_heads ? cfg->n_kv_heads : cfg->n_heads;
    const int64_t D = cfg->head_dim ? cfg->head_dim : cfg->d_model / cfg->n_heads;
    const int64_t f32row = KV * D * 4, q8row = KV * ((D + 31) / 32) * 36;
    size_t LT = 0;
    for (int l = 0; l < cfg->n_layers; l++) {
        const int P = cfg->sliding_pattern;
        const bool local = cfg->sliding_window && !(P && (l + 1) % P == 0);
        const size_t ring = 2 * ((size_t)cfg->sliding_window + (size_t)pass);
        LT += local && ring < (size_t)T ? ring : (size_t)T;
    }
    const size_t kv_f32 = LT * (size_t)(2 * f32row), kv_q8 = LT * (size_t)(2 * q8row);
    const size_t kv_now = LT * (size_t)((info_kv_k ? q8row : f32row) + (info_kv_v ? q8row : f32row));
    printf("kv cache:    %s at batch 1, T=%d (keys %s, values %s): f32 %s, q8 %s (--kv q8)\n",
           bytes_text(b0, kv_now), T, info_kv_k ? "q8" : "f32", info_kv_v ? "q8" : "f32",
           bytes_text(b1, kv_f32), bytes_text(b2, kv_q8));
    printf("arena full: %s at batch 1, seq %d with %s weights", bytes_text(b0, z->full[own]), T,
           KIND_NAMES[own]);
    for (int i = 0, sep = 0; i < N_KINDS; i++)
        if (i != own) printf("%s %s %s", sep++ ? "," : ";", KIND_NAMES[i], bytes_text(b0, z->full[i]));
    printf(" (one pass of T, every position's logits)\n");
    if (own)
        printf("arena train: none: %s model is not trained (its float32 original needs %s at "
               "batch %d, seq %d%s)\n", own == 1 ? "an 8-bit" : "a 4-bit", bytes_text(b0, z->train),
               (int)batch, S, savings(ts, b1, sizeof b1));
    else
        printf("arena train: %s at batch %d, seq %d%s (%d thread%s; ngpt train --init fine-tunes "
               "it)\n", bytes_text(b0, z->train), (int)batch, S, savings(ts, b1, sizeof b1),
               (int)threads, th);
}

/* Training the adapter lc would be of m: its arena at the batch shape and
 * its floats (a LoRA config the model cannot take: CLI_USAGE, printed). */
static int lora_sizes(const char *cmd, ngpt_model *m, const ngpt_lora_config *lc,
                      const ngpt_shape *ts, size_t *arena, uint64_t *floats)
{
    ngpt_adapter *ad = NULL;
    ngpt_adapter_info ai;
    ngpt_shape s = *ts;
    if (ngpt_adapter_create(&ad, m, lc, 0) || ngpt_adapter_describe(ad, &ai))
        return cli_error(cmd, CLI_USAGE, "--lora: %s", cli_library_error());
    s.adapter = ad;
    *floats = ai.floats;
    ngpt_status st = size_or_too_large(ngpt_context_arena_size(m, NULL, &s, arena), arena);
    ngpt_adapter_close(ad);
    return st ? cli_library_failed(cmd) : CLI_OK;
}

/* An adapter file: its LoRA config and floats, its model, its training state. */
static void info_adapter(const char *path, const ngpt_adapter *ad)
{
    ngpt_adapter_info ai;
    ngpt_lora_config lc;
    ngpt_train_state ts;
    ngpt_adapter_describe(ad, &ai);
    ngpt_adapter_lora_config(ad, &lc);
    ngpt_adapter_train_state(ad, &ts);
    char text[256], resolved[256], desc[768];
    ngpt_lora_config_format(&lc, text, sizeof text);
    ngpt_lora_config all = lc;      /* the modules all-linear stands for, by name */
    all.targets = ai.modules;
    ngpt_lora_config_format(&all, resolved, sizeof resolved);
    char *targets = strstr(resolved, "targets=") + strlen("targets=");
    targets[strcspn(targets, " ")] = '\0';
    ngpt_config_format(&ai.config, desc, sizeof desc);
    struct stat sb;
    const double file = stat(path, &sb) == 0 ? (double)sb.st_size : 0.0;
    printf("file:        %s, %.0f bytes (%.2f MiB)\n", path, file, file / 1048576.0);
    printf("adapter:     LoRA %s: scale %g, %llu floats (%.2f MiB) in %d of %d layers: %s\n", text,
           (double)ai.scale, (unsigned long long)ai.floats, (double)ai.floats * 4 / 1048576.0,
           (int)ai.layers, (int)ai.config.n_layers, targets);
    printf("model:       %s; identity %016llx (it applies to that model's f32, q8 and q4 files "
           "only)\n", desc, (unsigned long long)ai.base);
    if (ts.has_state)
        printf("training:    step %llu of %lld, batch %d, seq %d, lr %g -> %g, seed %llu, best eval "
               "loss %.4f (with the AdamW moments: ngpt train --init MODEL --adapter %s goes on)\n",
               (unsigned long long)ai.steps, (long long)ts.opt.total_steps, (int)ts.batch,
               (int)ts.seq, (double)ts.opt.lr, (double)ts.opt.min_lr, (unsigned long long)ts.seed,
               (double)ts.best_eval_loss, path);
    else
        printf("training:    none: the adapter alone\n");
}

/* A model file: opened (verified) once, its own size, then print_sizes;
 * an adapter file: info_adapter. */
static int info_file(const char *cmd, const char *path, const ngpt_shape *ts,
                     const ngpt_lora_config *lc)
{
    const int32_t batch = ts->batch, seq = ts->seq, threads = ts->threads;
    ngpt_config cfg;
    ngpt_model *m;
    const ngpt_tokenizer *tok = NULL;
    if (ngpt_model_open(&m, path) || ngpt_model_config(m, &cfg) || ngpt_model_tokenizer(m, &tok)) {
        char why[512];
        snprintf(why, sizeof why, "%s", cli_library_error());
        ngpt_model_close(m);
        ngpt_adapter *ad = NULL;
        if (ngpt_adapter_open(&ad, path)) return cli_error(cmd, CLI_FAILED, "%s", why);
        info_adapter(path, ad);
        ngpt_adapter_close(ad);
        return CLI_OK;
    }
    sizes z;
    size_t lora_arena = 0;
    uint64_t lora_floats = 0;
    int rc = compute_sizes(cmd, &cfg, tok, ts, &z);
    if (!rc) rc = lora_sizes(cmd, m, lc, ts, &lora_arena, &lora_floats);
    if (rc) {
        ngpt_model_close(m);
        return rc;
    }
    char desc[768];
    ngpt_config_format(&cfg, desc, sizeof desc);
    struct stat sb;
    const double file = stat(path, &sb) == 0 ? (double)sb.st_size : 0.0;
    printf("file:        %s, %.0f bytes (%.2f MiB)\n", path, file, file / 1048576.0);
    printf("config:      %s\n", desc);
    printf("weights:     %s\n",
           cfg.weights == NGPT_WEIGHTS_Q8 ? "q8: 8-bit Linear weights and lm_head, one float scale "
                                            "per 32 inputs (inference only)"
           : cfg.lm_head_q4 ? "q4 lm_head_q4: 4-bit Linear weights and lm_head (tied: the "
                              "embedding), one float scale per 32 inputs (inference only)"
           : cfg.weights == NGPT_WEIGHTS_Q4 ? "q4: 4-bit Linear weights in the blocks, one float "
                                              "scale per 32 inputs; the lm_head (tied: the "
                                              "embedding) stays 8-bit, which keeps its quality "
                                              "(inference only)"
                                            : "f32: float32");
    print_sizes(&cfg, tok, &z, ts);
    char text[256], b0[96], b1[96];
    ngpt_lora_config_format(lc, text, sizeof text);
    printf("lora train:  %s at batch %d, seq %d%s: a LoRA adapter %s, %llu floats (%.2f MiB), on "
           "these %s weights, frozen (%d thread%s; ngpt train --init %s --lora ...)\n",
           bytes_text(b0, lora_arena), (int)batch, (int)(seq ? seq : cfg.context_len),
           savings(ts, b1, sizeof b1), text,
           (unsigned long long)lora_floats, (double)lora_floats * 4 / 1048576.0,
           KIND_NAMES[cfg.weights == NGPT_WEIGHTS_Q8 ? 1 : cfg.weights == NGPT_WEIGHTS_Q4 ? 2 : 0],
           (int)threads, threads > 1 ? "s" : "", path);
    print_tokenizer(tok, path);
    ngpt_model_close(m);
    return CLI_OK;
}

/* --config: a model that does not exist yet. */
static int info_config(const char *cmd, const ngpt_config *cfg, const char *tok_path,
                       const ngpt_shape *ts)
{
    ngpt_tokenizer *tok = NULL;
    if (tok_path) {
        int rc = cli_load_tokenizer(cmd, tok_path, &tok);
        if (rc) return rc;
    }
    sizes z;
    int rc = compute_sizes(cmd, cfg, tok, ts, &z);
    if (!rc) {
        char desc[768];
        ngpt_config_format(cfg, desc, sizeof desc);
        printf("config:      %s\n", desc);
        print_sizes(cfg, tok, &z, ts);
    }
    ngpt_tokenizer_free(tok);
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int cli_cmd_info(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    const char *path = NULL, *tok_path = NULL, *v;
    ngpt_config cfg = ngpt_config_default();
    bool cfg_given = false, ok = true;
    ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);    /* the training arenas' */
    ts.batch = 32, ts.seq = 0, ts.threads = 1;
    ngpt_lora_config lc = ngpt_lora_config_default();
    bool lora_given = false;
    int r = 0;
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
        } else if (cli_opt(&a, "--lora", &v)) {
            ok = !v || cli_lora_set(a.cmd, &lc, v);
            lora_given = true;
        } else if (cli_opt(&a, "--batch", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--batch", v, 1, 1 << 16, &ts.batch);
        } else if (cli_opt(&a, "--seq", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--seq", v, 1, 1 << 20, &ts.seq);
        } else if (cli_opt(&a, "--threads", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--threads", v, 1, 1024, &ts.threads);
        } else if ((r = cli_kv_option(&a, &info_kv_k, &info_kv_v)) != 0) {
            ok = r > 0;
        } else if (cli_flag(&a, "--grad-checkpoint")) {
            ts.recompute = 1;
        } else if (cli_opt(&a, "--loss-chunk", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--loss-chunk", v, 0, INT32_MAX, &ts.loss_chunk);
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
    if (lora_given && (!path || ends_with(path, ".json") || ends_with(path, ".bin")))
        return cli_error(a.cmd, CLI_USAGE, "--lora sizes an adapter of a model file (ngpt_adapter_create "
                         "needs its weights): give the model's FILE");
    if (!path && !cfg_given)
        return cli_error(a.cmd, CLI_USAGE, "a checkpoint FILE or --config key=value is required "
                         "(see ngpt info --help)");
    if (path && ends_with(path, ".json")) {     /* a Hugging Face config.json */
        if (ngpt_import_hf_config(path, &cfg)) return cli_library_failed(a.cmd);
        if (cfg.pos == NGPT_POS_ROPE && cfg.context_len == NGPT_IMPORT_CONTEXT_DEFAULT)
            /* the model ngpt import makes: a board's T unless --context asks */
            printf("context:     T=%d, ngpt import's longest by default (config.json's "
                   "max_position_embeddings may be more: ngpt import --context N asks for up "
                   "to that)\n", NGPT_IMPORT_CONTEXT_DEFAULT);
        return info_config(a.cmd, &cfg, NULL, &ts);
    }
    if (path && ends_with(path, ".bin")) {      /* llama2.c's model.bin, by its header */
        if (ngpt_import_llama2c_config(path, &cfg)) return cli_library_failed(a.cmd);
        return info_config(a.cmd, &cfg, NULL, &ts);
    }
    if (path) return info_file(a.cmd, path, &ts, &lc);
    if (ngpt_config_validate(&cfg)) return cli_error(a.cmd, CLI_USAGE, "%s", cli_library_error());
    return info_config(a.cmd, &cfg, tok_path, &ts);
}
