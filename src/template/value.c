/* value.c — the runtime's values (tmpl.h): making them, mappings in
 * insertion order, truth, and JSON as the reference's toJSON writes it
 * (JSON.stringify's escapes; Python's separators; indent, with version
 * 0.5.10's padding of an empty list or mapping; ensure_ascii), each output
 * byte keeping the origin of the character it writes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "template/tmpl.h"

tval ngpt_tmpl_val_str(tstr s)
{
    tval v = {.kind = TV_STR};
    v.u.s = s;
    return v;
}

tval ngpt_tmpl_val_num(tkind kind, double x)
{
    tval v = {.kind = kind};
    v.u.num = x;
    return v;
}

tval ngpt_tmpl_val_bool(bool b)
{
    tval v = {.kind = TV_BOOL};
    v.u.b = b;
    return v;
}

tval ngpt_tmpl_val_list(tarena *a, tkind kind, size_t n)
{
    tval v = {.kind = kind};
    v.u.l = ngpt_tmpl_alloc(a, sizeof *v.u.l);
    v.u.l->n = n;
    v.u.l->v = ngpt_tmpl_alloc(a, (n ? n : 1) * sizeof(tval));     /* zero: TV_UNDEF */
    return v;
}

tval ngpt_tmpl_val_map(tarena *a, tkind kind)
{
    tval v = {.kind = kind};
    v.u.m = ngpt_tmpl_alloc(a, sizeof *v.u.m);
    return v;
}

const tval *ngpt_tmpl_map_get(const tmap *m, tstr key)
{
    for (size_t i = 0; i < m->n; i++)
        if (ngpt_tmpl_str_eq(m->k[i], key)) return &m->v[i];
    return NULL;
}

void ngpt_tmpl_map_set(tarena *a, tmap *m, tstr key, tval v)
{
    for (size_t i = 0; i < m->n; i++)
        if (ngpt_tmpl_str_eq(m->k[i], key)) {
            m->v[i] = v;
            return;
        }
    if (m->n == m->cap) {
        const size_t cap = m->cap ? 2 * m->cap : 4;
        tstr *k = ngpt_tmpl_alloc(a, cap * sizeof *k);
        tval *vv = ngpt_tmpl_alloc(a, cap * sizeof *vv);
        if (m->n) {
            memcpy(k, m->k, m->n * sizeof *k);
            memcpy(vv, m->v, m->n * sizeof *vv);
        }
        m->k = k, m->v = vv, m->cap = cap;
    }
    m->k[m->n] = key, m->v[m->n++] = v;
}

bool ngpt_tmpl_truthy(tval v)
{
    switch (v.kind) {
    case TV_BOOL: return v.u.b;
    case TV_INT:
    case TV_FLOAT: return v.u.num != 0 && !isnan(v.u.num);
    case TV_STR: return v.u.s.n > 0;
    case TV_LIST:
    case TV_TUPLE: return v.u.l->n > 0;
    case TV_MAP:
    case TV_KWARGS: return v.u.m->n > 0;
    case TV_NS:
    case TV_FUNC: return true;
    default: return false;
    }
}

const char *ngpt_tmpl_type_name(tval v)
{
    static const char *const names[] = {"undefined value", "none", "boolean", "integer", "float",
                                        "string", "list", "tuple", "mapping",
                                        "keyword arguments", "namespace", "function"};
    return names[v.kind];
}

/* ------------------------------------------------------------ JSON */

static void json_string(tbuf *out, tstr s, bool ascii)
{
    ngpt_tmpl_buf_lit(out, "\"", 1);
    for (size_t i = 0, len; i < s.n; i += len) {
        const uint32_t u = ngpt_tmpl_utf8_next(s.p + i, s.n - i, &len);
        const bool taint = s.taint && s.taint[i];
        char esc[16];
        size_t k = 0;
        switch (u) {
        case '"': k = (size_t)sprintf(esc, "\\\""); break;
        case '\\': k = (size_t)sprintf(esc, "\\\\"); break;
        case '\b': k = (size_t)sprintf(esc, "\\b"); break;
        case '\f': k = (size_t)sprintf(esc, "\\f"); break;
        case '\n': k = (size_t)sprintf(esc, "\\n"); break;
        case '\r': k = (size_t)sprintf(esc, "\\r"); break;
        case '\t': k = (size_t)sprintf(esc, "\\t"); break;
        default:
            if (u < 0x20) k = (size_t)sprintf(esc, "\\u%04x", (unsigned)u);
            else if (ascii && u >= 0x7F && u < 0x10000)
                k = (size_t)sprintf(esc, "\\u%04x", (unsigned)u);
            else if (ascii && u >= 0x10000)     /* its UTF-16 code units */
                k = (size_t)sprintf(esc, "\\u%04x\\u%04x", (unsigned)(0xD800 + ((u - 0x10000) >> 10)),
                                    (unsigned)(0xDC00 + ((u - 0x10000) & 0x3FF)));
        }
        if (k) ngpt_tmpl_buf_add(out, esc, k, taint);
        else ngpt_tmpl_buf_put(out, ngpt_tmpl_str_sub(s, i, i + len));
    }
    ngpt_tmpl_buf_lit(out, "\"", 1);
}

static void padding(tbuf *out, int indent, int depth)
{
    ngpt_tmpl_buf_lit(out, "\n", 1);
    for (int i = 0; i < indent * depth; i++) ngpt_tmpl_buf_lit(out, " ", 1);
}

bool ngpt_tmpl_json(tbuf *out, tval v, const tjson *o, int depth)
{
    const tstr item = o->item_sep.p ? o->item_sep : o->indent ? TSTR(",") : TSTR(", ");
    const tstr key = o->key_sep.p ? o->key_sep : TSTR(": ");
    char num[48];
    switch (v.kind) {
    case TV_NULL: ngpt_tmpl_buf_lit(out, "null", 4); return true;
    case TV_UNDEF:
        if (o->null_undefined) ngpt_tmpl_buf_lit(out, "null", 4);
        else ngpt_tmpl_buf_lit(out, "undefined", 9);
        return true;
    case TV_BOOL: ngpt_tmpl_buf_lit(out, v.u.b ? "true" : "false", v.u.b ? 4 : 5); return true;
    case TV_INT:
    case TV_FLOAT:
        if (!isfinite(v.u.num)) ngpt_tmpl_buf_lit(out, "null", 4);
        else ngpt_tmpl_buf_lit(out, num, ngpt_tmpl_js_number(v.u.num, num));
        return true;
    case TV_STR: json_string(out, v.u.s, o->ascii); return true;
    case TV_LIST:
        ngpt_tmpl_buf_lit(out, "[", 1);
        for (size_t i = 0; i < v.u.l->n; i++) {
            if (i) ngpt_tmpl_buf_put(out, item);
            if (o->indent) padding(out, o->indent, depth + 1);
            if (!ngpt_tmpl_json(out, v.u.l->v[i], o, depth + 1)) return false;
        }
        if (o->indent && !v.u.l->n) padding(out, o->indent, depth + 1);  /* "[\n  \n]": 0.5.10's */
        if (o->indent) padding(out, o->indent, depth);
        ngpt_tmpl_buf_lit(out, "]", 1);
        return true;
    case TV_MAP:
    case TV_NS:
        ngpt_tmpl_buf_lit(out, "{", 1);
        for (size_t i = 0; i < v.u.m->n; i++) {
            if (i) ngpt_tmpl_buf_put(out, item);
            if (o->indent) padding(out, o->indent, depth + 1);
            json_string(out, v.u.m->k[i], o->ascii);
            ngpt_tmpl_buf_put(out, key);
            if (!ngpt_tmpl_json(out, v.u.m->v[i], o, depth + 1)) return false;
        }
        if (o->indent) padding(out, o->indent, depth);     /* "{\n}" when empty: 0.5.10's */
        ngpt_tmpl_buf_lit(out, "}", 1);
        return true;
    default:
        return false;       /* a tuple, keyword arguments or a function: the reference refuses */
    }
}
