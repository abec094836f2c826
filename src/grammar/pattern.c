/* pattern.c — a JSON Schema pattern as GBNF (pattern.h): recursive descent
 * over the regular expression, writing GBNF as it goes; each set of
 * characters becomes their JSON spellings (raw, or escaped where JSON must
 * escape them). */
#include "grammar/pattern.h"

typedef struct rx {
    const char *s;
    size_t at;
    ngpt_text *t;
    const char *jchar;
    int depth;
    ngpt_status st;
} rx;

typedef struct cset {
    uint32_t lo[128], hi[128];
    int n;
} cset;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static bool fail(rx *r, const char *fmt, ...)
{
    if (r->st) return false;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ngpt_text_one_line(msg);
    r->st = ngpt_fail(NGPT_ERR_UNSUPPORTED, "byte %zu of the pattern: %s", r->at + 1, msg);
    return false;
}

static bool add(rx *r, cset *c, uint32_t lo, uint32_t hi)
{
    if (c->n == 128) return fail(r, "a class of more than 128 ranges");
    c->lo[c->n] = lo, c->hi[c->n++] = hi;
    return true;
}

/* The ranges of \d \w \s (positive), or of \D \W \S (printable ASCII). */
static bool shorthand(rx *r, cset *c, char k)
{
    switch (k) {
    case 'd': return add(r, c, '0', '9');
    case 'w': return add(r, c, '0', '9') && add(r, c, 'A', 'Z') && add(r, c, 'a', 'z') &&
                     add(r, c, '_', '_');
    case 's': return add(r, c, '\t', '\r') && add(r, c, ' ', ' ');
    case 'D': return add(r, c, 0x20, 0x2F) && add(r, c, 0x3A, 0x7E);
    case 'W': return add(r, c, 0x20, 0x2F) && add(r, c, 0x3A, 0x40) && add(r, c, 0x5B, 0x5E) &&
                     add(r, c, 0x60, 0x60) && add(r, c, 0x7B, 0x7E);
    default: return add(r, c, 0x21, 0x7E);     /* S */
    }
}

static int hex(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
           : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* One character (UTF-8 or an escape that stands for one) at r->at. 0: a
 * character in *cp; 1: a shorthand class (its letter in *cp); -1: failed. */
static int one_char(rx *r, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)r->s + r->at;
    if (u[0] != '\\') {
        size_t k = u[0] < 0x80 ? 1 : u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : 4;
        uint32_t v = k == 1 ? u[0] : u[0] & (0xFF >> (k + 1));
        for (size_t j = 1; j < k; j++) {
            if ((u[j] & 0xC0) != 0x80) return fail(r, "invalid UTF-8"), -1;
            v = v << 6 | (u[j] & 0x3F);
        }
        r->at += k;
        *cp = v;
        return 0;
    }
    const char e = (char)u[1];
    r->at += 2;
    switch (e) {
    case 'd': case 'w': case 's': case 'D': case 'W': case 'S': *cp = (uint32_t)e; return 1;
    case 't': *cp = '\t'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = '\v'; return 0;
    case 'x': case 'u': {
        int digits = e == 'x' ? 2 : 4;
        uint32_t v = 0;
        for (int i = 0; i < digits; i++) {
            int h = hex(r->s[r->at]);
            if (h < 0) return fail(r, "\\%c needs %d hexadecimal digits", e, digits), -1;
            v = v * 16 + (uint32_t)h;
            r->at++;
        }
        if (v >= 0xD800 && v <= 0xDFFF)
            return fail(r, "a surrogate \\u%04X (write the character itself)", (unsigned)v), -1;
        *cp = v;
        return 0;
    }
    case '\0': return fail(r, "the pattern ends with a backslash"), -1;
    default:
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9')) {
            const char *what = e == 'b' || e == 'B' ? " (a word boundary)"
                               : e >= '1' && e <= '9' ? " (a back reference)"
                               : e == 'p' || e == 'P' ? " (a Unicode property)" : "";
            return fail(r, "\\%c%s is not supported", e, what), -1;
        }
        *cp = (uint32_t)(unsigned char)e;   /* an escaped punctuation character is itself */
        return 0;
    }
}

/* The GBNF of one JSON character spelling a code point of c. */
static void emit_set(rx *r, cset *c, bool negate)
{
    /* sort, join, complement */
    for (int i = 1; i < c->n; i++)
        for (int j = i; j > 0 && c->lo[j] < c->lo[j - 1]; j--) {
            uint32_t a = c->lo[j], b = c->hi[j];
            c->lo[j] = c->lo[j - 1], c->hi[j] = c->hi[j - 1];
            c->lo[j - 1] = a, c->hi[j - 1] = b;
        }
    cset m = {.n = 0};
    for (int i = 0; i < c->n; i++) {
        if (m.n && c->lo[i] <= m.hi[m.n - 1] + 1) {
            if (c->hi[i] > m.hi[m.n - 1]) m.hi[m.n - 1] = c->hi[i];
        } else {
            m.lo[m.n] = c->lo[i], m.hi[m.n++] = c->hi[i];
        }
    }
    if (negate) {
        cset n = {.n = 0};
        uint32_t next = 0;
        for (int i = 0; i < m.n; i++) {
            if (m.lo[i] > next) n.lo[n.n] = next, n.hi[n.n++] = m.lo[i] - 1;
            next = m.hi[i] + 1;
        }
        if (next <= 0x10FFFF) n.lo[n.n] = next, n.hi[n.n++] = 0x10FFFF;
        m = n;
    }
    ngpt_text *t = r->t;
    ngpt_text_str(t, "(");
    bool any = false, raw = false;
    /* the raw characters: no control, quote or backslash */
    for (int i = 0; i < m.n; i++) {
        uint32_t lo = m.lo[i] < 0x20 ? 0x20 : m.lo[i], hi = m.hi[i];
        for (uint32_t cut = 0; lo <= hi && cut < 2; cut++) {
            const uint32_t bad = cut == 0 ? '"' : '\\';
            if (lo <= bad && bad <= hi) {
                if (lo < bad) {
                    ngpt_text_str(t, raw ? "" : "[");
                    raw = true;
                    ngpt_text_cp(t, lo);
                    if (bad - 1 > lo) ngpt_text_str(t, "-"), ngpt_text_cp(t, bad - 1);
                }
                lo = bad + 1;
            }
        }
        if (lo <= hi) {
            ngpt_text_str(t, raw ? "" : "[");
            raw = true;
            ngpt_text_cp(t, lo);
            if (hi > lo) ngpt_text_str(t, "-"), ngpt_text_cp(t, hi);
        }
    }
    if (raw) ngpt_text_str(t, "]"), any = true;
    /* the escaped ones */
    for (int i = 0; i < m.n; i++)
        for (uint32_t cp = m.lo[i]; cp <= m.hi[i] && cp <= '\\'; cp++) {
            char esc[8];
            if (cp == '"') strcpy(esc, "\\\"");
            else if (cp == '\\') strcpy(esc, "\\\\");
            else if (cp == '\n') strcpy(esc, "\\n");
            else if (cp == '\t') strcpy(esc, "\\t");
            else if (cp == '\r') strcpy(esc, "\\r");
            else if (cp < 0x20) snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
            else continue;
            if (any) ngpt_text_str(t, " | ");
            ngpt_text_literal(t, esc, strlen(esc));
            any = true;
        }
    if (!any) ngpt_text_str(t, "[^\\x00-\\U0010FFFF]");    /* never: checked by the caller */
    ngpt_text_str(t, ")");
}

static bool alternation(rx *r, bool top);

/* [...] */
static bool char_class(rx *r)
{
    cset c = {.n = 0};
    r->at++;
    bool negate = r->s[r->at] == '^';
    if (negate) r->at++;
    bool first = true;
    while (r->s[r->at] != ']' || first) {
        first = false;
        if (!r->s[r->at]) return fail(r, "the class is not closed");
        uint32_t lo, hi;
        int k = one_char(r, &lo);
        if (k < 0) return false;
        if (k == 1) {
            if (negate || lo == 'D' || lo == 'W' || lo == 'S')
                return fail(r, "\\%c inside a %sclass is not supported (Python's re and "
                            "JavaScript read it differently)", (char)lo, negate ? "negated " : "");
            if (!shorthand(r, &c, (char)lo)) return false;
            continue;
        }
        hi = lo;
        if (r->s[r->at] == '-' && r->s[r->at + 1] && r->s[r->at + 1] != ']') {
            r->at++;
            if ((k = one_char(r, &hi)) != 0) return k < 0 ? false : fail(r, "a range ends in a "
                                                                         "shorthand class");
            if (hi < lo) return fail(r, "the range ends before it starts");
        }
        if (!add(r, &c, lo, hi)) return false;
    }
    r->at++;
    if (!negate && c.n == 0) return fail(r, "the class matches nothing");
    emit_set(r, &c, negate);
    return true;
}

static bool number(rx *r, long *v)
{
    if (r->s[r->at] < '0' || r->s[r->at] > '9') return false;
    *v = 0;
    while (r->s[r->at] >= '0' && r->s[r->at] <= '9') {
        *v = *v * 10 + (r->s[r->at++] - '0');
        if (*v > NGPT_GBNF_MAX_REPEAT) return fail(r, "a count above %d", NGPT_GBNF_MAX_REPEAT);
    }
    return true;
}

/* A quantifier after an atom, written after it; false on an error. */
static bool quantifier(rx *r)
{
    ngpt_text *t = r->t;
    const char q = r->s[r->at];
    if (q == '*' || q == '+' || q == '?') {
        r->at++;
        ngpt_text_put(t, &q, 1);
    } else if (q == '{') {
        r->at++;
        long m = 0, n = -1;
        if (!number(r, &m)) return r->st ? false : fail(r, "a literal { must be escaped as \\{ "
                                                        "({,n} too: write {0,n})");
        if (r->s[r->at] == ',') {
            r->at++;
            if (r->s[r->at] != '}' && !number(r, &n))
                return r->st ? false : fail(r, "expected a count or }");
        } else {
            n = m;
        }
        if (r->s[r->at] != '}') return fail(r, "expected } to close the count");
        r->at++;
        if (n >= 0 && n < m) return fail(r, "the count {%ld,%ld} has its maximum below its minimum",
                                         m, n);
        if (n < 0) ngpt_text_printf(t, "{%ld,}", m);
        else ngpt_text_printf(t, "{%ld,%ld}", m, n);
    } else {
        return true;
    }
    if (r->s[r->at] == '?') r->at++;    /* lazy: the same strings */
    const char next = r->s[r->at];
    if (next == '*' || next == '+' || next == '?' || next == '{')
        return fail(r, "a quantifier after a quantifier (nothing to repeat)");
    return true;
}

/* A sequence of atoms; stops at |, ) or the end (and at $ that ends a
 * top-level alternative). */
static bool sequence(rx *r, bool top)
{
    ngpt_text *t = r->t;
    bool any = false;
    for (;;) {
        const char ch = r->s[r->at];
        if (!ch || ch == '|' || ch == ')') break;
        if (ch == '$') {
            if (top && (!r->s[r->at + 1] || r->s[r->at + 1] == '|')) break;
            return fail(r, "$ is supported at the end of an alternative only");
        }
        if (ch == '^') return fail(r, "^ is supported at the start of an alternative only");
        if (ch == '*' || ch == '+' || ch == '?' || ch == '{')
            return fail(r, "'%c' has nothing to repeat", ch);
        if (any) ngpt_text_str(t, " ");
        any = true;
        if (ch == '(') {
            r->at++;
            if (r->s[r->at] == '?') {
                if (r->s[r->at + 1] == ':') {
                    r->at += 2;
                } else if (r->s[r->at + 1] == '<' && r->s[r->at + 2] != '=' &&
                           r->s[r->at + 2] != '!') {
                    while (r->s[r->at] && r->s[r->at] != '>') r->at++;
                    if (r->s[r->at]) r->at++;
                } else {
                    return fail(r, "lookaround (?=, ?!, ?<=, ?<!) is not supported");
                }
            }
            if (++r->depth > 64) return fail(r, "groups nested deeper than 64");
            ngpt_text_str(t, "(");
            if (!alternation(r, false)) return false;
            if (r->s[r->at] != ')') return fail(r, "the group is not closed");
            r->at++;
            r->depth--;
            ngpt_text_str(t, ")");
        } else if (ch == '[') {
            if (!char_class(r)) return false;
        } else if (ch == '.') {
            r->at++;
            cset c = {.n = 0};
            add(r, &c, '\n', '\n'), add(r, &c, '\r', '\r'), add(r, &c, 0x2028, 0x2029);
            emit_set(r, &c, true);
        } else {
            uint32_t cp;
            int k = one_char(r, &cp);
            if (k < 0) return false;
            cset c = {.n = 0};
            if (k == 1) shorthand(r, &c, (char)cp);
            else add(r, &c, cp, cp);
            emit_set(r, &c, false);
        }
        if (!quantifier(r)) return false;
    }
    if (!any) ngpt_text_str(t, "\"\"");
    return true;
}

static bool alternation(rx *r, bool top)
{
    ngpt_text *t = r->t;
    for (bool first = true;; first = false) {
        if (!first) ngpt_text_str(t, " | ");
        bool start = false, end = false;
        if (top && r->s[r->at] == '^') r->at++, start = true;
        if (top) {
            ngpt_text_str(t, "(");
            if (!start) ngpt_text_printf(t, "%s* ", r->jchar);
        }
        if (!sequence(r, top)) return false;
        if (top && r->s[r->at] == '$') r->at++, end = true;
        if (top) {
            if (!end) ngpt_text_printf(t, " %s*", r->jchar);
            ngpt_text_str(t, ")");
        }
        if (r->s[r->at] != '|') return true;
        r->at++;
    }
}

ngpt_status ngpt_pattern_to_gbnf(const char *pattern, const char *jchar, ngpt_text *t)
{
    rx r = {.s = pattern, .t = t, .jchar = jchar};
    ngpt_text_str(t, "(");
    if (alternation(&r, true) && pattern[r.at] == ')') fail(&r, "a ) without its (");
    ngpt_text_str(t, ")");
    return r.st;
}
