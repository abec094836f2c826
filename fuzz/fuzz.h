/* fuzz.h — what the fuzz targets share. Each fuzz_<name>.c defines one entry
 * with NGPT_FUZZ_ENTRY(name): LLVMFuzzerTestOneInput in a libFuzzer build
 * (make fuzz), ngpt_fuzz_<name> when NGPT_FUZZ_REPLAY is defined, so
 * tests/test_fuzz_replay.c can feed the committed corpora and every past
 * crash through the same code in `make test` (native, qemu, sanitizers).
 *
 * A target checks properties, not just "no crash": a failed call must leave
 * a message, a failed open or init must make nothing. A violated property
 * calls fuzz_fail, which aborts (libFuzzer saves the input). */
#ifndef NGPT_FUZZ_H
#define NGPT_FUZZ_H

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ngpt.h"

#ifdef NGPT_FUZZ_REPLAY
#define NGPT_FUZZ_ENTRY(name) int ngpt_fuzz_##name(const uint8_t *data, size_t size)
#else
#define NGPT_FUZZ_ENTRY(name) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#endif

#define fuzz_fail(...)                                                            \
    do {                                                                          \
        fprintf(stderr, "fuzz property failed at %s:%d: ", __FILE__, __LINE__);   \
        fprintf(stderr, __VA_ARGS__);                                             \
        fputc('\n', stderr);                                                      \
        abort();                                                                  \
    } while (0)

/* A failing status must come with a message naming what was wrong. */
/* A failure of public function fn left a message in the form of ngpt.h's
 * Conventions: "fn: <sentence>" (internal invariants have their own form). */
static inline void fuzz_expect_message(ngpt_status st, const char *fn)
{
    const char *m = ngpt_last_error();
    const size_t n = strlen(fn);
    if (st != NGPT_OK && m[0] == '\0')
        fuzz_fail("%s failed with %s but left no message", fn, ngpt_status_string(st));
    if (st != NGPT_OK && st != NGPT_ERR_INTERNAL &&
        (strncmp(m, fn, n) != 0 || m[n] != ':' || m[n + 1] != ' ' || !strncmp(m + n + 2, "ngpt_", 5)))
        fuzz_fail("%s failed with a message that does not start with \"%s: \" once: %s", fn, fn, m);
    if ((int)st < 0 || st >= NGPT_STATUS_COUNT) fuzz_fail("%s returned status %d", fn, (int)st);
}

/* The tiny model of the seed checkpoints (fuzz/corpus/checkpoint_*). */
static inline ngpt_config fuzz_tiny_config(void)
{
    ngpt_config c = ngpt_config_default();
    c.vocab_size = 16, c.context_len = 8, c.d_model = 8, c.n_layers = 1, c.n_heads = 2,
    c.d_ff = 16;
    return c;
}

/* An exact-size heap copy, so that ASan sees a read one byte past the end. */
static inline unsigned char *fuzz_copy(const uint8_t *data, size_t size)
{
    unsigned char *b = calloc(size ? size : 1, 1);
    if (!b) abort();
    if (size) memcpy(b, data, size);
    return b;
}

/* Makes a mutated checkpoint image pass the outer checks (the size field at
 * offset 16 and the trailing XXH3), so that the fuzzer reaches the field
 * validation behind them. Needs size >= 136. */
static inline void fuzz_reseal(unsigned char *b, size_t size)
{
    uint64_t n = size, h;
    memcpy(b + 16, &n, 8);
    h = XXH3_64bits(b, size - 8);
    memcpy(b + size - 8, &h, 8);
}

/* Where targets put their files: tmpfs when there is one (on a disk, ext4
 * flushes a file rewritten in place, and the fuzzer would wait on I/O). */
static inline const char *fuzz_tmpdir(void)
{
    if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
    const char *t = getenv("TMPDIR");
    return t && t[0] ? t : "/tmp";
}

/* Reads typed values from the front of a fuzz input (zeros past its end). */
typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n;
} fuzz_reader;

static inline void fuzz_take(fuzz_reader *r, void *out, size_t k)
{
    memset(out, 0, k);
    size_t m = k < r->n ? k : r->n;
    if (m) memcpy(out, r->p, m);
    r->p += m, r->n -= m;
}
static inline uint8_t fuzz_u8(fuzz_reader *r) { uint8_t v; fuzz_take(r, &v, 1); return v; }
static inline int32_t fuzz_i32(fuzz_reader *r) { int32_t v; fuzz_take(r, &v, 4); return v; }
static inline float fuzz_f32(fuzz_reader *r) { float v; fuzz_take(r, &v, 4); return v; }

#endif
