/* test_crash_save.c — a process killed (SIGKILL) at any point of a checkpoint
 * save never damages the previous checkpoint (docs/DESIGN.md §5):
 *  1. at exact byte counts: a child saves a new model through a write hook
 *     that writes up to byte N of the file, then SIGKILLs itself — for N in
 *     the header, the tables, the data, the checksum, and after the last byte
 *     (before fsync and rename);
 *  2. at arbitrary moments: a child saves two models in turn, forever, and
 *     the parent kills it after a short pseudo-random delay (any instant:
 *     writing, fsync, rename, the directory fsync).
 * After every kill the file at the path must load and verify, and be byte
 * for byte either the previous checkpoint or a complete new one — never a
 * partial file. Temporary files a kill leaves behind are counted (they are
 * never at the checkpoint's path) and removed. */
#define _GNU_SOURCE             /* syscall() */
#define _FILE_OFFSET_BITS 64    /* readdir on 32-bit ARM: 64-bit directory offsets */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "test.h"

#ifdef __linux__
#include <sys/syscall.h>
#endif

/* fork(), except under Linux a bare clone(SIGCHLD): glibc's fork crashes
 * (ARMv7) or hangs (AArch64) in the child of a dynamically linked program
 * under qemu-user 7.2, where `make test` runs the ARM builds. The parent
 * has one thread and holds no lock, so the child's libc is consistent; the
 * child only kills itself with kill(getpid()), never raise() (glibc's
 * cached thread id is the parent's). */
static pid_t spawn(void)
{
    fflush(stdout), fflush(stderr);
#ifdef __linux__
    return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#else
    return fork();
#endif
}

static void die(void)
{
    kill(getpid(), SIGKILL);
    _exit(5);
}

static char dir[256], path[300];

static ngpt_config tiny(void)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 64, c.context_len = 8, c.d_model = 16, c.n_layers = 2, c.n_heads = 2, c.d_ff = 32;
    return c;
}

static ngpt_context *model(uint64_t seed)
{
    ngpt_config cfg = tiny();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = 1;
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0) || ngpt_context_params_init(ctx, seed)) return NULL;
    return ctx;
}

/* Removes the temporary files kills left in dir; returns how many. */
static int sweep_temporaries(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    char p[600];
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
            n++;
        }
    if (d) closedir(d);
    return n;
}

/* The file at path is exactly one of the images, opens and makes a context. */
static void expect_whole(const unsigned char *const *images, const size_t *sizes, int n_images,
                         const char *when)
{
    size_t n = 0;
    unsigned char *now = test_read_file(path, &n);
    int which = -1;
    for (int i = 0; now && i < n_images; i++)
        if (n == sizes[i] && !memcmp(now, images[i], n)) which = i;
    CHECK(which >= 0, "%s: the file at the path is none of the complete checkpoints (%zu bytes)", when, n);
    ngpt_model *m = NULL;
    ngpt_context *ctx = NULL;
    ngpt_config cfg;
    CHECK_OK(ngpt_model_open(&m, path));
    if (m) {
        CHECK_OK(ngpt_model_config(m, &cfg));
        CHECK_OK(ngpt_context_init(&ctx, m, NULL, NULL, NULL, 0));
    }
    ngpt_context_free(ctx);
    ngpt_model_close(m);
    free(now);
}

/* ---- 1. kills at exact byte counts */

static uint64_t kill_at, written;

static ssize_t write_then_die(int fd, const void *buf, size_t n)
{
    if (written + n >= kill_at) {
        size_t part = (size_t)(kill_at - written);
        if (part && write(fd, buf, part) != (ssize_t)part) _exit(3);
        die();
    }
    ssize_t w = write(fd, buf, n);
    if (w > 0) written += (uint64_t)w;
    return w;
}

static void kill_at_bytes(const unsigned char *const *images, const size_t *sizes)
{
    const size_t n = sizes[1];
    uint32_t header;
    memcpy(&header, images[0] + 12, 4);
    const uint64_t points[] = {0, 1, 8, 64, 127, 128, 129, 200, 255, 256, header - 1, header,
                               header + 1, header + 100, n / 3, n / 2, n - 64, n - 9, n - 8,
                               n - 7, n - 1, n};
    int killed = 0, left = 0;
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        pid_t pid = spawn();
        if (pid == 0) {
            ngpt_context *ctx = model(2);
            kill_at = points[i], written = 0;
            ngpt_ckpt_write_hook = write_then_die;
            _exit(ctx && ngpt_context_save(ctx, path) == NGPT_OK ? 0 : 4);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        bool was_killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        CHECK(was_killed, "kill at byte %llu: child status 0x%x", (unsigned long long)points[i], status);
        killed += was_killed;
        char when[64];
        snprintf(when, sizeof when, "killed at byte %llu of %zu", (unsigned long long)points[i], n);
        /* Killed before the rename: always the previous file, whole. */
        expect_whole(images, sizes, 1, when);
        left += sweep_temporaries();
    }
    CHECK(killed == (int)(sizeof points / sizeof points[0]), "every child was killed mid-save");
    CHECK(left == killed, "each kill left its one temporary file beside, not at, the path (%d)", left);
    printf("kill at byte counts: %d kills, previous checkpoint intact after each\n", killed);
}

/* ---- 2. kills at arbitrary moments */

static void kill_anytime(const unsigned char *const *images, const size_t *sizes)
{
    uint32_t lcg = 12345;
    int old = 0, fresh = 0;
    for (int round = 0; round < 24; round++) {
        /* restore the previous checkpoint: each round starts from image 0 */
        FILE *f = fopen(path, "wb");
        fwrite(images[0], 1, sizes[0], f);
        fclose(f);
        pid_t pid = spawn();
        if (pid == 0) {
            ngpt_context *b = model(2), *c = model(3);
            if (!b || !c) _exit(4);
            for (uint64_t k = 0;; k++) ngpt_context_save(k % 2 ? c : b, path);
        }
        lcg = lcg * 1103515245u + 12345u;
        struct timespec delay = {0, (long)((lcg >> 8) % 8000) * 1000};   /* 0..8 ms */
        nanosleep(&delay, NULL);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status), "child was killed (status 0x%x)", status);
        char when[64];
        snprintf(when, sizeof when, "killed after %ld us", delay.tv_nsec / 1000);
        size_t n = 0;
        unsigned char *now = test_read_file(path, &n);
        if (now && n == sizes[0] && !memcmp(now, images[0], n)) old++;
        else fresh++;
        free(now);
        expect_whole(images, sizes, 3, when);
        sweep_temporaries();
    }
    printf("kill at random moments: 24 kills, %d left the previous file, %d a complete new one\n",
           old, fresh);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/ngpt-crash-save-%d", tmp, (int)getpid());
    if (mkdir(dir, 0700) != 0) {
        fprintf(stderr, "mkdir %s: %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/model.ngpt", dir);
    /* The three complete checkpoints a file may ever be: A (before), B, C. */
    ngpt_context *m[3] = {model(1), model(2), model(3)};
    unsigned char *images[3] = {0};
    size_t sizes[3] = {0};
    char p[320];
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/image%d", dir, i);
        CHECK(m[i] && ngpt_context_save(m[i], p) == NGPT_OK, "save image %d", i);
        images[i] = test_read_file(p, &sizes[i]);
        unlink(p);
    }
    CHECK(images[0] && images[1] && sizes[0] == sizes[1] && memcmp(images[0], images[1], sizes[0]),
          "A and B are different files of one size");
    CHECK_OK(ngpt_context_save(m[0], path));
    if (images[2]) {
        kill_at_bytes((const unsigned char *const *)images, sizes);
        kill_anytime((const unsigned char *const *)images, sizes);
    }
    unlink(path);
    sweep_temporaries();
    rmdir(dir);
    for (int i = 0; i < 3; i++) ngpt_context_free(m[i]), free(images[i]);
    return test_summary("test_crash_save");
}
