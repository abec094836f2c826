/* test.h — a tiny test harness: CHECK counts, the summary line is what
 * tests/run.sh adds up. Each test file is one program. */
#ifndef NGPT_TEST_H
#define NGPT_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ngpt.h"

static int test_passed, test_failed;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (cond) {                                                               \
            test_passed++;                                                        \
        } else {                                                                  \
            test_failed++;                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

/* A status check that prints the library's message on failure. */
#define CHECK_OK(expr)                                                            \
    do {                                                                          \
        ngpt_status st_ = (expr);                                                 \
        CHECK(st_ == NGPT_OK, "%s -> %s: %s", #expr, ngpt_status_string(st_),     \
              ngpt_last_error());                                                 \
    } while (0)

/* Expects a specific failure status and a non-empty message. */
#define CHECK_STATUS(expr, want)                                                  \
    do {                                                                          \
        ngpt_status st_ = (expr);                                                 \
        CHECK(st_ == (want) && ngpt_last_error()[0] != '\0',                      \
              "%s -> %s (want %s): %s", #expr, ngpt_status_string(st_),           \
              ngpt_status_string(want), ngpt_last_error());                       \
    } while (0)

#define CHECK_HASH(got, want_hex)                                                 \
    CHECK((got) == (uint64_t)(want_hex), "hash %016" PRIx64 " want %016" PRIx64,  \
          (uint64_t)(got), (uint64_t)(want_hex))

static inline int test_summary(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, test_passed, test_failed);
    return test_failed != 0;
}

#endif
