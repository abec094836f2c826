/* cmd_lora.c — `ngpt lora import|export|merge`: PEFT adapter directories
 * into ngpt's adapter files and back, and adapters merged into a float32
 * model (docs/IMPORT.md, "PEFT adapters"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt lora <command> ...    (ngpt lora <command> --help)\n\n"
    "  import  a PEFT adapter directory (Hugging Face's peft) as an ngpt adapter\n"
    "  export  an ngpt adapter as a PEFT adapter directory\n"
    "  merge   adapters merged into a float32 model's weights\n\n"
    "MODEL is the model `ngpt import` made of the Hugging Face GPT-2 or Llama-family\n"
    "model the adapter is for; an adapter applies to it and to its 8-bit and 4-bit\n"
    "files. docs/IMPORT.md (\"PEFT adapters\") says what is read and refused.\n";

static const char *const HELP_IMPORT =
    "usage: ngpt lora import MODEL PEFT_DIR OUT.lora\n\n"
    "Reads PEFT_DIR's adapter_config.json and adapter_model.safetensors (F32, F16 or\n"
    "BF16) for MODEL and writes the adapter as an ngpt adapter file: r, lora_alpha,\n"
    "use_rslora, lora_dropout and the modules target_modules selects (a list, a\n"
    "regular expression or all-linear; layers_to_transform). DoRA, trained biases,\n"
    "modules_to_save, rank or alpha patterns and other options are refused by name.\n";

static const char *const HELP_EXPORT =
    "usage: ngpt lora export MODEL ADAPTER.lora PEFT_DIR\n\n"
    "Writes the adapter (of MODEL) as a PEFT adapter directory, made if absent:\n"
    "adapter_config.json and adapter_model.safetensors (float32), which\n"
    "peft.PeftModel.from_pretrained loads on the Hugging Face model MODEL was\n"
    "imported from, and `ngpt lora import` reads back bit for bit.\n";

static const char *const HELP_MERGE =
    "usage: ngpt lora merge MODEL ADAPTER.lora[:SCALE] [ADAPTER.lora[:SCALE] ...] OUT.ngpt\n\n"
    "Writes the float32 model MODEL with the adapters merged into its weights: each\n"
    "weight becomes W + SCALE s (B A) summed over the adapters in double and rounded\n"
    "once (s = alpha / r, or alpha / sqrt(r) with rsLoRA; SCALE 1 by default). A\n"
    "quantized model is refused: merge into its float32 file, then quantize.\n";

static bool want_help(int argc, char **argv, const char *help)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return true;
        }
    return false;
}

/* lo..hi positional arguments (no options), or a usage error. */
static int positional(const char *cmd, int argc, char **argv, int lo, int hi, const char *what)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1])
            return cli_error(cmd, CLI_USAGE, "unknown option %s (see ngpt %s --help)", argv[i], cmd);
    if (argc - 1 < lo || argc - 1 > hi)
        return cli_error(cmd, CLI_USAGE, "expects %s (see ngpt %s --help)", what, cmd);
    return CLI_OK;
}

static int cmd_import(int argc, char **argv)
{
    const char *cmd = "lora import";
    if (want_help(argc, argv, HELP_IMPORT)) return CLI_OK;
    int rc = positional(cmd, argc, argv, 3, 3, "MODEL PEFT_DIR OUT.lora");
    if (rc) return rc;
    ngpt_model *model = NULL;
    ngpt_adapter *ad = NULL;
    ngpt_lora_config lc;
    if (ngpt_model_open(&model, argv[1]) || ngpt_import_peft(&ad, model, argv[2]) ||
        ngpt_adapter_lora_config(ad, &lc) || ngpt_adapter_save(ad, argv[3]))
        rc = cli_library_failed(cmd);
    else
        printf("wrote %s: r=%d alpha=%g%s%s from %s\n", argv[3], (int)lc.rank, (double)lc.alpha,
               lc.rslora ? " rslora" : "", lc.layers ? " (some layers)" : "", argv[2]);
    ngpt_adapter_close(ad);
    ngpt_model_close(model);
    return rc;
}

static int cmd_export(int argc, char **argv)
{
    const char *cmd = "lora export";
    if (want_help(argc, argv, HELP_EXPORT)) return CLI_OK;
    int rc = positional(cmd, argc, argv, 3, 3, "MODEL ADAPTER.lora PEFT_DIR");
    if (rc) return rc;
    ngpt_model *model = NULL;
    ngpt_adapter *ad = NULL;
    if (ngpt_model_open(&model, argv[1]) || ngpt_adapter_open(&ad, argv[2]) ||
        ngpt_adapter_export_peft(ad, model, argv[3]))
        rc = cli_library_failed(cmd);
    else
        printf("wrote %s: adapter_config.json and adapter_model.safetensors\n", argv[3]);
    ngpt_adapter_close(ad);
    ngpt_model_close(model);
    return rc;
}

/* "FILE:SCALE" into the file and scale; a suffix that is no number is part
 * of the name. */
static bool adapter_arg(const char *cmd, char *arg, float *scale)
{
    *scale = 1.0f;
    char *colon = strrchr(arg, ':');
    if (!colon || colon == arg) return true;
    char *end;
    const float s = strtof(colon + 1, &end);
    if (end == colon + 1 || *end) return true;
    if (!(s == s) || s > 1e30f || s < -1e30f) {
        cli_error(cmd, CLI_USAGE, "the scale in \"%s\" must be a finite number", arg);
        return false;
    }
    *colon = '\0';
    *scale = s;
    return true;
}

static int cmd_merge(int argc, char **argv)
{
    const char *cmd = "lora merge";
    if (want_help(argc, argv, HELP_MERGE)) return CLI_OK;
    int rc = positional(cmd, argc, argv, 3, 2 + NGPT_ADAPTERS_MAX,
                        "MODEL, 1 to 8 ADAPTER[:SCALE] and OUT.ngpt");
    if (rc) return rc;
    const int n = argc - 3;
    float scales[NGPT_ADAPTERS_MAX];
    ngpt_adapter *ads[NGPT_ADAPTERS_MAX] = {0};
    for (int i = 0; i < n; i++)
        if (!adapter_arg(cmd, argv[2 + i], &scales[i])) return CLI_USAGE;
    const char *in = argv[1], *out = argv[argc - 1];
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    ngpt_config cfg;
    if (ngpt_model_open(&model, in) || ngpt_model_config(model, &cfg)) {
        rc = cli_library_failed(cmd);
    } else if (cfg.weights != NGPT_WEIGHTS_F32) {
        rc = cli_error(cmd, CLI_FAILED, "%s holds %s weights, which do not take a merge "
                       "exactly: merge into its float32 file, then ngpt quantize the result", in,
                       cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit");
    } else {
        ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
        shape.seq = 1;      /* no forward runs: the smallest arena that owns the weights */
        bool ok = !ngpt_context_init(&ctx, model, &cfg, &shape, NULL, 0);
        for (int i = 0; ok && i < n; i++) ok = !ngpt_adapter_open(&ads[i], argv[2 + i]);
        if (!ok || ngpt_context_adapters_merge(ctx, (const ngpt_adapter *const *)ads, scales, n) ||
            ngpt_context_save(ctx, out))
            rc = cli_library_failed(cmd);
        else
            printf("wrote %s: %d adapter%s merged into %s\n", out, n, n == 1 ? "" : "s", in);
    }
    ngpt_context_free(ctx);
    for (int i = 0; i < n; i++) ngpt_adapter_close(ads[i]);
    ngpt_model_close(model);
    return rc;
}

int cli_cmd_lora(int argc, char **argv)
{
    static const cli_subcommand sub[] = {
        {"import", cmd_import}, {"export", cmd_export}, {"merge", cmd_merge}};
    return cli_subcommands("lora", HELP, sub, sizeof sub / sizeof sub[0], argc, argv);
}
