/* fuzz_cli.c — the command line: the input is up to 4 command lines separated
 * by an empty line, each split at '\n' into argv ("ngpt" prepended), run
 * through cli_main (every command, every option parser). Properties: no
 * crash, and the exit code is 0, 1 or 2.
 *
 * Containment: commands run inside a private temporary directory (the
 * process returns to its own directory after each input) that holds one
 * tiny model, m.ngpt, and a text file, d.txt, and is emptied and refilled
 * after every input; stdin is /dev/null; an argument
 * with a '/' (a path outside it) makes the input uninteresting. The
 * library's allocations are capped at 8 MiB while a command runs (with
 * -Wl,--wrap=malloc, Linux), so a huge size is an out-of-memory error
 * to report, not a fuzzer OOM; stdout and stderr are silenced (run with
 * -close_fd_mask=3 under libFuzzer). Work is capped: a command that asks
 * for much of it (too_costly) or makes a model larger than tiny
 * (too_large) is not run, so that an input costs about a millisecond. */
#define _FILE_OFFSET_BITS 64    /* readdir on 32-bit ARM: 64-bit directory offsets */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#endif
#if defined(NGPT_FUZZ_REPLAY) && defined(FUZZ_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

#define MAX_COMMANDS 4
#define MAX_ARGS 32
#define ALLOC_CAP ((size_t)8 << 20)

#ifdef NGPT_FUZZ_WRAP_MALLOC
static int capped;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__wrap_malloc(size_t n) { return capped && n > ALLOC_CAP ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m)
{
    return capped && m && n > ALLOC_CAP / m ? NULL : __real_calloc(n, m);
}
#define CAP(on) (capped = (on))
#else
#define CAP(on) ((void)0)
#endif

static char dir[512];
static unsigned char *model;
static size_t model_size;

/* Empties the directory, then writes m.ngpt back. */
static void reset_dir(void)
{
    DIR *d = opendir(".");
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(e->d_name);
    if (d) closedir(d);
    FILE *f = fopen("m.ngpt", "wb");
    if (!f || fwrite(model, 1, model_size, f) != model_size || fclose(f)) fuzz_fail("m.ngpt");
    static const char text[] = "The quick brown fox jumps over the lazy dog.\n"
                               "user: hello\nassistant: hi there\n"
                               "system: be brief\nuser: what is ngpt?\n"
                               "assistant: a small byte-level transformer in C.\n"
                               "Pack my box with five dozen liquor jugs.\n";
    f = fopen("d.txt", "wb");
    if (!f || fwrite(text, 1, sizeof text - 1, f) != sizeof text - 1 || fclose(f)) fuzz_fail("d.txt");
}

static void remove_dir(void)
{
    if (!dir[0] || chdir(dir) != 0) return;
    reset_dir();
    unlink("m.ngpt");
    unlink("d.txt");
    if (chdir("/") == 0) rmdir(dir);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/ngpt-fuzz-cli-XXXXXX", fuzz_tmpdir());
    if (!mkdtemp(dir) || chdir(dir) != 0) fuzz_fail("cannot make a temporary directory");
    int null_in = open("/dev/null", O_RDONLY);      /* ngpt chat reads stdin: EOF at once */
    if (null_in < 0 || dup2(null_in, 0) < 0) fuzz_fail("stdin");
    close(null_in);
    atexit(remove_dir);
    ngpt_config cfg = fuzz_tiny_config();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_context *ctx;
    if (ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0) || ngpt_context_params_init(ctx, 42) || ngpt_context_save(ctx, "m.ngpt"))
        fuzz_fail("m.ngpt: %s", ngpt_last_error());
    ngpt_context_free(ctx);
    FILE *f = fopen("m.ngpt", "rb");
    model = malloc(1 << 16);
    model_size = f ? fread(model, 1, 1 << 16, f) : 0;
    if (f) fclose(f);
}

/* Options whose value sets how much work a command does: an input asking
 * for more than a little (or training without --steps, generating without
 * -n: 256 tokens) is uninteresting,
 * it would only be slow. So is `ngpt bench`: it measures for seconds
 * whatever its options. (Threads: each costs its start, 20 us.) */
static bool too_costly(int argc, char **argv)
{
    static const struct {
        const char *name;
        long long max;
    } costly[] = {{"--steps", 16}, {"--batches", 16}, {"--batch", 16}, {"--accum", 16},
                  {"--eval-batches", 16}, {"--eval-every", 16}, {"--max-tokens", 16}, {"-n", 16},
                  {"--beam", 16}, {"--seq", 16}, {"--threads", 4}, {"--warmup", 16}};
    bool steps = false, tokens = false;
    if (argc > 1 && !strcmp(argv[1], "bench")) return true;
    for (int i = 1; i < argc; i++)
        for (size_t j = 0; j < sizeof costly / sizeof costly[0]; j++) {
            size_t k = strlen(costly[j].name);
            const char *v = NULL;
            if (!strcmp(argv[i], costly[j].name) && i + 1 < argc) v = argv[i + 1];
            else if (!strncmp(argv[i], costly[j].name, k) && argv[i][k] == '=') v = argv[i] + k + 1;
            if (!v) continue;
            if (j == 0) steps = true;
            if (j == 6 || j == 7) tokens = true;
            if (strtoll(v, NULL, 10) > costly[j].max) return true;
        }
    return argc > 1 && ((!strcmp(argv[1], "train") && !steps) ||
                        (!strcmp(argv[1], "generate") && !tokens));
}

/* A model larger than tiny makes its command slow (ngpt init drew the 1.2
 * million weights of `--config L=4 --config d_ff=16`: C=256 and T=256 are
 * the defaults) and every later command on it (a T=2000 context slides by
 * full prefills): uninteresting. Its config is the one init or train (of a
 * new model) makes: the defaults, then each --config in order (a tokenizer
 * sets V, but the tokenizers this directory can hold are small). */
#define MAX_MODEL_PARAMS (1u << 14)
#define MAX_MODEL_T 64
static bool too_large(int argc, char **argv)
{
    const bool init = argc > 1 && !strcmp(argv[1], "init");
    const bool train = argc > 1 && !strcmp(argv[1], "train");
    if (!init && !train) return false;
    ngpt_config c = ngpt_config_default();
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        if (train && (!strncmp(argv[i], "--init", 6) || !strncmp(argv[i], "--resume", 8)))
            return false;       /* the model's own config (--config may set only dropout) */
        if (!strncmp(argv[i], "--config=", 9)) v = argv[i] + 9;
        else if (!strcmp(argv[i], "--config") && i + 1 < argc) v = argv[++i];
        if (v) (void)ngpt_config_set(&c, v);    /* one it refuses, the command refuses too */
    }
    size_t params;
    return ngpt_config_param_count(&c, &params) == NGPT_OK &&
           (params > MAX_MODEL_PARAMS || c.context_len > MAX_MODEL_T);
}

/* Runs one command line; argv strings are exact-size heap copies. */
static void run_command(const uint8_t *p, size_t n)
{
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)fuzz_copy((const uint8_t *)"ngpt", 5);
    size_t start = 0;
    while (start < n && argc <= MAX_ARGS) {
        const uint8_t *nl = memchr(p + start, '\n', n - start);
        size_t len = nl ? (size_t)(nl - (p + start)) : n - start;
        char *arg = malloc(len + 1);
        if (!arg) abort();
        memcpy(arg, p + start, len);
        arg[len] = '\0';
        argv[argc++] = arg;
        if (memchr(arg, '/', len)) goto done;   /* stay inside the directory */
        start += len + 1;
    }
    argv[argc] = NULL;
    if (too_costly(argc, argv) || too_large(argc, argv)) goto done;
    {
        CAP(1);
        int rc = cli_main(argc, argv);
        CAP(0);
        if (rc < 0 || rc > 2) fuzz_fail("exit code %d", rc);
    }
done:
    for (int i = 0; i < argc; i++) free(argv[i]);
}

NGPT_FUZZ_ENTRY(cli)
{
    /* Work inside the directory, then return: libFuzzer's own paths are relative. */
    int home = open(".", O_RDONLY | O_DIRECTORY);
    if (!dir[0]) setup();
    else if (chdir(dir) != 0) fuzz_fail("chdir %s", dir);
#ifdef NGPT_FUZZ_REPLAY
    /* Quiet replays: the commands' output goes nowhere. */
    fflush(stdout), fflush(stderr);
    int out = dup(1), err = dup(2);
    FILE *null = fopen("/dev/null", "w");
    dup2(fileno(null), 1), dup2(fileno(null), 2);
#ifdef FUZZ_ASAN
    __sanitizer_set_report_fd((void *)(intptr_t)err);   /* a crash report stays visible */
#endif
#endif
    size_t start = 0;
    for (int cmds = 0; start < size && cmds < MAX_COMMANDS; cmds++) {
        /* commands are separated by an empty line: "\n\n" */
        const uint8_t *end = NULL;
        for (size_t i = start; i + 1 < size; i++)
            if (data[i] == '\n' && data[i + 1] == '\n') { end = data + i; break; }
        size_t len = end ? (size_t)(end - (data + start)) : size - start;
        run_command(data + start, len);
        start += len + 2;
    }
#ifdef NGPT_FUZZ_REPLAY
    fflush(stdout), fflush(stderr);
    dup2(out, 1), dup2(err, 2);
#ifdef FUZZ_ASAN
    __sanitizer_set_report_fd((void *)(intptr_t)2);
#endif
    close(out), close(err), fclose(null);
#endif
    reset_dir();
    if (home < 0 || fchdir(home) != 0) fuzz_fail("cannot return to the working directory");
    close(home);
    return 0;
}
