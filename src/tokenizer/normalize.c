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

const uint8_t *ngpt_tok_nfc(const uint8_t *p, size_t n, size_t *len, uint8_t **buf, size_t *cap)
{
    *len = n;
    if (inert(p, n)) return p;
    const utf8proc_option_t opt = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    /* out: the normalized bytes so far; then, past them, the run's code points */
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        const size_t end = valid_run(p, n, i);
        if (end == i) {                         /* a byte that is not UTF-8 */
            if (!reserve(buf, cap, at + 1)) return NULL;
            (*buf)[at++] = p[i++];
            continue;
        }
        /* the code points after decomposition: 3 per 2 bytes at most (U+01D5 is
         * U+0055 U+0308 U+0304); asked again when the library says more */
        size_t room = (end - i) / 2 * 3 + 4, got;
        for (;;) {
            if (room > (SIZE_MAX - at - 8) / 4) return NULL;    /* no such memory */
            const size_t pad = (4 - at % 4) % 4;     /* the code points 4-byte aligned */
            /* + 1: utf8proc_reencode ends the bytes with a NUL */
            if (!reserve(buf, cap, at + pad + 4 * room + 1)) return NULL;
            utf8proc_int32_t *cps = (utf8proc_int32_t *)(void *)(*buf + at + pad);
            utf8proc_ssize_t r = utf8proc_decompose(p + i, (utf8proc_ssize_t)(end - i), cps,
                                                    (utf8proc_ssize_t)room, opt);
            if (r < 0) return NULL;             /* valid UTF-8: only out of memory */
            if ((size_t)r > room) {
                room = (size_t)r;
                continue;
            }
            /* composes in place, then writes UTF-8 over the code points (never longer) */
            r = utf8proc_reencode(cps, r, opt);
            if (r < 0) return NULL;
            got = (size_t)r;
            memmove(*buf + at, cps, got);
            break;
        }
        at += got;
        i = end;
    }
    *len = at;
    return *buf;
}
