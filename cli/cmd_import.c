/* cmd_import.c — `ngpt import DIR --out MODEL.ngpt`: a Hugging Face GPT-2
 * or Llama model (config.json, safetensors, tokenizer) as an ngpt model, through
 * ngpt_import_hf; `ngpt import --llama2c model.bin --tokenizer
 * tokenizer.bin`: llama2.c's files, through ngpt_import_llama2c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt import [DIR] --out MODEL.ngpt [--weights f32|q8|q4] [--lm-head q8|q4]\n"
    "                   [--context T] [--config F] [--safetensors F]...\n"
    "                   [--vocab F --merges F | --tokenizer-json F] [--tokenizer-config F]\n"
    "       ngpt import --llama2c MODEL.BIN --tokenizer TOKENIZER.BIN --out MODEL.ngpt\n"
    "                   [--weights f32|q8|q4] [--lm-head q8|q4]\n\n"
    "Turns a GPT-2 or Llama family (SmolLM2) model as published on the Hugging Face\n"
    "hub into an ngpt model with its tokenizer attached; no Python needed. DIR holds\n"
    "the hub's files:\n"
    "  config.json                      the model's shape (model_type gpt2 or llama)\n"
    "  model.safetensors                the weights (F32, F16 or BF16), or the shards\n"
    "                                   model.safetensors.index.json lists\n"
    "  vocab.json + merges.txt          the tokenizer (or tokenizer.json)\n"
    "  tokenizer_config.json            (optional) its eos_token is the end token\n"
    "                                   (SmolLM2-Instruct's <|im_end|>); add_bos_token:\n"
    "                                   prompts begin with its bos_token\n"
    "  generation_config.json           (optional) its eos_token_id must agree\n"
    "Each file may instead be named on its own (then DIR may be left out):\n"
    "  --config F          config.json\n"
    "  --safetensors F     a weights file; repeat for each shard, or name the index\n"
    "                      (model.safetensors.index.json)\n"
    "  --vocab F --merges F   vocab.json and merges.txt\n"
    "  --tokenizer-json F  tokenizer.json\n"
    "  --tokenizer-config F  tokenizer_config.json\n"
    "  --out FILE          the ngpt model to write (required)\n"
    "  --weights f32|q8|q4 float32 (default), 8-bit or 4-bit: the file `ngpt quantize\n"
    "                      [--weights q4]` makes of the float32 import, in one step\n"
    "  --lm-head q4        with --weights q4: the lm_head (tied: the embedding) 4-bit\n"
    "                      too, as ngpt quantize --lm-head q4 makes it\n"
    "  --context T         the model's context, shorter than config.json's\n"
    "                      (max_position_embeddings, n_positions): smaller arenas to\n"
    "                      run it in (SmolLM2-135M q8: 2.2 GiB at its 8192, 0.27 at 512)\n\n"
    "Every offset, length, dtype and shape is checked against the files and\n"
    "config.json; a setting ngpt cannot compute exactly (another activation or\n"
    "LayerNorm epsilon, rope scaling, sliding windows, experts, another\n"
    "pre-tokenizer) is refused by name. Nothing is\n"
    "written on error. docs/IMPORT.md says what is read and what is refused.\n"
    "--llama2c reads llama2.c's files instead (the TinyStories stories15M.bin,\n"
    "stories42M.bin, stories110M.bin): MODEL.BIN in run.c's layout (version 0),\n"
    "export.py's version 1 or its int8 version 2 (runq.c's; read as the floats\n"
    "runq.c dequantizes; its size must be what its header says) and\n"
    "--tokenizer TOKENIZER.BIN, its\n"
    "scored tokenizer (prompts then start with BOS, as run.c's do).\n"
    "Then: ngpt generate --model MODEL.ngpt --prompt \"...\"\n";

enum { MAX_WEIGHTS = 256 };

static long long file_bytes(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

/* On a terminal: a percentage on stderr as the file is written (the
 * library's progress callback), rewritten in place. */
static bool show_progress(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    (void)stage;
    *(bool *)user = done < total;       /* a line left open */
    fprintf(stderr, "\rngpt import: %3d%% of %.1f MB", total ? (int)(done * 100 / total) : 100,
            (double)total / 1e6);
    if (done == total) fputc('\n', stderr);
    return true;
}

/* The written model's end token, and what `ngpt chat` will make of it:
 * the chat template the model now carries (if ngpt renders it), else ChatML
 * when its tokenizer has the two markers, else the plain format. */
static int report_chat(const char *cmd, const ngpt_model *m, const ngpt_tokenizer *tok)
{
    ngpt_tokenizer_info info;
    if (!tok) return CLI_OK;                /* a byte-level model: nothing to say */
    if (ngpt_tokenizer_describe(tok, &info)) return cli_library_failed(cmd);
    const uint8_t *name = NULL;
    size_t len = 0;
    if (info.end_id >= 0 && ngpt_tokenizer_token(tok, info.end_id, &name, &len)) len = 0;
    if (info.end_id >= 0) printf("  end token: %d %.*s\n", (int)info.end_id, (int)len, (const char *)name);
    else printf("  end token: none (generation stops at -n)\n");
    if (info.bos_id >= 0 && !ngpt_tokenizer_token(tok, info.bos_id, &name, &len))
        printf("  BOS: %d %.*s (prompts begin with it)\n", (int)info.bos_id, (int)len,
               (const char *)name);
    ngpt_template *t = NULL;
    if (ngpt_model_template(m, &t))
        printf("  chat: the model's chat template is kept, but ngpt cannot render it (%s); "
               "ngpt chat needs --template chatml or plain\n", cli_library_error());
    else if (t)
        printf("  chat: the model's chat template (ngpt chat renders it as Hugging Face does)\n");
    else if (!ngpt_tokenizer_chatml_specials(tok, NULL, NULL))
        printf("  chat: ChatML (<|im_start|>, <|im_end|>)\n");
    ngpt_template_free(t);
    return CLI_OK;
}

int cli_cmd_import(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    ngpt_import_options opt = ngpt_import_options_default();
    const char *dir = NULL, *out = NULL, *llama2c = NULL, *tokenizer = NULL, *v;
    const char *weights[MAX_WEIGHTS];
    int32_t n_weights = 0;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if (cli_opt(&a, "--out", &out) || cli_opt(&a, "--config", &opt.config) ||
                   cli_opt(&a, "--vocab", &opt.vocab) || cli_opt(&a, "--merges", &opt.merges) ||
                   cli_opt(&a, "--tokenizer-json", &opt.tokenizer_json) ||
                   cli_opt(&a, "--tokenizer-config", &opt.tokenizer_config) ||
                   cli_opt(&a, "--llama2c", &llama2c) || cli_opt(&a, "--tokenizer", &tokenizer)) {
        } else if (cli_opt(&a, "--safetensors", &v)) {
            if (n_weights == MAX_WEIGHTS)
                return cli_error(a.cmd, CLI_USAGE, "more than %d --safetensors files", MAX_WEIGHTS);
            weights[n_weights++] = v;
        } else if (cli_opt(&a, "--context", &v)) {
            if (!cli_parse_i32(a.cmd, "--context", v, 1, INT32_MAX, &opt.context_len))
                return CLI_USAGE;
        } else if (cli_opt(&a, "--weights", &v)) {
            if (!strcmp(v, "f32")) opt.store = NGPT_WEIGHTS_F32;
            else if (!strcmp(v, "q8")) opt.store = NGPT_WEIGHTS_Q8;
            else if (!strcmp(v, "q4")) opt.store = NGPT_WEIGHTS_Q4;
            else return cli_error(a.cmd, CLI_USAGE, "--weights expects f32, q8 or q4, got \"%s\"", v);
        } else if (cli_opt(&a, "--lm-head", &v)) {
            if (!cli_parse_lm_head(a.cmd, v, &opt.lm_head_q4)) return CLI_USAGE;
        } else if (cli_arg(&a)[0] != '-' && !dir) {
            dir = cli_arg(&a);
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (opt.lm_head_q4 && opt.store != NGPT_WEIGHTS_Q4)
        return cli_error(a.cmd, CLI_USAGE, "--lm-head q4 needs --weights q4 (an 8-bit model "
                         "keeps an 8-bit lm_head)");
    if (!out)
        return cli_error(a.cmd, CLI_USAGE, "--out MODEL.ngpt is required (see ngpt import --help)");
    if (llama2c || tokenizer) {
        if (!llama2c || !tokenizer)
            return cli_error(a.cmd, CLI_USAGE, "--llama2c MODEL.BIN and --tokenizer TOKENIZER.BIN "
                             "go together (see ngpt import --help)");
        if (dir || opt.config || n_weights || opt.vocab || opt.merges || opt.tokenizer_json ||
            opt.tokenizer_config)
            return cli_error(a.cmd, CLI_USAGE, "--llama2c takes no Hugging Face directory or "
                             "files (see ngpt import --help)");
    } else if (!dir && (!opt.config || !n_weights || !(opt.tokenizer_json || (opt.vocab && opt.merges))))
        return cli_error(a.cmd, CLI_USAGE, "a model directory, or every file named (--config, "
                         "--safetensors, and --vocab with --merges or --tokenizer-json), is "
                         "required (see ngpt import --help)");
    if (n_weights) opt.weights = weights, opt.n_weights = n_weights;
    const clock_t start = clock();
    bool open_line = false;
    if (isatty(fileno(stderr))) ngpt_progress_callback_set(show_progress, &open_line);
    const ngpt_status st = llama2c ? ngpt_import_llama2c(llama2c, tokenizer, &opt, out)
                                   : ngpt_import_hf(dir, &opt, out);
    ngpt_progress_callback_set(NULL, NULL);
    if (open_line) fputc('\n', stderr);
    if (st) return cli_library_failed(a.cmd);
    const double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    ngpt_model *written = NULL;     /* the output, opened once for the report */
    const ngpt_tokenizer *tok = NULL;
    ngpt_config cfg;
    size_t params = 0;
    if (ngpt_model_open(&written, out) || ngpt_model_config(written, &cfg) ||
        ngpt_model_tokenizer(written, &tok) || ngpt_config_param_count(&cfg, &params)) {
        ngpt_model_close(written);
        return cli_library_failed(a.cmd);
    }
    char desc[768];
    ngpt_config_format(&cfg, desc, sizeof desc);
    printf("wrote %s: %zu parameters, %s weights, %lld bytes (%.1f s of CPU)\n  %s\n", out, params,
           cfg.weights == NGPT_WEIGHTS_Q8   ? "8-bit"
           : cfg.weights == NGPT_WEIGHTS_Q4 ? "4-bit"
                                            : "float32",
           file_bytes(out), seconds, desc);
    const int rc = report_chat(a.cmd, written, tok);
    ngpt_model_close(written);
    return rc;
}
