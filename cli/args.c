/* args.c — option parsing and error printing shared by every command. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

cli_args cli_args_init(int argc, char **argv)
{
    cli_args a = {argc, argv, 0, argv[0], false};
    return a;
}

bool cli_next(cli_args *a)
{
    if (a->failed) return false;
    a->i++;
    return a->i < a->argc;
}

const char *cli_arg(const cli_args *a) { return a->argv[a->i]; }

bool cli_flag(cli_args *a, const char *name) { return !strcmp(a->argv[a->i], name); }

bool cli_opt(cli_args *a, const char *name, const char **value)
{
    const char *arg = a->argv[a->i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return false;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return true;
    }
    if (arg[n] != '\0') return false;
    if (a->i + 1 >= a->argc) {
        cli_error(a->cmd, CLI_USAGE, "%s needs a value", name);
        a->failed = true;
        *value = NULL;
        return true;
    }
    *value = a->argv[++a->i];
    return true;
}

int cli_unknown(const cli_args *a)
{
    if (a->failed) return CLI_USAGE;
    return cli_error(a->cmd, CLI_USAGE, "unknown option or extra argument \"%s\" (see ngpt %s --help)",
                     a->argv[a->i], a->cmd);
}

int cli_error(const char *cmd, int code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ngpt %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

const char *cli_library_error(void)
{
    const char *m = ngpt_last_error();
    if (strncmp(m, "ngpt_", 5) != 0) return m;
    size_t n = 5 + strspn(m + 5, "abcdefghijklmnopqrstuvwxyz0123456789_");
    return m[n] == ':' && m[n + 1] == ' ' ? m + n + 2 : m;
}

int cli_library_failed(const char *cmd)
{
    return cli_error(cmd, CLI_FAILED, "%s", cli_library_error());
}

bool cli_parse_lm_head(const char *cmd, const char *s, bool *q4)
{
    if (!s) return false;       /* cli_opt said the value is missing */
    if (strcmp(s, "q4") && strcmp(s, "q8")) {
        cli_error(cmd, CLI_USAGE, "--lm-head expects q8 or q4, got \"%s\"", s);
        return false;
    }
    *q4 = !strcmp(s, "q4");
    return true;
}

bool cli_parse_i32(const char *cmd, const char *opt, const char *s, int32_t lo, int32_t hi, int32_t *out)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || *s == '\0' || isspace((unsigned char)*s) || *end != '\0' || errno == ERANGE || v < lo ||
        v > hi) {
        cli_error(cmd, CLI_USAGE, "%s expects an integer in %" PRId32 "..%" PRId32 ", got \"%s\"",
                  opt, lo, hi, s ? s : "");
        return false;
    }
    *out = (int32_t)v;
    return true;
}

bool cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    /* strtoull skips blanks and negates "-1" to 2^64-1: neither is a number here */
    unsigned long long v = s && *s != '-' && !isspace((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
    if (!s || *s == '\0' || *s == '-' || isspace((unsigned char)*s) || *end != '\0' ||
        errno == ERANGE) {
        cli_error(cmd, CLI_USAGE, "%s expects a non-negative integer, got \"%s\"", opt, s ? s : "");
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

bool cli_parse_f32(const char *cmd, const char *opt, const char *s, float lo, float hi, float *out)
{
    char *end;
    errno = 0;
    float v = s ? strtof(s, &end) : 0.0f;
    if (!s || *s == '\0' || isspace((unsigned char)*s) || *end != '\0' || errno == ERANGE ||
        !isfinite(v) || v < lo || v > hi) {
        cli_error(cmd, CLI_USAGE, "%s expects a number in [%g, %g], got \"%s\"", opt, (double)lo,
                  (double)hi, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_threads(const char *cmd, const char *s, int32_t *threads)
{
    return cli_parse_i32(cmd, "--threads", s, 1, 1024, threads);
}

int32_t cli_threads_auto(const ngpt_config *cfg, const ngpt_shape *shape)
{
    enum { PER_THREAD = 64 };
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t rows = (int64_t)shape->batch * (shape->seq > 0 ? shape->seq : cfg->context_len);
    int64_t work = rows > cfg->d_model ? rows : cfg->d_model;
    int64_t n = online > 0 ? online : 1;
    if (n > work / PER_THREAD) n = work / PER_THREAD;
    if (n > 1024) n = 1024;
    return n < 1 ? 1 : (int32_t)n;
}

char *cli_read_file(const char *path, size_t *n)
{
    bool std_in = !strcmp(path, "-");
    FILE *f = std_in ? stdin : fopen(path, "rb");
    *n = 0;
    if (!f) return NULL;
    size_t cap = 4096, len = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, (cap *= 2) + 1);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    if (!std_in) fclose(f);
    if (buf) buf[len] = '\0';
    *n = len;
    return buf;
}

int cli_subcommands(const char *cmd, const char *help, const cli_subcommand *sub, size_t n,
                    int argc, char **argv)
{
    if (argc < 2) {
        fputs(help, stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(help, stdout);
        return CLI_OK;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(argv[1], sub[i].name)) return sub[i].run(argc - 1, argv + 1);
    return cli_error(cmd, CLI_USAGE, "unknown command \"%s\" (see ngpt %s --help)", argv[1], cmd);
}

int cli_kv_option(cli_args *a, int16_t *kv_k, int16_t *kv_v)
{
    static const char *const opts[3] = {"--kv", "--kv-k", "--kv-v"};
    for (int i = 0; i < 3; i++) {
        const char *v;
        if (!cli_opt(a, opts[i], &v)) continue;
        if (!v) return -1;
        int16_t t;
        if (!strcmp(v, "f32")) t = NGPT_KV_F32;
        else if (!strcmp(v, "q8")) t = NGPT_KV_Q8;
        else return cli_error(a->cmd, CLI_USAGE, "%s must be f32 or q8, got '%s'", opts[i], v), -1;
        if (i != 2) *kv_k = t;
        if (i != 1) *kv_v = t;
        return 1;
    }
    return 0;
}
