/* text.c — the template room's memory and text (tmpl.h): the arena, strings
 * that carry their bytes' origin, growing buffers, JavaScript's white space
 * and its numbers' text (the reference renderer is JavaScript). */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/tmpl.h"

struct tchunk {
    tchunk *next;
    size_t used, cap;
    max_align_t data[];
};

enum { CHUNK = 64 << 10 };

_Noreturn void ngpt_tmpl_throw(tarena *a, ngpt_status st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    a->status = ngpt_fail(st, "%s", msg);
    longjmp(*a->fail, 1);
}

void *ngpt_tmpl_alloc(tarena *a, size_t n)
{
    const size_t align = sizeof(max_align_t);
    n = n ? (n + align - 1) / align * align : align;
    tchunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        const size_t cap = n > CHUNK ? n : CHUNK;
        if (n > a->limit || a->total > a->limit - cap)
            ngpt_tmpl_throw(a, NGPT_ERR_UNSUPPORTED, "the template needs more memory than ngpt's limit "
                     "of %zu MiB (a template that grows without end?)", a->limit >> 20);
        c = malloc(sizeof *c + cap);
        if (!c) ngpt_tmpl_throw(a, NGPT_ERR_NO_MEMORY, "no memory for %zu bytes of a template", cap);
        c->next = a->head, c->used = 0, c->cap = cap;
        a->head = c;
        a->total += cap;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

void ngpt_tmpl_free_all(tarena *a)
{
    for (tchunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    a->head = NULL;
    a->total = 0;
}

void ngpt_tmpl_where(const char *text, size_t len, uint32_t at, char *out, size_t cap)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < len; i++) {
        if (text[i] == '\n') line++, col = 1;
        else if (((uint8_t)text[i] & 0xC0) != 0x80) col++;
    }
    snprintf(out, cap, "line %zu, column %zu", line, col);
}

/* ------------------------------------------------------------ strings */

uint32_t ngpt_tmpl_str_hash(tstr s)
{
    uint32_t h = 2166136261u;       /* FNV-1a */
    for (size_t i = 0; i < s.n; i++) h = (h ^ (uint8_t)s.p[i]) * 16777619u;
    return h;
}

bool ngpt_tmpl_str_eq(tstr a, tstr b) { return a.n == b.n && (!a.n || !memcmp(a.p, b.p, a.n)); }

bool ngpt_tmpl_str_is(tstr a, const char *lit) { return a.n == strlen(lit) && !memcmp(a.p, lit, a.n); }

tstr ngpt_tmpl_str_sub(tstr s, size_t from, size_t to)
{
    return (tstr){s.p + from, s.taint ? s.taint + from : NULL, to - from};
}

tstr ngpt_tmpl_str_copy(tarena *a, const char *p, size_t n, bool tainted)
{
    char *q = ngpt_tmpl_alloc(a, n + 1);
    if (n) memcpy(q, p, n);
    uint8_t *t = NULL;
    if (tainted && n) {
        t = ngpt_tmpl_alloc(a, n);
        memset(t, 1, n);
    }
    return (tstr){q, t, n};
}

static void tb_room(tbuf *b, size_t more)
{
    if (more <= b->cap - b->n) return;
    if (more > b->limit - b->n)
        ngpt_tmpl_throw(b->a, NGPT_ERR_UNSUPPORTED, "the template writes more text than ngpt's limit "
                 "of %zu MiB", b->limit >> 20);
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < more) cap *= 2;
    char *p = ngpt_tmpl_alloc(b->a, cap + 1);
    if (b->n) memcpy(p, b->p, b->n);
    if (b->taint) {
        uint8_t *t = ngpt_tmpl_alloc(b->a, cap);
        memcpy(t, b->taint, b->n);
        b->taint = t;
    }
    b->p = p, b->cap = cap;
}

static void tb_append(tbuf *b, const char *p, const uint8_t *taint, size_t n)
{
    if (!n) return;
    tb_room(b, n);
    memcpy(b->p + b->n, p, n);
    if (taint && !b->taint) b->taint = ngpt_tmpl_alloc(b->a, b->cap);     /* zeros: the template's */
    if (b->taint) {
        if (taint) memcpy(b->taint + b->n, taint, n);
        else memset(b->taint + b->n, 0, n);
    }
    b->n += n;
}

void ngpt_tmpl_buf_put(tbuf *b, tstr s) { tb_append(b, s.p, s.taint, s.n); }

void ngpt_tmpl_buf_lit(tbuf *b, const char *p, size_t n) { tb_append(b, p, NULL, n); }

void ngpt_tmpl_buf_add(tbuf *b, const char *p, size_t n, bool tainted)
{
    tb_append(b, p, NULL, n);
    if (!tainted || !n) return;
    if (!b->taint) b->taint = ngpt_tmpl_alloc(b->a, b->cap);
    memset(b->taint + b->n - n, 1, n);
}

tstr ngpt_tmpl_buf_str(const tbuf *b) { return (tstr){b->n ? b->p : "", b->taint, b->n}; }

/* ------------------------------------------------------------ Unicode */

/* The length of the UTF-8 sequence at p[0..n), or 0 when it is not one
 * (*bad: how many bytes make its maximal subpart). */
static size_t utf8_seq(const uint8_t *p, size_t n, size_t *bad)
{
    *bad = 1;
    const uint8_t c = p[0];
    if (c < 0x80) return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    for (size_t i = 1; i < len; i++) {
        if (i >= n || p[i] < lo || p[i] > hi) return *bad = i, 0;
        lo = 0x80, hi = 0xBF;
    }
    return len;
}

size_t ngpt_tmpl_utf8_valid(const char *p, size_t n)
{
    size_t i = 0, len, bad;
    while (i < n && (len = utf8_seq((const uint8_t *)p + i, n - i, &bad))) i += len;
    return i;
}

uint32_t ngpt_tmpl_utf8_next(const char *p, size_t n, size_t *len)
{
    const uint8_t *u = (const uint8_t *)p;
    size_t bad;
    *len = utf8_seq(u, n, &bad);
    switch (*len) {
    case 0: *len = 1; return 0xFFFD;    /* a byte that is not UTF-8: a character of its own */
    case 1: return u[0];
    case 2: return (uint32_t)(u[0] & 0x1F) << 6 | (u[1] & 0x3F);
    case 3: return (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F);
    default:
        return (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 |
               (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
    }
}

size_t ngpt_tmpl_js_space(const char *p, size_t n)
{
    if (!n) return 0;
    const uint8_t c = (uint8_t)p[0];
    if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || c == ' ';
    size_t len;
    const uint32_t u = ngpt_tmpl_utf8_next(p, n, &len);
    const bool space = u == 0xA0 || u == 0x1680 || (u >= 0x2000 && u <= 0x200A) ||
                       u == 0x2028 || u == 0x2029 || u == 0x202F || u == 0x205F ||
                       u == 0x3000 || u == 0xFEFF;
    return space ? len : 0;
}

/* ------------------------------------------------------------ numbers */

/* The shortest decimal digits that read back as x (> 0, finite) and the
 * exponent n of JavaScript's Number::toString: x = 0.digits * 10^n. */
static int shortest(double x, char *digits, int *n)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (prec < 17 && strtod(buf, NULL) != x) continue;
        int k = 0;
        const char *e = strchr(buf, 'e');
        for (const char *c = buf; c < e; c++)
            if (*c >= '0' && *c <= '9') digits[k++] = *c;  /* skips the locale's point */
        while (k > 1 && digits[k - 1] == '0') k--;
        digits[k] = '\0';
        *n = atoi(e + 1) + 1;
        return k;
    }
    return 0;       /* not reached: 17 digits always read back */
}

size_t ngpt_tmpl_js_number(double x, char *out)
{
    if (isnan(x)) return (size_t)sprintf(out, "NaN");
    if (x == 0) return (size_t)sprintf(out, "0");
    size_t at = 0;
    if (x < 0) out[at++] = '-', x = -x;
    if (isinf(x)) return at + (size_t)sprintf(out + at, "Infinity");
    char d[24];
    int n;
    const int k = shortest(x, d, &n);
    if (k <= n && n <= 21) {
        at += (size_t)sprintf(out + at, "%s", d);
        for (int i = k; i < n; i++) out[at++] = '0';
    } else if (0 < n && n <= 21) {
        at += (size_t)sprintf(out + at, "%.*s.%s", n, d, d + n);
    } else if (-6 < n && n <= 0) {
        out[at++] = '0', out[at++] = '.';
        for (int i = 0; i < -n; i++) out[at++] = '0';
        at += (size_t)sprintf(out + at, "%s", d);
    } else {
        at += (size_t)sprintf(out + at, "%c%s%s%s%c%d", d[0], k > 1 ? "." : "", d + 1, "e",
                              n - 1 < 0 ? '-' : '+', abs(n - 1));
    }
    out[at] = '\0';
    return at;
}

double ngpt_tmpl_strtod(const char *p, size_t n)
{
    char buf[400];
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    const char point = localeconv()->decimal_point[0];
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '.') buf[i] = point;
    return strtod(buf, NULL);
}

static bool digits_of(const char *p, size_t n, int base)
{
    for (size_t i = 0; i < n; i++) {
        const int c = p[i] | 32, d = p[i] >= '0' && p[i] <= '9' ? p[i] - '0'
                                     : c >= 'a' && c <= 'f'     ? c - 'a' + 10
                                                                : 99;
        if (d >= base) return false;
    }
    return n > 0;
}

double ngpt_tmpl_js_to_number(tstr t)
{
    size_t a = 0, b = t.n, k;
    while (a < b && (k = ngpt_tmpl_js_space(t.p + a, b - a))) a += k;
    for (;;) {          /* trailing white space, code point by code point */
        size_t c = b;
        while (c > a && ((uint8_t)t.p[c - 1] & 0xC0) == 0x80) c--;
        if (c <= a || !ngpt_tmpl_js_space(t.p + c - 1, b - c + 1)) break;
        b = c - 1;
    }
    const char *p = t.p + a;
    const size_t n = b - a;
    if (n == 0) return 0;
    if (n > 2 && p[0] == '0' && strchr("xXoObB", p[1]) && p[1]) {
        const int base = (p[1] | 32) == 'x' ? 16 : (p[1] | 32) == 'o' ? 8 : 2;
        if (!digits_of(p + 2, n - 2, base)) return NAN;
        double x = 0;
        for (size_t i = 2; i < n; i++) {
            const int c = p[i] | 32;
            x = x * base + (p[i] <= '9' ? p[i] - '0' : c - 'a' + 10);
        }
        return x;
    }
    size_t i = p[0] == '+' || p[0] == '-';
    if (n - i == 8 && !memcmp(p + i, "Infinity", 8)) return p[0] == '-' ? -INFINITY : INFINITY;
    size_t int_digits = 0, frac_digits = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9') i++, int_digits++;
    if (i < n && p[i] == '.')
        for (i++; i < n && p[i] >= '0' && p[i] <= '9';) i++, frac_digits++;
    if (!int_digits && !frac_digits) return NAN;
    if (i < n && (p[i] | 32) == 'e') {
        size_t j = i + 1, exp_digits = 0;
        if (j < n && (p[j] == '+' || p[j] == '-')) j++;
        while (j < n && p[j] >= '0' && p[j] <= '9') j++, exp_digits++;
        if (!exp_digits) return NAN;
        i = j;
    }
    return i == n ? ngpt_tmpl_strtod(p, n) : NAN;
}
