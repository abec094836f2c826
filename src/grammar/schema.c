/* schema.c — JSON Schema to GBNF (schema.h). A schema becomes one GBNF
 * expression of compact JSON text, written inline where it is used; a
 * $ref target becomes a rule of its own (so references may recurse), as do
 * the shared pieces (a string's characters, any JSON value). The keywords
 * and policies are docs/GENERATION.md's ("JSON Schema"); every other
 * keyword is an error naming it and where it is. */
#include <cjson/cJSON.h>
#include <math.h>

#include "grammar/pattern.h"
#include "grammar/schema.h"

/* Rules written once, on first use (bits of conv.need). */
enum { NEED_STRING = 1, NEED_NUMBER = 2, NEED_INTEGER = 4, NEED_VALUE = 8 };

/* One JSON character of a string: a raw character, or an escape of one
 * code point (\u of a surrogate is left out, so every character is one
 * code point: lengths count code points). */
static const char JCHAR[] =
    "([^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" ([0-9a-cA-C] [0-9a-fA-F]{3} | "
    "[dD] [0-7] [0-9a-fA-F]{2} | [eEfF] [0-9a-fA-F]{3})))";

typedef struct conv {
    const cJSON *doc;
    ngpt_text out;              /* the rules */
    unsigned need;
    char **ref_ptr;             /* the $refs met, their rules ref-<i> */
    int32_t n_ref, done_ref;
    int32_t depth;
    ngpt_status st;
} conv;

/* ------------------------------------------------------------ messages */

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static bool fail(conv *c, ngpt_status status, const char *path, const char *fmt, ...)
{
    if (c->st) return false;
    char msg[400], at[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(at, sizeof at, "%s", path[0] ? path : "the root");
    ngpt_text_one_line(msg);    /* names from the schema may hold newlines */
    ngpt_text_one_line(at);
    c->st = ngpt_fail(status, "at %s: %s", at, msg);
    return false;
}

/* path + "/" + key, as a JSON pointer, into buf. */
static const char *sub(char *buf, size_t size, const char *path, const char *key)
{
    size_t a = strlen(path), b = strlen(key);
    if (a > size - 2) a = size - 2;
    if (b > size - 2 - a) b = size - 2 - a;     /* long paths are cut */
    memmove(buf, path, a);
    buf[a] = '/';
    memcpy(buf + a + 1, key, b);
    buf[a + 1 + b] = '\0';
    return buf;
}

/* ----------------------------------------------------------- literals */

/* A JSON value's compact text as a GBNF literal. */
static bool value_literal(conv *c, const cJSON *v, const char *path, ngpt_text *t)
{
    if (cJSON_IsNumber(v) && fabs(v->valuedouble) > 9007199254740992.0 &&
        v->valuedouble == floor(v->valuedouble))
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "the number %.17g is past 2^53, where "
                    "ngpt cannot write it exactly", v->valuedouble);
    char *j = cJSON_PrintUnformatted(v);
    if (!j) {
        t->oom = true;
        return false;
    }
    ngpt_text_literal(t, j, strlen(j));
    free(j);
    return true;
}

/* -------------------------------------------------------------- numbers */

/* Integers from lo to hi (0 <= lo <= hi) of one digit count: GBNF
 * alternatives of digit classes, the classic split. */
static void digits_range(ngpt_text *t, const char *a, const char *b, size_t n)
{
    if (n == 0) return;
    if (n == 1) {
        if (a[0] == b[0]) ngpt_text_printf(t, "\"%c\"", a[0]);
        else ngpt_text_printf(t, "[%c-%c]", a[0], b[0]);
        return;
    }
    if (a[0] == b[0]) {
        ngpt_text_printf(t, "\"%c\" (", a[0]);
        digits_range(t, a + 1, b + 1, n - 1);
        ngpt_text_str(t, ")");
        return;
    }
    bool a_low = true, b_high = true;   /* a's rest all 0, b's all 9 */
    for (size_t i = 1; i < n; i++) a_low &= a[i] == '0', b_high &= b[i] == '9';
    char nines[32], zeros[32];
    memset(nines, '9', n), memset(zeros, '0', n);
    ngpt_text_str(t, "(");
    char lo = a[0], hi = b[0];
    if (!a_low) {
        ngpt_text_printf(t, "\"%c\" (", a[0]);
        digits_range(t, a + 1, nines, n - 1);
        ngpt_text_str(t, ") | ");
        lo++;
    }
    if (!b_high) hi--;
    if (lo <= hi) ngpt_text_printf(t, "[%c-%c] [0-9]{%zu} | ", lo, hi, n - 1);
    if (!b_high) {
        ngpt_text_printf(t, "\"%c\" (", b[0]);
        digits_range(t, zeros, b + 1, n - 1);
        ngpt_text_str(t, ") | ");
    }
    t->n -= 3;      /* the last " | " */
    t->s[t->n] = '\0';
    ngpt_text_str(t, ")");
}

/* Integers lo..hi, 0 <= lo <= hi, in decimal without leading zeros. */
static void uint_range(ngpt_text *t, uint64_t lo, uint64_t hi)
{
    ngpt_text_str(t, "(");
    bool first = true;
    for (uint64_t p = 1, len = 1; lo <= hi && len <= 20; len++) {
        const uint64_t top = len == 20 ? UINT64_MAX : p * 10 - 1;     /* len digits: p..top */
        if (lo <= top) {
            const uint64_t b = hi < top ? hi : top;
            char sa[32], sb[32];
            snprintf(sa, sizeof sa, "%llu", (unsigned long long)lo);
            snprintf(sb, sizeof sb, "%llu", (unsigned long long)b);
            if (!first) ngpt_text_str(t, " | ");
            digits_range(t, sa, sb, strlen(sa));
            first = false;
            if (b == hi) break;
            lo = b + 1;
        }
        if (len < 20) p *= 10;
    }
    ngpt_text_str(t, ")");
}

/* An integer bound of key (minimum, maximum, exclusive ones) into *v:
 * false when absent; a bound past int64 or not a number is an error. */
static bool int_bound(conv *c, const cJSON *s, const char *key, const char *path, bool upper,
                      int64_t *v)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(s, key);
    if (!b) return false;
    char p[512];
    if (!cJSON_IsNumber(b) || !(fabs(b->valuedouble) < 9.2e18))
        return fail(c, NGPT_ERR_BAD_FORMAT, sub(p, sizeof p, path, key), "%s must be a number "
                    "within 64-bit integers", key);
    double x = upper ? floor(b->valuedouble) : ceil(b->valuedouble);
    *v = (int64_t)x;
    if (!strncmp(key, "exclusive", 9) && x == b->valuedouble) *v += upper ? -1 : 1;
    return true;
}

/* An integer, in [minimum, maximum] when given (each at most 16 digits
 * otherwise: a model cannot write digits forever). */
static bool integer_expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    int64_t lo = -9999999999999999LL, hi = 9999999999999999LL, v;
    bool bounded = false;
    if (int_bound(c, s, "minimum", path, false, &v)) lo = v > lo ? v : lo, bounded = true;
    if (int_bound(c, s, "exclusiveMinimum", path, false, &v)) lo = v > lo ? v : lo, bounded = true;
    if (int_bound(c, s, "maximum", path, true, &v)) hi = v < hi ? v : hi, bounded = true;
    if (int_bound(c, s, "exclusiveMaximum", path, true, &v)) hi = v < hi ? v : hi, bounded = true;
    if (c->st) return false;
    if (!bounded) {
        c->need |= NEED_INTEGER;
        ngpt_text_str(t, "integer");
        return true;
    }
    if (lo > hi) return fail(c, NGPT_ERR_UNSUPPORTED, path, "no integer lies between the "
                             "minimum and the maximum");
    ngpt_text_str(t, "(");
    if (lo < 0) {   /* -1 .. -lo, written after a "-" */
        ngpt_text_str(t, "\"-\" ");
        uint_range(t, hi < 0 ? (uint64_t)(-hi) : 1, (uint64_t)(-lo));
        if (hi >= 0) ngpt_text_str(t, " | ");
    }
    if (hi >= 0) uint_range(t, lo > 0 ? (uint64_t)lo : 0, (uint64_t)hi);
    ngpt_text_str(t, ")");
    return true;
}

/* ------------------------------------------------------------- keywords */

/* Keywords that say nothing about the value: accepted, not used. */
static const char *const ANNOTATIONS[] = {"title", "description", "default", "examples",
                                          "$schema", "$id", "$comment", "deprecated",
                                          "readOnly", "writeOnly", "$defs", "definitions", NULL};
static const char *const SUPPORTED[] = {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf",
    "$ref", "nullable", NULL};

static bool listed(const char *const *list, const char *k)
{
    for (; *list; list++)
        if (!strcmp(*list, k)) return true;
    return false;
}

static const cJSON *get(const cJSON *s, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(s, key);
}

/* Every keyword of s is one ngpt knows (uniqueItems false says nothing). */
static bool keywords_known(conv *c, const cJSON *s, const char *path)
{
    for (const cJSON *k = s->child; k; k = k->next) {
        if (listed(ANNOTATIONS, k->string) || listed(SUPPORTED, k->string)) continue;
        if (!strcmp(k->string, "uniqueItems") && cJSON_IsFalse(k)) continue;
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "the keyword \"%s\" is not supported: ngpt "
                    "generates only what it can hold to exactly (docs/GENERATION.md lists the "
                    "keywords)", k->string);
    }
    return true;
}

/* Keywords of s other than annotations and the allowed ones; the first
 * such one, or NULL. */
static const char *other_keyword(const cJSON *s, const char *const *allowed)
{
    for (const cJSON *k = s->child; k; k = k->next)
        if (!listed(ANNOTATIONS, k->string) && !listed(allowed, k->string)) return k->string;
    return NULL;
}

/* The JSON types, as bits. */
enum { T_NULL = 1, T_BOOL = 2, T_OBJECT = 4, T_ARRAY = 8, T_NUMBER = 16, T_STRING = 32,
       T_INTEGER = 64, T_ALL = 127 };

static int type_bit(const char *name)
{
    static const char *const names[] = {"null", "boolean", "object", "array", "number", "string",
                                        "integer"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(name, names[i])) return 1 << i;
    return 0;
}

/* The types s asks for: its "type" (a name or a list), else the one its
 * keywords are about, else all. 0 and a failure on a bad "type". */
static int types_of(conv *c, const cJSON *s, const char *path)
{
    const cJSON *t = get(s, "type");
    int bits = 0;
    if (cJSON_IsString(t)) {
        bits = type_bit(t->valuestring);
    } else if (cJSON_IsArray(t)) {
        for (const cJSON *e = t->child; e; e = e->next)
            bits |= cJSON_IsString(e) ? type_bit(e->valuestring) : -1;
    } else if (t) {
        bits = -1;
    } else {
        static const char *const obj[] = {"properties", "required", "additionalProperties", NULL};
        static const char *const arr[] = {"items", "prefixItems", "minItems", "maxItems", NULL};
        static const char *const str[] = {"minLength", "maxLength", "pattern", "format", NULL};
        static const char *const num[] = {"minimum", "maximum", "exclusiveMinimum",
                                          "exclusiveMaximum", NULL};
        for (const cJSON *k = s->child; k; k = k->next) {
            if (listed(obj, k->string)) bits |= T_OBJECT;
            if (listed(arr, k->string)) bits |= T_ARRAY;
            if (listed(str, k->string)) bits |= T_STRING;
            if (listed(num, k->string)) bits |= T_NUMBER;
        }
        if (!bits) bits = T_ALL;
    }
    if (bits <= 0) {
        char p[512];
        fail(c, NGPT_ERR_BAD_FORMAT, sub(p, sizeof p, path, "type"), "\"type\" must be one of "
             "null, boolean, object, array, number, string, integer, or a list of them");
        return 0;
    }
    if (cJSON_IsTrue(get(s, "nullable"))) bits |= T_NULL;
    return bits;
}

/* ------------------------------------------------------------ the walk */

static bool expr(conv *c, const cJSON *s, const char *path, ngpt_text *t);

/* The rule of a $ref (made on first use). */
static bool ref_expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    const cJSON *r = get(s, "$ref");
    char p[512];
    sub(p, sizeof p, path, "$ref");
    if (!cJSON_IsString(r) || r->valuestring[0] != '#')
        return fail(c, NGPT_ERR_UNSUPPORTED, p, "only references inside the schema (\"#...\", "
                    "e.g. \"#/$defs/Name\") are supported");
    const char *other = other_keyword(s, (const char *const[]){"$ref", NULL});
    if (other)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "\"$ref\" beside \"%s\" is not supported "
                    "(move \"%s\" into the schema it refers to)", other, other);
    for (int32_t i = 0; i < c->n_ref; i++)
        if (!strcmp(c->ref_ptr[i], r->valuestring)) {
            ngpt_text_printf(t, "ref-%d", (int)i);
            return true;
        }
    char **p2 = realloc(c->ref_ptr, ((size_t)c->n_ref + 1) * sizeof *p2);
    char *dup = strdup(r->valuestring);
    if (!p2 || !dup) {
        free(dup);
        if (p2) c->ref_ptr = p2;
        t->oom = true;
        return false;
    }
    c->ref_ptr = p2;
    c->ref_ptr[c->n_ref] = dup;
    ngpt_text_printf(t, "ref-%d", (int)c->n_ref++);
    return true;
}

/* The schema a "#/a/b~1c" pointer names, or NULL. */
static const cJSON *resolve(const cJSON *doc, const char *ptr)
{
    const cJSON *at = doc;
    const char *p = ptr + 1;
    while (at && *p == '/') {
        char key[256];
        size_t n = 0;
        for (p++; *p && *p != '/' && n < sizeof key - 1; p++) {
            if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) key[n++] = p[1] == '0' ? '~' : '/', p++;
            else key[n++] = *p;
        }
        key[n] = '\0';
        if (cJSON_IsArray(at)) {
            char *end;
            long i = strtol(key, &end, 10);
            at = *end || i < 0 ? NULL : cJSON_GetArrayItem(at, (int)i);
        } else {
            at = cJSON_GetObjectItemCaseSensitive(at, key);
        }
    }
    return *p ? NULL : at;
}

/* A property name's key as GBNF: its JSON string literal. */
static void key_literal(ngpt_text *t, const char *name)
{
    char *j = cJSON_PrintUnformatted(&(cJSON){.type = cJSON_String, .valuestring = (char *)name});
    if (!j) {
        t->oom = true;
        return;
    }
    ngpt_text_literal(t, j, strlen(j));
    free(j);
}

typedef struct prop {
    const char *name;
    const cJSON *schema;        /* NULL: the extra properties' schema (or any value) */
    bool required;
} prop;

/* A key that is none of the n names: a JSON string of raw characters (no
 * escapes, so that no escaped spelling of a name slips through), told apart
 * from the names character by character. */
static void other_key(ngpt_text *t, const prop *p, int32_t n, const char *prefix, size_t depth)
{
    /* the names that continue prefix, and their next characters */
    ngpt_text_str(t, "(");
    bool is_name = false, any = false;
    uint32_t seen[64];
    int32_t n_seen = 0;
    for (int32_t i = 0; i < n; i++) {
        const char *nm = p[i].name;
        if (strncmp(nm, prefix, depth)) continue;
        if (!nm[depth]) {
            is_name = true;
            continue;
        }
        const unsigned char *u = (const unsigned char *)nm + depth;
        size_t k = u[0] < 0x80 ? 1 : u[0] < 0xE0 ? 2 : u[0] < 0xF0 ? 3 : 4;
        uint32_t cp = k == 1 ? u[0] : u[0] & (0xFF >> (k + 1));
        for (size_t j = 1; j < k; j++) cp = cp << 6 | (u[j] & 0x3F);
        bool dup = false;
        for (int32_t j = 0; j < n_seen; j++) dup |= seen[j] == cp;
        if (dup || n_seen == 64) continue;
        seen[n_seen++] = cp;
        if (any) ngpt_text_str(t, " | ");
        any = true;
        char next[1024];
        if (depth + k >= sizeof next) continue;
        memcpy(next, nm, depth + k);
        next[depth + k] = '\0';
        ngpt_text_literal(t, nm + depth, k);
        ngpt_text_str(t, " ");
        other_key(t, p, n, next, depth + k);
    }
    if (any) ngpt_text_str(t, " | ");
    ngpt_text_str(t, "[^\"\\\\\\x00-\\x1F");
    for (int32_t j = 0; j < n_seen; j++) ngpt_text_cp(t, seen[j]);
    ngpt_text_str(t, "] [^\"\\\\\\x00-\\x1F]*");
    if (!is_name) ngpt_text_str(t, " | \"\"");
    ngpt_text_str(t, ")");
}

/* "key":value of property p (extra: any other key). */
static bool member(conv *c, const prop *all, int32_t n, const prop *p, const cJSON *extra,
                   const char *path, ngpt_text *t)
{
    char q[512], props[512];
    if (p->schema) {
        key_literal(t, p->name);
        ngpt_text_str(t, " \":\" ");
        return expr(c, p->schema, sub(q, sizeof q, sub(props, sizeof props, path, "properties"),
                                      p->name), t);
    }
    ngpt_text_str(t, "(\"\\\"\" ");
    other_key(t, all, n, "", 0);
    ngpt_text_str(t, " \"\\\"\" \":\" ");
    bool ok = expr(c, extra, sub(q, sizeof q, path, "additionalProperties"), t);
    ngpt_text_str(t, ")");
    return ok;
}

/* Members i.. after at least one was written (each with its comma). */
static bool rest(conv *c, const prop *p, int32_t n, int32_t i, const cJSON *extra, const char *path,
                 ngpt_text *t)
{
    for (; i < n; i++) {
        ngpt_text_str(t, p[i].required ? " \",\" " : " (\",\" ");
        if (!member(c, p, n, &p[i], NULL, path, t)) return false;
        if (!p[i].required) ngpt_text_str(t, ")?");
    }
    if (extra) {
        ngpt_text_str(t, " (\",\" ");
        if (!member(c, p, n, &(prop){0}, extra, path, t)) return false;
        ngpt_text_str(t, ")*");
    }
    return true;
}

/* Members i.. when none was written yet: the first present one opens. */
static bool first(conv *c, const prop *p, int32_t n, int32_t i, const cJSON *extra,
                  const char *path, ngpt_text *t)
{
    if (i == n) {
        if (!extra) return true;
        if (!member(c, p, n, &(prop){0}, extra, path, t)) return false;
        return rest(c, p, n, n, extra, path, t);
    }
    ngpt_text_str(t, "(");
    if (!member(c, p, n, &p[i], NULL, path, t) || !rest(c, p, n, i + 1, extra, path, t))
        return false;
    if (!p[i].required) {
        bool later = extra != NULL;
        for (int32_t j = i + 1; j < n; j++) later = true;
        if (later) {
            ngpt_text_str(t, " | ");
            if (!first(c, p, n, i + 1, extra, path, t)) return false;
        }
    }
    ngpt_text_str(t, ")");
    return true;
}

static bool object_expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    const cJSON *props = get(s, "properties"), *req = get(s, "required");
    const cJSON *add = get(s, "additionalProperties");
    char q[512];
    if (props && !cJSON_IsObject(props))
        return fail(c, NGPT_ERR_BAD_FORMAT, sub(q, sizeof q, path, "properties"), "\"properties\" "
                    "must be an object");
    if (req && !cJSON_IsArray(req))
        return fail(c, NGPT_ERR_BAD_FORMAT, sub(q, sizeof q, path, "required"), "\"required\" "
                    "must be a list of names");
    /* additionalProperties: false, or absent beside "properties", none
     * (ngpt's policy); true, or absent without "properties": any value; a
     * schema: values of it */
    static const cJSON any = {.type = cJSON_True};
    const cJSON *extra = add ? (cJSON_IsFalse(add) ? NULL : cJSON_IsTrue(add) ? &any : add)
                             : props ? NULL : &any;
    int32_t n = props ? cJSON_GetArraySize(props) : 0, n_req = req ? cJSON_GetArraySize(req) : 0;
    prop *p = calloc((size_t)(n + n_req) + 1, sizeof *p);
    if (!p) {
        t->oom = true;
        return false;
    }
    int32_t k = 0;
    for (const cJSON *e = props ? props->child : NULL; e; e = e->next) p[k++] = (prop){e->string, e, false};
    bool ok = true;
    for (const cJSON *r = req ? req->child : NULL; r && ok; r = r->next) {
        if (!cJSON_IsString(r)) {
            ok = fail(c, NGPT_ERR_BAD_FORMAT, sub(q, sizeof q, path, "required"), "\"required\" "
                      "must be a list of names");
            break;
        }
        int32_t i = 0;
        while (i < k && strcmp(p[i].name, r->valuestring)) i++;
        if (i == k) {   /* required but not listed: a value of additionalProperties */
            if (add && cJSON_IsFalse(add))
                ok = fail(c, NGPT_ERR_UNSUPPORTED, path, "\"%s\" is required but not in "
                          "\"properties\" and additionalProperties is false: no object "
                          "validates", r->valuestring);
            else
                p[k++] = (prop){r->valuestring, extra ? extra : &any, false};
        }
        p[i].required = true;
    }
    if (ok) {
        bool must = false;
        for (int32_t i = 0; i < k; i++) must |= p[i].required;
        ngpt_text_str(t, "(\"{\" ");
        if (k > 0 || extra) {
            if (!must) ngpt_text_str(t, "(");
            ok = first(c, p, k, 0, extra, path, t);
            if (!must) ngpt_text_str(t, ")?");
        }
        ngpt_text_str(t, " \"}\")");
    }
    free(p);
    return ok;
}

/* n >= 0 from key (a non-negative integer), or dflt when absent. */
static bool count(conv *c, const cJSON *s, const char *key, const char *path, int64_t dflt,
                  int64_t *v)
{
    const cJSON *x = get(s, key);
    *v = dflt;
    if (!x) return true;
    char q[512];
    if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble != floor(x->valuedouble) ||
        x->valuedouble > NGPT_GBNF_MAX_REPEAT)
        return fail(c, NGPT_ERR_UNSUPPORTED, sub(q, sizeof q, path, key), "\"%s\" must be an "
                    "integer in 0..%d", key, NGPT_GBNF_MAX_REPEAT);
    *v = (int64_t)x->valuedouble;
    return true;
}

/* Array elements from position i on (prefix[0..k), then items or none),
 * count lo..hi (-1: no limit). */
static bool elements(conv *c, const cJSON *prefix, int32_t k, const cJSON *items, int64_t i,
                     int64_t lo, int64_t hi, const char *path, ngpt_text *t)
{
    char q[512];
    const char *sep = i > 0 ? "\",\" " : "";
    if (hi >= 0 && i >= hi) return true;
    if (i >= k) {
        if (!items) return true;
        const int64_t need = lo > i ? lo - i : 0;
        sub(q, sizeof q, path, "items");
        if (i == 0) {
            if (need == 0) ngpt_text_str(t, "(");
            if (!expr(c, items, q, t)) return false;
            ngpt_text_str(t, " (\",\" ");
            if (!expr(c, items, q, t)) return false;
            if (hi < 0) ngpt_text_printf(t, "){%lld,}", (long long)(need ? need - 1 : 0));
            else ngpt_text_printf(t, "){%lld,%lld}", (long long)(need ? need - 1 : 0),
                                  (long long)(hi - 1));
            if (need == 0) ngpt_text_str(t, ")?");
            return true;
        }
        ngpt_text_str(t, "(\",\" ");
        if (!expr(c, items, q, t)) return false;
        if (hi < 0) ngpt_text_printf(t, "){%lld,}", (long long)need);
        else ngpt_text_printf(t, "){%lld,%lld}", (long long)need, (long long)(hi - i));
        return true;
    }
    char idx[48];
    snprintf(idx, sizeof idx, "prefixItems/%lld", (long long)i);
    ngpt_text_printf(t, "(%s", sep);
    if (!expr(c, cJSON_GetArrayItem(prefix, (int)i), sub(q, sizeof q, path, idx), t)) return false;
    ngpt_text_str(t, " ");
    if (!elements(c, prefix, k, items, i + 1, lo, hi, path, t)) return false;
    ngpt_text_str(t, i >= lo ? ")?" : ")");
    return true;
}

static bool array_expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    const cJSON *prefix = get(s, "prefixItems"), *items = get(s, "items");
    char q[512];
    if (prefix && !cJSON_IsArray(prefix))
        return fail(c, NGPT_ERR_BAD_FORMAT, sub(q, sizeof q, path, "prefixItems"), "\"prefixItems\" "
                    "must be a list of schemas");
    if (items && cJSON_IsArray(items))
        return fail(c, NGPT_ERR_UNSUPPORTED, sub(q, sizeof q, path, "items"), "\"items\" as a list "
                    "(draft 4's tuples) is not supported: write \"prefixItems\"");
    const int32_t k = prefix ? cJSON_GetArraySize(prefix) : 0;
    static const cJSON any = {.type = cJSON_True};
    /* after prefixItems, absent items means none more (ngpt's policy); without, any value */
    if (items && cJSON_IsFalse(items)) items = NULL;
    else if (!items && !prefix) items = &any;
    int64_t lo, hi;
    if (!count(c, s, "minItems", path, 0, &lo) || !count(c, s, "maxItems", path, -1, &hi))
        return false;
    if (hi >= 0 && hi < lo)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "maxItems is below minItems: no array "
                    "validates");
    if (!items && lo > k)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "minItems %lld needs more items than the "
                    "%d of prefixItems, and no others are allowed", (long long)lo, (int)k);
    ngpt_text_str(t, "(\"[\" ");
    if (!elements(c, prefix, k, items, 0, lo, hi, path, t)) return false;
    ngpt_text_str(t, " \"]\")");
    return true;
}

/* The formats, as GBNF over ASCII. */
static const char DATE[] =
    "(([0-9]{3} [1-9] | [0-9]{2} [1-9] [0-9] | [0-9] [1-9] [0-9]{2} | [1-9] [0-9]{3}) \"-\" "
    "((\"0\" [13578] | \"1\" [02]) \"-\" (\"0\" [1-9] | [12] [0-9] | \"3\" [01]) | "
    "(\"0\" [469] | \"11\") \"-\" (\"0\" [1-9] | [12] [0-9] | \"30\") | "
    "\"02-\" (\"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8])) | "
    "([0-9]{2} (\"0\" [48] | [2468] [048] | [13579] [26]) | "
    "(\"0\" [48] | [2468] [048] | [13579] [26]) \"00\") \"-02-29\")";
static const char TIME[] =
    "(([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? "
    "(\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9]))";
static const char UUID[] =
    "([0-9a-f]{8} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{4} \"-\" [0-9a-f]{12})";

static bool string_expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    const cJSON *fmt = get(s, "format"), *pat = get(s, "pattern");
    char q[512];
    int64_t lo, hi;
    if (!count(c, s, "minLength", path, 0, &lo) || !count(c, s, "maxLength", path, -1, &hi))
        return false;
    const bool lengths = get(s, "minLength") || get(s, "maxLength");
    if ((fmt || pat) && lengths)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "\"%s\" together with minLength/maxLength is "
                    "not supported", fmt ? "format" : "pattern");
    if (fmt && pat)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "\"format\" together with \"pattern\" is not "
                    "supported");
    if (fmt) {
        const char *f = cJSON_IsString(fmt) ? fmt->valuestring : "";
        ngpt_text_str(t, "(\"\\\"\" ");
        if (!strcmp(f, "date")) ngpt_text_str(t, DATE);
        else if (!strcmp(f, "time")) ngpt_text_str(t, TIME);
        else if (!strcmp(f, "date-time")) ngpt_text_printf(t, "%s \"T\" %s", DATE, TIME);
        else if (!strcmp(f, "uuid")) ngpt_text_str(t, UUID);
        else
            return fail(c, NGPT_ERR_UNSUPPORTED, sub(q, sizeof q, path, "format"), "format \"%s\" "
                        "is not supported (date, time, date-time and uuid are)", f);
        ngpt_text_str(t, " \"\\\"\")");
        return true;
    }
    if (pat) {
        if (!cJSON_IsString(pat))
            return fail(c, NGPT_ERR_BAD_FORMAT, sub(q, sizeof q, path, "pattern"), "\"pattern\" "
                        "must be a string");
        ngpt_text_str(t, "(\"\\\"\" ");
        ngpt_status st = ngpt_pattern_to_gbnf(pat->valuestring, JCHAR, t);
        if (st) {
            char why[320];
            snprintf(why, sizeof why, "%s", ngpt_last_error());
            c->st = ngpt_fail(st, "at %s: %s", sub(q, sizeof q, path, "pattern"), why);
            return false;
        }
        ngpt_text_str(t, " \"\\\"\")");
        return true;
    }
    if (hi >= 0 && hi < lo)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "maxLength is below minLength: no string "
                    "validates");
    if (!lengths) {
        c->need |= NEED_STRING;
        ngpt_text_str(t, "string");
        return true;
    }
    if (hi < 0) ngpt_text_printf(t, "(\"\\\"\" %s{%lld,} \"\\\"\")", JCHAR, (long long)lo);
    else ngpt_text_printf(t, "(\"\\\"\" %s{%lld,%lld} \"\\\"\")", JCHAR, (long long)lo, (long long)hi);
    return true;
}

/* The JSON types a value may have (for enum and const against "type"). */
static int value_type(const cJSON *v)
{
    if (cJSON_IsNull(v)) return T_NULL;
    if (cJSON_IsBool(v)) return T_BOOL;
    if (cJSON_IsObject(v)) return T_OBJECT;
    if (cJSON_IsArray(v)) return T_ARRAY;
    if (cJSON_IsString(v)) return T_STRING;
    return v->valuedouble == floor(v->valuedouble) ? T_NUMBER | T_INTEGER : T_NUMBER;
}

static bool enum_expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    const cJSON *e = get(s, "enum"), *k = get(s, "const");
    const char *other = other_keyword(s, (const char *const[]){"enum", "const", "type",
                                                                "nullable", NULL});
    if (other)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "\"%s\" beside \"%s\" is not supported",
                    other, e ? "enum" : "const");
    const int types = get(s, "type") ? types_of(c, s, path) : T_ALL;
    char q[512];
    if (e && (!cJSON_IsArray(e) || !e->child))
        return fail(c, NGPT_ERR_BAD_FORMAT, sub(q, sizeof q, path, "enum"), "\"enum\" must be a "
                    "list of at least one value");
    ngpt_text_str(t, "(");
    bool any = false;
    for (const cJSON *v = e ? e->child : k; v; v = e ? v->next : NULL) {
        if (!(value_type(v) & types) || (k && e && !cJSON_Compare(v, k, true))) continue;
        if (any) ngpt_text_str(t, " | ");
        if (!value_literal(c, v, path, t)) return false;
        any = true;
    }
    if (types & T_NULL && cJSON_IsTrue(get(s, "nullable"))) {
        ngpt_text_str(t, any ? " | \"null\"" : "\"null\"");
        any = true;
    }
    if (!any)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "no value of \"%s\" has the schema's type",
                    e ? "enum" : "const");
    ngpt_text_str(t, ")");
    return true;
}

/* Whether no value validates against both a and b, as far as ngpt can
 * tell: different types, different const/enum values, or a property both
 * require that tells them apart. */
static bool disjoint(conv *c, const cJSON *a, const cJSON *b, int depth)
{
    if (depth > 8) return false;
    while (cJSON_IsObject(a) && get(a, "$ref") && depth++ < 8) a = resolve(c->doc, get(a, "$ref")->valuestring);
    while (cJSON_IsObject(b) && get(b, "$ref") && depth++ < 8) b = resolve(c->doc, get(b, "$ref")->valuestring);
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) return false;
    int ta = types_of(c, a, ""), tb = types_of(c, b, "");
    if (ta & T_NUMBER) ta |= T_INTEGER;
    if (tb & T_NUMBER) tb |= T_INTEGER;
    if (ta & T_INTEGER) ta |= T_NUMBER;     /* 1 and 1.0 are one number */
    if (tb & T_INTEGER) tb |= T_NUMBER;
    if (!(ta & tb)) return true;
    const cJSON *va = get(a, "const") ? get(a, "const") : get(a, "enum");
    const cJSON *vb = get(b, "const") ? get(b, "const") : get(b, "enum");
    if (va && vb) {
        const cJSON *la = cJSON_IsArray(va) && get(a, "enum") ? va->child : va;
        for (; la; la = get(a, "enum") ? la->next : NULL) {
            const cJSON *lb = cJSON_IsArray(vb) && get(b, "enum") ? vb->child : vb;
            for (; lb; lb = get(b, "enum") ? lb->next : NULL)
                if (cJSON_Compare(la, lb, true)) return false;
        }
        return true;
    }
    const cJSON *ra = get(a, "required"), *rb = get(b, "required");
    const cJSON *pa = get(a, "properties"), *pb = get(b, "properties");
    for (const cJSON *x = ra ? ra->child : NULL; x; x = x->next)
        for (const cJSON *y = rb ? rb->child : NULL; y; y = y->next)
            if (cJSON_IsString(x) && cJSON_IsString(y) && !strcmp(x->valuestring, y->valuestring) &&
                disjoint(c, get(pa, x->valuestring), get(pb, y->valuestring), depth + 1))
                return true;
    return false;
}

static bool alternatives(conv *c, const cJSON *s, const char *key, const char *path, ngpt_text *t)
{
    const cJSON *list = get(s, key);
    char q[512], w[512];
    sub(q, sizeof q, path, key);
    if (!cJSON_IsArray(list) || !list->child)
        return fail(c, NGPT_ERR_BAD_FORMAT, q, "\"%s\" must be a list of at least one schema", key);
    const char *other = other_keyword(s, (const char *const[]){key, "nullable", NULL});
    if (other)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "\"%s\" beside \"%s\" is not supported (move "
                    "it into each alternative)", other, key);
    if (!strcmp(key, "oneOf")) {
        int i = 0;
        for (const cJSON *a = list->child; a; a = a->next, i++) {
            int j = i + 1;
            for (const cJSON *b = a->next; b; b = b->next, j++)
                if (!disjoint(c, a, b, 0))
                    return c->st ? false : fail(c, NGPT_ERR_UNSUPPORTED, q, "alternatives %d and "
                                                "%d may both match one value, which oneOf "
                                                "forbids; ngpt writes oneOf only when it can tell "
                                                "its alternatives apart (other types, other "
                                                "const or enum values, or a required property "
                                                "that differs so): use anyOf if either may "
                                                "match", i, j);
        }
    }
    ngpt_text_str(t, "(");
    int i = 0;
    for (const cJSON *a = list->child; a; a = a->next, i++) {
        if (i) ngpt_text_str(t, " | ");
        char idx[32];
        snprintf(idx, sizeof idx, "%d", i);
        if (!expr(c, a, sub(w, sizeof w, q, idx), t)) return false;
    }
    if (cJSON_IsTrue(get(s, "nullable"))) ngpt_text_str(t, " | \"null\"");
    ngpt_text_str(t, ")");
    return true;
}

/* allOf: one schema, or object schemas merged (their properties and
 * required lists, which must not overlap). */
static bool all_of(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    const cJSON *list = get(s, "allOf");
    char q[512];
    sub(q, sizeof q, path, "allOf");
    if (!cJSON_IsArray(list) || !list->child)
        return fail(c, NGPT_ERR_BAD_FORMAT, q, "\"allOf\" must be a list of at least one schema");
    const char *other = other_keyword(s, (const char *const[]){"allOf", NULL});
    if (other)
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "\"%s\" beside \"allOf\" is not supported",
                    other);
    if (!list->child->next) return expr(c, list->child, q, t);
    cJSON *merged = cJSON_CreateObject(), *props = cJSON_CreateObject(), *req = cJSON_CreateArray();
    bool ok = merged && props && req;
    if (ok) {
        cJSON_AddItemToObject(merged, "type", cJSON_CreateString("object"));
        cJSON_AddItemToObject(merged, "properties", props);
        cJSON_AddItemToObject(merged, "required", req);
    } else {
        cJSON_Delete(props), cJSON_Delete(req);
    }
    int i = 0;
    for (const cJSON *a = list->child; a && ok; a = a->next, i++) {
        for (int hops = 0; cJSON_IsObject(a) && get(a, "$ref") && hops < 16; hops++)
            a = resolve(c->doc, get(a, "$ref")->valuestring);
        const char *extra = a ? other_keyword(a, (const char *const[]){"type", "properties",
                                                                        "required", NULL}) : NULL;
        if (!cJSON_IsObject(a) || !(types_of(c, a, q) == T_OBJECT) || extra) {
            ok = c->st ? false : fail(c, NGPT_ERR_UNSUPPORTED, q, "allOf of several schemas is "
                                      "supported for objects of properties and required only "
                                      "(alternative %d %s)", i,
                                      extra ? "has another keyword" : "is not such an object");
            break;
        }
        for (const cJSON *p = get(a, "properties") ? get(a, "properties")->child : NULL; p && ok;
             p = p->next) {
            if (get(props, p->string)) {
                ok = fail(c, NGPT_ERR_UNSUPPORTED, q, "property \"%s\" is in two alternatives of "
                          "allOf (ngpt does not intersect schemas)", p->string);
                break;
            }
            cJSON_AddItemToObject(props, p->string, cJSON_Duplicate(p, true));
        }
        for (const cJSON *r = get(a, "required") ? get(a, "required")->child : NULL; r && ok;
             r = r->next)
            cJSON_AddItemToArray(req, cJSON_Duplicate(r, true));
    }
    if (ok) ok = object_expr(c, merged, path, t);
    cJSON_Delete(merged);
    return ok;
}

/* One schema's expression. */
static bool expr(conv *c, const cJSON *s, const char *path, ngpt_text *t)
{
    if (c->st || t->oom) return false;
    if (++c->depth > 64) {
        c->depth--;
        return fail(c, NGPT_ERR_UNSUPPORTED, path, "schemas nested deeper than 64 are not "
                    "supported (use $defs and $ref)");
    }
    bool ok;
    if (cJSON_IsTrue(s)) {
        c->need |= NEED_VALUE;
        ngpt_text_str(t, "value");
        ok = true;
    } else if (cJSON_IsFalse(s)) {
        ok = fail(c, NGPT_ERR_UNSUPPORTED, path, "the schema false matches no value");
    } else if (!cJSON_IsObject(s)) {
        ok = fail(c, NGPT_ERR_BAD_FORMAT, path, "a schema must be an object, true or false");
    } else if (!keywords_known(c, s, path)) {
        ok = false;
    } else if (get(s, "$ref")) {
        ok = ref_expr(c, s, path, t);
    } else if (get(s, "enum") || get(s, "const")) {
        ok = enum_expr(c, s, path, t);
    } else if (get(s, "anyOf") || get(s, "oneOf")) {
        ok = alternatives(c, s, get(s, "anyOf") ? "anyOf" : "oneOf", path, t);
    } else if (get(s, "allOf")) {
        ok = all_of(c, s, path, t);
    } else {
        const int types = types_of(c, s, path);
        ok = types != 0;
        if (types == T_ALL && !get(s, "nullable")) {
            c->need |= NEED_VALUE;
            ngpt_text_str(t, "value");
        } else if (ok) {
            ngpt_text_str(t, "(");
            bool any = false;
            for (int bit = 1; bit <= T_INTEGER && ok; bit <<= 1) {
                if (!(types & bit)) continue;
                if (any) ngpt_text_str(t, " | ");
                any = true;
                if (bit == T_NULL) ngpt_text_str(t, "\"null\"");
                else if (bit == T_BOOL) ngpt_text_str(t, "(\"true\" | \"false\")");
                else if (bit == T_OBJECT) ok = object_expr(c, s, path, t);
                else if (bit == T_ARRAY) ok = array_expr(c, s, path, t);
                else if (bit == T_STRING) ok = string_expr(c, s, path, t);
                else if (bit == T_INTEGER) ok = integer_expr(c, s, path, t);
                else if (get(s, "minimum") || get(s, "maximum") || get(s, "exclusiveMinimum") ||
                         get(s, "exclusiveMaximum"))
                    ok = fail(c, NGPT_ERR_UNSUPPORTED, path, "minimum and maximum are supported "
                              "for integers only (write \"type\": \"integer\")");
                else {
                    c->need |= NEED_NUMBER;
                    ngpt_text_str(t, "number");
                }
            }
            ngpt_text_str(t, ")");
        }
    }
    c->depth--;
    return ok;
}

static const char NUMBER_RULES[] =
    "number ::= integer (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})?\n";
static const char INTEGER_RULES[] = "integer ::= \"-\"? (\"0\" | [1-9] [0-9]{0,15})\n";

ngpt_status ngpt_schema_to_gbnf(const char *schema, size_t len, char **gbnf, size_t *n)
{
    *gbnf = NULL;
    *n = 0;
    for (size_t i = 0; i < len;) {     /* JSON is UTF-8: names become literals */
        const unsigned char *u = (const unsigned char *)schema + i;
        size_t k = u[0] < 0x80 ? 1 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2
                   : u[0] >= 0xE0 && u[0] <= 0xEF ? 3 : u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : 0;
        bool ok = k > 0 && i + k <= len;
        for (size_t j = 1; ok && j < k; j++) ok = (u[j] & 0xC0) == 0x80;
        if (ok && k == 3) ok = !(u[0] == 0xE0 && u[1] < 0xA0) && !(u[0] == 0xED && u[1] >= 0xA0);
        if (ok && k == 4) ok = !(u[0] == 0xF0 && u[1] < 0x90) && !(u[0] == 0xF4 && u[1] >= 0x90);
        if (!ok)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the schema is not valid UTF-8 (byte %zu)", i);
        i += k;
    }
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(schema, len, &end, false);
    if (!doc) {
        size_t at = end && end >= schema ? (size_t)(end - schema) : 0;
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the schema is not JSON (near byte %zu)", at);
    }
    conv c = {.doc = doc};
    ngpt_text t = {0};
    ngpt_text_str(&t, "root ::= ");
    expr(&c, doc, "", &t);
    ngpt_text_str(&t, "\n");
    for (; !c.st && c.done_ref < c.n_ref; c.done_ref++) {   /* each $ref's rule, once */
        const char *ptr = c.ref_ptr[c.done_ref];
        const cJSON *target = resolve(doc, ptr);
        if (!target) {
            char name[200];
            snprintf(name, sizeof name, "%s", ptr);
            ngpt_text_one_line(name);
            c.st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "\"$ref\": \"%s\" names no part of the schema",
                             name);
            break;
        }
        ngpt_text_printf(&t, "ref-%d ::= ", (int)c.done_ref);
        expr(&c, target, ptr + 1, &t);
        ngpt_text_str(&t, "\n");
    }
    if (c.need & NEED_VALUE) {
        ngpt_text_str(&t, "value ::= object | array | string | number | \"true\" | \"false\" | "
                          "\"null\"\n"
                          "object ::= \"{\" (string \":\" value (\",\" string \":\" value)*)? \"}\"\n"
                          "array ::= \"[\" (value (\",\" value)*)? \"]\"\n");
        c.need |= NEED_STRING | NEED_NUMBER;
    }
    if (c.need & NEED_STRING) ngpt_text_printf(&t, "string ::= \"\\\"\" %s* \"\\\"\"\n", JCHAR);
    if (c.need & NEED_NUMBER) ngpt_text_str(&t, NUMBER_RULES), c.need |= NEED_INTEGER;
    if (c.need & NEED_INTEGER) ngpt_text_str(&t, INTEGER_RULES);
    for (int32_t i = 0; i < c.n_ref; i++) free(c.ref_ptr[i]);
    free(c.ref_ptr);
    cJSON_Delete(doc);
    ngpt_status st = c.st;
    if (!st && t.oom) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory writing the grammar");
    if (st) {
        free(t.s);
        return st;
    }
    *gbnf = t.s;
    *n = t.n;
    return NGPT_OK;
}
