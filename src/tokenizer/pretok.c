/* pretok.c — cutting text into pieces before BPE (docs/TOKENIZER.md,
 * "Pre-tokenization"): none, lines, and GPT-2's pattern
 *
 *     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *
 * written out by hand, with the meaning a backtracking regex engine gives it
 * when it finds match after match from the start of the text (every
 * character is matched by some alternative, so the pieces cover the text).
 * The classes are JavaScript's (unicode_classes.c); a byte that does not
 * start a valid UTF-8 sequence is one "other" character. */
#include <string.h>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

int ngpt_unicode_class(uint32_t cp)
{
    int lo = 0, hi = ngpt_unicode_range_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const ngpt_unicode_range *r = &ngpt_unicode_ranges[mid];
        if (cp < r->first) hi = mid - 1;
        else if (cp > r->last) lo = mid + 1;
        else return (int)r->cls;
    }
    return NGPT_UC_O;
}

/* ASCII: letters, digits, and \t \n \v \f \r and space (tools/unicode_classes.mjs
 * checks that JavaScript agrees). */
static const uint8_t ascii_class[128] = {
    ['\t'] = NGPT_UC_S, ['\n'] = NGPT_UC_S, ['\v'] = NGPT_UC_S, ['\f'] = NGPT_UC_S,
    ['\r'] = NGPT_UC_S, [' '] = NGPT_UC_S,
    ['0'] = NGPT_UC_N, ['1'] = NGPT_UC_N, ['2'] = NGPT_UC_N, ['3'] = NGPT_UC_N,
    ['4'] = NGPT_UC_N, ['5'] = NGPT_UC_N, ['6'] = NGPT_UC_N, ['7'] = NGPT_UC_N,
    ['8'] = NGPT_UC_N, ['9'] = NGPT_UC_N,
#define L2(c) [c] = NGPT_UC_L, [c + 32] = NGPT_UC_L
    L2('A'), L2('B'), L2('C'), L2('D'), L2('E'), L2('F'), L2('G'), L2('H'), L2('I'),
    L2('J'), L2('K'), L2('L'), L2('M'), L2('N'), L2('O'), L2('P'), L2('Q'), L2('R'),
    L2('S'), L2('T'), L2('U'), L2('V'), L2('W'), L2('X'), L2('Y'), L2('Z'),
#undef L2
};

/* The class of the character at t[i] (i < n); *len gets its length in bytes. */
static inline int char_class(const uint8_t *t, size_t n, size_t i, size_t *len)
{
    if (t[i] < 0x80) {
        *len = 1;
        return ascii_class[t[i]];
    }
    uint32_t cp;
    size_t k = ngpt_utf8_decode(t + i, n - i, &cp);
    if (k == 0) {
        *len = 1;
        return NGPT_UC_O;
    }
    *len = k;
    return ngpt_unicode_class(cp);
}

/* The end of the run of class cls that starts at i; *last gets the start of
 * its last character. */
static size_t run_end(const uint8_t *t, size_t n, size_t i, int cls, size_t *last)
{
    size_t len;
    *last = i;
    while (i < n && char_class(t, n, i, &len) == cls) *last = i, i += len;
    return i;
}

/* digits: each \p{N} character is a piece of its own, and the pattern runs
 * inside the stretches between them (Hugging Face's Sequence[Digits,
 * ByteLevel]): a run never reaches past a digit, and a white space run
 * before one is all of its stretch's end, so it stays whole. */
static inline __attribute__((always_inline)) size_t
gpt2_next(const uint8_t *t, size_t n, size_t i, bool digits)    /* inlined: digits is constant */
{
    /* 's|'t|'re|'ve|'m|'ll|'d */
    if (t[i] == '\'' && i + 1 < n) {
        uint8_t a = t[i + 1], b = i + 2 < n ? t[i + 2] : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return i + 3;
    }
    size_t len, last;
    int cls = char_class(t, n, i, &len);
    if (digits && cls == NGPT_UC_N) return i + len;
    /*  ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+ : a space joins the run that follows it */
    if (t[i] == ' ' && i + 1 < n) {
        size_t len2;
        int next = char_class(t, n, i + 1, &len2);
        if (next != NGPT_UC_S && !(digits && next == NGPT_UC_N))
            return run_end(t, n, i + 1, next, &last);
    }
    if (cls != NGPT_UC_S) return run_end(t, n, i, cls, &last);
    /* \s+(?!\S): the run, or all of it but its last character when a
     * non-space follows; \s+ when that leaves nothing (one space before a
     * non-space) */
    size_t end = run_end(t, n, i, NGPT_UC_S, &last);
    if (end == n || last == i || (digits && char_class(t, n, end, &len) == NGPT_UC_N)) return end;
    return last;
}

size_t ngpt_pretok_next(ngpt_pretokenizer p, const uint8_t *t, size_t n, size_t i)
{
    switch (p) {
    case NGPT_PRETOK_GPT2:
        return gpt2_next(t, n, i, false);
    case NGPT_PRETOK_DIGITS:
        return gpt2_next(t, n, i, true);
    case NGPT_PRETOK_LINES: {
        const uint8_t *nl = memchr(t + i, '\n', n - i);
        return nl ? (size_t)(nl - t) + 1 : n;
    }
    case NGPT_PRETOK_NONE:
    default:
        return n;
    }
}
