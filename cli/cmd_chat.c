/* cmd_chat.c — `ngpt chat`: the original's chat format
 *   "system: ...\nuser: ...\nassistant: " ... "\n"
 * one user line from stdin per turn, the reply streamed to stdout, stopping
 * at the role markers (byte strings, matched on the reply's bytes whatever
 * its tokens). The prompt is the conversation's tokens (its bytes for a
 * byte-level model), the last T of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const HELP =
    "usage: ngpt chat --model FILE [--system TEXT] [-n N] [--temp T] [--top-k K] [--top-p P]\n"
    "       [--min-p P] [--repeat-penalty R] [--repeat-window N] [--ban ID,...] [--seed S]\n"
    "       [--context exact|shift] [--session FILE] [--threads N]\n\n"
    "Reads one user message per line from stdin and streams each reply to stdout.\n"
    "The conversation is \"system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...\"; a reply\n"
    "ends at \"\\nuser: \", \"\\nsystem: \" or \"\\nassistant: \" (not printed), or after\n"
    "-n tokens (default 256), or at the tokenizer's end-of-text token if the model\n"
    "has one (--end ID: another, -1: none). The conversation is encoded whole each\n"
    "turn with the model's tokenizer (its bytes are the tokens of a byte-level model);\n"
    "when it is longer than the model's context T, the model sees its last T tokens\n"
    "(stderr says how many were dropped);\n"
    "--context says what happens when a reply fills the context (see ngpt generate\n"
    "--help). Turn i samples with seed S+i. Each turn prefills only what the\n"
    "previous turns did not (the cache keeps the conversation's common start).\n\n"
    "  --session FILE     resume the conversation FILE holds (--system applies only\n"
    "                     to a new one) and save it there at the end of input: the\n"
    "                     next run prefills nothing it holds. A file of another\n"
    "                     model is refused (docs/GENERATION.md, \"Sessions\")\n"
    CLI_THREADS_HELP;

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

typedef struct reply {
    convo *c;
    const ngpt_tokenizer *tok;
} reply;

static int on_token(int32_t id, void *user)
{
    reply *r = user;
    size_t len;
    const uint8_t *b = cli_token_bytes(r->tok, id, &len);
    fwrite(b, 1, len, stdout);
    fflush(stdout);
    return len && append(r->c, (const char *)b, len) ? 1 : 0;
}

/* --session: the conversation so far is the text of the file's tokens. */
static int restore(const char *cmd, ngpt_context *ctx, const ngpt_tokenizer *tok,
                   const char *path, convo *c, size_t *restored)
{
    int32_t *held = NULL;
    size_t n = 0;
    if (cli_session_restore(cmd, ctx, path, &held, &n)) return CLI_FAILED;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *b = cli_token_bytes(tok, held[i], &len);
        if (len && append(c, (const char *)b, len)) {
            free(held);
            return cli_error(cmd, CLI_FAILED, "out of memory");
        }
    }
    free(held);
    *restored = n;
    return CLI_OK;
}

int cli_cmd_chat(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    cli_gen_opts o = {.gc = ngpt_generate_config_default(), .threads = 0};
    const char *model = NULL, *system = NULL, *session = NULL, *v;
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
        } else if (cli_opt(&a, "--session", &v)) {
            session = v;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!model) return cli_error(a.cmd, CLI_USAGE, "--model FILE is required (see ngpt chat --help)");
    static const char *const stops[] = {"\nuser: ", "\nsystem: ", "\nassistant: "};
    o.gc.stop = stops;
    o.gc.n_stop = 3;
    o.gc.keep_cache = true;     /* a turn prefills only what is new */

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.threads = o.threads;
    ngpt_model *m;
    ngpt_context *ctx;
    const ngpt_tokenizer *tok;
    ngpt_status st = cli_open_model(model, &shape, &m, &ctx, &tok);
    if (st) return cli_library_failed(a.cmd);
    ngpt_tokenizer_info info;
    if (tok && !o.end_given && !ngpt_tokenizer_describe(tok, &info)) o.gc.end_token = info.end_id;
    int32_t *tokens = NULL;     /* the whole conversation: the library keeps its last T */
    size_t n_tokens;
    convo c = {0};
    reply rp = {&c, tok};
    size_t restored = 0;
    if (session && (restore(a.cmd, ctx, tok, session, &c, &restored))) {
        free(c.buf);
        cli_close_model(m, ctx);
        return CLI_FAILED;
    }
    if (restored) fprintf(stderr, "ngpt chat: session %s: %zu tokens restored\n", session, restored);
    if (system && !restored && (append(&c, "system: ", 8) || append(&c, system, strlen(system)) ||
                   append(&c, "\n", 1))) {
        free(c.buf);
        cli_close_model(m, ctx);
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
        free(tokens);
        if ((rc = cli_encode(a.cmd, tok, c.buf, c.len, &tokens, &n_tokens))) break;
        if (n_tokens > INT32_MAX) {
            rc = cli_error(a.cmd, CLI_FAILED, "the conversation is too long");
            break;
        }
        o.gc.sampler.seed = seed + turn;
        ngpt_generate_result res;
        st = ngpt_model_generate(ctx, &o.gc, tokens, (int32_t)n_tokens, NULL, 0, on_token, &rp,
                                 &res);
        if (st) {
            rc = cli_library_failed(a.cmd);
            break;
        }
        putchar('\n');
        fflush(stdout);
        cli_report_cropped(a.cmd, &res, "conversation", tok != NULL);
        if (append(&c, "\n", 1)) {
            rc = cli_error(a.cmd, CLI_FAILED, "out of memory");
            break;
        }
    }
    if (session && rc == CLI_OK) {
        free(tokens);
        tokens = NULL;
        rc = cli_encode(a.cmd, tok, c.buf ? c.buf : "", c.len, &tokens, &n_tokens);
        if (!rc) rc = cli_session_save(a.cmd, ctx, session, tokens, n_tokens);
    }
    free(c.buf);
    free(tokens);
    cli_close_model(m, ctx);
    return rc;
}
