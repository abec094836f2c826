/* lora.h — the LoRA options the commands share (cli/lora.c). */
#ifndef NGPT_CLI_LORA_H
#define NGPT_CLI_LORA_H

#include "cli.h"

/* --adapter FILE[:SCALE] of the inference commands, repeatable (up to
 * NGPT_ADAPTERS_MAX): */
typedef struct cli_adapters {
    int n;
    const char *path[NGPT_ADAPTERS_MAX];
    float scale[NGPT_ADAPTERS_MAX];
    ngpt_adapter *ad[NGPT_ADAPTERS_MAX];
} cli_adapters;
#define CLI_ADAPTER_HELP \
    "  --adapter FILE[:S] apply a LoRA adapter (ngpt train --lora) at scale S (1: as\n" \
    "                     trained; 0: not at all); repeatable, up to 8, summed\n"
/* Consumes --adapter: 1 taken, 0 not it, -1 bad value (message printed). */
int cli_adapter_option(cli_args *a, cli_adapters *ads);
/* Opens the files (before the model's context, which plans for their
 * largest rank: shape->adapter_rank). CLI_OK, or CLI_FAILED with the
 * message printed (nothing left open). */
int cli_adapters_open(const char *cmd, cli_adapters *ads, ngpt_shape *shape);
/* Applies them to ctx (an adapter of another model is refused in one line
 * naming its file and model). CLI_OK, or CLI_FAILED with the message printed. */
int cli_adapters_apply(const char *cmd, const cli_adapters *ads, ngpt_context *ctx,
                       const char *model);
/* Closes them, after every context that applied them is freed. */
void cli_adapters_close(cli_adapters *ads);
/* --lora's settings ("r=16,alpha=32,targets=q_proj,v_proj": ngpt_lora_config_set's
 * words, comma-separated) into *lc; false with the message printed. */
bool cli_lora_set(const char *cmd, ngpt_lora_config *lc, const char *settings);

#endif
