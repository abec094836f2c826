/* cmd_chat.c — `ngpt chat`: the original's chat format
 *   "system: ...\nuser: ...\nassistant: " ... "\n"
 * one user line from stdin per turn, the reply streamed to stdout, stopping
 * at the role markers. The prompt is the last T bytes of the conversation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt chat --model FILE [--system TEXT] [-n N] [--temp T] [--top-k K] [--top-p P]\n"
    "       [--min-p P] [--repeat-penalty R] [--repeat-window N] [--ban ID,...] [--seed S]\n"
    "       [--threads N]\n\n"
    "Reads one user message per line from stdin and streams each reply to stdout.\n"
    "The conversation is \"system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...\"; a reply\n"
    "ends at \"\\nuser: \", \"\\nsystem: \" or \"\\nassistant: \" (not printed), or after\n"
    "-n tokens (default 256). When the conversation is longer than the model's\n"
    "context T, the model sees its last T bytes. Turn i samples with seed S+i.\n";

typedef struct convo {
    char *buf;
    size_t len, cap;
} convo;

static int append(convo *c, const char *s, size_t n)
{
    if (c->len + n + 1 > c->cap) {
        size_t cap = (c->len + n + 1) * 2;
        char *nb = realloc(c->buf, cap);
        if (!nb) return -1;
        c->buf = nb;
        c->cap = cap;
    }
    memcpy(c->buf + c->len, s, n);
    c->len += n;
    c->buf[c->len] = 0;
    return 0;
}

static int on_token(int32_t tok, void *user)
{
    char ch = (char)tok;
    putchar(tok);
    fflush(stdout);
    return append(user, &ch, 1) ? 1 : 0;
}

int cli_cmd_chat(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    cli_gen_opts o = {.gc = ngpt_generate_config_default(), .threads = 1};
    const char *model = NULL, *system = NULL, *v;
    int r;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if ((r = cli_gen_option(&a, &o)) != 0) {
            if (r < 0) return CLI_USAGE;
        } else if (cli_opt(&a, "--model", &v)) {
            model = v;
        } else if (cli_opt(&a, "--system", &v)) {
            system = v;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!model) return cli_error(a.cmd, CLI_USAGE, "--model FILE is required (see ngpt chat --help)");
    static const char *const stops[] = {"\nuser: ", "\nsystem: ", "\nassistant: "};
    o.gc.stop = stops;
    o.gc.n_stop = 3;

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.threads = o.threads;
    ngpt_context *ctx;
    ngpt_status st = cli_open_model(model, &shape, &ctx);
    if (st) return cli_library_failed(a.cmd);
    ngpt_config cfg;
    ngpt_context_config(ctx, &cfg);
    const size_t T = (size_t)cfg.context_len;
    int32_t *tokens = malloc(T * sizeof(int32_t));
    convo c = {0};
    if (!tokens || (system && (append(&c, "system: ", 8) || append(&c, system, strlen(system)) ||
                               append(&c, "\n", 1)))) {
        ngpt_context_free(ctx);
        return cli_error(a.cmd, CLI_FAILED, "out of memory");
    }
    char line[4096];
    const uint64_t seed = o.gc.sampler.seed;
    int rc = CLI_OK;
    for (uint64_t turn = 0; fgets(line, sizeof line, stdin); turn++) {
        size_t n = strcspn(line, "\r\n");
        if (append(&c, "user: ", 6) || append(&c, line, n) || append(&c, "\nassistant: ", 12)) {
            rc = cli_error(a.cmd, CLI_FAILED, "out of memory");
            break;
        }
        size_t take = c.len < T ? c.len : T;
        for (size_t i = 0; i < take; i++) tokens[i] = (unsigned char)c.buf[c.len - take + i];
        o.gc.sampler.seed = seed + turn;
        ngpt_generate_result res;
        st = ngpt_model_generate(ctx, &o.gc, tokens, (int32_t)take, NULL, 0, on_token, &c, &res);
        if (st) {
            rc = cli_library_failed(a.cmd);
            break;
        }
        putchar('\n');
        fflush(stdout);
        if (append(&c, "\n", 1)) {
            rc = cli_error(a.cmd, CLI_FAILED, "out of memory");
            break;
        }
    }
    free(c.buf);
    free(tokens);
    ngpt_context_free(ctx);
    return rc;
}
