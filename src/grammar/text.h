/* text.h — a growing text buffer, for what writes GBNF (schema.c,
 * pattern.c): appends never fail loudly, a failed allocation marks the
 * buffer and the writer reports it once at the end. */
#ifndef NGPT_GRAMMAR_TEXT_H
#define NGPT_GRAMMAR_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ngpt_text {
    char *s;
    size_t n, cap;
    bool oom;
} ngpt_text;

static inline void ngpt_text_put(ngpt_text *t, const char *s, size_t n)
{
    if (t->oom) return;
    if (t->n + n + 1 > t->cap) {
        size_t c = t->cap ? t->cap : 256;
        while (c < t->n + n + 1) c *= 2;
        char *p = realloc(t->s, c);
        if (!p) {
            t->oom = true;
            return;
        }
        t->s = p;
        t->cap = c;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

static inline void ngpt_text_str(ngpt_text *t, const char *s)
{
    ngpt_text_put(t, s, strlen(s));
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void ngpt_text_printf(ngpt_text *t, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        ngpt_text_put(t, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        t->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ngpt_text_put(t, big, (size_t)n);
    free(big);
}

/* s with its control characters as spaces: a message stays one line. */
static inline void ngpt_text_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7F) *s = ' ';
}

/* A code point as a GBNF escape (always escaped: safe in literals and
 * classes alike). */
static inline void ngpt_text_cp(ngpt_text *t, uint32_t cp)
{
    if (cp < 0x100) ngpt_text_printf(t, "\\x%02X", (unsigned)cp);
    else if (cp < 0x10000) ngpt_text_printf(t, "\\u%04X", (unsigned)cp);
    else ngpt_text_printf(t, "\\U%08X", (unsigned)cp);
}

/* n bytes as a GBNF string literal: printable ASCII as itself (escaping
 * \ and "), the rest as escapes; UTF-8 sequences decoded to their code
 * points (the input is valid UTF-8). */
void ngpt_text_literal(ngpt_text *t, const char *s, size_t n);

#endif
