/* cmd_lora.c — `ngpt lora import|export|merge`: PEFT adapter directories
 * into ngpt's adapter files and back, and adapters merged into a float32
 * model (docs/IMPORT.md, "PEFT adapters"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lora.h"

static const char *const HELP =
    "usage: ngpt lora <command> ...    (ngpt lora <command> --help)\n\n"
    "  import  a PEFT adapter directory (Hugging Face's peft) as an ngpt adapter\n"
    "  export  an ngpt adapter as a PEFT adapter directory\n"
    "  merge   adapters merged into a float32 model's weights\n\n"
    "MODEL is the model `ngpt import` made of the Hugging Face GPT-2 or Llama-family\n"
    "model the adapter is for; an adapter applies to it and to its 8-bit and 4-bit\n"
    "files. docs/IMPORT.md (\"PEFT adapters\") says what is read and refused.\n";

static const char *const HELP_IMPORT =
    "usage: ngpt lora import PEFT_DIR --model MODEL --out FILE.lora\n\n"
    "Reads PEFT_DIR's adapter_config.json and adapter_model.safetensors (F32, F16 or\n"
    "BF16) for MODEL and writes the adapter as an ngpt adapter file: r, lora_alpha,\n"
    "use_rslora, lora_dropout and the modules target_modules selects (a list, a\n"
    "regular expression or all-linear; layers_to_transform). DoRA, trained biases,\n"
    "modules_to_save, rank or alpha patterns and other options are refused by name.\n";

static const char *const HELP_EXPORT =
    "usage: ngpt lora export FILE.lora --model MODEL --out PEFT_DIR\n\n"
    "Writes the adapter FILE (of MODEL, whose modules name its tensors) as a PEFT\n"
    "adapter directory, made if absent: adapter_config.json and\n"
    "adapter_model.safetensors (float32), which peft.PeftModel.from_pretrained loads\n"
    "on the Hugging Face model MODEL was imported from, and `ngpt lora import`\n"
    "reads back bit for bit.\n";

static const char *const HELP_MERGE =
    "usage: ngpt lora merge --model MODEL --adapter FILE[:SCALE] [--adapter ...] --out MODEL2\n\n"
    "Writes the float32 model MODEL with the adapters (1 to 8) merged into its\n"
    "weights: each weight becomes W + SCALE s (B A) summed over the adapters in\n"
    "double and rounded once (s = alpha / r, or alpha / sqrt(r) with rsLoRA; SCALE 1\n"
    "by default). A quantized model is refused: merge into its float32 file, then\n"
    "ngpt quantize MODEL2.\n";

/* The options of the three: --model, --out, and one positional argument
 * (import, export: `positional`) or --adapter FILE[:SCALE] ... (merge: NULL).
 * CLI_OK, CLI_USAGE (printed), or -1 after --help. */
typedef struct lora_args {
    const char *model, *out, *arg;
    cli_adapters ads;
} lora_args;

static int parse(int argc, char **argv, const char *cmd, const char *help, const char *positional,
                 const char *usage, lora_args *o)
{
    cli_args a = cli_args_init(argc, argv);
    a.cmd = cmd;
    const char *v;
    while (cli_next(&a)) {
        int took;
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(help, stdout);
            return -1;
        } else if (cli_opt(&a, "--model", &v)) {
            o->model = v;
        } else if (cli_opt(&a, "--out", &v)) {
            o->out = v;
        } else if (!positional && (took = cli_adapter_option(&a, &o->ads))) {
            if (took < 0) return CLI_USAGE;
        } else if (positional && cli_arg(&a)[0] != '-' && !o->arg) {
            o->arg = cli_arg(&a);
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!o->model || !o->out || (positional ? !o->arg : !o->ads.n))
        return cli_error(cmd, CLI_USAGE, "expects %s (see ngpt %s --help)", usage, cmd);
    return CLI_OK;
}

static int cmd_import(int argc, char **argv)
{
    const char *cmd = "lora import";
    lora_args o = {0};
    int rc = parse(argc, argv, cmd, HELP_IMPORT, "PEFT_DIR",
                   "PEFT_DIR --model MODEL --out FILE.lora", &o);
    if (rc) return rc < 0 ? CLI_OK : rc;
    ngpt_model *model = NULL;
    ngpt_adapter *ad = NULL;
    ngpt_lora_config lc;
    if (ngpt_model_open(&model, o.model) || ngpt_import_peft(&ad, model, o.arg) ||
        ngpt_adapter_lora_config(ad, &lc) || ngpt_adapter_save(ad, o.out))
        rc = cli_library_failed(cmd);
    else
        printf("wrote %s: r=%d alpha=%g%s%s from %s\n", o.out, (int)lc.rank, (double)lc.alpha,
               lc.rslora ? " rslora" : "", lc.layers ? " (some layers)" : "", o.arg);
    ngpt_adapter_close(ad);
    ngpt_model_close(model);
    return rc;
}

static int cmd_export(int argc, char **argv)
{
    const char *cmd = "lora export";
    lora_args o = {0};
    int rc = parse(argc, argv, cmd, HELP_EXPORT, "FILE.lora",
                   "FILE.lora --model MODEL --out PEFT_DIR", &o);
    if (rc) return rc < 0 ? CLI_OK : rc;
    ngpt_model *model = NULL;
    ngpt_adapter *ad = NULL;
    if (ngpt_model_open(&model, o.model) || ngpt_adapter_open(&ad, o.arg) ||
        ngpt_adapter_export_peft(ad, model, o.out))
        rc = cli_library_failed(cmd);
    else
        printf("wrote %s: adapter_config.json and adapter_model.safetensors\n", o.out);
    ngpt_adapter_close(ad);
    ngpt_model_close(model);
    return rc;
}

static int cmd_merge(int argc, char **argv)
{
    const char *cmd = "lora merge";
    lora_args o = {0};
    int rc = parse(argc, argv, cmd, HELP_MERGE, NULL,
                   "--model MODEL --adapter FILE[:SCALE] ... --out MODEL2", &o);
    if (rc) return rc < 0 ? CLI_OK : rc;
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    ngpt_config cfg;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = 1;      /* no forward runs: the smallest arena that owns the weights */
    if (ngpt_model_open(&model, o.model) || ngpt_model_config(model, &cfg)) {
        rc = cli_library_failed(cmd);
    } else if (cfg.weights != NGPT_WEIGHTS_F32) {
        rc = cli_error(cmd, CLI_FAILED, "%s holds %s weights, which do not take a merge "
                       "exactly: merge into its float32 file, then ngpt quantize the result",
                       o.model, cfg.weights == NGPT_WEIGHTS_Q8 ? "8-bit" : "4-bit");
    } else if (!(rc = cli_adapters_open(cmd, &o.ads, &shape))) {
        if (ngpt_context_init(&ctx, model, &cfg, &shape, NULL, 0) ||
            ngpt_context_adapters_merge(ctx, (const ngpt_adapter *const *)o.ads.ad, o.ads.scale,
                                        o.ads.n) ||
            ngpt_context_save(ctx, o.out))
            rc = cli_library_failed(cmd);
        else
            printf("wrote %s: %d adapter%s merged into %s\n", o.out, o.ads.n,
                   o.ads.n == 1 ? "" : "s", o.model);
    }
    ngpt_context_free(ctx);
    cli_adapters_close(&o.ads);
    ngpt_model_close(model);
    return rc;
}

int cli_cmd_lora(int argc, char **argv)
{
    static const cli_subcommand sub[] = {
        {"import", cmd_import}, {"export", cmd_export}, {"merge", cmd_merge}};
    return cli_subcommands("lora", HELP, sub, sizeof sub / sizeof sub[0], argc, argv);
}
