/* cli.h — the ngpt command-line tool: the command table and the helpers every
 * command shares (option parsing with clear errors, opening a model). */
#ifndef NGPT_CLI_H
#define NGPT_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "ngpt.h"

/* Exit codes: 0 success, 1 the operation failed, 2 bad usage. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    const char *summary;        /* one line for `ngpt --help` */
    int (*run)(int argc, char **argv);   /* argv[0] is the command name */
} cli_command;

/* Walks argv: `while (cli_next(&a)) { if (cli_opt(&a, "--out", &v)) ... else return cli_unknown(&a); }` */
typedef struct cli_args {
    int argc;
    char **argv;
    int i;                      /* index of the current argument */
    const char *cmd;            /* for messages: "ngpt <cmd>: ..." */
    bool failed;                /* an option lacked its value */
} cli_args;

cli_args cli_args_init(int argc, char **argv);
/* Advances to the next argument; false at the end or after a failure. */
bool cli_next(cli_args *a);
/* The current argument. */
const char *cli_arg(const cli_args *a);
/* True if the current argument is `name` (a flag without value). */
bool cli_flag(cli_args *a, const char *name);
/* True if the current argument is `name VALUE` or `name=VALUE`; sets *value.
 * A missing value prints an error and sets a->failed. */
bool cli_opt(cli_args *a, const char *name, const char **value);
/* Prints "ngpt <cmd>: unknown option X (see ngpt <cmd> --help)"; returns CLI_USAGE. */
int cli_unknown(const cli_args *a);

/* A command of subcommands (`ngpt tokenizer train ...`): runs the one
 * argv[1] names with argv + 1; help prints on --help (stdout: CLI_OK) and
 * when none is named (stderr: CLI_USAGE); an unknown one is a usage error. */
typedef struct cli_subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
} cli_subcommand;
int cli_subcommands(const char *cmd, const char *help, const cli_subcommand *sub, size_t n,
                    int argc, char **argv);

/* Parse helpers: print "ngpt <cmd>: <opt> expects ..." and return false on error. */
bool cli_parse_i32(const char *cmd, const char *opt, const char *s, int32_t lo, int32_t hi, int32_t *out);
bool cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out);
bool cli_parse_f32(const char *cmd, const char *opt, const char *s, float lo, float hi, float *out);
/* --lm-head q8|q4 (quantize, import, bench): *q4 whether the head is 4-bit. */
bool cli_parse_lm_head(const char *cmd, const char *s, bool *q4);

/* Prints "ngpt <cmd>: <message>" to stderr; returns code. */
int cli_error(const char *cmd, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The library's last message without its "ngpt_<function>: " prefix (the
 * convention of ngpt.h): the sentence, which names files and values itself;
 * a command's user did not call that function. */
const char *cli_library_error(void);
/* Prints "ngpt <cmd>: <the library's sentence>"; returns CLI_FAILED. */
int cli_library_failed(const char *cmd);

/* Opens a checkpoint as a model (one read of the file: ngpt_model_open)
 * and makes a context of it for `shape` (cli_model_context); with tok (may
 * be NULL), *tok is the tokenizer the model carries (NULL for a byte-level
 * model), borrowed from the model and attached to the context. Close both
 * with cli_close_model. */
ngpt_status cli_open_model(const char *path, const ngpt_shape *shape, ngpt_model **m,
                           ngpt_context **ctx, const ngpt_tokenizer **tok);
/* A context of an open model for `shape` (shape->threads == 0 means
 * cli_threads_auto's count; a seq above the model's T means T): an
 * inference context on the model's weights, or a training context that
 * loads them (tokenizer attached). */
ngpt_status cli_model_context(const ngpt_model *m, const ngpt_shape *shape, ngpt_context **ctx);
/* Frees the context, then closes the model (either may be NULL). */
void cli_close_model(ngpt_model *m, ngpt_context *ctx);
/* A tokenizer file, or the tokenizer a checkpoint carries (told apart by
 * their first bytes): CLI_OK, or CLI_FAILED with the message printed (also
 * for a byte-level checkpoint, which carries none). */
int cli_load_tokenizer(const char *cmd, const char *path, ngpt_tokenizer **tok);
/* The tokens of n bytes of text: tok's ids (after its BOS when it has one:
 * a prompt), or the bytes themselves when tok is NULL, into a malloc'd array
 * *ids of *n_ids tokens. CLI_OK, or CLI_FAILED with the message printed. */
int cli_encode(const char *cmd, const ngpt_tokenizer *tok, const void *text, size_t n,
               int32_t **ids, size_t *n_ids);
/* The bytes of token id (*len of them): tok's (a special token: its name),
 * or byte id when tok is NULL (an id >= 256 has none: NULL, *len 0). */
const uint8_t *cli_token_bytes(const ngpt_tokenizer *tok, int32_t id, size_t *len);

/* --threads N: 1..1024 (message printed on a bad value). */
/* The grammar options' lines of generate's and chat's --help. */
#define CLI_GRAMMAR_HELP \
    "  --grammar FILE     hold the output to a GBNF grammar (llama.cpp's notation;\n" \
    "                     docs/GENERATION.md, \"Grammars\"): it ends when complete\n" \
    "  --json-schema FILE hold it to compact JSON that validates against a JSON\n" \
    "                     Schema (the keywords docs/GENERATION.md lists; another\n" \
    "                     is an error naming it)\n" \
    "  --json             hold it to any compact JSON value\n"

#define CLI_KV_HELP \
    "  --kv f32|q8        how the KV cache stores keys and values (default f32); q8:\n" \
    "                     8-bit rows, 0.28x the memory, the same bits on every build\n" \
    "                     (docs/GENERATION.md, \"The 8-bit KV cache\")\n" \
    "  --kv-k T, --kv-v T keys or values alone (f32 or q8)\n"
/* Consumes --kv T, --kv-k T or --kv-v T (T: f32 or q8) into shape-style
 * kv_k / kv_v: 1 taken, 0 not one of them, -1 bad value (message printed). */
int cli_kv_option(cli_args *a, int16_t *kv_k, int16_t *kv_v);
#define CLI_THREADS_HELP \
    "  --threads N        threads (default: the online cores, at most one per 64 rows\n" \
    "                     or model columns of the work; results are the same for any N)\n"
bool cli_parse_threads(const char *cmd, const char *s, int32_t *threads);
/* The default thread count for a shape: the online cores, capped by the work
 * (one thread per 64 rows of a pass, batch*seq, or per 64 model columns, so
 * a small model does not wake threads it cannot feed). */
int32_t cli_threads_auto(const ngpt_config *cfg, const ngpt_shape *shape);

/* The whole tool: `ngpt <command> [options]` (argv[0] is the program name).
 * Returns the exit code; never exits. cli/main.c's main calls it. */
int cli_main(int argc, char **argv);

/* Commands (cli/cmd_<name>.c). */
int cli_cmd_init(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_checksum(int argc, char **argv);
int cli_cmd_quantize(int argc, char **argv);
int cli_cmd_import(int argc, char **argv);
int cli_cmd_train(int argc, char **argv);
int cli_cmd_eval(int argc, char **argv);
int cli_cmd_generate(int argc, char **argv);
int cli_cmd_chat(int argc, char **argv);
int cli_cmd_trace(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_tokenizer(int argc, char **argv);
int cli_cmd_lora(int argc, char **argv);

/* Sampling options shared by generate and chat (cli/gen_opts.c). */
#define CLI_MAX_BAN 256
typedef struct cli_gen_opts {
    ngpt_generate_config gc;
    /* --grammar FILE, --json-schema FILE or --json: the text (NULL for
     * --json), which kind, and what cli_gen_grammar compiled of it */
    const char *grammar_file;
    int grammar_kind;           /* 0 none, 1 GBNF, 2 JSON Schema, 3 any JSON */
    ngpt_grammar *grammar;
    bool end_given;             /* --end: otherwise the tokenizer's end tokens end */
    int32_t ends[NGPT_END_TOKENS_MAX];  /* --end's ids (gc.end_tokens) */
    int32_t threads;
    int16_t kv_k, kv_v;         /* --kv, --kv-k, --kv-v (shape.kv_k, kv_v) */
    int32_t ban[CLI_MAX_BAN];
    int32_t n_ban;
} cli_gen_opts;
/* Consumes one of -n --temp --top-k --top-p --min-p --repeat-penalty
 * --repeat-window --seed --threads --kv --kv-k --kv-v --end --stop-at-full --context --ban
 * --grammar --json-schema --json: 1 taken, 0 not one of them, -1 bad value
 * (message printed). */
int cli_gen_option(cli_args *a, cli_gen_opts *o);
/* Compiles --grammar / --json-schema / --json for tok's vocabulary into
 * o->grammar and o->gc.grammar (nothing without one): CLI_OK, or
 * CLI_FAILED with the message printed. ngpt_grammar_free(o->grammar) after. */
int cli_gen_grammar(const char *cmd, cli_gen_opts *o, const ngpt_tokenizer *tok);
/* One stderr line when ngpt_context_generate cropped the prompt
 * (res->prompt_dropped), counted in tokens (bytes for a byte-level model:
 * tokens false). */
void cli_report_cropped(const char *cmd, const ngpt_generate_result *res, const char *what,
                        bool tokens);
/* --session FILE (cli/session.c). Restore: when FILE exists, loads it
 * into slot 0 and copies its tokens into a malloc'd *tokens (*n of them;
 * NULL, 0 for a new session). Save: slot 0 becomes exactly the last T of
 * tokens (what it holds of them is kept, the rest prefilled) and is saved
 * to FILE. Both return CLI_OK, or CLI_FAILED with the message printed. */
int cli_session_restore(const char *cmd, ngpt_context *ctx, const char *path, int32_t **tokens,
                        size_t *n);
int cli_session_save(const char *cmd, ngpt_context *ctx, const char *path, const int32_t *tokens,
                     size_t n);
/* Replaces \n \t \\ \xNN escapes in place. */
void cli_unescape(char *s);
/* Reads a whole file ("-": standard input) into a malloc'd buffer of *n
 * bytes plus a NUL; NULL when it cannot be opened or read (errno says why). */
char *cli_read_file(const char *path, size_t *n);
/* Seconds from a monotonic clock. */
double cli_now(void);

#endif
