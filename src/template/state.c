/* state.c — a render's scopes and its values as text (ast.h): variables
 * looked up from the innermost scope out (a for loop and a macro call have
 * their own, as the reference's Environment does), what `{{ value }}`
 * writes and what + and ~ join (JavaScript's String()), and the messages
 * that name the line and column of the expression that failed. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "template/tmpl.h"

struct tenv {
    tenv *parent;
    size_t n, cap;
    tstr *k;
    uint32_t *h;
    tval *v;
};

_Noreturn void ngpt_tmpl_fail_at(tstate *s, const node *n, ngpt_status st, const char *fmt, ...)
{
    char msg[600], where[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ngpt_tmpl_where(s->t->text, s->t->len, n ? n->at : 0, where, sizeof where);
    ngpt_tmpl_throw(&s->a, st, "%s: %s", where, msg);
}

tenv *ngpt_tmpl_env(tstate *s, tenv *parent)
{
    tenv *e = ngpt_tmpl_alloc(&s->a, sizeof *e);
    e->parent = parent;
    return e;
}

void ngpt_tmpl_env_set(tstate *s, tenv *e, tstr name, uint32_t h, tval v)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->h[i] == h && ngpt_tmpl_str_eq(e->k[i], name)) {
            e->v[i] = v;
            return;
        }
    if (e->n == e->cap) {
        const size_t cap = e->cap ? 2 * e->cap : 8;
        tstr *k = ngpt_tmpl_alloc(&s->a, cap * sizeof *k);
        uint32_t *hh = ngpt_tmpl_alloc(&s->a, cap * sizeof *hh);
        tval *v = ngpt_tmpl_alloc(&s->a, cap * sizeof *v);
        if (e->n) {
            memcpy(k, e->k, e->n * sizeof *k);
            memcpy(hh, e->h, e->n * sizeof *hh);
            memcpy(v, e->v, e->n * sizeof *v);
        }
        e->k = k, e->h = hh, e->v = v, e->cap = cap;
    }
    e->k[e->n] = name, e->h[e->n] = h, e->v[e->n++] = v;
}

tval ngpt_tmpl_env_get(const tenv *e, tstr name, uint32_t hash)
{
    for (; e; e = e->parent)
        for (size_t i = 0; i < e->n; i++)
            if (e->h[i] == hash && ngpt_tmpl_str_eq(e->k[i], name)) return e->v[i];
    return (tval){.kind = TV_UNDEF};
}

/* ------------------------------------------------------------ values as text */

static tstr number_text(tstate *s, double x, bool float_form)
{
    char buf[48];
    size_t n;
    if (float_form && x == 0 && signbit(x)) n = (size_t)sprintf(buf, "-0.0");
    else n = ngpt_tmpl_js_number(x, buf);
    if (float_form && isfinite(x) && x == floor(x) && fabs(x) < 1e21 && !(x == 0 && signbit(x)))
        buf[n++] = '.', buf[n++] = '0';     /* toFixed(1) of an integral float */
    return ngpt_tmpl_str_copy(&s->a, buf, n, false);
}

tstr ngpt_tmpl_raw_string(tstate *s, const node *n, tval v)
{
    switch (v.kind) {
    case TV_STR: return v.u.s;
    case TV_INT:
    case TV_FLOAT: return number_text(s, v.u.num, false);
    case TV_BOOL: return v.u.b ? TSTR("true") : TSTR("false");
    default:
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "joining a %s to text is outside ngpt's Jinja "
                 "subset (the reference writes \"[object ...]\")", ngpt_tmpl_type_name(v));
    }
}

void ngpt_tmpl_write(tstate *s, const node *n, tbuf *out, tval v)
{
    switch (v.kind) {
    case TV_UNDEF:
    case TV_NULL: return;
    case TV_STR: ngpt_tmpl_buf_put(out, v.u.s); return;
    case TV_INT: ngpt_tmpl_buf_put(out, number_text(s, v.u.num, false)); return;
    case TV_FLOAT: ngpt_tmpl_buf_put(out, number_text(s, v.u.num, true)); return;
    case TV_BOOL: ngpt_tmpl_buf_lit(out, v.u.b ? "true" : "false", v.u.b ? 4 : 5); return;
    case TV_FUNC:
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "writing a function as text is outside "
                          "ngpt's Jinja subset");
    default: {
        const tjson o = {0};
        if (!ngpt_tmpl_json(out, v, &o, 0))
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED,
                              "a %s holding a tuple or a function cannot be "
                              "written as text (the reference refuses it too)",
                              ngpt_tmpl_type_name(v));
    }
    }
}

