/* tok_ref.h — what the tokenizer tests share (test_tokenizer.c,
 * test_tokenizer_pipeline.c): a seeded splitmix64, and the character classes
 * of the pre-tokenizers' patterns written out here for ASCII beside the
 * generated table, which the literal transcriptions of the patterns read. */
#ifndef NGPT_TESTS_TOK_REF_H
#define NGPT_TESTS_TOK_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenizer/unicode.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;     /* a test may set its own */
static uint64_t rnd(void)                      /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static size_t rnd_below(size_t n) { return (size_t)(rnd() % n); }

/* The class of the character at t[i] (*len its bytes; a byte that is not
 * UTF-8 is one "other" character). white_space: \s is Unicode's
 * White_Space (GPT-4's pattern, as Hugging Face reads it: U+0085 in, U+FEFF
 * out), else JavaScript's (GPT-2's pattern). */
static int ref_class(const uint8_t *t, size_t n, size_t i, size_t *len, bool white_space)
{
    uint32_t cp;
    *len = ngpt_utf8_decode(t + i, n - i, &cp);
    if (*len == 0) {
        *len = 1;
        return NGPT_UC_O;
    }
    if (white_space && (cp == 0x85 || cp == 0xFEFF)) return cp == 0x85 ? NGPT_UC_S : NGPT_UC_O;
    if (cp >= 0x80) return ngpt_unicode_class(cp);
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return NGPT_UC_L;
    if (cp >= '0' && cp <= '9') return NGPT_UC_N;
    if (cp == ' ' || (cp >= '\t' && cp <= '\r')) return NGPT_UC_S;
    return NGPT_UC_O;
}

/* The end of X+ from i (i itself when no X there). */
static size_t ref_plus(const uint8_t *t, size_t n, size_t i, int cls, bool white_space)
{
    size_t len;
    while (i < n && ref_class(t, n, i, &len, white_space) == cls) i += len;
    return i;
}

#endif
