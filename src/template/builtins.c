/* builtins.c — what a template calls by name (ast.h): filters, tests,
 * string and mapping methods, member access, the global functions
 * (namespace, range, raise_exception, strftime_now) and the operators'
 * equality, each as @huggingface/jinja 0.5 has it (its src/runtime.ts,
 * src/utils.ts), including where it differs from Python's Jinja: strip,
 * lstrip and rstrip ignore their argument and remove white space;
 * true writes "true". Outside the subset (refused when parsing): filters,
 * tests and methods not listed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "template/names.h"
#include "template/tmpl.h"

static _Noreturn void refuse(tstate *s, const node *n, const char *what, tval v)
{
    ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "%s on a %s (the reference refuses it too)", what,
                      ngpt_tmpl_type_name(v));
}

/* ------------------------------------------------------------ strings */

static bool is_map(tval v) { return v.kind == TV_MAP || v.kind == TV_KWARGS; }
static bool is_list(tval v) { return v.kind == TV_LIST || v.kind == TV_TUPLE; }

static tstr trim(tstr s, bool start, bool end)
{
    size_t a = 0, b = s.n, k;
    while (start && a < b && (k = ngpt_tmpl_js_space(s.p + a, b - a))) a += k;
    while (end && b > a) {
        size_t c = b;
        while (c > a && ((uint8_t)s.p[c - 1] & 0xC0) == 0x80) c--;
        if (c <= a || !ngpt_tmpl_js_space(s.p + c - 1, b - c + 1)) break;
        b = c - 1;
    }
    return ngpt_tmpl_str_sub(s, a, b);
}

/* String.length: UTF-16 code units. */
static size_t utf16_length(tstr s)
{
    size_t n = 0;
    for (size_t i = 0, len; i < s.n; i += len) {
        ngpt_tmpl_utf8_next(s.p + i, s.n - i, &len);
        n += len == 4 ? 2 : 1;
    }
    return n;
}

static tval ascii_case(tstate *s, const node *n, tstr str, bool upper)
{
    char *p = ngpt_tmpl_alloc(&s->a, str.n + 1);
    for (size_t i = 0; i < str.n; i++) {
        const char c = str.p[i];
        if ((uint8_t)c >= 0x80)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "%s of non-ASCII text is outside "
                              "ngpt's Jinja subset", upper ? "upper" : "lower");
        p[i] = upper && c >= 'a' && c <= 'z'    ? (char)(c - 32)
               : !upper && c >= 'A' && c <= 'Z' ? (char)(c + 32)
                                                : c;
    }
    return ngpt_tmpl_val_str((tstr){p, str.taint, str.n});
}

static bool starts(tstr s, tstr p) { return p.n <= s.n && !memcmp(s.p, p.p, p.n); }
static bool ends(tstr s, tstr p) { return p.n <= s.n && !memcmp(s.p + s.n - p.n, p.p, p.n); }

static tval starts_or_ends(tstate *s, const node *n, tstr str, tval *args, size_t k, bool end)
{
    if (!k)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "%s() needs an argument",
                          end ? "endswith" : "startswith");
    if (args[0].kind == TV_STR)
        return ngpt_tmpl_val_bool(end ? ends(str, args[0].u.s) : starts(str, args[0].u.s));
    if (!is_list(args[0])) refuse(s, n, "startswith/endswith of something", args[0]);
    for (size_t i = 0; i < args[0].u.l->n; i++) {
        const tval p = args[0].u.l->v[i];
        if (p.kind != TV_STR) refuse(s, n, "startswith/endswith of a list holding", p);
        if (end ? ends(str, p.u.s) : starts(str, p.u.s)) return ngpt_tmpl_val_bool(true);
    }
    return ngpt_tmpl_val_bool(false);
}

static size_t find_in(tstr s, size_t from, tstr needle)
{
    for (size_t i = from; i + needle.n <= s.n; i++)
        if (!memcmp(s.p + i, needle.p, needle.n)) return i;
    return SIZE_MAX;
}

static tval list_of(tstate *s, const tstr *parts, size_t n)
{
    tval v = ngpt_tmpl_val_list(&s->a, TV_LIST, n);
    for (size_t i = 0; i < n; i++) v.u.l->v[i] = ngpt_tmpl_val_str(parts[i]);
    return v;
}

/* Python's str.split as the reference writes it. */
static tval split(tstate *s, const node *n, tstr str, tval *args, size_t k)
{
    const tval sep = k > 0 ? args[0] : (tval){.kind = TV_NULL};
    const tval max = k > 1 ? args[1] : ngpt_tmpl_val_num(TV_INT, -1);
    if (sep.kind != TV_STR && sep.kind != TV_NULL) refuse(s, n, "split with a separator", sep);
    if (max.kind != TV_INT) refuse(s, n, "split with a maximum", max);
    tstr *parts = ngpt_tmpl_alloc(&s->a, (str.n + 2) * sizeof *parts);
    size_t np = 0;
    if (sep.kind == TV_NULL) {
        const tstr text = trim(str, true, false);
        for (size_t i = 0, k2; i < text.n;) {
            if ((k2 = ngpt_tmpl_js_space(text.p + i, text.n - i))) {
                i += k2;
                continue;
            }
            size_t j = i;
            while (j < text.n && !ngpt_tmpl_js_space(text.p + j, text.n - j)) {
                ngpt_tmpl_utf8_next(text.p + j, text.n - j, &k2);
                j += k2;
            }
            if (max.u.num != -1 && (double)np >= max.u.num) {
                parts[np++] = ngpt_tmpl_str_sub(text, i, text.n);
                break;
            }
            parts[np++] = ngpt_tmpl_str_sub(text, i, j);
            i = j;
        }
        return list_of(s, parts, np);
    }
    const tstr sp = sep.u.s;
    if (!sp.n) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "split with an empty separator");
    size_t *at = ngpt_tmpl_alloc(&s->a, (str.n + 2) * sizeof *at);     /* where each part starts */
    for (size_t i = 0, hit;; i = hit + sp.n) {
        at[np] = i;
        hit = find_in(str, i, sp);
        parts[np++] = ngpt_tmpl_str_sub(str, i, hit == SIZE_MAX ? str.n : hit);
        if (hit == SIZE_MAX) break;
    }
    if (max.u.num != -1 && (double)np > max.u.num) {    /* the rest as one part */
        const double keep = max.u.num < 0 ? fmax((double)np + max.u.num, 0) : max.u.num;
        const size_t k3 = (size_t)keep;
        parts[k3] = ngpt_tmpl_str_sub(str, at[k3], str.n);
        np = k3 + 1;
    }
    return list_of(s, parts, np);
}

static tval replace(tstate *s, const node *n, tstr str, tval *args, size_t k)
{
    if (k < 2) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "replace() needs two arguments");
    if (args[0].kind != TV_STR || args[1].kind != TV_STR)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "replace()'s arguments must be strings");
    tval count = {.kind = TV_NULL};
    if (k > 2) {
        count = args[2];
        if (count.kind == TV_KWARGS) {
            const tval *c = ngpt_tmpl_map_get(count.u.m, TSTR("count"));
            count = c ? *c : (tval){.kind = TV_NULL};
        }
    }
    if (count.kind != TV_INT && count.kind != TV_NULL) refuse(s, n, "replace with a count", count);
    const tstr old = args[0].u.s, with = args[1].u.s;
    if (count.kind == TV_INT && count.u.num == 0) return ngpt_tmpl_val_str(str);
    double left = count.kind == TV_NULL || count.u.num < 0 ? INFINITY : count.u.num;
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    size_t i = 0;
    if (!old.n) {           /* before every code point, and at the end */
        for (size_t len; left > 0; left--) {
            ngpt_tmpl_buf_put(&out, with);
            if (i >= str.n) break;
            ngpt_tmpl_utf8_next(str.p + i, str.n - i, &len);
            ngpt_tmpl_buf_put(&out, ngpt_tmpl_str_sub(str, i, i + len));
            i += len;
        }
    } else {
        for (size_t hit; left > 0 && (hit = find_in(str, i, old)) != SIZE_MAX; left--) {
            ngpt_tmpl_buf_put(&out, ngpt_tmpl_str_sub(str, i, hit));
            ngpt_tmpl_buf_put(&out, with);
            i = hit + old.n;
        }
    }
    ngpt_tmpl_buf_put(&out, ngpt_tmpl_str_sub(str, i, str.n));
    return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
}

/* ------------------------------------------------------------ mappings */

static tval items(tstate *s, const tmap *m)
{
    tval v = ngpt_tmpl_val_list(&s->a, TV_LIST, m->n);
    for (size_t i = 0; i < m->n; i++) {
        tval pair = ngpt_tmpl_val_list(&s->a, TV_LIST, 2);
        pair.u.l->v[0] = ngpt_tmpl_val_str(m->k[i]), pair.u.l->v[1] = m->v[i];
        v.u.l->v[i] = pair;
    }
    return v;
}

static tval keys_or_values(tstate *s, const tmap *m, bool keys)
{
    tval v = ngpt_tmpl_val_list(&s->a, TV_LIST, m->n);
    for (size_t i = 0; i < m->n; i++) v.u.l->v[i] = keys ? ngpt_tmpl_val_str(m->k[i]) : m->v[i];
    return v;
}

static tval bound(tstate *s, int id, tval self)
{
    tval f = {.kind = TV_FUNC};
    f.u.f = ngpt_tmpl_alloc(&s->a, sizeof *f.u.f);
    f.u.f->id = id, f.u.f->self = self;
    return f;
}

/* s[i]: the UTF-16 code unit at i (negative from the end); half of a
 * surrogate pair reads as U+FFFD, as JavaScript's string would print. */
static tval char_at(tstate *s, const node *at, tstr str, double i)
{
    const double n = (double)utf16_length(str);
    if (i < 0) i += n;
    if (!(i >= 0 && i < n))     /* 0.5.10 makes a string of JavaScript's undefined */
        ngpt_tmpl_fail_at(s, at, NGPT_ERR_UNSUPPORTED, "an index past a string's end is "
                          "outside ngpt's Jinja subset");
    double unit = 0;
    for (size_t at = 0, len; at < str.n; at += len) {
        ngpt_tmpl_utf8_next(str.p + at, str.n - at, &len);
        const double units = len == 4 ? 2 : 1;
        if (i < unit + units)
            return ngpt_tmpl_val_str(
                len == 4 ? ngpt_tmpl_str_copy(&s->a, "\xEF\xBF\xBD", 3, str.taint && str.taint[at])
                         : ngpt_tmpl_str_sub(str, at, at + len));
        unit += units;
    }
    return (tval){.kind = TV_UNDEF};
}

tval ngpt_tmpl_member(tstate *s, const node *n, tval obj, tval key)
{
    if (is_map(obj) || obj.kind == TV_NS) {
        if (key.kind != TV_STR)
            refuse(s, n, "a member of a mapping by a key that is not a string", key);
        const tval *v = ngpt_tmpl_map_get(obj.u.m, key.u.s);
        if (v) return *v;
        const int m = obj.kind == TV_NS ? -1
                                        : ngpt_tmpl_name_find(key.u.s, ngpt_tmpl_method_names,
                                                              M_GET, M_DICTSORT + 1);
        return m >= 0 ? bound(s, m, obj) : (tval){.kind = TV_UNDEF};
    }
    if (is_list(obj) || obj.kind == TV_STR) {
        if (key.kind == TV_INT) {
            double i = isnan(key.u.num) ? 0 : trunc(key.u.num);     /* ToIntegerOrInfinity */
            if (obj.kind == TV_STR) return char_at(s, n, obj.u.s, i);
            if (i < 0) i += (double)obj.u.l->n;
            return i >= 0 && i < (double)obj.u.l->n ? obj.u.l->v[(size_t)i] : (tval){.kind = TV_UNDEF};
        }
        if (key.kind != TV_STR) refuse(s, n, "a member of a list or string by a key", key);
        if (ngpt_tmpl_str_is(key.u.s, "length"))
            return ngpt_tmpl_val_num(
                TV_INT, (double)(obj.kind == TV_STR ? utf16_length(obj.u.s) : obj.u.l->n));
        const int m = obj.kind == TV_STR ? ngpt_tmpl_name_find(key.u.s, ngpt_tmpl_method_names,
                                                               M_UPPER, M_CAPITALIZE + 1)
                                         : -1;
        return m >= 0 ? bound(s, m, obj) : (tval){.kind = TV_UNDEF};
    }
    if (key.kind != TV_STR) refuse(s, n, "a member by a key that is not a string", key);
    return (tval){.kind = TV_UNDEF};
}

/* ------------------------------------------------------------ globals */

static tval namespace(tstate *s, const node *n, tval *args, size_t k)
{
    tval ns = ngpt_tmpl_val_map(&s->a, TV_NS);
    tmap *kw = k && args[k - 1].kind == TV_KWARGS ? args[--k].u.m : NULL;
    if (k > 1) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "namespace() takes at most 1 argument");
    if (k == 1 && is_map(args[0])) {
        for (size_t i = 0; i < args[0].u.m->n; i++)
            ngpt_tmpl_map_set(&s->a, ns.u.m, args[0].u.m->k[i], args[0].u.m->v[i]);
    } else if (k == 1 && is_list(args[0])) {
        for (size_t i = 0; i < args[0].u.l->n; i++) {
            const tval pair = args[0].u.l->v[i];
            if (!is_list(pair) || pair.u.l->n != 2 || pair.u.l->v[0].kind != TV_STR)
                ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "namespace() of a list other than "
                         "[key, value] pairs is outside ngpt's Jinja subset");
            ngpt_tmpl_map_set(&s->a, ns.u.m, pair.u.l->v[0].u.s, pair.u.l->v[1]);
        }
    } else if (k == 1) {
        refuse(s, n, "namespace()", args[0]);
    }
    for (size_t i = 0; kw && i < kw->n; i++) ngpt_tmpl_map_set(&s->a, ns.u.m, kw->k[i], kw->v[i]);
    return ns;
}

static tval range(tstate *s, const node *n, tval *args, size_t k)
{
    double a[3] = {0, 0, 1};
    if (k < 1 || k > 3) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "range() takes 1 to 3 numbers");
    for (size_t i = 0; i < k; i++)
        if (args[i].kind != TV_INT && args[i].kind != TV_FLOAT) refuse(s, n, "range() of", args[i]);
    if (k == 1) a[1] = args[0].u.num;
    else a[0] = args[0].u.num, a[1] = args[1].u.num;
    if (k == 3) a[2] = args[2].u.num;
    if (a[2] == 0) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "range() step must not be zero");
    double count = ceil((a[1] - a[0]) / a[2]);
    if (!(count > 0)) count = 0;
    if (count > TMPL_RANGE_MAX)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "range() of more than %d numbers",
                          TMPL_RANGE_MAX);
    tval v = ngpt_tmpl_val_list(&s->a, TV_LIST, (size_t)count);
    size_t m = 0;
    for (double x = a[0]; (a[2] > 0 ? x < a[1] : x > a[1]) && m < (size_t)count; x += a[2])
        v.u.l->v[m++] = ngpt_tmpl_val_num(x == floor(x) ? TV_INT : TV_FLOAT, x);
    v.u.l->n = m;
    return v;
}

static tval strftime_now(tstate *s, const node *n, tval *args, size_t k)
{
    static const char *const month[12] = {"January", "February", "March", "April", "May", "June",
                                          "July", "August", "September", "October", "November",
                                          "December"};
    if (!k || args[0].kind != TV_STR)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "strftime_now() needs a format string");
    const time_t t = s->now ? (time_t)s->now : time(NULL);
    struct tm tm;
    if (!(s->now ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "strftime_now(): the time %lld has no date",
                          (long long)s->now);
    const tstr f = args[0].u.s;
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    for (size_t i = 0; i < f.n; i++) {
        char buf[32];
        const char c = i + 1 < f.n && f.p[i] == '%' ? f.p[i + 1] : 0;
        int len = -1;
        switch (c) {
        case 'Y': len = snprintf(buf, sizeof buf, "%d", tm.tm_year + 1900); break;
        case 'm': len = snprintf(buf, sizeof buf, "%02d", tm.tm_mon + 1); break;
        case 'd': len = snprintf(buf, sizeof buf, "%02d", tm.tm_mday); break;
        case 'b': len = snprintf(buf, sizeof buf, "%.3s", month[tm.tm_mon]); break;
        case 'B': len = snprintf(buf, sizeof buf, "%s", month[tm.tm_mon]); break;
        case 'H': len = snprintf(buf, sizeof buf, "%02d", tm.tm_hour); break;
        case 'M': len = snprintf(buf, sizeof buf, "%02d", tm.tm_min); break;
        case '%': len = snprintf(buf, sizeof buf, "%%"); break;
        }
        if (len < 0) {
            ngpt_tmpl_buf_put(&out, ngpt_tmpl_str_sub(f, i, i + 1));
            continue;
        }
        ngpt_tmpl_buf_lit(&out, buf, (size_t)len);
        i++;
    }
    return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
}

static _Noreturn void raise(tstate *s, const node *n, tval *args, size_t k)
{
    const tstr msg = k && args[0].kind == TV_STR ? args[0].u.s : TSTR("(no message)");
    ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "the template refused the conversation: %.*s",
             (int)(msg.n > 300 ? 300 : msg.n), msg.p);
}

void ngpt_tmpl_globals(tstate *s, tenv *g)
{
    static const struct { const char *name; int id; } fns[] = {
        {"namespace", G_NAMESPACE}, {"raise_exception", G_RAISE}, {"range", G_RANGE},
        {"strftime_now", G_STRFTIME}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    {
        const tstr name = {fns[i].name, NULL, strlen(fns[i].name)};
        ngpt_tmpl_env_set(s, g, name, ngpt_tmpl_str_hash(name),
                          bound(s, fns[i].id, (tval){.kind = TV_UNDEF}));
    }
    static const char *const constants[] = {"false", "true", "none", "False", "True", "None"};
    for (size_t i = 0; i < 6; i++) {
        const tstr name = {constants[i], NULL, strlen(constants[i])};
        ngpt_tmpl_env_set(s, g, name, ngpt_tmpl_str_hash(name),
                          i % 3 == 2 ? (tval){.kind = TV_NULL} : ngpt_tmpl_val_bool(i % 3 == 1));
    }
}

tval ngpt_tmpl_call(tstate *s, const node *n, tval fn, tval *args, size_t k)
{
    if (fn.kind != TV_FUNC) refuse(s, n, "a call", fn);
    const tfunc *f = fn.u.f;
    const tstr self = f->self.kind == TV_STR ? f->self.u.s : TSTR("");
    switch (f->id) {
    case M_UPPER: return ascii_case(s, n, self, true);
    case M_LOWER: return ascii_case(s, n, self, false);
    case M_STRIP: return ngpt_tmpl_val_str(trim(self, true, true));
    case M_LSTRIP: return ngpt_tmpl_val_str(trim(self, true, false));
    case M_RSTRIP: return ngpt_tmpl_val_str(trim(self, false, true));
    case M_STARTSWITH: return starts_or_ends(s, n, self, args, k, false);
    case M_ENDSWITH: return starts_or_ends(s, n, self, args, k, true);
    case M_SPLIT: return split(s, n, self, args, k);
    case M_REPLACE: return replace(s, n, self, args, k);
    case M_GET: {
        if (!k || args[0].kind != TV_STR)
            refuse(s, n, "get() by a key", k ? args[0] : (tval){.kind = TV_UNDEF});
        const tval *v = ngpt_tmpl_map_get(f->self.u.m, args[0].u.s);
        return v ? *v : k > 1 ? args[1] : (tval){.kind = TV_NULL};
    }
    case M_ITEMS: return items(s, f->self.u.m);
    case M_KEYS: return keys_or_values(s, f->self.u.m, true);
    case M_VALUES: return keys_or_values(s, f->self.u.m, false);
    case G_NAMESPACE: return namespace(s, n, args, k);
    case G_RAISE: raise(s, n, args, k);
    case G_RANGE: return range(s, n, args, k);
    case G_STRFTIME: return strftime_now(s, n, args, k);
    default:
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "the method %s() is outside ngpt's Jinja subset",
                 ngpt_tmpl_method_names[f->id]);
    }
}

/* ------------------------------------------------------------ filters */

/* Array.prototype.join of the values' JavaScript strings (none and
 * undefined: empty). */
static tval join(tstate *s, const node *n, const tlist *l, tstr sep)
{
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    for (size_t i = 0; i < l->n; i++) {
        if (i) ngpt_tmpl_buf_put(&out, sep);
        if (l->v[i].kind != TV_NULL && l->v[i].kind != TV_UNDEF)
            ngpt_tmpl_buf_put(&out, ngpt_tmpl_raw_string(s, n, l->v[i]));
    }
    return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
}

static tval code_points(tstate *s, tstr str)
{
    size_t n = 0;
    for (size_t i = 0, len; i < str.n; i += len, n++) ngpt_tmpl_utf8_next(str.p + i, str.n - i, &len);
    tval v = ngpt_tmpl_val_list(&s->a, TV_LIST, n);
    for (size_t i = 0, len, k = 0; i < str.n; i += len, k++) {
        ngpt_tmpl_utf8_next(str.p + i, str.n - i, &len);
        v.u.l->v[k] = ngpt_tmpl_val_str(ngpt_tmpl_str_sub(str, i, i + len));
    }
    return v;
}

static _Noreturn void not_json(tstate *s, const node *n, tval v)
{
    ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED,
                      "a %s that is or holds a tuple or a function cannot be "
                      "written as JSON (the reference refuses it too)",
                      ngpt_tmpl_type_name(v));
}

static tval to_json(tstate *s, const node *n, tval v, tmap *kw)
{
    tjson o = {.null_undefined = true};
    const tval *indent = kw ? ngpt_tmpl_map_get(kw, TSTR("indent")) : NULL;
    const tval *ascii = kw ? ngpt_tmpl_map_get(kw, TSTR("ensure_ascii")) : NULL;
    const tval *sort = kw ? ngpt_tmpl_map_get(kw, TSTR("sort_keys")) : NULL;
    const tval *seps = kw ? ngpt_tmpl_map_get(kw, TSTR("separators")) : NULL;
    if (indent && indent->kind != TV_NULL) {
        if (indent->kind != TV_INT || indent->u.num < 0 || indent->u.num > 64)
            refuse(s, n, "tojson's indent (0..64)", *indent);
        o.indent = (int)indent->u.num;
    }
    if (ascii && ascii->kind != TV_BOOL) refuse(s, n, "tojson's ensure_ascii", *ascii);
    o.ascii = ascii && ascii->u.b;
    if (sort && sort->kind != TV_BOOL) refuse(s, n, "tojson's sort_keys", *sort);
    if (sort && sort->u.b)
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "tojson(sort_keys=true) is outside ngpt's Jinja "
                 "subset (the reference sorts by the locale)");
    if (seps && seps->kind != TV_NULL) {
        if (!is_list(*seps) || seps->u.l->n != 2 || seps->u.l->v[0].kind != TV_STR ||
            seps->u.l->v[1].kind != TV_STR)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "tojson's separators must be two strings");
        o.item_sep = seps->u.l->v[0].u.s, o.key_sep = seps->u.l->v[1].u.s;
    }
    tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    if (!ngpt_tmpl_json(&out, v, &o, 0)) not_json(s, n, v);
    return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
}

static _Noreturn void no_filter(tstate *s, const node *n, tval v)
{
    ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "the filter %.*s%s does not apply to a %s (the reference "
             "refuses it too)", (int)n->s.n, n->s.p, n->flag ? "()" : "", ngpt_tmpl_type_name(v));
}

/* The filters written with arguments: name(...) */
static tval called_filter(tstate *s, const node *n, tval v, tval *args, size_t k, tmap *kw)
{
    switch (n->op) {
    case F_TOJSON: return to_json(s, n, v, kw);
    case F_JOIN: {
        const tval sep = k ? args[0]
                         : ngpt_tmpl_map_get(kw, TSTR("separator"))
                             ? *ngpt_tmpl_map_get(kw, TSTR("separator"))
                             : ngpt_tmpl_val_str(TSTR(""));
        if (v.kind != TV_STR && !is_list(v)) no_filter(s, n, v);
        if (sep.kind != TV_STR) refuse(s, n, "join with a separator", sep);
        return join(s, n, (v.kind == TV_STR ? code_points(s, v.u.s) : v).u.l, sep.u.s);
    }
    case F_DEFAULT: {
        const tval d = k ? args[0] : ngpt_tmpl_val_str(TSTR(""));
        const tval *b = k > 1 ? &args[1] : ngpt_tmpl_map_get(kw, TSTR("boolean"));
        if (b && b->kind != TV_BOOL) refuse(s, n, "default's boolean flag", *b);
        return v.kind == TV_UNDEF || (b && b->u.b && !ngpt_tmpl_truthy(v)) ? d : v;
    }
    case F_INT:
    case F_FLOAT:
        if (v.kind == TV_INT || v.kind == TV_FLOAT) return v;
        if (v.kind == TV_BOOL) return ngpt_tmpl_val_num(n->op == F_INT ? TV_INT : TV_FLOAT, v.u.b);
        if (v.kind == TV_STR)
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED,
                              "int/float of a string is outside ngpt's Jinja subset");
        no_filter(s, n, v);
    case F_REPLACE: {
        if (v.kind != TV_STR) no_filter(s, n, v);
        tval *all = ngpt_tmpl_alloc(&s->a, (k + 1) * sizeof *all);
        if (k) memcpy(all, args, k * sizeof *all);
        all[k].kind = TV_KWARGS, all[k].u.m = kw;
        return replace(s, n, v.u.s, all, k + 1);
    }
    case F_ITEMS:
        if (is_map(v)) return items(s, v.u.m);
        no_filter(s, n, v);
    default: no_filter(s, n, v);
    }
}

tval ngpt_tmpl_filter(tstate *s, const node *n, tval v, tval *args, size_t k, tmap *kw)
{
    if (n->flag) return called_filter(s, n, v, args, k, kw);
    if (n->op == F_SAFE) return v;
    if (n->op == F_TOJSON) return to_json(s, n, v, NULL);
    if (is_list(v)) {
        switch (n->op) {
        case F_LIST: return v;
        case F_FIRST:
        case F_LAST:
            if (!v.u.l->n) ngpt_tmpl_fail_at(s, n, NGPT_ERR_BAD_ARG, "first or last of an empty list");
            return v.u.l->v[n->op == F_FIRST ? 0 : v.u.l->n - 1];
        case F_LENGTH: return ngpt_tmpl_val_num(TV_INT, (double)v.u.l->n);
        case F_REVERSE: {
            tval r = ngpt_tmpl_val_list(&s->a, TV_LIST, v.u.l->n);
            for (size_t i = 0; i < v.u.l->n; i++) r.u.l->v[i] = v.u.l->v[v.u.l->n - 1 - i];
            return r;
        }
        case F_JOIN: return join(s, n, v.u.l, TSTR(""));
        case F_STRING: {
            const tjson o = {0};
            tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
            if (!ngpt_tmpl_json(&out, v, &o, 0)) not_json(s, n, v);
            return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
        }
        }
    } else if (v.kind == TV_STR) {
        switch (n->op) {
        case F_LENGTH: return ngpt_tmpl_val_num(TV_INT, (double)utf16_length(v.u.s));
        case F_UPPER:
        case F_LOWER: return ascii_case(s, n, v.u.s, n->op == F_UPPER);
        case F_TRIM: return ngpt_tmpl_val_str(trim(v.u.s, true, true));
        case F_JOIN:
        case F_STRING: return v;
        case F_INT:
        case F_FLOAT:
            ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED,
                              "int/float of a string is outside ngpt's Jinja subset");
        }
    } else if (v.kind == TV_INT || v.kind == TV_FLOAT) {
        switch (n->op) {
        case F_ABS: return ngpt_tmpl_val_num(v.kind, fabs(v.u.num));
        case F_INT: return ngpt_tmpl_val_num(TV_INT, floor(v.u.num));
        case F_FLOAT: return ngpt_tmpl_val_num(TV_FLOAT, v.u.num);
        case F_STRING: {
            tbuf out = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
            ngpt_tmpl_write(s, n, &out, v);
            return ngpt_tmpl_val_str(ngpt_tmpl_buf_str(&out));
        }
        }
    } else if (is_map(v)) {
        if (n->op == F_ITEMS) return items(s, v.u.m);
        if (n->op == F_LENGTH) return ngpt_tmpl_val_num(TV_INT, (double)v.u.m->n);
    } else if (v.kind == TV_BOOL) {
        switch (n->op) {
        case F_BOOL: return v;
        case F_INT: return ngpt_tmpl_val_num(TV_INT, v.u.b);
        case F_FLOAT: return ngpt_tmpl_val_num(TV_FLOAT, v.u.b);
        case F_STRING: return ngpt_tmpl_val_str(v.u.b ? TSTR("true") : TSTR("false"));
        }
    }
    no_filter(s, n, v);
}

/* ------------------------------------------------------------ tests */

bool ngpt_tmpl_test(tstate *s, const node *n, tval v)
{
    switch (n->op) {
    case T_BOOLEAN: return v.kind == TV_BOOL;
    case T_CALLABLE: return v.kind == TV_FUNC;
    case T_ODD:
    case T_EVEN:
        if (v.kind != TV_INT) refuse(s, n, "odd/even", v);
        return (fmod(v.u.num, 2) != 0) == (n->op == T_ODD);
    case T_FALSE: return v.kind == TV_BOOL && !v.u.b;
    case T_TRUE: return v.kind == TV_BOOL && v.u.b;
    case T_NONE: return v.kind == TV_NULL;
    case T_STRING: return v.kind == TV_STR;
    case T_NUMBER: return v.kind == TV_INT || v.kind == TV_FLOAT;
    case T_INTEGER: return v.kind == TV_INT;
    case T_ITERABLE:
        return v.kind == TV_LIST || v.kind == TV_STR; /* not a tuple: as the reference */
    case T_MAPPING: return is_map(v);
    case T_SEQUENCE: return is_list(v) || is_map(v) || v.kind == TV_STR;
    case T_DEFINED: return v.kind != TV_UNDEF;
    default: return v.kind == TV_UNDEF;
    }
}

/* ------------------------------------------------------------ equality */

static bool is_object(tval v) { return v.kind >= TV_LIST; }
static bool nullish(tval v) { return v.kind == TV_UNDEF || v.kind == TV_NULL; }

static const void *identity(tval v)
{
    return v.kind == TV_LIST || v.kind == TV_TUPLE ? (const void *)v.u.l
         : v.kind == TV_FUNC ? (const void *)v.u.f : (const void *)v.u.m;
}

static double primitive_number(tval v)
{
    return v.kind == TV_BOOL  ? (double)v.u.b
           : v.kind == TV_STR ? ngpt_tmpl_js_to_number(v.u.s)
                              : v.u.num;
}

bool ngpt_tmpl_loose_eq(tstate *s, const node *n, tval a, tval b)
{
    if (nullish(a) || nullish(b)) return nullish(a) && nullish(b);
    if (is_object(a) || is_object(b)) {
        if (is_object(a) && is_object(b)) return identity(a) == identity(b);
        ngpt_tmpl_fail_at(s, n, NGPT_ERR_UNSUPPORTED, "comparing a %s with a %s is outside "
                          "ngpt's Jinja subset",
                          ngpt_tmpl_type_name(a), ngpt_tmpl_type_name(b));
    }
    if (a.kind == TV_STR && b.kind == TV_STR) return ngpt_tmpl_str_eq(a.u.s, b.u.s);
    return primitive_number(a) == primitive_number(b);
}

bool ngpt_tmpl_strict_eq(tval a, tval b)
{
    const bool na = a.kind == TV_INT || a.kind == TV_FLOAT, nb = b.kind == TV_INT || b.kind == TV_FLOAT;
    if (na || nb) return na && nb && a.u.num == b.u.num;
    if (a.kind != b.kind) return is_object(a) && is_object(b) && identity(a) == identity(b);
    switch (a.kind) {
    case TV_UNDEF:
    case TV_NULL: return true;
    case TV_BOOL: return a.u.b == b.u.b;
    case TV_STR: return ngpt_tmpl_str_eq(a.u.s, b.u.s);
    default: return identity(a) == identity(b);
    }
}
