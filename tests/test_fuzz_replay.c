/* test_fuzz_replay.c — replays every committed fuzz input through the same
 * target code as `make fuzz`, without libFuzzer: the seed corpora
 * (fuzz/corpus/<target>/) and every input that once crashed
 * (fuzz/regressions/<target>/, each a regression test). It runs in every
 * build `make test` makes (native, AArch64 and 32-bit ARMv7 under qemu,
 * ASan+UBSan), so a crash fixed on one machine stays fixed on all. A target
 * that finds a violated property aborts: the last "replay" line printed
 * names the input. Built by the rule in fuzz/fuzz.mk. */
#define _FILE_OFFSET_BITS 64    /* readdir on 32-bit ARM: 64-bit directory offsets */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "test.h"

#define TARGETS(X) X(checkpoint_mem) X(checkpoint_file) X(config) X(cli) X(sampler) X(generate) \
    X(tokenizer) X(import) X(session) X(chat) X(grammar) X(schema) X(adapter) X(peft) X(template)

#define DECLARE(name) int ngpt_fuzz_##name(const uint8_t *data, size_t size);
TARGETS(DECLARE)

static const struct target {
    const char *name;
    int (*run)(const uint8_t *, size_t);
} targets[] = {
#define ENTRY(name) {#name, ngpt_fuzz_##name},
    TARGETS(ENTRY)
};
#define N_TARGETS (sizeof targets / sizeof targets[0])

static const struct target *find(const char *name)
{
    for (size_t i = 0; i < N_TARGETS; i++)
        if (!strcmp(targets[i].name, name)) return &targets[i];
    return NULL;
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0, got;
    unsigned char *b = malloc(cap);
    while (b && (got = fread(b + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    *n = len;
    return b;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Replays every file of dir through t; returns how many there were. */
static int replay_dir(const struct target *t, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    char *names[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 4096)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp);
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t size = 0;
        unsigned char *data = slurp(path, &size);
        CHECK(data != NULL, "cannot read %s", path);
        if (data) {
            printf("replay %s %s\n", t->name, path);
            fflush(stdout);
            CHECK(t->run(data, size) == 0, "%s returned non-zero on %s", t->name, path);
        }
        free(data);
        free(names[i]);
    }
    return n;
}

/* Every directory under fuzz/corpus and fuzz/regressions belongs to a target. */
static void no_orphans(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') CHECK(find(e->d_name) != NULL, "%s/%s has no target", root, e->d_name);
    if (d) closedir(d);
}

int main(void)
{
    char corpus[512], regress[512], dir[1024];
    snprintf(corpus, sizeof corpus, "%s/fuzz/corpus", NGPT_SOURCE_DIR);
    snprintf(regress, sizeof regress, "%s/fuzz/regressions", NGPT_SOURCE_DIR);
    int total = 0;
    for (size_t i = 0; i < N_TARGETS; i++) {
        snprintf(dir, sizeof dir, "%s/%s", corpus, targets[i].name);
        int seeds = replay_dir(&targets[i], dir);
        CHECK(seeds > 0, "no seed corpus in %s", dir);
        snprintf(dir, sizeof dir, "%s/%s", regress, targets[i].name);
        total += seeds + replay_dir(&targets[i], dir);
    }
    no_orphans(corpus);
    no_orphans(regress);
    printf("replayed %d inputs\n", total);
    return test_summary("test_fuzz_replay");
}
