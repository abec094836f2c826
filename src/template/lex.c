/* lex.c — a template's tokens (ast.h), as @huggingface/jinja's lexer makes
 * them (its src/lexer.ts, version 0.5): Hugging Face's preprocessing of the
 * text (trim_blocks and lstrip_blocks on, one final newline dropped,
 * {% generation %} tags removed), then the tokens, with whitespace control
 * ({%- -%}, {{- -}}, {#- -#}) applied as that lexer applies it. Every
 * token remembers where it began in the text as written. */
#include <string.h>

#include "template/tmpl.h"

/* The text being worked on and, for each byte, its offset in the original. */
typedef struct mapped {
    char *p;
    uint32_t *at;
    size_t n;
} mapped;

static mapped mapped_new(ngpt_template *t, size_t cap)
{
    return (mapped){ngpt_tmpl_alloc(&t->arena, cap + 1),
                    ngpt_tmpl_alloc(&t->arena, (cap + 1) * sizeof(uint32_t)), 0};
}

static void keep(mapped *out, const mapped *in, size_t from, size_t to)
{
    memcpy(out->p + out->n, in->p + from, to - from);
    memcpy(out->at + out->n, in->at + from, (to - from) * sizeof(uint32_t));
    out->n += to - from;
}

/* JavaScript's line terminators: ^ of a multi-line regular expression
 * matches after one. */
static bool line_start(const mapped *s, size_t i)
{
    if (i == 0) return true;
    const char c = s->p[i - 1];
    return c == '\n' || c == '\r' ||
           (i >= 3 && !memcmp(s->p + i - 3, "\xE2\x80", 2) &&
            (s->p[i - 1] == '\xA8' || s->p[i - 1] == '\xA9'));
}

/* /^[ \t]*({[#%-])/gm -> "$1" */
static mapped lstrip_blocks(ngpt_template *t, const mapped *s)
{
    mapped out = mapped_new(t, s->n);
    for (size_t i = 0; i < s->n;) {
        if (line_start(s, i)) {
            size_t j = i;
            while (j < s->n && (s->p[j] == ' ' || s->p[j] == '\t')) j++;
            if (j + 1 < s->n && s->p[j] == '{' && strchr("#%-", s->p[j + 1]) && s->p[j + 1]) {
                keep(&out, s, j, j + 2);
                i = j + 2;
                continue;
            }
        }
        keep(&out, s, i, i + 1);
        i++;
    }
    return out;
}

/* /([#%-]})\n/g -> "$1" */
static mapped trim_blocks(ngpt_template *t, const mapped *s)
{
    mapped out = mapped_new(t, s->n);
    for (size_t i = 0; i < s->n;) {
        if (i + 2 < s->n && strchr("#%-", s->p[i]) && s->p[i] && s->p[i + 1] == '}' &&
            s->p[i + 2] == '\n') {
            keep(&out, s, i, i + 2);
            i += 3;
        } else {
            keep(&out, s, i, i + 1);
            i++;
        }
    }
    return out;
}

static size_t spaces(const mapped *s, size_t i)
{
    for (size_t k; i < s->n && (k = ngpt_tmpl_js_space(s->p + i, s->n - i));) i += k;
    return i;
}

/* The end of a {%-? \s* (end)?generation \s* -?%} tag at i, or 0;
 * *lstrip, *rstrip: its hyphens. */
static size_t generation_tag(const mapped *s, size_t i, bool *lstrip, bool *rstrip)
{
    if (i + 2 > s->n || memcmp(s->p + i, "{%", 2)) return 0;
    i += 2;
    *lstrip = i < s->n && s->p[i] == '-';
    i = spaces(s, i + *lstrip);
    if (i + 3 <= s->n && !memcmp(s->p + i, "end", 3)) i += 3;
    if (i + 10 > s->n || memcmp(s->p + i, "generation", 10)) return 0;
    i = spaces(s, i + 10);
    *rstrip = i < s->n && s->p[i] == '-';
    i += *rstrip;
    return i + 2 <= s->n && !memcmp(s->p + i, "%}", 2) ? i + 2 : 0;
}

/* /(\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/gs -> the white space
 * around the tag, each side kept unless its hyphen says otherwise. */
static mapped generation_tags(ngpt_template *t, const mapped *s)
{
    mapped out = mapped_new(t, s->n);
    size_t last = 0, run = 0;       /* the white space run before i starts at run */
    for (size_t i = 0; i < s->n;) {
        bool l, r;
        const size_t end = generation_tag(s, i, &l, &r);
        if (end) {
            const size_t after = spaces(s, end);
            keep(&out, s, last, run);
            if (!l) keep(&out, s, run, i);
            if (!r) keep(&out, s, end, after);
            last = run = i = after;
            continue;
        }
        const size_t k = ngpt_tmpl_js_space(s->p + i, s->n - i);
        i += k ? k : 1;
        if (!k) run = i;
    }
    keep(&out, s, last, s->n);
    return out;
}

/* ------------------------------------------------------------ tokens */

typedef struct lexer {
    ngpt_template *t;
    mapped s;
    size_t pos;
    ttoken *tok;
    size_t n, cap;
    int curly;                  /* { depth inside an expression */
} lexer;

static _Noreturn void lex_fail(lexer *lx, size_t pos, const char *what)
{
    char where[64];
    ngpt_tmpl_where(lx->t->text, lx->t->len, pos < lx->s.n ? lx->s.at[pos] : (uint32_t)lx->t->len,
                    where, sizeof where);
    ngpt_tmpl_throw(&lx->t->arena, NGPT_ERR_BAD_FORMAT, "%s: %s", where, what);
}

static void push(lexer *lx, ttype type, tstr v, size_t pos)
{
    if (lx->n == lx->cap) {
        const size_t cap = lx->cap ? 2 * lx->cap : 256;
        ttoken *t = ngpt_tmpl_alloc(&lx->t->arena, cap * sizeof *t);
        if (lx->n) memcpy(t, lx->tok, lx->n * sizeof *t);
        lx->tok = t, lx->cap = cap;
    }
    lx->tok[lx->n++] = (ttoken){type, v, pos < lx->s.n ? lx->s.at[pos] : (uint32_t)lx->t->len};
}

static ttype last_type(const lexer *lx) { return lx->n ? lx->tok[lx->n - 1].type : (ttype)-1; }

static bool at(const lexer *lx, const char *lit)
{
    const size_t k = strlen(lit);
    return lx->pos + k <= lx->s.n && !memcmp(lx->s.p + lx->pos, lit, k);
}

/* {%- and friends: the last text token loses its trailing white space. */
static void strip_trailing(lexer *lx)
{
    if (!lx->n || lx->tok[lx->n - 1].type != TK_TEXT) return;
    tstr *v = &lx->tok[lx->n - 1].v;
    for (;;) {      /* drop white space code points from the end */
        size_t k = v->n, cut = 0;
        while (k > 0 && ((uint8_t)v->p[k - 1] & 0xC0) == 0x80) k--;
        if (k == 0 || !(cut = ngpt_tmpl_js_space(v->p + k - 1, v->n - k + 1))) break;
        v->n = k - 1;
    }
    if (v->n == 0) lx->n--;
}

static void skip_spaces(lexer *lx) { lx->pos = spaces(&lx->s, lx->pos); }

/* consumeWhile's end of input: a token may not reach the end. */
static void advance(lexer *lx, size_t k)
{
    lx->pos += k;
    if (lx->pos >= lx->s.n) lex_fail(lx, lx->pos, "unexpected end of the template inside a tag");
}

static size_t put_utf8(char *out, uint32_t u)
{
    if (u < 0x80) return out[0] = (char)u, 1;
    if (u < 0x800) return out[0] = (char)(0xC0 | u >> 6), out[1] = (char)(0x80 | (u & 0x3F)), 2;
    if (u < 0x10000) {
        out[0] = (char)(0xE0 | u >> 12), out[1] = (char)(0x80 | (u >> 6 & 0x3F));
        return out[2] = (char)(0x80 | (u & 0x3F)), 3;
    }
    out[0] = (char)(0xF0 | u >> 18), out[1] = (char)(0x80 | (u >> 12 & 0x3F));
    out[2] = (char)(0x80 | (u >> 6 & 0x3F)), out[3] = (char)(0x80 | (u & 0x3F));
    return 4;
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* \xHH or \uHHHH at pos (after the backslash and the letter): the code unit. */
static uint32_t hex_unit(lexer *lx, int digits)
{
    uint32_t u = 0;
    for (int i = 0; i < digits; i++) {
        const int h = lx->pos + (size_t)i < lx->s.n ? hex(lx->s.p[lx->pos + (size_t)i]) : -1;
        if (h < 0) lex_fail(lx, lx->pos, "an invalid hexadecimal escape");
        u = u << 4 | (uint32_t)h;
    }
    lx->pos += (size_t)digits;
    return u;
}

/* A quoted string at pos; its value unescaped (JavaScript's escapes). */
static void string_literal(lexer *lx)
{
    const char quote = lx->s.p[lx->pos];
    const size_t start = lx->pos++;
    char *out = ngpt_tmpl_alloc(&lx->t->arena, lx->s.n - lx->pos + 1);
    size_t n = 0;
    while (lx->pos >= lx->s.n || lx->s.p[lx->pos] != quote) {
        if (lx->pos >= lx->s.n) lex_fail(lx, start, "a string that never ends");
        if (lx->s.p[lx->pos] != '\\') {
            out[n++] = lx->s.p[lx->pos];
            advance(lx, 1);
            continue;
        }
        if (++lx->pos >= lx->s.n) lex_fail(lx, start, "a string that never ends");
        const char e = lx->s.p[lx->pos++];
        static const char from[] = "ntrbfv'\"\\", to[] = "\n\t\r\b\f\v'\"\\";
        const char *k = strchr(from, e);
        if (e == 'x' || e == 'u') {
            uint32_t u = hex_unit(lx, e == 'x' ? 2 : 4);
            if (u >= 0xD800 && u < 0xDC00 && at(lx, "\\u")) {      /* a surrogate pair */
                const size_t back = lx->pos;
                lx->pos += 2;
                const uint32_t lo = hex_unit(lx, 4);
                if (lo >= 0xDC00 && lo < 0xE000) u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                else lx->pos = back;
            }
            n += put_utf8(out + n, u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
        } else if (e && k) {
            out[n++] = to[k - from];
        } else {
            lex_fail(lx, lx->pos - 2, "an unknown escape in a string");
        }
    }
    lx->pos++;
    push(lx, TK_STR, (tstr){out, NULL, n}, start);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_word(char c) { return is_digit(c) || c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

/* Digits at pos, and a fraction unless the number follows a dot. */
static size_t number_end(lexer *lx, size_t i, bool fraction)
{
    while (i < lx->s.n && is_digit(lx->s.p[i])) i++;
    if (fraction && i + 1 < lx->s.n && lx->s.p[i] == '.' && is_digit(lx->s.p[i + 1]))
        for (i++; i < lx->s.n && is_digit(lx->s.p[i]);) i++;
    return i;
}

static void number(lexer *lx, size_t start, size_t digits)
{
    const size_t end = number_end(lx, digits, last_type(lx) != TK_DOT || start != digits);
    if (end > digits) advance(lx, end - lx->pos);
    push(lx, end > digits ? TK_NUM : TK_UNARY, (tstr){lx->s.p + start, NULL, end - start}, start);
}

static const struct { const char *s; ttype type; } TABLE[] = {
    {"{%", TK_OPEN_STMT}, {"%}", TK_CLOSE_STMT}, {"{{", TK_OPEN_EXPR}, {"}}", TK_CLOSE_EXPR},
    {"(", TK_LPAREN}, {")", TK_RPAREN}, {"{", TK_LBRACE}, {"}", TK_RBRACE}, {"[", TK_LBRACKET},
    {"]", TK_RBRACKET}, {",", TK_COMMA}, {".", TK_DOT}, {":", TK_COLON}, {"|", TK_PIPE},
    {"<=", TK_CMP}, {">=", TK_CMP}, {"==", TK_CMP}, {"!=", TK_CMP}, {"<", TK_CMP}, {">", TK_CMP},
    {"+", TK_ADD}, {"-", TK_ADD}, {"~", TK_ADD}, {"**", TK_POW}, {"*", TK_MUL}, {"//", TK_MUL},
    {"/", TK_MUL}, {"%", TK_MUL}, {"=", TK_EQUALS},
};

/* One token inside {% %} or {{ }} (white space skipped first). */
static void tag_token(lexer *lx)
{
    for (size_t k; lx->pos < lx->s.n && (k = ngpt_tmpl_js_space(lx->s.p + lx->pos, lx->s.n - lx->pos));)
        advance(lx, k);
    const size_t start = lx->pos;
    if (at(lx, "-%}") || at(lx, "-}}")) {
        push(lx, lx->s.p[lx->pos + 1] == '%' ? TK_CLOSE_STMT : TK_CLOSE_EXPR,
             (tstr){lx->s.p + lx->pos + 1, NULL, 2}, start);
        lx->pos += 3;
        skip_spaces(lx);
        return;
    }
    const char c = lx->s.p[lx->pos];
    if (c == '-' || c == '+') {
        const ttype last = last_type(lx);
        if (last == TK_TEXT || last == (ttype)-1) lex_fail(lx, start, "an unexpected sign");
        if (last != TK_IDENT && last != TK_NUM && last != TK_STR && last != TK_RPAREN &&
            last != TK_RBRACKET) {
            lx->pos++;                              /* a sign: -1, -x */
            number(lx, start, lx->pos);
            return;
        }
    }
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++) {
        if (TABLE[i].type == TK_CLOSE_EXPR && lx->curly > 0) continue;
        if (!at(lx, TABLE[i].s)) continue;
        const size_t k = strlen(TABLE[i].s);
        push(lx, TABLE[i].type, (tstr){lx->s.p + lx->pos, NULL, k}, start);
        lx->curly = TABLE[i].type == TK_OPEN_EXPR ? 0
                  : lx->curly + (TABLE[i].type == TK_LBRACE) - (TABLE[i].type == TK_RBRACE);
        lx->pos += k;
        return;
    }
    if (c == '\'' || c == '"') return string_literal(lx);
    if (is_digit(c)) return number(lx, start, start);
    if (is_word(c)) {
        size_t end = start;
        while (end < lx->s.n && is_word(lx->s.p[end])) end++;
        advance(lx, end - lx->pos);
        push(lx, TK_IDENT, (tstr){lx->s.p + start, NULL, end - start}, start);
        return;
    }
    lex_fail(lx, start, "an unexpected character");
}

static void comment(lexer *lx)
{
    const size_t start = lx->pos;
    lx->pos += 2;
    const bool strip_before = lx->pos < lx->s.n && lx->s.p[lx->pos] == '-';
    lx->pos += strip_before;
    const size_t body = lx->pos;
    while (!at(lx, "#}")) {
        if (lx->pos + 2 >= lx->s.n) lex_fail(lx, start, "a comment that never ends");
        lx->pos++;
    }
    const bool strip_after = lx->pos > body && lx->s.p[lx->pos - 1] == '-';
    if (strip_before) strip_trailing(lx);
    push(lx, TK_COMMENT, (tstr){lx->s.p + body, NULL, lx->pos - body - strip_after}, start);
    lx->pos += 2;
    if (strip_after) skip_spaces(lx);
}

ttoken *ngpt_tmpl_lex(ngpt_template *t, const char *text, size_t len, size_t *n)
{
    mapped s = mapped_new(t, len);
    memcpy(s.p, text, len);
    for (size_t i = 0; i < len; i++) s.at[i] = (uint32_t)i;
    s.n = len - (len && text[len - 1] == '\n');
    mapped l = lstrip_blocks(t, &s), tr = trim_blocks(t, &l);
    lexer lx = {.t = t, .s = generation_tags(t, &tr)};
    while (lx.pos < lx.s.n) {
        const ttype last = last_type(&lx);
        if (last == (ttype)-1 || last == TK_CLOSE_STMT || last == TK_CLOSE_EXPR || last == TK_COMMENT) {
            const size_t start = lx.pos;
            while (lx.pos < lx.s.n && !(lx.s.p[lx.pos] == '{' && lx.pos + 1 < lx.s.n &&
                                        strchr("%{#", lx.s.p[lx.pos + 1])))
                lx.pos++;
            if (lx.pos > start) {
                push(&lx, TK_TEXT, (tstr){lx.s.p + start, NULL, lx.pos - start}, start);
                continue;
            }
        }
        if (at(&lx, "{#")) {
            comment(&lx);
        } else if (at(&lx, "{%-") || at(&lx, "{{-")) {
            strip_trailing(&lx);
            const bool stmt = lx.s.p[lx.pos + 1] == '%';
            push(&lx, stmt ? TK_OPEN_STMT : TK_OPEN_EXPR, (tstr){lx.s.p + lx.pos, NULL, 2}, lx.pos);
            if (!stmt) lx.curly = 0;
            lx.pos += 3;
        } else {
            tag_token(&lx);
        }
    }
    *n = lx.n;
    return lx.tok;
}
