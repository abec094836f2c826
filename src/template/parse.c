/* parse.c — a template's syntax tree (ast.h), built as @huggingface/jinja's
 * parser builds it (its src/parser.ts, version 0.5: the same precedence,
 * the same quirks), and the subset check: a statement, filter, test or
 * method ngpt does not evaluate, and break or continue outside a loop, are
 * refused here, naming the construct and where it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/names.h"
#include "template/tmpl.h"

typedef struct parser {
    ngpt_template *t;
    const ttoken *tok;
    size_t n, cur;
    int depth;                  /* nesting, bounded by TMPL_NEST_MAX */
    int loops;                  /* for loops around the statement being parsed */
    int macros;                 /* macro bodies around it */
} parser;

static _Noreturn void fail_at(parser *p, uint32_t at, ngpt_status st, const char *what)
{
    char where[64];
    ngpt_tmpl_where(p->t->text, p->t->len, at, where, sizeof where);
    ngpt_tmpl_throw(&p->t->arena, st, "%s: %s", where, what);
}

static uint32_t here(const parser *p)
{
    return p->cur < p->n ? p->tok[p->cur].at : (uint32_t)p->t->len;
}

static _Noreturn void syntax(parser *p, const char *what)
{
    fail_at(p, here(p), NGPT_ERR_BAD_FORMAT, what);
}

static _Noreturn void outside(parser *p, uint32_t at, const char *kind, tstr name)
{
    char what[200];
    snprintf(what, sizeof what,
             "the %s \"%.*s\" is outside ngpt's Jinja subset "
             "(docs/GENERATION.md, \"Chat templates\")",
             kind, (int)(name.n > 60 ? 60 : name.n), name.p);
    fail_at(p, at, NGPT_ERR_UNSUPPORTED, what);
}

static void enter(parser *p)
{
    if (++p->depth > TMPL_NEST_MAX) {
        char what[80];
        snprintf(what, sizeof what, "nested more than %d deep", TMPL_NEST_MAX);
        fail_at(p, here(p), NGPT_ERR_UNSUPPORTED, what);
    }
}

static bool is(const parser *p, ttype type) { return p->cur < p->n && p->tok[p->cur].type == type; }

static bool is_ident(const parser *p, size_t ahead, const char *name)
{
    return p->cur + ahead < p->n && p->tok[p->cur + ahead].type == TK_IDENT &&
           ngpt_tmpl_str_is(p->tok[p->cur + ahead].v, name);
}

/* {% name where name is one of the NULL-terminated list */
static bool is_stmt(const parser *p, const char *const *names)
{
    if (!is(p, TK_OPEN_STMT)) return false;
    for (; *names; names++)
        if (is_ident(p, 1, *names)) return true;
    return false;
}

static const ttoken *expect(parser *p, ttype type, const char *what)
{
    if (!is(p, type)) syntax(p, what);
    return &p->tok[p->cur++];
}

static void expect_ident(parser *p, const char *name, const char *what)
{
    if (!is_ident(p, 0, name)) syntax(p, what);
    p->cur++;
}

static node *mk(parser *p, nkind kind, uint32_t at)
{
    node *n = ngpt_tmpl_alloc(&p->t->arena, sizeof *n);
    n->kind = kind, n->at = at;
    return n;
}

static void add(parser *p, nlist *l, node *n)
{
    if ((l->n & (l->n - 1)) == 0) {        /* 0, 1, 2, 4, ...: full, double it */
        node **v = ngpt_tmpl_alloc(&p->t->arena, (l->n ? 2 * l->n : 1) * sizeof *v);
        if (l->n) memcpy(v, l->v, l->n * sizeof *v);
        l->v = v;
    }
    l->v[l->n++] = n;
}

static node *expression(parser *p);
static node *primary(parser *p);
static node *any(parser *p);

/* Statements until one of names comes (the end of the block). */
static void body(parser *p, nlist *l, const char *const *names, const char *what)
{
    while (!is_stmt(p, names)) {
        if (p->cur >= p->n) syntax(p, what);
        add(p, l, any(p));
    }
}

/* (args): positional, then name=value; spread arguments are refused. */
static void arguments(parser *p, nlist *args, bool parameters)
{
    expect(p, TK_LPAREN, "expected ( before the arguments");
    bool keyword = false;
    while (!is(p, TK_RPAREN)) {
        if (p->cur >= p->n) syntax(p, "expected ) after the arguments");
        if (is(p, TK_POW) || (is(p, TK_MUL) && ngpt_tmpl_str_is(p->tok[p->cur].v, "*")))
            outside(p, here(p), "argument unpacking", p->tok[p->cur].v);
        node *arg = expression(p);
        if (is(p, TK_EQUALS)) {
            p->cur++;
            if (arg->kind != N_IDENT) syntax(p, "expected a name before =");
            node *kw = mk(p, N_KWARG, arg->at);
            kw->s = arg->s, kw->hash = arg->hash, kw->a = expression(p);
            arg = kw;
        }
        if (parameters && arg->kind != N_IDENT && arg->kind != N_KWARG)
            syntax(p, "expected a parameter name");
        if (parameters)
            for (size_t i = 0; i < args->n; i++)
                if (ngpt_tmpl_str_eq(args->v[i]->s, arg->s)) syntax(p, "a parameter named twice");
        if (arg->kind == N_KWARG) keyword = true;
        else if (keyword) syntax(p, "a positional argument after a keyword argument");
        add(p, args, arg);
        if (is(p, TK_COMMA)) p->cur++;
    }
    p->cur++;
}

static node *member(parser *p, node *object);

static node *call(parser *p, node *callee)
{
    enter(p);
    if (callee->kind == N_MEMBER && !callee->flag && !ngpt_tmpl_is_method(callee->b->s))
        outside(p, callee->b->at, "method", callee->b->s);
    node *c = mk(p, N_CALL, callee->at);
    c->a = callee;
    arguments(p, &c->list, false);
    c = member(p, c);
    if (is(p, TK_LPAREN)) c = call(p, c);
    p->depth--;
    return c;
}

/* [start:stop:step] or [key], after the [ */
static node *subscript(parser *p, uint32_t at)
{
    node *part[4] = {NULL, NULL, NULL, NULL};
    int n = 0;
    bool slice = false;
    while (!is(p, TK_RBRACKET)) {
        if (p->cur >= p->n) syntax(p, "expected ]");
        if (n == 4) syntax(p, "a slice of more than three parts");
        if (is(p, TK_COLON)) {
            part[n++] = NULL;
            p->cur++;
            slice = true;
        } else {
            part[n++] = expression(p);
            if (is(p, TK_COLON)) p->cur++, slice = true;
        }
    }
    if (n == 0) syntax(p, "an empty subscript []");
    if (!slice) return part[0];
    if (n > 3) syntax(p, "a slice of more than three parts");
    node *s = mk(p, N_SLICE, at);
    s->a = part[0], s->b = part[1], s->c = part[2];
    return s;
}

static node *member(parser *p, node *object)
{
    while (is(p, TK_DOT) || is(p, TK_LBRACKET)) {
        const bool computed = is(p, TK_LBRACKET);
        const uint32_t at = here(p);
        p->cur++;
        node *m = mk(p, N_MEMBER, object->at);
        m->a = object, m->flag = computed;
        if (computed) {
            m->b = subscript(p, at);
            expect(p, TK_RBRACKET, "expected ]");
        } else {
            m->b = primary(p);
            if (m->b->kind != N_IDENT && m->b->kind != N_INT)
                syntax(p, "expected a name or an integer after .");
        }
        object = m;
    }
    return object;
}

static node *call_member(parser *p)
{
    node *m = member(p, primary(p));
    return is(p, TK_LPAREN) ? call(p, m) : m;
}

static node *unary_sign(parser *p)
{
    if ((is(p, TK_UNARY) || is(p, TK_ADD)) &&
        (ngpt_tmpl_str_is(p->tok[p->cur].v, "-") || ngpt_tmpl_str_is(p->tok[p->cur].v, "+"))) {
        enter(p);
        node *u = mk(p, N_UNARY, here(p));
        u->op = p->tok[p->cur++].v.p[0] == '-' ? OP_NEG : OP_POS;
        u->a = unary_sign(p);
        p->depth--;
        return u;
    }
    return call_member(p);
}

static node *filter(parser *p)
{
    node *operand = unary_sign(p);
    while (is(p, TK_PIPE)) {
        p->cur++;
        node *f = mk(p, N_FILTER, operand->at);
        node *name = primary(p);
        if (name->kind != N_IDENT) syntax(p, "expected a filter's name after |");
        if ((f->op = ngpt_tmpl_filter_id(name->s)) < 0) outside(p, name->at, "filter", name->s);
        f->a = operand, f->s = name->s;
        if (is(p, TK_LPAREN)) {
            f->flag = true;
            arguments(p, &f->list, false);
            if (is(p, TK_DOT) || is(p, TK_LBRACKET) || is(p, TK_LPAREN))
                outside(p, here(p), "expression after a filter's call", p->tok[p->cur].v);
        }
        operand = f;
    }
    return operand;
}

static node *test(parser *p)
{
    node *operand = filter(p);
    while (is_ident(p, 0, "is")) {
        p->cur++;
        node *t = mk(p, N_TEST, operand->at);
        if (is_ident(p, 0, "not")) p->cur++, t->flag = true;
        node *name = primary(p);
        if (name->kind != N_IDENT) syntax(p, "expected a test's name after is");
        if ((t->op = ngpt_tmpl_test_id(name->s)) < 0) outside(p, name->at, "test", name->s);
        t->a = operand, t->s = name->s;
        operand = t;
    }
    return operand;
}

static node *binary(parser *p, node *l, top op, node *r)
{
    node *b = mk(p, N_BINARY, l->at);
    b->op = op, b->a = l, b->b = r;
    return b;
}

static top op_of(tstr v)
{
    static const struct { const char *s; top op; } ops[] = {
        {"+", OP_ADD}, {"-", OP_SUB}, {"~", OP_CAT}, {"*", OP_MUL}, {"/", OP_DIV},
        {"//", OP_FLOORDIV}, {"%", OP_MOD}, {"**", OP_POW}, {"==", OP_EQ}, {"!=", OP_NE},
        {"<", OP_LT}, {">", OP_GT}, {"<=", OP_LE}, {">=", OP_GE}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ngpt_tmpl_str_is(v, ops[i].s)) return ops[i].op;
    return OP_ADD;      /* not reached: the lexer makes only these */
}

/* One level of left-associative operators (tokens of type), whose operands
 * are the next level's. */
static node *left_assoc(parser *p, ttype type, node *(*next)(parser *))
{
    node *l = next(p);
    while (is(p, type)) {
        const top op = op_of(p->tok[p->cur++].v);
        l = binary(p, l, op, next(p));
    }
    return l;
}

static node *power(parser *p) { return left_assoc(p, TK_POW, test); }
static node *multiplicative(parser *p) { return left_assoc(p, TK_MUL, power); }
static node *additive(parser *p) { return left_assoc(p, TK_ADD, multiplicative); }

static node *comparison(parser *p)
{
    node *l = additive(p);
    for (;;) {
        top op;
        if (is_ident(p, 0, "not") && is_ident(p, 1, "in")) op = OP_NOT_IN, p->cur += 2;
        else if (is_ident(p, 0, "in")) op = OP_IN, p->cur++;
        else if (is(p, TK_CMP)) op = op_of(p->tok[p->cur++].v);
        else return l;
        l = binary(p, l, op, additive(p));
    }
}

static node *negation(parser *p)
{
    node *right = NULL;
    while (is_ident(p, 0, "not")) {     /* as the reference loops */
        enter(p);
        node *u = mk(p, N_UNARY, here(p));
        p->cur++;
        u->op = OP_NOT, u->a = negation(p);
        right = u;
        p->depth--;
    }
    return right ? right : comparison(p);
}

static node *logical_and(parser *p)
{
    node *l = negation(p);
    while (is_ident(p, 0, "and")) p->cur++, l = binary(p, l, OP_AND, negation(p));
    return l;
}

static node *logical_or(parser *p)
{
    node *l = logical_and(p);
    while (is_ident(p, 0, "or")) p->cur++, l = binary(p, l, OP_OR, logical_and(p));
    return l;
}

static node *expression(parser *p)
{
    enter(p);
    node *a = logical_or(p);
    if (is_ident(p, 0, "if")) {
        p->cur++;
        node *t = mk(p, N_SELECT, a->at);
        t->a = a, t->b = logical_or(p);
        if (is_ident(p, 0, "else")) {
            p->cur++;
            t->kind = N_TERNARY;        /* a if b else c: a condition b, branches a, c */
            t->c = expression(p);
        }
        a = t;
    }
    p->depth--;
    return a;
}

/* a, b, c (a tuple) or a single expression; primaries only for a for's target */
static node *sequence(parser *p, bool primaries)
{
    node *first = primaries ? primary(p) : expression(p);
    if (!is(p, TK_COMMA)) return first;
    node *t = mk(p, N_TUPLE, first->at);
    add(p, &t->list, first);
    while (is(p, TK_COMMA)) {
        p->cur++;
        add(p, &t->list, primaries ? primary(p) : expression(p));
    }
    return t;
}

/* [a, b] or {k: v, ...} after the bracket (commas optional, as the
 * reference reads them); a mapping's list holds keys and values in turn. */
static node *collection(parser *p, nkind kind, uint32_t at, ttype close, const char *what)
{
    enter(p);
    node *n = mk(p, kind, at);
    while (!is(p, close)) {
        if (p->cur >= p->n) syntax(p, what);
        add(p, &n->list, expression(p));
        if (kind == N_DICT) {
            expect(p, TK_COLON, "expected : between a key and its value");
            add(p, &n->list, expression(p));
        }
        if (is(p, TK_COMMA)) p->cur++;
    }
    p->cur++;
    p->depth--;
    return n;
}

static node *primary(parser *p)
{
    if (p->cur >= p->n) syntax(p, "unexpected end of the template");
    const ttoken *tk = &p->tok[p->cur++];
    node *n;
    switch (tk->type) {
    case TK_NUM: {
        n = mk(p, memchr(tk->v.p, '.', tk->v.n) ? N_FLOAT : N_INT, tk->at);
        n->num = ngpt_tmpl_strtod(tk->v.p, tk->v.n);
        return n;
    }
    case TK_STR: {
        n = mk(p, N_STR, tk->at);
        n->s = tk->v;
        if (is(p, TK_STR)) {            /* 'a' 'b' is 'ab' */
            tbuf b = {.a = &p->t->arena, .limit = TMPL_SOURCE_MAX};
            ngpt_tmpl_buf_put(&b, n->s);
            while (is(p, TK_STR)) ngpt_tmpl_buf_put(&b, p->tok[p->cur++].v);
            n->s = ngpt_tmpl_buf_str(&b);
        }
        return n;
    }
    case TK_IDENT:
        n = mk(p, N_IDENT, tk->at);
        n->s = tk->v, n->hash = ngpt_tmpl_str_hash(tk->v);
        if (p->macros && (ngpt_tmpl_str_is(n->s, "kwargs") || ngpt_tmpl_str_is(n->s, "varargs") ||
                          ngpt_tmpl_str_is(n->s, "caller")))
            outside(p, tk->at, "macro variable", n->s);
        return n;
    case TK_LPAREN:
        enter(p);
        n = sequence(p, false);
        expect(p, TK_RPAREN, "expected )");
        p->depth--;
        return n;
    case TK_LBRACKET: return collection(p, N_ARRAY, tk->at, TK_RBRACKET, "expected ]");
    case TK_LBRACE: return collection(p, N_DICT, tk->at, TK_RBRACE, "expected }");
    default:
        p->cur--;
        syntax(p, "unexpected token");
    }
}

static const char *const END_IF[] = {"elif", "else", "endif", NULL};
static const char *const END_ELSE_IF[] = {"endif", NULL};
static const char *const END_FOR[] = {"endfor", "else", NULL};
static const char *const END_FOR_ELSE[] = {"endfor", NULL};
static const char *const END_SET[] = {"endset", NULL};
static const char *const END_MACRO[] = {"endmacro", NULL};

static node *if_statement(parser *p, uint32_t at)
{
    node *n = mk(p, N_IF, at);
    n->a = expression(p);
    expect(p, TK_CLOSE_STMT, "expected %} after the if's condition");
    body(p, &n->list, END_IF, "an if without {% endif %}");
    if (is_ident(p, 1, "elif")) {
        const uint32_t elif = here(p);
        p->cur += 2;
        add(p, &n->alt, if_statement(p, elif));
    } else if (is_ident(p, 1, "else")) {
        p->cur += 2;
        expect(p, TK_CLOSE_STMT, "expected %} after else");
        body(p, &n->alt, END_ELSE_IF, "an if without {% endif %}");
    }
    return n;
}

static void end_tag(parser *p, const char *name, const char *what)
{
    expect(p, TK_OPEN_STMT, what);
    expect_ident(p, name, what);
    expect(p, TK_CLOSE_STMT, what);
}

static node *statement(parser *p)
{
    const uint32_t at = here(p);
    p->cur++;                                       /* {% */
    if (!is(p, TK_IDENT)) syntax(p, "expected a statement's name after {%");
    const tstr name = p->tok[p->cur++].v;
    node *n;
    if (ngpt_tmpl_str_is(name, "set")) {
        n = mk(p, N_SET, at);
        n->a = sequence(p, false);
        if (is(p, TK_EQUALS)) {
            p->cur++;
            n->b = sequence(p, false);
        } else {
            expect(p, TK_CLOSE_STMT, "expected %} or = after set's target");
            body(p, &n->list, END_SET, "a set without {% endset %}");
            p->cur++;
            expect_ident(p, "endset", "expected endset");
        }
        expect(p, TK_CLOSE_STMT, "expected %} after set");
    } else if (ngpt_tmpl_str_is(name, "if")) {
        n = if_statement(p, at);
        end_tag(p, "endif", "expected {% endif %}");
    } else if (ngpt_tmpl_str_is(name, "for")) {
        n = mk(p, N_FOR, at);
        n->a = sequence(p, true);
        if (n->a->kind != N_IDENT && n->a->kind != N_TUPLE) syntax(p, "expected the loop's variable");
        for (size_t i = 0; n->a->kind == N_TUPLE && i < n->a->list.n; i++)
            if (n->a->list.v[i]->kind != N_IDENT) syntax(p, "expected the loop's variables");
        expect_ident(p, "in", "expected in after the loop's variable");
        n->b = expression(p);
        expect(p, TK_CLOSE_STMT, "expected %} after the for");
        p->loops++;
        body(p, &n->list, END_FOR, "a for without {% endfor %}");
        p->loops--;
        if (is_ident(p, 1, "else")) {
            p->cur += 2;
            expect(p, TK_CLOSE_STMT, "expected %} after else");
            body(p, &n->alt, END_FOR_ELSE, "a for without {% endfor %}");
        }
        end_tag(p, "endfor", "expected {% endfor %}");
    } else if (ngpt_tmpl_str_is(name, "macro")) {
        n = mk(p, N_MACRO, at);
        node *id = primary(p);
        if (id->kind != N_IDENT) syntax(p, "expected the macro's name");
        n->s = id->s, n->hash = id->hash;
        arguments(p, &n->list, true);
        expect(p, TK_CLOSE_STMT, "expected %} after the macro's parameters");
        const int loops = p->loops;
        p->loops = 0, p->macros++;
        body(p, &n->alt, END_MACRO, "a macro without {% endmacro %}");
        p->loops = loops, p->macros--;
        end_tag(p, "endmacro", "expected {% endmacro %}");
    } else if (ngpt_tmpl_str_is(name, "break") || ngpt_tmpl_str_is(name, "continue")) {
        if (!p->loops) outside(p, at, "statement outside a for loop", name);
        n = mk(p, ngpt_tmpl_str_is(name, "break") ? N_BREAK : N_CONTINUE, at);
        expect(p, TK_CLOSE_STMT, "expected %}");
    } else {
        outside(p, at, "statement", name);
    }
    return n;
}

static node *any(parser *p)
{
    enter(p);
    const ttoken *tk = &p->tok[p->cur];
    node *n;
    switch (tk->type) {
    case TK_COMMENT:
        p->cur++;
        n = mk(p, N_COMMENT, tk->at);
        break;
    case TK_TEXT:
        p->cur++;
        n = mk(p, N_TEXT, tk->at);
        n->s = tk->v;
        break;
    case TK_OPEN_STMT:
        n = statement(p);
        break;
    case TK_OPEN_EXPR:
        p->cur++;
        n = expression(p);
        expect(p, TK_CLOSE_EXPR, "expected }}");
        break;
    default:
        syntax(p, "unexpected token");
    }
    p->depth--;
    return n;
}

void ngpt_tmpl_parse_tree(ngpt_template *t, const char *text, size_t len)
{
    parser p = {.t = t};
    p.tok = ngpt_tmpl_lex(t, text, len, &p.n);
    while (p.cur < p.n) add(&p, &t->body, any(&p));
}
