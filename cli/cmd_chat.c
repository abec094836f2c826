/* cmd_chat.c — `ngpt chat`: one user line from stdin per turn, the reply
 * streamed to stdout, in the form of a chat template:
 *  - a Jinja template (the model's own, ChatML, or a file): the
 *    conversation is kept as messages (cli/chat_conv.c) and rendered whole
 *    each turn by ngpt_template_render_tokens, which keeps the tokens the
 *    cache holds where the rendering still spells them (the replies as the
 *    model wrote them) and recognises only the special tokens the template
 *    wrote; a reply ends at the model's end tokens (ChatML: <|im_end|>);
 *  - plain (the original's "system: ...\nuser: ...\nassistant: " ... "\n"):
 *    the conversation is kept as text and encoded whole each turn, and a
 *    reply stops at the role markers (byte strings, matched on the reply's
 *    bytes whatever its tokens).
 * Either way the prompt is the conversation's tokens (the last T of them),
 * and the cache keeps what the previous turns prefilled. --render prints
 * the prompt a conversation renders to, and exits. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat_conv.h"
#include "cli.h"
#include "lora.h"

static const char *const HELP =
    "usage: ngpt chat --model FILE [--template chatml|plain|model|FILE] [--system TEXT]\n"
    "       [--think | --no-think] [--date YYYY-MM-DD] [-n N] [--temp T] [--top-k K]\n"
    "       [--top-p P] [--min-p P] [--repeat-penalty R] [--repeat-window N] [--ban ID,...]\n"
    "       [--end ID] [--seed S] [--context exact|shift] [--stop-at-full] [--session FILE]\n"
    "       [--verbose] [--adapter FILE[:S] ...] [--grammar FILE | --json-schema FILE | --json]\n"
    "       [--kv f32|q8] [--kv-k T] [--kv-v T] [--threads N]\n"
    "       ngpt chat --model FILE --render CONVERSATION.json [--no-generation-prompt] [--ids]\n"
    "       [--template ...] [--think | --no-think] [--date YYYY-MM-DD]\n\n"
    "Reads one user message per line from stdin and streams each reply to stdout,\n"
    "after at most -n tokens (default 256), until the end of input (Ctrl-D on a\n"
    "terminal, where \"> \" marks each line it waits for; piped, the output is the\n"
    "replies alone). The conversation's form is the template's:\n\n"
    "  model   (the default when the model file carries a chat template: ngpt import\n"
    "          keeps tokenizer_config.json's) the model's own Jinja template, rendered\n"
    "          as Hugging Face's apply_chat_template renders it: Llama 3's headers,\n"
    "          Gemma 3's turns, Qwen3's thinking. Each turn renders the whole\n"
    "          conversation again; a reply ends at the model's end tokens\n"
    "  chatml  (the default otherwise when the tokenizer has the special tokens\n"
    "          <|im_start|> and <|im_end|>) SmolLM2-Instruct's template: each turn\n"
    "          <|im_start|>ROLE\\nTEXT<|im_end|>\\n, the reply after\n"
    "          <|im_start|>assistant\\n, ending at <|im_end|>; without --system the\n"
    "          conversation opens with SmolLM2's system message\n"
    "  FILE    a tokenizer_config.json (a name ending in .json: its chat_template and\n"
    "          special tokens) or a Jinja template's text (chat_template.jinja)\n"
    "  plain   (the default otherwise)\n"
    "          \"system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...\"; a reply ends at\n"
    "          \"\\nuser: \", \"\\nsystem: \" or \"\\nassistant: \" (not printed) or at\n"
    "          the tokenizer's end tokens if it has any. The conversation is encoded\n"
    "          whole each turn (its bytes are the tokens of a byte-level model).\n"
    "A template's markers are the special tokens; what you type is plain text, never a\n"
    "marker (docs/GENERATION.md, \"Chat templates\").\n\n"
    "--end ID stops at another token (repeatable; -1: none). When the conversation\n"
    "is longer than the model's context T, the model sees its last T tokens (stderr\n"
    "says how many were dropped); --context and --stop-at-full say what happens\n"
    "when a reply fills the context (see ngpt generate --help). Turn i samples with\n"
    "seed S+i. Each turn prefills only what the previous turns did not (the cache\n"
    "keeps the conversation's common start).\n\n"
    "  --template T       chatml, plain, model or FILE; chatml on a tokenizer without\n"
    "                     the two special tokens is refused, naming the missing one\n"
    "  --system TEXT      the system message\n"
    "  --think, --no-think  enable_thinking true or false (Qwen3: --no-think answers\n"
    "                     without a thinking block); default: the template's\n"
    "  --date YYYY-MM-DD  the date a template writes (strftime_now; Llama 3.2's\n"
    "                     \"Today Date\"); default: today's\n"
    "  --render FILE      print the prompt the conversation in FILE (a JSON list of\n"
    "                     {\"role\": ..., \"content\": ...}; -: stdin) renders to, exactly,\n"
    "                     and exit; --ids: its token ids instead; --no-generation-prompt:\n"
    "                     without the assistant's open turn\n"
    "  --session FILE     resume the conversation FILE holds (--system applies only\n"
    "                     to a new one) and save it there at the end of input: the\n"
    "                     next run prefills nothing it holds. With a template its\n"
    "                     messages are kept in FILE.json. A file of another model or\n"
    "                     other --adapter settings is refused (docs/GENERATION.md,\n"
    "                     \"Sessions\")\n"
    "  --verbose          stderr: each turn's prompt tokens (with a template: those\n"
    "                     past what the cache holds; plain: the whole prompt) and how\n"
    "                     many tokens it prefilled\n"
    CLI_GRAMMAR_HELP
    "                     (each reply is held to it; the template's end marker\n"
    "                     follows the reply as always)\n"
    CLI_ADAPTER_HELP
    CLI_KV_HELP
    CLI_THREADS_HELP;

/* A growing array: the conversation's text (plain) or tokens. */
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
    if (n) memcpy((char *)g->v + g->n * g->size, v, n * g->size);
    g->n += n;
    memset((char *)g->v + g->n * g->size, 0, g->size);
    return 0;
}

typedef struct chat {
    const char *cmd;
    const ngpt_tokenizer *tok;
    ngpt_template *tpl;         /* NULL: plain */
    ngpt_template_options opt;
    cli_conv conv;              /* template: the messages */
    grow text;                  /* plain: the conversation's bytes */
    grow held;                  /* template: the tokens the cache holds (prompt and reply) */
    grow reply;                 /* template: this turn's reply */
} chat;

static int on_token(int32_t id, void *user)
{
    chat *c = user;
    size_t len;
    const uint8_t *b = cli_token_bytes(c->tok, id, &len);
    fwrite(b, 1, len, stdout);
    fflush(stdout);
    if (c->tpl) return push(&c->reply, &id, 1) ? 1 : 0;
    return len && push(&c->text, b, len) ? 1 : 0;
}

static int no_memory(const char *cmd)
{
    return cli_error(cmd, CLI_FAILED, "out of memory");
}

/* The conversation's tokens with a template (malloc'd), keeping what the
 * cache holds where the rendering spells it. */
static int render_ids(chat *c, const ngpt_chat_message *m, size_t n, const grow *held,
                      int32_t **ids, size_t *n_ids)
{
    const int32_t *h = held ? held->v : NULL;
    const size_t nh = held ? held->n : 0;
    *ids = NULL;
    if (ngpt_template_render_tokens(c->tpl, c->tok, m, n, &c->opt, h, nh, NULL, 0, n_ids))
        return cli_library_failed(c->cmd);
    if (!(*ids = malloc((*n_ids + 1) * sizeof **ids))) return no_memory(c->cmd);
    if (ngpt_template_render_tokens(c->tpl, c->tok, m, n, &c->opt, h, nh, *ids, *n_ids, n_ids)) {
        free(*ids);
        *ids = NULL;
        return cli_library_failed(c->cmd);
    }
    return CLI_OK;
}

/* The plain format's text of messages m, and the generation prompt. */
static int plain_text(chat *c, const ngpt_chat_message *m, size_t n, bool prompt)
{
    int rc = CLI_OK;
    for (size_t i = 0; i < n && !rc; i++)
        if (push(&c->text, m[i].role, strlen(m[i].role)) || push(&c->text, ": ", 2) ||
            push(&c->text, m[i].content, m[i].content_len) || push(&c->text, "\n", 1))
            rc = no_memory(c->cmd);
    if (!rc && prompt && push(&c->text, "assistant: ", 11)) rc = no_memory(c->cmd);
    return rc;
}

static void print_ids(FILE *f, const int32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%d", i ? " " : "", (int)ids[i]);
    fputc('\n', f);
}

/* --render: the prompt of the conversation in path, printed. */
static int render(chat *c, const char *path, bool ids)
{
    cli_conv conv = {0};
    int rc = cli_conv_read(c->cmd, path, &conv);
    int32_t *v = NULL;
    size_t n = 0;
    char *text = NULL;
    if (!rc && ids && !c->tok)
        rc = cli_error(c->cmd, CLI_USAGE, "--ids: the model has no tokenizer (a byte-level "
                       "model's tokens are the bytes --render prints)");
    if (!rc && c->tpl && ids) {
        if (!(rc = render_ids(c, conv.m, conv.n, NULL, &v, &n))) print_ids(stdout, v, n);
    } else if (!rc && c->tpl) {
        if (ngpt_template_render(c->tpl, conv.m, conv.n, &c->opt, NULL, 0, &n) ||
            !(text = malloc(n + 1)) ||
            ngpt_template_render(c->tpl, conv.m, conv.n, &c->opt, text, n, &n))
            rc = text ? cli_library_failed(c->cmd) : n ? no_memory(c->cmd) : cli_library_failed(c->cmd);
        else fwrite(text, 1, n, stdout);
    } else if (!rc && !(rc = plain_text(c, conv.m, conv.n, c->opt.add_generation_prompt))) {
        if (!ids) fwrite(c->text.v, 1, c->text.n, stdout);
        else if (!(rc = cli_encode(c->cmd, c->tok, c->text.v, c->text.n, &v, &n)))
            print_ids(stdout, v, n);
    }
    free(v);
    free(text);
    cli_conv_free(&conv);
    return rc;
}

/* --session FILE: the conversation so far is the file's tokens (plain:
 * their text; a template: they are what the cache holds, and the messages
 * are FILE.json's). */
static int restore(chat *c, ngpt_context *ctx, const char *path, size_t *restored)
{
    int32_t *held = NULL;
    size_t n = 0;
    const bool existed = access(path, F_OK) == 0;
    if (cli_session_restore(c->cmd, ctx, path, &held, &n)) return CLI_FAILED;
    int rc = CLI_OK;
    if (c->tpl) {
        char messages[4200];
        snprintf(messages, sizeof messages, "%s.json", path);
        if (existed && access(messages, F_OK) != 0)
            rc = cli_error(c->cmd, CLI_FAILED, "%s holds a conversation without its messages "
                           "(%s): a session of ngpt chat with a template keeps them there; "
                           "delete %s to start afresh, or chat with --template plain", path,
                           messages, path);
        else if (existed) rc = cli_conv_read(c->cmd, messages, &c->conv);
        if (!rc && n && push(&c->held, held, n)) rc = no_memory(c->cmd);
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

static int save(chat *c, ngpt_context *ctx, const char *path)
{
    if (c->tpl) {       /* the conversation rendered whole, the last reply closed */
        char messages[4200];
        snprintf(messages, sizeof messages, "%s.json", path);
        int32_t *tokens = NULL;
        size_t n = 0;
        c->opt.add_generation_prompt = false;
        int rc = render_ids(c, c->conv.m, c->conv.n, &c->held, &tokens, &n);
        if (!rc) rc = cli_session_save(c->cmd, ctx, path, tokens, n);
        free(tokens);
        return rc ? rc : cli_conv_write(c->cmd, &c->conv, messages);
    }
    int32_t *tokens = NULL;
    size_t n = 0;
    int rc = cli_encode(c->cmd, c->tok, c->text.v ? c->text.v : "", c->text.n, &tokens, &n);
    if (!rc) rc = cli_session_save(c->cmd, ctx, path, tokens, n);
    free(tokens);
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

/* This turn's prompt: the user's line added to the conversation, rendered
 * (or appended to the plain text and encoded); *shown: the ids the cache
 * did not hold (--verbose prints them). */
static int turn_prompt(chat *c, const char *line, int32_t **prompt, size_t *n, size_t *shown)
{
    if (!c->tpl) {
        const ngpt_chat_message user = {.role = "user", .content = line, .content_len = strlen(line)};
        const int rc = plain_text(c, &user, 1, true);
        *shown = 0;
        return rc ? rc : cli_encode(c->cmd, c->tok, c->text.v, c->text.n, prompt, n);
    }
    int rc = cli_conv_add(c->cmd, &c->conv, "user", line, strlen(line));
    if (!rc) rc = render_ids(c, c->conv.m, c->conv.n, &c->held, prompt, n);
    const int32_t *h = c->held.v;
    for (*shown = 0; !rc && *shown < *n && *shown < c->held.n && h[*shown] == (*prompt)[*shown];)
        ++*shown;
    return rc;
}

/* After a reply: the template's conversation holds it as text and the
 * cache's tokens are the prompt and the reply; plain: the text ends the line. */
static int turn_done(chat *c, const int32_t *prompt, size_t n)
{
    if (!c->tpl) return push(&c->text, "\n", 1) ? no_memory(c->cmd) : CLI_OK;
    size_t len = 0;
    char *text = NULL;
    int rc = CLI_OK;
    if (ngpt_tokenizer_decode(c->tok, c->reply.v, c->reply.n, NULL, 0, &len) ||
        !(text = malloc(len + 1)) ||
        ngpt_tokenizer_decode(c->tok, c->reply.v, c->reply.n, text, len, &len))
        rc = text ? cli_library_failed(c->cmd) : no_memory(c->cmd);
    if (!rc) rc = cli_conv_add(c->cmd, &c->conv, "assistant", text, len);
    c->held.n = 0;
    if (!rc && (push(&c->held, prompt, n) || push(&c->held, c->reply.v, c->reply.n)))
        rc = no_memory(c->cmd);
    c->reply.n = 0;
    free(text);
    return rc;
}

int cli_cmd_chat(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    cli_gen_opts o = {.gc = ngpt_generate_config_default(), .threads = 0};
    cli_adapters ads = {0};
    const char *model = NULL, *session = NULL, *template = NULL, *render_path = NULL, *v;
    const char *system = NULL;
    bool verbose = false, ids = false;
    ngpt_template_options topt = ngpt_template_options_default();
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
        } else if (cli_opt(&a, "--render", &v)) {
            render_path = v;
        } else if ((r = cli_template_option(&a, &topt)) != 0) {
            if (r < 0) return CLI_USAGE;
        } else if (cli_flag(&a, "--no-generation-prompt")) {
            topt.add_generation_prompt = false;
        } else if (cli_flag(&a, "--ids")) {
            ids = true;
        } else if (cli_flag(&a, "--verbose")) {
            verbose = true;
        } else {
            return cli_unknown(&a);
        }
    }
    if (a.failed) return CLI_USAGE;
    if (!model) return cli_error(a.cmd, CLI_USAGE, "--model FILE is required (see ngpt chat --help)");
    if (!render_path && (ids || !topt.add_generation_prompt))
        return cli_error(a.cmd, CLI_USAGE, "--ids and --no-generation-prompt go with --render");
    o.gc.keep_cache = true;     /* a turn prefills only what is new */

    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);     /* generation's plan */
    shape.threads = o.threads;
    shape.kv_k = o.kv_k, shape.kv_v = o.kv_v;
    ngpt_context *ctx = NULL;
    ngpt_model *m = NULL;
    const ngpt_tokenizer *tok = NULL;
    if (!render_path && cli_adapters_open(a.cmd, &ads, &shape)) return CLI_FAILED;
    if (render_path ? ngpt_model_open(&m, model) || ngpt_model_tokenizer(m, &tok)
                    : cli_open_model(model, &shape, &m, &ctx, &tok)) {
        ngpt_model_close(m);
        cli_adapters_close(&ads);
        return cli_library_failed(a.cmd);
    }
    chat c = {.cmd = a.cmd, .tok = tok, .opt = topt, .text = {.size = 1},
              .held = {.size = sizeof(int32_t)}, .reply = {.size = sizeof(int32_t)}};
    int32_t im_end = -1;
    int rc = cli_chat_template(a.cmd, template, m, tok, &c.tpl, &im_end);
    if (!rc && render_path) {
        rc = render(&c, render_path, ids);
        goto done;
    }
    /* before a session's restore: setting adapters empties the cache */
    if (!rc) rc = cli_adapters_apply(a.cmd, &ads, ctx, model);
    if (!rc) rc = cli_gen_grammar(a.cmd, &o, tok);
    if (!rc && !o.end_given && im_end >= 0) {   /* ChatML: <|im_end|>; else the tokenizer's */
        o.ends[0] = im_end;
        o.gc.end_tokens = o.ends, o.gc.n_end_tokens = 1;
    }
    static const char *const stops[] = {"\nuser: ", "\nsystem: ", "\nassistant: "};
    if (!c.tpl) o.gc.stop = stops, o.gc.n_stop = 3;
    size_t restored = 0;
    if (!rc && session) rc = restore(&c, ctx, session, &restored);
    if (!rc && restored)
        fprintf(stderr, "ngpt chat: session %s: %zu tokens restored\n", session, restored);
    if (!rc && !restored && system) {       /* a new conversation opens with the system turn */
        if (c.tpl) rc = cli_conv_add(a.cmd, &c.conv, "system", system, strlen(system));
        else if (push(&c.text, "system: ", 8) || push(&c.text, system, strlen(system)) ||
                 push(&c.text, "\n", 1))
            rc = no_memory(a.cmd);
    }
    if (verbose) ngpt_progress_callback_set(count_prefill, NULL);
    /* a person typing (stdin and stdout a terminal) is told how it ends */
    const bool interactive = isatty(fileno(stdin)) && isatty(fileno(stdout));
    if (!rc && interactive)
        fprintf(stderr, "ngpt chat: one message a line after \"> \"; Ctrl-D (end of input) ends "
                        "the chat\n");
    char line[4096];
    const uint64_t seed = o.gc.sampler.seed;
    for (uint64_t turn = 0; !rc && read_line(line, sizeof line, interactive); turn++) {
        line[strcspn(line, "\r\n")] = '\0';
        int32_t *prompt = NULL;
        size_t n_tokens = 0, shown = 0;
        if ((rc = turn_prompt(&c, line, &prompt, &n_tokens, &shown))) break;
        if (verbose) {
            fprintf(stderr, "ngpt %s: turn %llu prompt (+%zu): ", a.cmd, (unsigned long long)turn + 1,
                    n_tokens - shown);
            print_ids(stderr, prompt + shown, n_tokens - shown);
        }
        if (n_tokens > INT32_MAX) {
            free(prompt);
            rc = cli_error(a.cmd, CLI_FAILED, "the conversation is too long");
            break;
        }
        o.gc.sampler.seed = seed + turn;
        ngpt_generate_result res;
        prefilled = 0;
        if (ngpt_context_generate(ctx, &o.gc, prompt, (int32_t)n_tokens, NULL, 0, on_token, &c, &res)) {
            free(prompt);
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
        rc = turn_done(&c, prompt, n_tokens);
        free(prompt);
    }
    if (verbose) ngpt_progress_callback_set(NULL, NULL);
    if (interactive && !rc) putchar('\n');    /* Ctrl-D left the cursor after the marker */
    if (session && rc == CLI_OK) rc = save(&c, ctx, session);
done:
    ngpt_template_free(c.tpl);
    cli_conv_free(&c.conv);
    free(c.text.v);
    free(c.held.v);
    free(c.reply.v);
    ngpt_grammar_free(o.grammar);
    cli_close_model(m, ctx);
    cli_adapters_close(&ads);
    return rc;
}
