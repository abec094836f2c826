/* normalize.c — Unicode's NFC before pre-tokenization (tokenizer.h;
 * docs/TOKENIZER.md, "Normalization"), as Qwen's tokenizer.json asks. The
 * tables are utf8proc's, a library kept for this: normalization of an
 * assigned character never changes between Unicode versions, so only
 * characters newer than the library's version are left as they are.
 * Bytes that are not UTF-8 stay where they are, and each run of valid UTF-8
 * between them is normalized on its own. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

/* Room for need bytes in *buf; false when out of memory. */
static bool reserve(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 256;
    while (c < need) c = c > SIZE_MAX / 2 ? need : 2 * c;
    uint8_t *b = realloc(*buf, c);
    if (!b) return false;
    *buf = b, *cap = c;
    return true;
}

/* Every code point below U+0300 (lead bytes below 0xCC) is its own NFC and
 * combines with nothing before it. */
static bool inert(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 0xCC) return false;
    return true;
}

/* The end of the run of valid UTF-8 at p[i..n). */
static size_t valid_run(const uint8_t *p, size_t n, size_t i)
{
    uint32_t cp;
    size_t k;
    while (i < n && (k = ngpt_utf8_decode(p + i, n - i, &cp)) > 0) i += k;
    return i;
}

/* Appends NFC of p[0..n) (valid UTF-8) to *buf at *at. */
static bool nfc_run(const uint8_t *p, size_t n, uint8_t **buf, size_t *cap, size_t *at)
{
    const utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    /* the code points after decomposition, past the bytes so far: 3 per 2
     * bytes at most (U+01D5 is U+0055 U+0308 U+0304); asked again when the
     * library says more */
    size_t room = n / 2 * 3 + 4;
    for (;;) {
        if (room > (SIZE_MAX - *at - 8) / 4) return false;     /* no such memory */
        const size_t pad = (4 - *at % 4) % 4;                   /* 4-byte aligned */
        /* + 1: utf8proc_reencode ends the bytes with a NUL */
        if (!reserve(buf, cap, *at + pad + 4 * room + 1)) return false;
        utf8proc_int32_t *cps = (utf8proc_int32_t *)(void *)(*buf + *at + pad);
        utf8proc_ssize_t r = utf8proc_decompose(p, (utf8proc_ssize_t)n, cps, (utf8proc_ssize_t)room, opt);
        if (r < 0) return false;                /* valid UTF-8: only out of memory */
        if ((size_t)r > room) {
            room = (size_t)r;
            continue;
        }
        /* composes in place, then writes UTF-8 over the code points (never longer) */
        r = utf8proc_reencode(cps, r, opt);
        if (r < 0) return false;
        memmove(*buf + *at, cps, (size_t)r);
        *at += (size_t)r;
        return true;
    }
}

/* Appends p[0..n) as it is. */
static bool copy(const uint8_t *p, size_t n, uint8_t **buf, size_t *cap, size_t *at)
{
    if (n == 0) return true;    /* *buf may still be NULL: no pointer arithmetic on it */
    if (!reserve(buf, cap, *at + n)) return false;
    memcpy(*buf + *at, p, n);
    *at += n;
    return true;
}

/* Before an ASCII character NFC may cut the text: no code point combines
 * with one before it, so each stretch that holds a code point from U+0300
 * on, from the ASCII character before it to the next one, is normalized
 * alone and the rest copied. */
const uint8_t *ngpt_tok_nfc(const uint8_t *p, size_t n, size_t *len, uint8_t **buf, size_t *cap)
{
    *len = n;
    if (inert(p, n)) return p;
    size_t at = 0, done = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && p[i] < 0xCC) i++;       /* the next code point that may change */
        if (i == n) break;
        size_t from = i, to = i;
        while (from > done && p[from - 1] >= 0x80) from--;
        if (from > done) from--;                /* the ASCII character it may join */
        while (to < n && p[to] >= 0x80) to++;
        if (!copy(p + done, from - done, buf, cap, &at)) return NULL;
        /* bytes that are not UTF-8 stay; the valid runs between them are normalized */
        for (size_t k = from; k < to;) {
            const size_t end = valid_run(p, to, k);
            if (end == k ? !copy(p + k, 1, buf, cap, &at) : !nfc_run(p + k, end - k, buf, cap, &at))
                return NULL;
            k = end > k ? end : k + 1;
        }
        done = i = to;
    }
    if (!copy(p + done, n - done, buf, cap, &at)) return NULL;
    *len = at;
    return *buf;
}

static bool is_space_mark(const uint8_t *p, size_t n, size_t i)
{
    return i + 2 < n && p[i] == 0xe2 && p[i + 1] == 0x96 && p[i + 2] == 0x81;
}

const uint8_t *ngpt_tok_space_mark(const uint8_t *p, size_t n, size_t *len, uint8_t **buf,
                                   size_t *cap)
{
    *len = n;
    size_t at = 0;                              /* the first ▁ */
    while (at < n && !is_space_mark(p, n, at)) {
        const uint8_t *q = memchr(p + at + 1, 0xe2, n - at - 1);
        at = q ? (size_t)(q - p) : n;
    }
    if (at == n) return p;
    if (!reserve(buf, cap, n)) return NULL;     /* never longer: 3 bytes become 1 */
    memcpy(*buf, p, at);
    for (size_t i = at; i < n;)
        if (is_space_mark(p, n, i)) {
            (*buf)[at++] = ' ';
            i += 3;
        } else {
            (*buf)[at++] = p[i++];
        }
    *len = at;
    return *buf;
}
