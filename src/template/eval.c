/* eval.c — evaluating a template's tree (ast.h) as @huggingface/jinja's
 * Interpreter does (its src/runtime.ts, version 0.5): the same scopes (a
 * for loop's own, a macro's on its caller's), the same operators on the
 * same values, the same text for each value. Statements write into the
 * state's buffer as they go; a loop iteration that ends in break or
 * continue takes back what it wrote, as the reference drops it. Every
 * evaluation counts a step, so no template runs without end. */
#include <math.h>
#include <string.h>

#include "template/tmpl.h"

static void step(tstate *s, const node *n)
{
    if (++s->steps > TMPL_STEPS_MAX)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "the template ran past ngpt's limit of %u steps "
                 "(a loop without end?)", TMPL_STEPS_MAX);
}

/* ------------------------------------------------------------ expressions */

static tval eval(tstate *s, tenv *e, const node *n);
static tval call_macro(tstate *s, const node *call, const node *macro, tenv *caller, tval *args,
                       size_t n);

static bool numeric(tval v) { return v.kind == TV_INT || v.kind == TV_FLOAT; }
static bool numeric_like(tval v) { return numeric(v) || v.kind == TV_BOOL; }
static double num_of(tval v) { return v.kind == TV_BOOL ? (double)v.u.b : v.u.num; }
static bool is_list(tval v) { return v.kind == TV_LIST || v.kind == TV_TUPLE; }

static bool contains(tstr hay, tstr needle)
{
    if (needle.n == 0) return true;
    for (size_t i = 0; i + needle.n <= hay.n; i++)
        if (!memcmp(hay.p + i, needle.p, needle.n)) return true;
    return false;
}

static tval concat(tstate *s, tstr a, tstr b)
{
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    ngpt_tmpl_buf_put(&out, a);
    ngpt_tmpl_buf_put(&out, b);
    return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
}

static _Noreturn void unknown_op(tstate *s, const node *n, tval l, tval r)
{
    ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "no operator %d between a %s and a %s (the reference "
             "refuses it too)", n->op, ngpt_tmpl_type_name(l), ngpt_tmpl_type_name(r));
}

static tval arithmetic(tstate *s, const node *n, tval l, tval r)
{
    const double a = l.u.num, b = r.u.num;
    const tkind k = l.kind == TV_FLOAT || r.kind == TV_FLOAT ? TV_FLOAT : TV_INT;
    switch (n->op) {
    case OP_ADD: return ngpt_tmpl_val_num(k, a + b);
    case OP_SUB: return ngpt_tmpl_val_num(k, a - b);
    case OP_MUL: return ngpt_tmpl_val_num(k, a * b);
    case OP_DIV: return ngpt_tmpl_val_num(TV_FLOAT, a / b);
    case OP_FLOORDIV: return ngpt_tmpl_val_num(k, floor(a / b));
    case OP_MOD: return ngpt_tmpl_val_num(k, fmod(a, b));
    case OP_LT: return ngpt_tmpl_val_bool(a < b);
    case OP_GT: return ngpt_tmpl_val_bool(a > b);
    case OP_GE: return ngpt_tmpl_val_bool(a >= b);
    case OP_LE: return ngpt_tmpl_val_bool(a <= b);
    default: unknown_op(s, n, l, r);
    }
}

static tval power(tstate *s, const node *n, tval l, tval r)
{
    const double a = num_of(l), b = num_of(r);
    if (a == 0 && b < 0)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "0.0 cannot be raised to a negative power");
    const double x = isnan(b) || (fabs(a) == 1 && isinf(b)) ? NAN : pow(a, b);    /* JavaScript's ** */
    if (!isfinite(x)) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "a power that is not a finite number");
    return ngpt_tmpl_val_num(l.kind == TV_FLOAT || r.kind == TV_FLOAT || b < 0 ? TV_FLOAT : TV_INT, x);
}

static tval binary(tstate *s, tenv *e, const node *n)
{
    const tval l = eval(s, e, n->a);
    if (n->op == OP_AND) return ngpt_tmpl_truthy(l) ? eval(s, e, n->b) : l;
    if (n->op == OP_OR) return ngpt_tmpl_truthy(l) ? l : eval(s, e, n->b);
    const tval r = eval(s, e, n->b);
    if (n->op == OP_EQ || n->op == OP_NE)
        return ngpt_tmpl_val_bool(ngpt_tmpl_loose_eq(s, n, l, r) == (n->op == OP_EQ));
    if (l.kind == TV_UNDEF || r.kind == TV_UNDEF) {
        if (r.kind == TV_UNDEF && (n->op == OP_IN || n->op == OP_NOT_IN))
            return ngpt_tmpl_val_bool(n->op == OP_NOT_IN);
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "an operation on an undefined value");
    }
    if (l.kind == TV_NULL || r.kind == TV_NULL)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "an operation on none");
    if (n->op == OP_CAT) return concat(s, ngpt_tmpl_raw_string(s, n, l), ngpt_tmpl_raw_string(s, n, r));
    if (n->op == OP_POW && numeric_like(l) && numeric_like(r)) return power(s, n, l, r);
    if (numeric(l) && numeric(r)) {
        if (n->op != OP_IN && n->op != OP_NOT_IN && n->op != OP_POW) return arithmetic(s, n, l, r);
    } else if (is_list(l) && is_list(r)) {
        if (n->op == OP_ADD) {
            tval out = ngpt_tmpl_val_list(&s->a, TV_LIST, l.u.l->n + r.u.l->n);
            if (l.u.l->n) memcpy(out.u.l->v, l.u.l->v, l.u.l->n * sizeof(tval));
            if (r.u.l->n) memcpy(out.u.l->v + l.u.l->n, r.u.l->v, r.u.l->n * sizeof(tval));
            return out;
        }
    } else if (is_list(r) && (n->op == OP_IN || n->op == OP_NOT_IN)) {
        bool member = false;
        for (size_t i = 0; i < r.u.l->n && !member; i++) member = ngpt_tmpl_strict_eq(r.u.l->v[i], l);
        return ngpt_tmpl_val_bool(member == (n->op == OP_IN));
    }
    if ((l.kind == TV_STR || r.kind == TV_STR) && n->op == OP_ADD)
        return concat(s, ngpt_tmpl_raw_string(s, n, l), ngpt_tmpl_raw_string(s, n, r));
    if (l.kind == TV_STR && r.kind == TV_STR && (n->op == OP_IN || n->op == OP_NOT_IN))
        return ngpt_tmpl_val_bool(contains(r.u.s, l.u.s) == (n->op == OP_IN));
    if (l.kind == TV_STR && (r.kind == TV_MAP || r.kind == TV_KWARGS) &&
        (n->op == OP_IN || n->op == OP_NOT_IN))
        return ngpt_tmpl_val_bool((ngpt_tmpl_map_get(r.u.m, l.u.s) != NULL) == (n->op == OP_IN));
    unknown_op(s, n, l, r);
}

static tval unary(tstate *s, tenv *e, const node *n)
{
    const tval v = eval(s, e, n->a);
    if (n->op == OP_NOT)    /* 0.5.10's: JavaScript's !value, false for any list or mapping */
        return ngpt_tmpl_val_bool(v.kind < TV_LIST && !ngpt_tmpl_truthy(v));
    if (!numeric_like(v))
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "a sign before a %s", ngpt_tmpl_type_name(v));
    const double x = (n->op == OP_NEG ? -1 : 1) * num_of(v);
    return ngpt_tmpl_val_num(v.kind == TV_FLOAT ? TV_FLOAT : TV_INT, x);
}

/* Python's slice of n elements (utils.ts's slice): the indices it keeps. */
static size_t slice_indices(double n, tval a, tval b, tval c, double *idx, size_t cap)
{
    const double step = c.kind == TV_INT ? c.u.num : 1;
    double start, stop;
    if (step >= 0) {
        start = a.kind == TV_INT ? a.u.num : 0;
        start = start < 0 ? fmax(n + start, 0) : fmin(start, n);
        stop = b.kind == TV_INT ? b.u.num : n;
        stop = stop < 0 ? fmax(n + stop, 0) : fmin(stop, n);
    } else {
        start = a.kind == TV_INT ? a.u.num : n - 1;
        start = start < 0 ? fmax(n + start, -1) : fmin(start, n - 1);
        stop = b.kind == TV_INT ? b.u.num : -1;
        stop = stop < -1 ? fmax(n + stop, -1) : fmin(stop, n - 1);
    }
    const double dir = step > 0 ? 1 : step < 0 ? -1 : 0;
    size_t k = 0;
    for (double i = start; dir * i < dir * stop && k < cap; i += step) idx[k++] = i;
    return k;
}

static tval slice(tstate *s, tenv *e, const node *n, tval obj, const node *sl)
{
    if (!is_list(obj) && obj.kind != TV_STR)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "a slice of a %s (a list or a string only)",
                          ngpt_tmpl_type_name(obj));
    const tval undef = {.kind = TV_UNDEF};
    const tval a = sl->a ? eval(s, e, sl->a) : undef, b = sl->b ? eval(s, e, sl->b) : undef,
               c = sl->c ? eval(s, e, sl->c) : undef;
    const tval part[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (part[i].kind != TV_INT && part[i].kind != TV_UNDEF)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "a slice's bounds must be integers");
    if (obj.kind != TV_STR) {
        const size_t len = obj.u.l->n;
        double *idx = ngpt_tmpl_alloc(&s->a, (len + 1) * sizeof *idx);
        const size_t k = slice_indices((double)len, a, b, c, idx, len);
        tval out = ngpt_tmpl_val_list(&s->a, TV_LIST, k);
        for (size_t i = 0; i < k; i++) out.u.l->v[i] = obj.u.l->v[(size_t)idx[i]];
        return out;
    }
    const tstr str = obj.u.s;                   /* sliced by code points, as Array.from */
    size_t *start = ngpt_tmpl_alloc(&s->a, (str.n + 1) * sizeof *start), cps = 0;
    for (size_t i = 0, len; i < str.n; i += len) {
        ngpt_tmpl_utf8_next(str.p + i, str.n - i, &len);
        start[cps++] = i;
    }
    start[cps] = str.n;
    double *idx = ngpt_tmpl_alloc(&s->a, (cps + 1) * sizeof *idx);
    const size_t k = slice_indices((double)cps, a, b, c, idx, cps);
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    for (size_t i = 0; i < k; i++) {
        const size_t cp = (size_t)idx[i];
        ngpt_tmpl_buf_put(&out, ngpt_tmpl_str_sub(str, start[cp], start[cp + 1]));
    }
    return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
}

/* Positional arguments, then the keyword ones (kw: as a map, or appended
 * as one TV_KWARGS value when kw is NULL and there are any). */
static tval *arguments(tstate *s, tenv *e, const nlist *l, size_t *n, tmap **kw)
{
    tval *v = ngpt_tmpl_alloc(&s->a, (l->n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i]->kind != N_KWARG) v[k++] = eval(s, e, l->v[i]);
    tval map = ngpt_tmpl_val_map(&s->a, TV_KWARGS);
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i]->kind == N_KWARG) {
            if (ngpt_tmpl_map_get(map.u.m, l->v[i]->s))
                ngpt_tmpl_fail_at(s, l->v[i], NGPT_ERR_BAD_ARG, "a keyword argument given twice");
            ngpt_tmpl_map_set(&s->a, map.u.m, l->v[i]->s, eval(s, e, l->v[i]->a));
        }
    if (kw) *kw = map.u.m;
    else if (map.u.m->n) v[k++] = map;
    *n = k;
    return v;
}

static tval member(tstate *s, tenv *e, const node *n)
{
    const tval obj = eval(s, e, n->a);
    if (n->flag && n->b->kind == N_SLICE) return slice(s, e, n, obj, n->b);
    tval key;
    if (n->flag) key = eval(s, e, n->b);
    else if (n->b->kind == N_INT) key = ngpt_tmpl_val_num(TV_INT, n->b->num);
    else key = ngpt_tmpl_val_str(n->b->s);
    return ngpt_tmpl_member(s, n, obj, key);
}

static tval eval(tstate *s, tenv *e, const node *n)
{
    step(s, n);
    switch (n->kind) {
    case N_INT: return ngpt_tmpl_val_num(TV_INT, n->num);
    case N_FLOAT: return ngpt_tmpl_val_num(TV_FLOAT, n->num);
    case N_STR: return ngpt_tmpl_val_str(n->s);
    case N_ARRAY:
    case N_TUPLE: {
        tval v = ngpt_tmpl_val_list(&s->a, n->kind == N_ARRAY ? TV_LIST : TV_TUPLE, n->list.n);
        for (size_t i = 0; i < n->list.n; i++) v.u.l->v[i] = eval(s, e, n->list.v[i]);
        return v;
    }
    case N_DICT: {
        tval v = ngpt_tmpl_val_map(&s->a, TV_MAP);
        for (size_t i = 0; i + 1 < n->list.n; i += 2) {
            const tval k = eval(s, e, n->list.v[i]);
            if (k.kind != TV_STR)
                ngpt_tmpl_fail_at(s, n->list.v[i], NGPT_ERR_BAD_ARG,
                                  "a mapping's key must be a string");
            ngpt_tmpl_map_set(&s->a, v.u.m, k.u.s, eval(s, e, n->list.v[i + 1]));
        }
        return v;
    }
    case N_IDENT: return ngpt_tmpl_env_get(e, n->s, n->hash);
    case N_MEMBER: return member(s, e, n);
    case N_CALL: {
        size_t k;
        tval *args = arguments(s, e, &n->list, &k, NULL);
        const tval fn = eval(s, e, n->a);
        if (fn.kind == TV_FUNC && !fn.u.f->id) return call_macro(s, n, fn.u.f->macro, e, args, k);
        return ngpt_tmpl_call(s, n, fn, args, k);
    }
    case N_UNARY: return unary(s, e, n);
    case N_BINARY: return binary(s, e, n);
    case N_FILTER: {
        const tval v = eval(s, e, n->a);
        size_t k = 0;
        tmap *kw = NULL;
        tval *args = n->flag ? arguments(s, e, &n->list, &k, &kw) : NULL;
        return ngpt_tmpl_filter(s, n, v, args, k, kw);
    }
    case N_TEST: return ngpt_tmpl_val_bool(ngpt_tmpl_test(s, n, eval(s, e, n->a)) != n->flag);
    case N_SELECT:
        return ngpt_tmpl_truthy(eval(s, e, n->b)) ? eval(s, e, n->a) : (tval){.kind = TV_UNDEF};
    case N_TERNARY: return ngpt_tmpl_truthy(eval(s, e, n->b)) ? eval(s, e, n->a) : eval(s, e, n->c);
    default:
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_INTERNAL, "a statement where an expression belongs");
    }
}

/* ------------------------------------------------------------ statements */

enum { FLOW_NEXT, FLOW_BREAK, FLOW_CONTINUE };

static int exec_block(tstate *s, tenv *e, const nlist *body);

/* A block rendered on its own (a macro's body, set's block): its text. */
static tstr render_apart(tstate *s, tenv *e, const nlist *body, int *flow)
{
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX}, *saved = s->out;
    s->out = &out;
    *flow = exec_block(s, e, body);
    s->out = saved;
    return ngpt_tmpl_buf_str(&out);
}

static void assign(tstate *s, tenv *e, const node *n, const node *target, tval v)
{
    if (target->kind == N_IDENT) {
        ngpt_tmpl_env_set(s, e, target->s, target->hash, v);
    } else if (target->kind == N_TUPLE) {
        if (!is_list(v))
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "cannot unpack a %s", ngpt_tmpl_type_name(v));
        if (v.u.l->n != target->list.n)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "too %s items to unpack",
                              v.u.l->n < target->list.n ? "few" : "many");
        for (size_t i = 0; i < target->list.n; i++) {
            if (target->list.v[i]->kind != N_IDENT)
                ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "cannot unpack to that");
            ngpt_tmpl_env_set(s, e, target->list.v[i]->s, target->list.v[i]->hash, v.u.l->v[i]);
        }
    } else if (target->kind == N_MEMBER) {
        const tval obj = eval(s, e, target->a);
        if (obj.kind != TV_NS)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG,
                              "set of an attribute of a %s (a namespace only)",
                              ngpt_tmpl_type_name(obj));
        if (target->b->kind != N_IDENT)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "set of a member that is not a name");
        ngpt_tmpl_map_set(&s->a, obj.u.m, target->b->s, v);
    } else {
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "set of something that is not a name");
    }
}

static int exec_set(tstate *s, tenv *e, const node *n)
{
    tval v;
    if (n->b) {
        v = eval(s, e, n->b);
    } else {
        int flow;
        const tstr text = render_apart(s, e, &n->list, &flow);
        if (flow != FLOW_NEXT) return flow;
        v = ngpt_tmpl_val_str(text);
    }
    assign(s, e, n, n->a, v);
    return FLOW_NEXT;
}

static void bind_loop_var(tstate *s, tenv *e, const node *var, tval item)
{
    if (var->kind == N_IDENT) return ngpt_tmpl_env_set(s, e, var->s, var->hash, item);
    if (item.kind != TV_LIST && item.kind != TV_TUPLE)
        ngpt_tmpl_fail_at(s, var, NGPT_ERR_BAD_ARG, "cannot unpack a %s", ngpt_tmpl_type_name(item));
    if (item.u.l->n != var->list.n)
        ngpt_tmpl_fail_at(s, var, NGPT_ERR_BAD_ARG, "too %s items to unpack",
                          var->list.n > item.u.l->n ? "few" : "many");
    for (size_t j = 0; j < var->list.n; j++)
        ngpt_tmpl_env_set(s, e, var->list.v[j]->s, var->list.v[j]->hash, item.u.l->v[j]);
}

static tval loop_object(tstate *s, tlist *items, size_t i)
{
    const size_t n = items->n;
    tval loop = ngpt_tmpl_val_map(&s->a, TV_MAP);
    tmap *m = loop.u.m;
    ngpt_tmpl_map_set(&s->a, m, TSTR("index"), ngpt_tmpl_val_num(TV_INT, (double)(i + 1)));
    ngpt_tmpl_map_set(&s->a, m, TSTR("index0"), ngpt_tmpl_val_num(TV_INT, (double)i));
    ngpt_tmpl_map_set(&s->a, m, TSTR("revindex"), ngpt_tmpl_val_num(TV_INT, (double)(n - i)));
    ngpt_tmpl_map_set(&s->a, m, TSTR("revindex0"), ngpt_tmpl_val_num(TV_INT, (double)(n - i) - 1));
    ngpt_tmpl_map_set(&s->a, m, TSTR("first"), ngpt_tmpl_val_bool(i == 0));
    ngpt_tmpl_map_set(&s->a, m, TSTR("last"), ngpt_tmpl_val_bool(i == n - 1));
    ngpt_tmpl_map_set(&s->a, m, TSTR("length"), ngpt_tmpl_val_num(TV_INT, (double)n));
    ngpt_tmpl_map_set(&s->a, m, TSTR("previtem"), i > 0 ? items->v[i - 1] : (tval){.kind = TV_UNDEF});
    ngpt_tmpl_map_set(&s->a, m, TSTR("nextitem"),
                      i + 1 < n ? items->v[i + 1] : (tval){.kind = TV_UNDEF});
    return loop;
}

static int exec_for(tstate *s, tenv *e, const node *n)
{
    tenv *scope = ngpt_tmpl_env(s, e);
    const node *test = NULL, *iterable = n->b;
    if (iterable->kind == N_SELECT) test = iterable->b, iterable = iterable->a;
    tval it = eval(s, scope, iterable);
    if (it.kind == TV_MAP || it.kind == TV_KWARGS) {        /* its keys */
        tval keys = ngpt_tmpl_val_list(&s->a, TV_LIST, it.u.m->n);
        for (size_t i = 0; i < it.u.m->n; i++) keys.u.l->v[i] = ngpt_tmpl_val_str(it.u.m->k[i]);
        it = keys;
    } else if (!is_list(it)) {
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "a for loop over a %s (a list or a mapping only)",
                          ngpt_tmpl_type_name(it));
    }
    tlist *items = it.u.l;
    if (test) {                                 /* for x in xs if test */
        tval kept = ngpt_tmpl_val_list(&s->a, TV_LIST, items->n);
        size_t k = 0;
        for (size_t i = 0; i < items->n; i++) {
            tenv *probe = ngpt_tmpl_env(s, scope);
            bind_loop_var(s, probe, n->a, items->v[i]);
            if (ngpt_tmpl_truthy(eval(s, probe, test))) kept.u.l->v[k++] = items->v[i];
        }
        kept.u.l->n = k;
        items = kept.u.l;
    }
    bool ran = false;
    for (size_t i = 0; i < items->n; i++) {
        step(s, n);
        ngpt_tmpl_env_set(s, scope, TSTR("loop"), ngpt_tmpl_str_hash(TSTR("loop")),
                          loop_object(s, items, i));
        bind_loop_var(s, scope, n->a, items->v[i]);
        const size_t mark = s->out->n;
        const int flow = exec_block(s, scope, &n->list);
        if (flow != FLOW_NEXT) s->out->n = mark;        /* the reference drops the iteration */
        if (flow == FLOW_BREAK) break;
        if (flow == FLOW_NEXT) ran = true;
    }
    return ran ? FLOW_NEXT : exec_block(s, scope, &n->alt);
}

static void def_macro(tstate *s, tenv *e, const node *n)
{
    tval f = {.kind = TV_FUNC};
    f.u.f = ngpt_tmpl_alloc(&s->a, sizeof *f.u.f);
    f.u.f->macro = n;
    ngpt_tmpl_env_set(s, e, n->s, n->hash, f);
}

/* A macro's result: its body rendered in a scope on its caller's (as the
 * reference scopes it), every parameter bound before any default is. */
static tval call_macro(tstate *s, const node *call, const node *macro, tenv *caller, tval *args,
                       size_t n)
{
    if (++s->depth > TMPL_CALL_DEPTH)
        ngpt_tmpl_fail_at(s, call, NGPT_ERR_UNSUPPORTED, "macros call each other more than %d deep",
                 TMPL_CALL_DEPTH);
    tenv *scope = ngpt_tmpl_env(s, caller);
    tmap *kw = n && args[n - 1].kind == TV_KWARGS ? args[--n].u.m : NULL;
    bool *used = kw ? ngpt_tmpl_alloc(&s->a, kw->n + 1) : NULL;
    const nlist *params = &macro->list;
    for (size_t i = 0; i < params->n; i++) {        /* every name bound before any default */
        const node *p = params->v[i];
        tval v = {.kind = TV_UNDEF};
        if (i < n) {
            v = args[i];
        } else if (kw) {
            for (size_t j = 0; j < kw->n; j++)
                if (!used[j] && ngpt_tmpl_str_eq(kw->k[j], p->s)) v = kw->v[j], used[j] = true;
        }
        ngpt_tmpl_env_set(s, scope, p->s, p->hash, v);
    }
    for (size_t j = 0; kw && j < kw->n; j++)
        if (!used[j])
            ngpt_tmpl_fail_at(s, call, NGPT_ERR_BAD_ARG,
                              "macro '%.*s' takes no keyword argument '%.*s'", (int)macro->s.n,
                              macro->s.p, (int)kw->k[j].n, kw->k[j].p);
    if (n > params->n)
        ngpt_tmpl_fail_at(s, call, NGPT_ERR_BAD_ARG, "macro '%.*s' takes not more than %zu argument(s)",
                 (int)macro->s.n, macro->s.p, params->n);
    for (size_t i = 0; i < params->n; i++) {
        const node *p = params->v[i];
        bool given = i < n;
        for (size_t j = 0; kw && j < kw->n && !given; j++) given = ngpt_tmpl_str_eq(kw->k[j], p->s);
        if (!given && p->kind == N_KWARG)
            ngpt_tmpl_env_set(s, scope, p->s, p->hash, eval(s, scope, p->a));
    }
    int flow;
    const tstr text = render_apart(s, scope, &macro->alt, &flow);
    s->depth--;
    return ngpt_tmpl_val_str(text);
}

static int exec(tstate *s, tenv *e, const node *n)
{
    step(s, n);
    switch (n->kind) {
    case N_TEXT: ngpt_tmpl_buf_put(s->out, n->s); return FLOW_NEXT;
    case N_COMMENT: return FLOW_NEXT;
    case N_SET: return exec_set(s, e, n);
    case N_IF: return exec_block(s, e, ngpt_tmpl_truthy(eval(s, e, n->a)) ? &n->list : &n->alt);
    case N_FOR: return exec_for(s, e, n);
    case N_MACRO: def_macro(s, e, n); return FLOW_NEXT;
    case N_BREAK: return FLOW_BREAK;
    case N_CONTINUE: return FLOW_CONTINUE;
    default: ngpt_tmpl_write(s, n, s->out, eval(s, e, n)); return FLOW_NEXT;
    }
}

static int exec_block(tstate *s, tenv *e, const nlist *body)
{
    for (size_t i = 0; i < body->n; i++) {
        const int flow = exec(s, e, body->v[i]);
        if (flow != FLOW_NEXT) return flow;
    }
    return FLOW_NEXT;
}

void ngpt_tmpl_exec(tstate *s, tenv *global, const nlist *body) { exec_block(s, global, body); }
