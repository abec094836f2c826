/* cmd_generate.c — `ngpt generate`: streams a completion to stdout and the
 * prefill / decode speeds to stderr. stdout gets exactly the generated
 * bytes, so `ngpt generate ... | xxd` shows what the model produced; only a
 * terminal gets a closing newline, so the shell prompt starts on its own line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt generate --model FILE [--prompt TEXT | --prompt-file F] [-n N] [--temp T]\n"
    "       [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R] [--repeat-window N]\n"
    "       [--ban ID,...] [--stop STR ...] [--end ID] [--seed S] [--beam W] [--length-penalty A]\n"
    "       [--no-cache] [--context exact|shift] [--stop-at-full] [--no-newline]\n"
    "       [--threads N]\n\n"
    "Streams the model's continuation of the prompt (bytes) to stdout as it is\n"
    "produced; prints prefill and decode tokens/sec to stderr. Exactly the generated\n"
    "bytes are written; a newline follows them only when stdout is a terminal.\n"
    "A prompt longer than the model's context T keeps its last T bytes (stderr says\n"
    "how many were dropped).\n\n"
    "  -n N               new tokens at most (default 256)\n"
    "  --temp T           temperature, 0 = argmax (default 1)\n"
    "  --top-k K          keep the K most likely tokens (0 = off)\n"
    "  --top-p P          keep the smallest set reaching probability P (1 = off)\n"
    "  --min-p P          drop tokens below P x the most likely one (0 = off)\n"
    "  --repeat-penalty R lower the logits of recent tokens (1 = off)\n"
    "  --repeat-window N  recent = the last N tokens (0 = the whole context)\n"
    "  --ban ID,...       token ids never produced\n"
    "  --stop STR         stop before STR (repeatable; \\n \\t \\xNN escapes)\n"
    "  --end ID           stop when token ID is produced\n"
    "  --seed S           sampling seed (default 0): same seed, same text everywhere\n"
    "  --beam W           beam search of width W instead of sampling\n"
    "  --length-penalty A beam score / len^A (default 1)\n"
    "  --no-cache         recompute the whole context every step (for checking)\n"
    "  --context MODE     when the context is full: exact (default) slides the window\n"
    "                     like the original, recomputing the last T tokens per new\n"
    "                     token; shift drops the oldest half of the cache and goes on\n"
    "                     at full speed (approximate: docs/GENERATION.md)\n"
    "  --stop-at-full     stop when the context is full instead\n"
    "  --no-newline       no closing newline on a terminal either\n"
    CLI_THREADS_HELP;

#define MAX_STOP 16

typedef struct timing {
    double t_prefilled;
} timing;

static void on_prefilled(void *user) { ((timing *)user)->t_prefilled = cli_now(); }

static int on_token(int32_t tok, void *user)
{
    (void)user;
    if (tok < 256) putchar(tok);
    fflush(stdout);
    return 0;
}

int cli_cmd_generate(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    cli_gen_opts o = {.gc = ngpt_generate_config_default(), .threads = 0};
    const char *model = NULL, *prompt = NULL, *prompt_file = NULL, *v;
    char *stops[MAX_STOP];
    int n_stop = 0, r;
    bool newline = isatty(fileno(stdout));
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if ((r = cli_gen_option(&a, &o)) != 0) {
            if (r < 0) return CLI_USAGE;
        } else if (cli_opt(&a, "--model", &v)) {
            model = v;
        } else if (cli_opt(&a, "--prompt", &v)) {
            prompt = v;
        } else if (cli_opt(&a, "--prompt-file", &v)) {
            prompt_file = v;
        } else if (cli_opt(&a, "--stop", &v)) {
            if (!v) return CLI_USAGE;
            if (n_stop == MAX_STOP) return cli_error(a.cmd, CLI_USAGE, "at most %d --stop", MAX_STOP);
            stops[n_stop] = (char *)v;  /* unescaped in place: it only shrinks, argv is ours */
            cli_unescape(stops[n_stop]);
            if (!stops[n_stop++][0]) return cli_error(a.cmd, CLI_USAGE, "--stop must not be empty");
        } else if (cli_opt(&a, "--beam", &v)) {
            if (!v || !cli_parse_i32(a.cmd, "--beam", v, 1, 64, &o.gc.beam_width)) return CLI_USAGE;
        } else if (cli_opt(&a, "--length-penalty", &v)) {
            if (!v || !cli_parse_f32(a.cmd, "--length-penalty", v, -16, 16, &o.gc.length_penalty))
                return CLI_USAGE;
        } else if (cli_flag(&a, "--no-cache")) {
            o.gc.no_cache = true;
        } else if (cli_flag(&a, "--no-newline")) {
            newline = false;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!model) return cli_error(a.cmd, CLI_USAGE, "--model FILE is required (see ngpt generate --help)");
    if (prompt && prompt_file) return cli_error(a.cmd, CLI_USAGE, "give --prompt or --prompt-file, not both");
    size_t n = 0;
    char *file_text = NULL;
    if (prompt_file) {
        if (!(file_text = cli_read_file(prompt_file, &n)))
            return cli_error(a.cmd, CLI_FAILED, "cannot read %s", prompt_file);
        prompt = file_text;
    } else {
        if (!prompt) prompt = "\n";
        n = strlen(prompt);
    }
    if (n == 0) {
        free(file_text);
        return cli_error(a.cmd, CLI_USAGE, "the prompt is empty");
    }
    o.gc.stop = (const char *const *)stops;
    o.gc.n_stop = n_stop;
    o.gc.on_prefilled = on_prefilled;

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = o.gc.beam_width > 1 ? o.gc.beam_width : 1;
    shape.threads = o.threads;
    ngpt_context *ctx;
    ngpt_status st = cli_open_model(model, &shape, &ctx);
    if (st) {
        free(file_text);
        return cli_library_failed(a.cmd);
    }
    int32_t *tokens = malloc((n ? n : 1) * sizeof(int32_t));
    if (!tokens) {
        ngpt_context_free(ctx);
        free(file_text);
        return cli_error(a.cmd, CLI_FAILED, "out of memory");
    }
    for (size_t i = 0; i < n; i++) tokens[i] = (unsigned char)prompt[i];

    timing tm = {0};
    ngpt_generate_result res;
    const double t0 = cli_now();
    st = ngpt_model_generate(ctx, &o.gc, tokens, n > INT32_MAX ? INT32_MAX : (int32_t)n, NULL, 0,
                       on_token, &tm, &res);
    const double t1 = cli_now();
    if (newline) putchar('\n');
    fflush(stdout);
    ngpt_context_free(ctx);
    free(tokens);
    free(file_text);
    if (st) return cli_library_failed(a.cmd);
    cli_report_cropped(a.cmd, &res, "prompt");
    double pre = tm.t_prefilled - t0, dec = t1 - tm.t_prefilled;
    fprintf(stderr, "ngpt generate: prefill %d tokens in %.3f s (%.1f tok/s), decode %d tokens in "
            "%.3f s (%.1f tok/s)%s, stop: %s\n", (int)res.prompt_tokens, pre,
            pre > 0 ? res.prompt_tokens / pre : 0.0, (int)res.n_generated, dec,
            dec > 0 ? res.n_generated / dec : 0.0, o.gc.no_cache ? " [no cache]" : "",
            ngpt_stop_reason_string(res.reason));
    return CLI_OK;
}
