/* gen_opts.c — the sampling options `ngpt generate` and `ngpt chat` share,
 * and a monotonic clock for their tokens/sec lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "\n", "\t", "\\", "\xNN" in s are replaced in place by the bytes they name. */
void cli_unescape(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p != '\\' || !p[1]) {
            *o++ = *p;
            continue;
        }
        p++;
        if (*p == 'n') *o++ = '\n';
        else if (*p == 't') *o++ = '\t';
        else if (*p == 'x' && p[1] && p[2]) {
            char hex[3] = {p[1], p[2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            p += 2;
        } else *o++ = *p;
    }
    *o = 0;
}

int cli_gen_option(cli_args *a, cli_gen_opts *o)
{
    ngpt_generate_config *gc = &o->gc;
    ngpt_sampler *s = &gc->sampler;
    const char *v;
    const char *cmd = a->cmd;
    if (cli_opt(a, "-n", &v) || cli_opt(a, "--max-tokens", &v))
        return v && cli_parse_i32(cmd, "-n", v, 1, 1 << 30, &gc->max_tokens) ? 1 : -1;
    if (cli_opt(a, "--temp", &v))
        return v && cli_parse_f32(cmd, "--temp", v, 0.0f, 1e30f, &s->temperature) ? 1 : -1;
    if (cli_opt(a, "--top-k", &v))
        return v && cli_parse_i32(cmd, "--top-k", v, 0, 1 << 30, &s->top_k) ? 1 : -1;
    if (cli_opt(a, "--top-p", &v)) {
        if (!v || !cli_parse_f32(cmd, "--top-p", v, 0.0f, 1.0f, &s->top_p)) return -1;
        if (s->top_p <= 0.0f) return cli_error(cmd, CLI_USAGE, "--top-p must be in (0, 1]"), -1;
        return 1;
    }
    if (cli_opt(a, "--min-p", &v))
        return v && cli_parse_f32(cmd, "--min-p", v, 0.0f, 1.0f, &s->min_p) ? 1 : -1;
    if (cli_opt(a, "--repeat-penalty", &v)) {
        if (!v || !cli_parse_f32(cmd, "--repeat-penalty", v, 0.0f, 1e30f, &s->repeat_penalty))
            return -1;
        if (s->repeat_penalty <= 0.0f)
            return cli_error(cmd, CLI_USAGE, "--repeat-penalty must be > 0"), -1;
        return 1;
    }
    if (cli_opt(a, "--repeat-window", &v))
        return v && cli_parse_i32(cmd, "--repeat-window", v, 0, 1 << 30, &s->repeat_window) ? 1 : -1;
    if (cli_opt(a, "--seed", &v))
        return v && cli_parse_u64(cmd, "--seed", v, &s->seed) ? 1 : -1;
    const int kv = cli_kv_option(a, &o->kv_k, &o->kv_v);
    if (kv) return kv;
    if (cli_opt(a, "--threads", &v))
        return v && cli_parse_threads(cmd, v, &o->threads) ? 1 : -1;
    if (cli_opt(a, "--end", &v)) {      /* repeatable; -1: none at all */
        int32_t id;
        o->end_given = true;
        if (!v || !cli_parse_i32(cmd, "--end", v, -1, 1 << 30, &id)) return -1;
        if (id == -1) gc->ignore_end = true;
        else if (gc->n_end_tokens == NGPT_END_TOKENS_MAX)
            return cli_error(cmd, CLI_USAGE, "--end: at most %d ids", NGPT_END_TOKENS_MAX), -1;
        else o->ends[gc->n_end_tokens++] = id;
        if (gc->ignore_end && gc->n_end_tokens > 0)
            return cli_error(cmd, CLI_USAGE, "--end -1 (no end token) and --end ID contradict "
                             "each other"), -1;
        gc->end_tokens = o->ends;
        return 1;
    }
    if (cli_flag(a, "--stop-at-full")) {
        gc->stop_at_context_full = true;
        return 1;
    }
    if (cli_opt(a, "--context", &v)) {
        if (!v) return -1;
        if (!strcmp(v, "exact")) gc->context_mode = NGPT_CONTEXT_EXACT;
        else if (!strcmp(v, "shift")) gc->context_mode = NGPT_CONTEXT_SHIFT;
        else return cli_error(cmd, CLI_USAGE, "--context must be exact or shift"), -1;
        return 1;
    }
    const bool json = cli_flag(a, "--json");
    const bool gbnf = !json && cli_opt(a, "--grammar", &v);
    const bool schema = !json && !gbnf && cli_opt(a, "--json-schema", &v);
    if (json || gbnf || schema) {
        if ((gbnf || schema) && !v) return -1;
        if (o->grammar_kind)
            return cli_error(cmd, CLI_USAGE, "give one of --grammar, --json-schema and --json"), -1;
        o->grammar_kind = gbnf ? 1 : schema ? 2 : 3;
        o->grammar_file = json ? NULL : v;
        return 1;
    }
    if (cli_opt(a, "--ban", &v)) {
        if (!v) return -1;
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (o->n_ban == CLI_MAX_BAN)
                return cli_error(cmd, CLI_USAGE, "--ban: at most %d ids", CLI_MAX_BAN), -1;
            if (!cli_parse_i32(cmd, "--ban", tok, 0, 1 << 30, &o->ban[o->n_ban])) return -1;
            o->n_ban++;
        }
        s->banned = o->ban;
        s->n_banned = o->n_ban;
        return 1;
    }
    return 0;
}

int cli_gen_grammar(const char *cmd, cli_gen_opts *o, const ngpt_tokenizer *tok)
{
    if (!o->grammar_kind) return CLI_OK;
    size_t n = 2;
    char *text = o->grammar_file ? cli_read_file(o->grammar_file, &n) : NULL;
    if (o->grammar_file && !text)
        return cli_error(cmd, CLI_FAILED, "cannot read %s", o->grammar_file);
    ngpt_status st = o->grammar_kind == 1 ? ngpt_grammar_parse(&o->grammar, tok, text, n)
                     : ngpt_grammar_from_json_schema(&o->grammar, tok, text ? text : "{}", n);
    free(text);
    if (st)
        return cli_error(cmd, CLI_FAILED, "%s: %s", o->grammar_file ? o->grammar_file : "--json",
                         ngpt_last_error());
    o->gc.grammar = o->grammar;
    return CLI_OK;
}

void cli_report_cropped(const char *cmd, const ngpt_generate_result *res, const char *what,
                        bool tokens)
{
    const char *unit = tokens ? "tokens" : "bytes";
    if (res->prompt_dropped > 0)
        fprintf(stderr, "ngpt %s: the %s is longer than the model's context (T=%d %s): its "
                "first %d %s were dropped\n", cmd, what, (int)res->prompt_tokens, unit,
                (int)res->prompt_dropped, unit);
}
