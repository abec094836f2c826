/* lora.c — the LoRA options commands share: --adapter FILE[:SCALE] of the
 * inference commands (the files opened, the context planned for their
 * largest rank, applied with a refusal that names the file, closed after
 * the context) and --lora key=value of ngpt train. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "lora.h"

/* "FILE:SCALE" splits at its last colon when what follows is a number and
 * the whole is not a file's name; otherwise it is FILE at scale 1. */
int cli_adapter_option(cli_args *a, cli_adapters *ads)
{
    const char *v;
    if (!cli_opt(a, "--adapter", &v)) return 0;
    if (!v) return -1;
    if (ads->n == NGPT_ADAPTERS_MAX)
        return cli_error(a->cmd, CLI_USAGE, "at most %d --adapter", NGPT_ADAPTERS_MAX), -1;
    char *arg = (char *)v, *colon = strrchr(arg, ':'), *end = NULL;
    float scale = 1.0f;
    if (colon && colon[1] && access(arg, F_OK) != 0) {
        const float s = strtof(colon + 1, &end);
        if (*end == '\0') {
            if (!isfinite(s))
                return cli_error(a->cmd, CLI_USAGE, "--adapter %s: the scale must be finite",
                                 arg), -1;
            scale = s;
            *colon = '\0';      /* argv is ours, as --stop's unescaping assumes */
        }
    }
    if (!arg[0]) return cli_error(a->cmd, CLI_USAGE, "--adapter needs a FILE"), -1;
    ads->path[ads->n] = arg;
    ads->scale[ads->n++] = scale;
    return 1;
}

int cli_adapters_open(const char *cmd, cli_adapters *ads, ngpt_shape *shape)
{
    for (int i = 0; i < ads->n; i++) {
        ngpt_lora_config lc;
        if (ngpt_adapter_open(&ads->ad[i], ads->path[i]) ||
            ngpt_adapter_lora_config(ads->ad[i], &lc)) {
            cli_adapters_close(ads);
            return cli_library_failed(cmd);
        }
        if (lc.rank > shape->adapter_rank) shape->adapter_rank = lc.rank;
    }
    return CLI_OK;
}

int cli_adapters_apply(const char *cmd, const cli_adapters *ads, ngpt_context *ctx,
                       const char *model)
{
    if (ads->n == 0) return CLI_OK;
    if (!ngpt_context_adapters_set(ctx, (const ngpt_adapter *const *)ads->ad, ads->scale, ads->n))
        return CLI_OK;
    /* the library names the adapter by its index: the user gave a file */
    const char *why = cli_library_error();
    int i = 0, at = 0;
    if (sscanf(why, "adapter %d: %n", &i, &at) == 1 && at > 0 && i >= 0 && i < ads->n)
        return cli_error(cmd, CLI_FAILED, "--adapter %s does not apply to %s: %s", ads->path[i],
                         model, why + at);
    return cli_library_failed(cmd);
}

void cli_adapters_close(cli_adapters *ads)
{
    for (int i = 0; i < ads->n; i++) {
        ngpt_adapter_close(ads->ad[i]);     /* its contexts are gone: cannot refuse */
        ads->ad[i] = NULL;
    }
}

/* "r=16,alpha=32,targets=q_proj,v_proj": a comma starts a new setting when
 * what follows it up to the next comma is key=value (a list of targets or
 * layers keeps its commas). */
bool cli_lora_set(const char *cmd, ngpt_lora_config *lc, const char *settings)
{
    char buf[1024];
    if (strlen(settings) >= sizeof buf) {
        cli_error(cmd, CLI_USAGE, "--lora %.40s...: too long", settings);
        return false;
    }
    strcpy(buf, settings);
    for (char *kv = buf; kv;) {
        char *next = NULL;
        for (char *c = strchr(kv, ','); c && !next; c = strchr(c + 1, ',')) {
            const char *eq = strchr(c + 1, '='), *comma = strchr(c + 1, ',');
            if (eq && (!comma || eq < comma)) next = c;
        }
        if (next) *next = '\0';
        if (ngpt_lora_config_set(lc, kv)) {
            cli_error(cmd, CLI_USAGE, "--lora: %s", cli_library_error());
            return false;
        }
        kv = next ? next + 1 : NULL;
    }
    return true;
}
