/* pretok.c — cutting text into pieces before BPE (docs/TOKENIZER.md,
 * "Pre-tokenization"): none, lines, GPT-4's pattern (gpt4_next, below) and
 * GPT-2's
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

/* The class of the character at t[i] (i < n); *len gets its length in bytes.
 * white_space: \s is Unicode's White_Space, as Hugging Face's regular
 * expressions read it (U+0085 is white space, U+FEFF is not), instead of
 * JavaScript's \s; the same for every other code point. */
static inline __attribute__((always_inline)) int
class_of(const uint8_t *t, size_t n, size_t i, size_t *len, bool white_space)
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
    if (white_space && (cp == 0x85 || cp == 0xFEFF)) return cp == 0x85 ? NGPT_UC_S : NGPT_UC_O;
    return ngpt_unicode_class(cp);
}

static inline int char_class(const uint8_t *t, size_t n, size_t i, size_t *len)
{
    return class_of(t, n, i, len, false);
}

/* The end of the run of class cls that starts at i; *last gets the start of
 * its last character. */
static inline __attribute__((always_inline)) size_t
run_of(const uint8_t *t, size_t n, size_t i, int cls, size_t *last, bool white_space)
{
    size_t len;
    *last = i;
    while (i < n && class_of(t, n, i, &len, white_space) == cls) *last = i, i += len;
    return i;
}

static size_t run_end(const uint8_t *t, size_t n, size_t i, int cls, size_t *last)
{
    return run_of(t, n, i, cls, last, false);
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

/* GPT-4's pattern (Llama 3's; Qwen2's with max_digits 1 for \p{N}{1,3}):
 *
 *     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
 *      ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *
 * with \s as Unicode's White_Space and (?i:) folding ASCII letters only, as
 * the reference (Hugging Face's transformers.js) reads it; every character
 * starts a match, so the matches are the pieces (Split, Isolated). */
static inline __attribute__((always_inline)) size_t
gpt4_next(const uint8_t *t, size_t n, size_t i, int max_digits)
{
    /* (?i:'s|'t|'re|'ve|'m|'ll|'d): | 0x20 lowers a letter (and moves no
     * other byte onto one) */
    if (t[i] == '\'' && i + 1 < n) {
        uint8_t a = t[i + 1] | 0x20, b = i + 2 < n ? t[i + 2] | 0x20 : 0;
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return i + 3;
    }
    size_t len, len2, last;
    const int cls = class_of(t, n, i, &len, true);
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (cls == NGPT_UC_L) return run_of(t, n, i, NGPT_UC_L, &last, true);
    if (cls != NGPT_UC_N && t[i] != '\r' && t[i] != '\n' && i + len < n &&
        class_of(t, n, i + len, &len2, true) == NGPT_UC_L)
        return run_of(t, n, i + len, NGPT_UC_L, &last, true);
    /* \p{N}{1,max_digits} */
    if (cls == NGPT_UC_N) {
        size_t end = i + len;
        for (int k = 1; k < max_digits && end < n && class_of(t, n, end, &len2, true) == NGPT_UC_N; k++)
            end += len2;
        return end;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    size_t from = cls == NGPT_UC_O ? i : t[i] == ' ' && i + 1 < n &&
                  class_of(t, n, i + 1, &len2, true) == NGPT_UC_O ? i + 1 : n;
    if (from < n) {
        size_t end = run_of(t, n, from, NGPT_UC_O, &last, true);
        while (end < n && (t[end] == '\r' || t[end] == '\n')) end++;
        return end;
    }
    /* white space: \s*[\r\n]+ ends after its last line break; else
     * \s+(?!\S) all of it at the end of the text, all but its last
     * character before a non-space; \s+ a single character */
    const size_t end = run_of(t, n, i, NGPT_UC_S, &last, true);
    for (size_t k = end; k > i; k--)
        if (t[k - 1] == '\r' || t[k - 1] == '\n') return k;
    return end == n || last == i ? end : last;
}

size_t ngpt_pretok_next(ngpt_pretokenizer p, const uint8_t *t, size_t n, size_t i)
{
    switch (p) {
    case NGPT_PRETOK_GPT2:
        return gpt2_next(t, n, i, false);
    case NGPT_PRETOK_DIGITS:
        return gpt2_next(t, n, i, true);
    case NGPT_PRETOK_LLAMA3:
        return gpt4_next(t, n, i, 3);
    case NGPT_PRETOK_QWEN2:
        return gpt4_next(t, n, i, 1);
    case NGPT_PRETOK_LINES: {
        const uint8_t *nl = memchr(t + i, '\n', n - i);
        return nl ? (size_t)(nl - t) + 1 : n;
    }
    case NGPT_PRETOK_NONE:
    default:
        return n;
    }
}

size_t ngpt_tok_trim_start(const uint8_t *t, size_t n)
{
    size_t i = 0, len;
    while (i < n && char_class(t, n, i, &len) == NGPT_UC_S) i += len;
    return i;
}

size_t ngpt_tok_trim_end(const uint8_t *t, size_t n)
{
    /* back to the start of the last character: up to 3 continuation bytes
     * before it, else the byte alone (a byte that is not UTF-8 is "other") */
    while (n > 0) {
        size_t start = n - 1, len;
        while (start > 0 && n - start < 4 && (t[start] & 0xC0) == 0x80) start--;
        if (char_class(t, n, start, &len) != NGPT_UC_S || start + len != n) break;
        n = start;
    }
    return n;
}
