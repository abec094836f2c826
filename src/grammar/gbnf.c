/* gbnf.c — the GBNF parser (gbnf.h): recursive descent over llama.cpp's
 * notation, as its grammar-parser reads it: a rule ends at a newline
 * outside parentheses; newlines are space inside parentheses and after
 * `|`; a postfix operator applies to the item before it (a whole string
 * literal, a class, a rule, a group). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/gbnf.h"

typedef struct parser {
    const char *text;
    size_t len, at;
    int32_t *line_at;           /* the offset where each line starts */
    int32_t n_lines;
    int32_t nesting;
    ngpt_gast *ast;
    ngpt_status st;             /* the first failure */
} parser;

/* Line and column (1-based) of offset off. */
static void where(const parser *p, size_t off, int32_t *line, int32_t *col)
{
    int32_t lo = 0, hi = p->n_lines - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if ((size_t)p->line_at[mid] <= off) lo = mid;
        else hi = mid - 1;
    }
    *line = lo + 1;
    *col = (int32_t)(off - (size_t)p->line_at[lo]) + 1;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool fail_at(parser *p, size_t off, const char *fmt, ...)
{
    if (p->st) return false;
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int32_t line, col;
    where(p, off, &line, &col);
    p->st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "line %d, column %d: %s", (int)line, (int)col, msg);
    return false;
}

static bool oom(parser *p)
{
    if (!p->st) p->st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading the grammar");
    return false;
}

/* Grows *buf (of *cap elements of size elem) to hold n. */
static bool grow(parser *p, void **buf, int32_t *cap, int32_t n, size_t elem)
{
    if (n <= *cap) return true;
    int32_t c = *cap ? *cap : 16;
    while (c < n) {
        if (c > INT32_MAX / 2) return oom(p);
        c *= 2;
    }
    void *q = realloc(*buf, (size_t)c * elem);
    if (!q) return oom(p);
    *buf = q;
    *cap = c;
    return true;
}

static int32_t node_new(parser *p, int32_t kind, int32_t a, int32_t b, size_t off)
{
    ngpt_gast *t = p->ast;
    if (!grow(p, (void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *t->nodes)) return -1;
    ngpt_gnode *n = &t->nodes[t->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = kind, n->a = a, n->b = b, n->child = -1;
    where(p, off, &n->line, &n->col);
    return t->n_nodes++;
}

/* A CHARS node of the ranges r[0..n). */
static int32_t chars_new(parser *p, const ngpt_grange *r, int32_t n, size_t off, bool literal)
{
    ngpt_gast *t = p->ast;
    if (!grow(p, (void **)&t->ranges, &t->cap_ranges, t->n_ranges + n, sizeof *t->ranges)) return -1;
    memcpy(t->ranges + t->n_ranges, r, (size_t)n * sizeof *r);
    int32_t id = node_new(p, NGPT_GN_CHARS, t->n_ranges, n, off);
    t->n_ranges += n;
    if (id >= 0) t->nodes[id].literal = literal;
    return id;
}

/* A SEQ or ALT node of the n node ids in list. */
static int32_t list_new(parser *p, int32_t kind, const int32_t *list, int32_t n, size_t off)
{
    ngpt_gast *t = p->ast;
    if (!grow(p, (void **)&t->kids, &t->cap_kids, t->n_kids + n, sizeof *t->kids)) return -1;
    if (n) memcpy(t->kids + t->n_kids, list, (size_t)n * sizeof *list);
    int32_t id = node_new(p, kind, t->n_kids, n, off);
    t->n_kids += n;
    return id;
}

static int32_t rule_id(parser *p, const char *name, size_t n, size_t off)
{
    ngpt_gast *t = p->ast;
    for (int32_t i = 0; i < t->n_rules; i++)
        if (strlen(t->names[i]) == n && !memcmp(t->names[i], name, n)) return i;
    if (!grow(p, (void **)&t->names, &t->cap_rules, t->n_rules + 1, sizeof *t->names)) return -1;
    int32_t cap = t->cap_rules;
    void *b = realloc(t->body, (size_t)cap * sizeof *t->body);
    if (!b) return oom(p), -1;
    t->body = b;
    void *l = realloc(t->line, (size_t)cap * sizeof *t->line);
    if (!l) return oom(p), -1;
    t->line = l;
    void *cl = realloc(t->col, (size_t)cap * sizeof *t->col);
    if (!cl) return oom(p), -1;
    t->col = cl;
    char *s = malloc(n + 1);
    if (!s) return oom(p), -1;
    memcpy(s, name, n);
    s[n] = '\0';
    where(p, off, &t->line[t->n_rules], &t->col[t->n_rules]);
    t->names[t->n_rules] = s;
    t->body[t->n_rules] = -1;
    return t->n_rules++;
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

static int peek(const parser *p, size_t k)
{
    return p->at + k < p->len ? (unsigned char)p->text[p->at + k] : -1;
}

/* Spaces, tabs and comments; newlines too when newline_ok. */
static void space(parser *p, bool newline_ok)
{
    for (;;) {
        int c = peek(p, 0);
        if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
            p->at++;
        } else if (c == '#') {
            while (p->at < p->len && p->text[p->at] != '\n' && p->text[p->at] != '\r') p->at++;
        } else {
            return;
        }
    }
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool scalar_value(uint32_t cp)
{
    return cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
}

/* One character of a literal or class (an escape, or one UTF-8 character). */
static bool read_char(parser *p, uint32_t *cp)
{
    const size_t start = p->at;
    int c = peek(p, 0);
    if (c < 0) return fail_at(p, start, "the grammar ends inside a literal or class");
    if (c == '\\') {
        int e = peek(p, 1);
        p->at += 2;
        int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (digits) {
            uint32_t v = 0;
            for (int i = 0; i < digits; i++) {
                int h = hex_value(peek(p, 0));
                if (h < 0)
                    return fail_at(p, start, "\\%c needs %d hexadecimal digits", e, digits);
                v = v * 16 + (uint32_t)h;
                p->at++;
            }
            if (!scalar_value(v))
                return fail_at(p, start, "\\%c%0*X is not a Unicode character (a surrogate or "
                               "above U+10FFFF)", e, digits, (unsigned)v);
            *cp = v;
            return true;
        }
        switch (e) {
        case 'n': *cp = '\n'; return true;
        case 'r': *cp = '\r'; return true;
        case 't': *cp = '\t'; return true;
        case '\\': case '"': case '[': case ']': case '-': case '^': *cp = (uint32_t)e; return true;
        default:
            if (e < 0) return fail_at(p, start, "the grammar ends inside an escape");
            return fail_at(p, start, "unknown escape \\%c (use \\n \\r \\t \\\\ \\\" \\[ \\] "
                           "\\xXX \\uXXXX \\UXXXXXXXX)", e >= 32 && e < 127 ? e : '?');
        }
    }
    /* UTF-8, shortest form */
    const unsigned char *s = (const unsigned char *)p->text + p->at;
    size_t left = p->len - p->at;
    uint32_t v;
    int n;
    if (s[0] < 0x80) v = s[0], n = 1;
    else if (s[0] >= 0xC2 && s[0] <= 0xDF) v = s[0] & 0x1F, n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) v = s[0] & 0x0F, n = 3;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4) v = s[0] & 0x07, n = 4;
    else return fail_at(p, start, "byte 0x%02X is not valid UTF-8", s[0]);
    if ((size_t)n > left) return fail_at(p, start, "a UTF-8 character is cut by the end");
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return fail_at(p, start, "invalid UTF-8 sequence");
        v = v << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min_of[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min_of[n] || !scalar_value(v)) return fail_at(p, start, "invalid UTF-8 sequence");
    p->at += (size_t)n;
    *cp = v;
    return true;
}

/* "..." into a SEQ of single characters (or the empty SEQ). */
static int32_t literal(parser *p)
{
    const size_t start = p->at++;
    int32_t *items = NULL, n = 0, cap = 0;
    while (!p->st && peek(p, 0) != '"') {
        const size_t off = p->at;
        if (peek(p, 0) < 0 || peek(p, 0) == '\n' || peek(p, 0) == '\r') {
            fail_at(p, start, "the string literal is not closed (write a newline as \\n)");
            break;
        }
        uint32_t cp;
        if (!read_char(p, &cp)) break;
        ngpt_grange r = {cp, cp};
        int32_t id = chars_new(p, &r, 1, off, true);
        if (id < 0 || !grow(p, (void **)&items, &cap, n + 1, sizeof *items)) break;
        items[n++] = id;
    }
    int32_t id = -1;
    if (!p->st) {
        p->at++;    /* the closing quote */
        id = list_new(p, NGPT_GN_SEQ, items, n, start);
    }
    free(items);
    return id;
}

/* Appends [lo, hi] to the class being read. */
static bool class_add(parser *p, ngpt_grange **r, int32_t *n, int32_t *cap, uint32_t lo, uint32_t hi)
{
    if (!grow(p, (void **)r, cap, *n + 1, sizeof **r)) return false;
    (*r)[(*n)++] = (ngpt_grange){lo, hi};
    return true;
}

static int range_cmp(const void *a, const void *b)
{
    const ngpt_grange *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and joins ranges in place; with negate, their complement among
 * Unicode scalar values. Returns the new count. */
static int32_t ranges_normalise(ngpt_grange *r, int32_t n, bool negate, ngpt_grange *out)
{
    qsort(r, (size_t)n, sizeof *r, range_cmp);
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++) {
        if (m && r[i].lo <= r[m - 1].hi + 1) {
            if (r[i].hi > r[m - 1].hi) r[m - 1].hi = r[i].hi;
        } else {
            r[m++] = r[i];
        }
    }
    if (!negate) {
        memmove(out, r, (size_t)m * sizeof *r);
        return m;
    }
    int32_t k = 0;
    uint32_t next = 0;
    for (int32_t i = 0; i < m; i++) {
        if (r[i].lo > next) out[k++] = (ngpt_grange){next, r[i].lo - 1};
        next = r[i].hi + 1;
    }
    if (next <= 0x10FFFF) out[k++] = (ngpt_grange){next, 0x10FFFF};
    return k;
}

/* [...] or [^...]. */
static int32_t char_class(parser *p)
{
    const size_t start = p->at++;
    bool negate = peek(p, 0) == '^';
    if (negate) p->at++;
    ngpt_grange *r = NULL;
    int32_t n = 0, cap = 0;
    while (!p->st && peek(p, 0) != ']') {
        uint32_t lo, hi;
        if (peek(p, 0) < 0 || peek(p, 0) == '\n' || peek(p, 0) == '\r') {
            fail_at(p, start, "the class is not closed (write a newline as \\n)");
            break;
        }
        if (!read_char(p, &lo)) break;
        hi = lo;
        if (peek(p, 0) == '-' && peek(p, 1) != ']' && peek(p, 1) >= 0) {
            const size_t off = p->at;
            p->at++;
            if (!read_char(p, &hi)) break;
            if (hi < lo) {
                fail_at(p, off, "the range ends (U+%04X) before it starts (U+%04X)",
                        (unsigned)hi, (unsigned)lo);
                break;
            }
        }
        class_add(p, &r, &n, &cap, lo, hi);
    }
    int32_t id = -1;
    if (!p->st) {
        p->at++;    /* ] */
        /* the complement has at most one range more */
        if (grow(p, (void **)&r, &cap, n + 1, sizeof *r)) {
            ngpt_grange *out = malloc((size_t)(n + 1) * sizeof *out);
            if (!out) {
                oom(p);
            } else {
                int32_t k = ranges_normalise(r, n, negate, out);
                if (k == 0) fail_at(p, start, "the class matches no character");
                else id = chars_new(p, out, k, start, false);
                free(out);
            }
        }
    }
    free(r);
    return id;
}

static bool read_count(parser *p, int32_t *v)
{
    const size_t start = p->at;
    int64_t x = 0;
    if (peek(p, 0) < '0' || peek(p, 0) > '9') return fail_at(p, start, "expected a number");
    while (peek(p, 0) >= '0' && peek(p, 0) <= '9') {
        x = x * 10 + (peek(p, 0) - '0');
        if (x > NGPT_GBNF_MAX_REPEAT)
            return fail_at(p, start, "a repetition count above %d", NGPT_GBNF_MAX_REPEAT);
        p->at++;
    }
    *v = (int32_t)x;
    return true;
}

static int32_t alternates(parser *p, bool nested);

/* One sequence: items and their postfix operators until `|`, `)`, the end
 * of the rule, or the text. */
static int32_t sequence(parser *p, bool nested)
{
    const size_t start = p->at;
    int32_t *items = NULL, n = 0, cap = 0;
    for (;;) {
        const size_t off = p->at;
        int c = peek(p, 0);
        int32_t item = -1;
        if (c == '"') {
            item = literal(p);
        } else if (c == '[') {
            item = char_class(p);
        } else if (c == '.') {
            p->at++;
            ngpt_grange any = {0, 0x10FFFF}, out[2];
            item = chars_new(p, out, ranges_normalise(&any, 1, false, out), off, false);
        } else if (c >= 0 && word_char((char)c)) {
            size_t e = p->at;
            while (e < p->len && word_char(p->text[e])) e++;
            int32_t r = rule_id(p, p->text + p->at, e - p->at, off);
            p->at = e;
            if (r >= 0) item = node_new(p, NGPT_GN_REF, r, 0, off);
        } else if (c == '(') {
            if (++p->nesting > NGPT_GBNF_MAX_NESTING) {
                fail_at(p, off, "parentheses nested deeper than %d", NGPT_GBNF_MAX_NESTING);
                break;
            }
            p->at++;
            space(p, true);
            item = alternates(p, true);
            if (!p->st && peek(p, 0) != ')') {
                int32_t line, col;
                where(p, off, &line, &col);
                fail_at(p, p->at, "expected ')' to close the '(' of line %d, column %d",
                        (int)line, (int)col);
            }
            p->at++;
            p->nesting--;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (n == 0) {
                fail_at(p, off, "'%c' must follow an item to repeat", c);
                break;
            }
            int32_t lo = c == '+', hi = c == '?' ? 1 : -1;
            p->at++;
            if (c == '{') {
                space(p, nested);
                lo = 0;
                if (peek(p, 0) != ',' && !read_count(p, &lo)) break;
                space(p, nested);
                hi = lo;
                if (peek(p, 0) == ',') {
                    p->at++;
                    space(p, nested);
                    hi = -1;
                    if (peek(p, 0) >= '0' && peek(p, 0) <= '9' && !read_count(p, &hi)) break;
                    space(p, nested);
                }
                if (peek(p, 0) != '}') {
                    fail_at(p, p->at, "expected '}' to close the repetition count");
                    break;
                }
                p->at++;
                if (hi >= 0 && hi < lo) {
                    fail_at(p, off, "the repetition {%d,%d} has its maximum below its minimum",
                            (int)lo, (int)hi);
                    break;
                }
            }
            int32_t rep = node_new(p, NGPT_GN_REPEAT, lo, hi, off);
            if (rep < 0) break;
            p->ast->nodes[rep].child = items[n - 1];
            items[n - 1] = rep;
            space(p, nested);
            continue;
        } else if (c == '<') {
            fail_at(p, off, "token references (<...>) are not supported: write the token's text "
                    "as a literal");
            break;
        } else {
            break;
        }
        if (p->st || item < 0) break;
        if (!grow(p, (void **)&items, &cap, n + 1, sizeof *items)) break;
        items[n++] = item;
        space(p, nested);
    }
    int32_t id = -1;
    if (!p->st) id = n == 1 ? items[0] : list_new(p, NGPT_GN_SEQ, items, n, start);
    free(items);
    return id;
}

static int32_t alternates(parser *p, bool nested)
{
    const size_t start = p->at;
    int32_t *alts = NULL, n = 0, cap = 0;
    for (;;) {
        int32_t s = sequence(p, nested);
        if (s < 0 || !grow(p, (void **)&alts, &cap, n + 1, sizeof *alts)) break;
        alts[n++] = s;
        if (peek(p, 0) != '|') break;
        p->at++;
        space(p, true);
    }
    int32_t id = -1;
    if (!p->st) id = n == 1 ? alts[0] : list_new(p, NGPT_GN_ALT, alts, n, start);
    free(alts);
    return id;
}

static bool rule(parser *p)
{
    const size_t start = p->at;
    size_t e = p->at;
    while (e < p->len && word_char(p->text[e])) e++;
    if (e == p->at) return fail_at(p, start, "expected a rule name (letters, digits and '-')");
    int32_t r = rule_id(p, p->text + p->at, e - p->at, start);
    if (r < 0) return false;
    ngpt_gast *t = p->ast;
    if (t->body[r] >= 0)
        return fail_at(p, start, "rule \"%s\" is defined twice (first on line %d)", t->names[r],
                       (int)t->line[r]);
    where(p, start, &t->line[r], &t->col[r]);
    p->at = e;
    space(p, false);
    if (p->at + 3 > p->len || memcmp(p->text + p->at, "::=", 3))
        return fail_at(p, p->at, "expected '::=' after the rule name \"%s\"", t->names[r]);
    p->at += 3;
    space(p, true);
    int32_t body = alternates(p, false);
    if (body < 0) return false;
    t->body[r] = body;
    int c = peek(p, 0);
    if (c == '\r') p->at += peek(p, 1) == '\n' ? 2 : 1;
    else if (c == '\n') p->at++;
    else if (c >= 0)
        return fail_at(p, p->at, "unexpected '%c' in rule \"%s\" (expected an item, '|' or the "
                       "end of the line)", c >= 32 && c < 127 ? c : '?', t->names[r]);
    space(p, true);
    return true;
}

void ngpt_gbnf_free(ngpt_gast *t)
{
    for (int32_t i = 0; i < t->n_rules; i++) free(t->names[i]);
    free(t->names);
    free(t->body);
    free(t->line);
    free(t->col);
    free(t->nodes);
    free(t->kids);
    free(t->ranges);
    memset(t, 0, sizeof *t);
}

ngpt_status ngpt_gbnf_parse(const char *text, size_t len, ngpt_gast *ast)
{
    memset(ast, 0, sizeof *ast);
    ast->root = -1;
    if (len > INT32_MAX / 2)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "the grammar is longer than 1 GiB");
    parser p = {.text = text, .len = len, .ast = ast};
    int32_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    p.line_at = malloc((size_t)lines * sizeof *p.line_at);
    if (!p.line_at) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading the grammar");
    p.line_at[p.n_lines++] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n') p.line_at[p.n_lines++] = (int32_t)(i + 1);
    space(&p, true);
    while (!p.st && p.at < p.len) rule(&p);
    for (int32_t r = 0; !p.st && r < ast->n_rules; r++)
        if (ast->body[r] < 0)
            p.st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "line %d, column %d: rule \"%s\" is used but "
                             "never defined", (int)ast->line[r], (int)ast->col[r], ast->names[r]);
    for (int32_t r = 0; !p.st && r < ast->n_rules; r++)
        if (!strcmp(ast->names[r], "root")) ast->root = r;
    if (!p.st && ast->root < 0)
        p.st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "the grammar has no rule named \"root\" (where "
                         "the text starts)");
    free(p.line_at);
    return p.st;
}
