/* cmd_chat.c — `ngpt chat`: one user line from stdin per turn, the reply
 * streamed to stdout, in one of two templates:
 *  - chatml (instruct models whose tokenizer has <|im_start|> and
 *    <|im_end|>): the conversation is kept as tokens, each turn appended by
 *    the library's ngpt_tokenizer_chatml_turn and each reply as the model wrote it, and
 *    a reply ends at <|im_end|>;
 *  - plain (the original's "system: ...\nuser: ...\nassistant: " ... "\n"):
 *    the conversation is kept as text and encoded whole each turn, and a
 *    reply stops at the role markers (byte strings, matched on the reply's
 *    bytes whatever its tokens).
 * Either way the prompt is the conversation's tokens (the last T of them),
 * and the cache keeps what the previous turns prefilled. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* SmolLM2-Instruct's template adds this system turn when the conversation
 * has none; ChatML itself has no default, so the library adds nothing. */
#define SMOLLM2_SYSTEM "You are a helpful AI assistant named SmolLM, trained by Hugging Face"

static const char *const HELP =
    "usage: ngpt chat --model FILE [--template chatml|plain] [--system TEXT] [-n N]\n"
    "       [--temp T] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]\n"
    "       [--repeat-window N] [--ban ID,...] [--end ID] [--seed S] [--context exact|shift]\n"
    "       [--stop-at-full] [--session FILE] [--verbose] [--adapter FILE[:S] ...]\n"
    "       [--grammar FILE | --json-schema FILE | --json] [--threads N]\n\n"
    "Reads one user message per line from stdin and streams each reply to stdout,\n"
    "after at most -n tokens (default 256), until the end of input (Ctrl-D on a\n"
    "terminal, where \"> \" marks each line it waits for; piped, the output is the\n"
    "replies alone). The conversation's form is the template's:\n\n"
    "  chatml  (the default when the model's tokenizer has the special tokens\n"
    "          <|im_start|> and <|im_end|>, as SmolLM2-Instruct's has) each turn is\n"
    "          <|im_start|>ROLE\\nTEXT<|im_end|>\\n, the reply follows\n"
    "          <|im_start|>assistant\\n and ends at <|im_end|> (not printed). The\n"
    "          markers are the special tokens; what you type is plain text, never a\n"
    "          marker. Without --system the conversation opens with SmolLM2's\n"
    "          system message:\n"
    "          \"" SMOLLM2_SYSTEM "\"\n"
    "  plain   (the default otherwise)\n"
    "          \"system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...\"; a reply ends at\n"
    "          \"\\nuser: \", \"\\nsystem: \" or \"\\nassistant: \" (not printed) or at\n"
    "          the tokenizer's end tokens if it has any. The\n"
    "          conversation is encoded whole each turn (its bytes are the tokens of a\n"
    "          byte-level model).\n\n"
    "--end ID stops at another token (repeatable; -1: none). When the conversation\n"
    "is longer than the model's context T, the model sees its last T tokens (stderr\n"
    "says how many were dropped); --context and --stop-at-full say what happens\n"
    "when a reply fills the context (see ngpt generate --help). Turn i samples with\n"
    "seed S+i. Each turn prefills only what the previous turns did not (the cache\n"
    "keeps the conversation's common start).\n\n"
    "  --template T       chatml or plain; chatml on a tokenizer without the two\n"
    "                     special tokens is refused, naming the missing one\n"
    "  --system TEXT      the system message\n"
    "  --session FILE     resume the conversation FILE holds (--system applies only\n"
    "                     to a new one) and save it there at the end of input: the\n"
    "                     next run prefills nothing it holds. A file of another\n"
    "                     model or other --adapter settings is refused\n"
    "                     (docs/GENERATION.md, \"Sessions\")\n"
    "  --verbose          stderr: each turn's prompt tokens (chatml: the ids it adds\n"
    "                     to the conversation; plain: the whole prompt) and how\n"
    "                     many tokens it prefilled\n"
    CLI_GRAMMAR_HELP
    "                     (each reply is held to it; the template's end marker\n"
    "                     follows the reply as always)\n"
    CLI_ADAPTER_HELP
    CLI_THREADS_HELP;

/* A growing array: the conversation's text (plain) or tokens (chatml). */
typedef struct grow {
    void *v;
    size_t n, cap, size;        /* n elements of size bytes */
} grow;

static int push(grow *g, const void *v, size_t n)
{
    if (g->n + n + 1 > g->cap) {        /* + 1: text stays NUL-terminated */
        size_t cap = (g->n + n + 1) * 2;
        void *nv = realloc(g->v, cap * g->size);
        if (!nv) return -1;
        g->v = nv;
        g->cap = cap;
    }
    memcpy((char *)g->v + g->n * g->size, v, n * g->size);
    g->n += n;
    memset((char *)g->v + g->n * g->size, 0, g->size);
    return 0;
}

typedef struct chat {
    const char *cmd;
    const ngpt_tokenizer *tok;
    bool chatml;
    grow text;                  /* plain: the conversation's bytes */
    grow ids;                   /* chatml: the conversation's tokens */
    grow reply;                 /* chatml: this turn's (apart: ids is the prompt being read) */
} chat;

static int on_token(int32_t id, void *user)
{
    chat *c = user;
    size_t len;
    const uint8_t *b = cli_token_bytes(c->tok, id, &len);
    fwrite(b, 1, len, stdout);
    fflush(stdout);
    if (c->chatml) return push(&c->reply, &id, 1) ? 1 : 0;
    return len && push(&c->text, b, len) ? 1 : 0;
}

static int no_memory(const char *cmd)
{
    return cli_error(cmd, CLI_FAILED, "out of memory");
}

/* chatml: appends one turn (open: the generation prompt) to the tokens. */
static int chatml_turn(chat *c, const char *role, const char *text, bool open)
{
    size_t n = 0, len = text ? strlen(text) : 0;
    if (ngpt_tokenizer_chatml_turn(c->tok, role, text, len, open, NULL, 0, &n)) return cli_library_failed(c->cmd);
    int32_t *t = malloc(n * sizeof *t);
    if (!t) return no_memory(c->cmd);
    int rc = ngpt_tokenizer_chatml_turn(c->tok, role, text, len, open, t, n, &n) ? cli_library_failed(c->cmd)
             : push(&c->ids, t, n) ? no_memory(c->cmd) : CLI_OK;
    free(t);
    return rc;
}

/* chatml: the reply as the model wrote it (what the cache holds), closed
 * by <|im_end|> "\n". */
static int chatml_close(chat *c, int32_t im_end)
{
    int32_t nl[4];
    size_t n = 0;
    if (ngpt_tokenizer_encode(c->tok, "\n", 1, nl, 4, &n)) return cli_library_failed(c->cmd);
    int rc = push(&c->ids, c->reply.v, c->reply.n) || push(&c->ids, &im_end, 1) ||
             push(&c->ids, nl, n) ? no_memory(c->cmd) : CLI_OK;
    c->reply.n = 0;
    return rc;
}

/* plain: appends the strings (a NULL-terminated list) to the text. */
static int plain_append(chat *c, ...)
{
    va_list ap;
    va_start(ap, c);
    int rc = CLI_OK;
    for (const char *s; !rc && (s = va_arg(ap, const char *));)
        if (push(&c->text, s, strlen(s))) rc = no_memory(c->cmd);
    va_end(ap);
    return rc;
}

/* --session: the conversation so far is the file's tokens (chatml) or
 * their text (plain). */
static int restore(chat *c, ngpt_context *ctx, const char *path, size_t *restored)
{
    int32_t *held = NULL;
    size_t n = 0;
    if (cli_session_restore(c->cmd, ctx, path, &held, &n)) return CLI_FAILED;
    int rc = CLI_OK;
    if (c->chatml) {
        if (n && push(&c->ids, held, n)) rc = no_memory(c->cmd);
    } else {
        for (size_t i = 0; i < n && !rc; i++) {
            size_t len;
            const uint8_t *b = cli_token_bytes(c->tok, held[i], &len);
            if (len && push(&c->text, b, len)) rc = no_memory(c->cmd);
        }
    }
    free(held);
    *restored = n;
    return rc;
}

/* --verbose: the last prefill's token count (ngpt_context_generate reports
 * its passes to the progress callback). */
static uint64_t prefilled;
static bool count_prefill(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    (void)user, (void)done;
    if (stage == NGPT_PROGRESS_PREFILL && !prefilled) prefilled = total;   /* the prompt's */
    return true;
}

static void print_ids(const char *cmd, uint64_t turn, const int32_t *ids, size_t n)
{
    fprintf(stderr, "ngpt %s: turn %llu prompt (+%zu):", cmd, (unsigned long long)turn + 1, n);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", (int)ids[i]);
    fputc('\n', stderr);
}

/* The next user line; on a terminal after a marker that says the chat
 * listens (interactive: piped output holds the replies alone). */
static bool read_line(char *line, int size, bool interactive)
{
    if (interactive) {
        fputs("> ", stdout);
        fflush(stdout);
    }
    return fgets(line, size, stdin) != NULL;
}

/* --template against the tokenizer: chat->chatml, *im_end. */
static int pick_template(chat *c, const char *template, int32_t *im_end)
{
    if (template && strcmp(template, "chatml") && strcmp(template, "plain"))
        return cli_error(c->cmd, CLI_USAGE, "--template must be chatml or plain");
    const bool has = c->tok && ngpt_tokenizer_chatml_specials(c->tok, NULL, im_end) == NGPT_OK;
    if (template && !strcmp(template, "chatml") && !has) {
        if (!c->tok)
            return cli_error(c->cmd, CLI_USAGE, "--template chatml: the model has no tokenizer "
                             "(a byte-level model), so no special token <|im_start|>");
        return cli_error(c->cmd, CLI_USAGE, "--template chatml: %s", cli_library_error());
    }
    c->chatml = template ? !strcmp(template, "chatml") : has;
    return CLI_OK;
}

int cli_cmd_chat(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    cli_gen_opts o = {.gc = ngpt_generate_config_default(), .threads = 0};
    cli_adapters ads = {0};
    const char *model = NULL, *session = NULL, *template = NULL, *v;
    const char *system = NULL;
    bool verbose = false;
    int r;
    while (cli_next(&a)) {
        if (cli_flag(&a, "--help") || cli_flag(&a, "-h")) {
            fputs(HELP, stdout);
            return CLI_OK;
        } else if ((r = cli_gen_option(&a, &o)) != 0 || (r = cli_adapter_option(&a, &ads)) != 0) {
            if (r < 0) return CLI_USAGE;
        } else if (cli_opt(&a, "--model", &v)) {
            model = v;
        } else if (cli_opt(&a, "--system", &v)) {
            system = v;
        } else if (cli_opt(&a, "--template", &v)) {
            template = v;
        } else if (cli_opt(&a, "--session", &v)) {
            session = v;
        } else if (cli_flag(&a, "--verbose")) {
            verbose = true;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!model) return cli_error(a.cmd, CLI_USAGE, "--model FILE is required (see ngpt chat --help)");
    o.gc.keep_cache = true;     /* a turn prefills only what is new */

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);     /* generation's plan */
    shape.threads = o.threads;
    ngpt_context *ctx;
    ngpt_model *m;
    const ngpt_tokenizer *tok;
    if (cli_adapters_open(a.cmd, &ads, &shape)) return CLI_FAILED;
    if (cli_open_model(model, &shape, &m, &ctx, &tok)) {
        cli_adapters_close(&ads);
        return cli_library_failed(a.cmd);
    }
    chat c = {a.cmd, tok, false, {NULL, 0, 0, 1}, {NULL, 0, 0, sizeof(int32_t)},
              {NULL, 0, 0, sizeof(int32_t)}};
    int32_t im_end = -1;
    /* before a session's restore: setting adapters empties the cache */
    int rc = cli_adapters_apply(a.cmd, &ads, ctx, model);
    if (!rc) rc = pick_template(&c, template, &im_end);
    if (!rc) rc = cli_gen_grammar(a.cmd, &o, tok);
    if (!rc && !o.end_given && c.chatml) {      /* else the tokenizer's end tokens */
        o.ends[0] = im_end;
        o.gc.end_tokens = o.ends, o.gc.n_end_tokens = 1;
    }
    static const char *const stops[] = {"\nuser: ", "\nsystem: ", "\nassistant: "};
    if (!c.chatml) o.gc.stop = stops, o.gc.n_stop = 3;
    size_t restored = 0;
    if (!rc && session) rc = restore(&c, ctx, session, &restored);
    if (!rc && restored)
        fprintf(stderr, "ngpt chat: session %s: %zu tokens restored\n", session, restored);
    size_t shown = c.ids.n;     /* chatml: the tokens the model has seen or wrote */
    if (!rc && !restored) {     /* a new conversation opens with the system turn */
        if (c.chatml) rc = chatml_turn(&c, "system", system ? system : SMOLLM2_SYSTEM, false);
        else if (system) rc = plain_append(&c, "system: ", system, "\n", NULL);
    }
    if (verbose) ngpt_progress_callback_set(count_prefill, NULL);
    /* a person typing (stdin and stdout a terminal) is told how it ends */
    const bool interactive = isatty(fileno(stdin)) && isatty(fileno(stdout));
    if (!rc && interactive)
        fprintf(stderr, "ngpt chat: one message a line after \"> \"; Ctrl-D (end of input) ends "
                        "the chat\n");
    int32_t *tokens = NULL;     /* plain: the conversation encoded */
    size_t n_tokens = 0;
    char line[4096];
    const uint64_t seed = o.gc.sampler.seed;
    for (uint64_t turn = 0; !rc && read_line(line, sizeof line, interactive); turn++) {
        line[strcspn(line, "\r\n")] = '\0';
        const int32_t *prompt;
        if (c.chatml) {
            if ((rc = chatml_turn(&c, "user", line, false)) ||
                (rc = chatml_turn(&c, "assistant", NULL, true)))
                break;
            prompt = c.ids.v;
            n_tokens = c.ids.n;
            if (verbose) print_ids(a.cmd, turn, prompt + shown, n_tokens - shown);
        } else {
            if ((rc = plain_append(&c, "user: ", line, "\nassistant: ", NULL))) break;
            free(tokens);
            tokens = NULL;
            if ((rc = cli_encode(a.cmd, tok, c.text.v, c.text.n, &tokens, &n_tokens))) break;
            prompt = tokens;
            if (verbose) print_ids(a.cmd, turn, prompt, n_tokens);
        }
        if (n_tokens > INT32_MAX) {
            rc = cli_error(a.cmd, CLI_FAILED, "the conversation is too long");
            break;
        }
        o.gc.sampler.seed = seed + turn;
        ngpt_generate_result res;
        prefilled = 0;
        if (ngpt_context_generate(ctx, &o.gc, prompt, (int32_t)n_tokens, NULL, 0, on_token, &c,
                                &res)) {
            rc = cli_library_failed(a.cmd);
            break;
        }
        putchar('\n');
        fflush(stdout);
        if (verbose)
            fprintf(stderr, "ngpt chat: turn %llu prefilled %llu of %d tokens, %s\n",
                    (unsigned long long)turn + 1, (unsigned long long)prefilled,
                    (int)res.prompt_tokens, ngpt_stop_reason_string(res.reason));
        cli_report_cropped(a.cmd, &res, "conversation", tok != NULL);
        shown = c.ids.n + c.reply.n;
        rc = c.chatml ? chatml_close(&c, im_end) : plain_append(&c, "\n", NULL);
    }
    if (verbose) ngpt_progress_callback_set(NULL, NULL);
    if (interactive && !rc) putchar('\n');    /* Ctrl-D left the cursor after the marker */
    if (session && rc == CLI_OK) {
        if (c.chatml) {
            rc = cli_session_save(a.cmd, ctx, session, c.ids.v, c.ids.n);
        } else {
            free(tokens);
            tokens = NULL;
            rc = cli_encode(a.cmd, tok, c.text.v ? c.text.v : "", c.text.n, &tokens, &n_tokens);
            if (!rc) rc = cli_session_save(a.cmd, ctx, session, tokens, n_tokens);
        }
    }
    free(c.text.v);
    free(c.ids.v);
    free(c.reply.v);
    free(tokens);
    ngpt_grammar_free(o.grammar);
    cli_close_model(m, ctx);
    cli_adapters_close(&ads);
    return rc;
}
