/* tmpl.h — the template room's own pieces (not for other rooms: they use
 * template.h): the arena every parse and render allocates from, strings
 * that remember which bytes came from the conversation, runtime values, the
 * tokens and the syntax tree. Errors inside the room unwind with longjmp to
 * the public entry, which frees the arena: nothing else is allocated. */
#ifndef NGPT_TEMPLATE_TMPL_H
#define NGPT_TEMPLATE_TMPL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "template/template.h"

/* ---- the arena: one per parse (the tree, kept) and one per render */

typedef struct tchunk tchunk;
typedef struct tarena {
    tchunk *head;
    size_t total, limit;        /* bytes taken, and the most it may take */
    jmp_buf *fail;              /* where a failure unwinds to */
    ngpt_status status;         /* the failure's */
} tarena;

void *ngpt_tmpl_alloc(tarena *a, size_t n);    /* zeroed, aligned; unwinds when over the limit */
void ngpt_tmpl_free_all(tarena *a);
/* Records the message and unwinds to a->fail. */
_Noreturn void ngpt_tmpl_throw(tarena *a, ngpt_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- strings: UTF-8 bytes, and for each byte whether it came from a
 * message (taint 1: the conversation's text, where no special token is
 * recognised) or from the template (NULL taint: all of it) */

typedef struct tstr {
    const char *p;
    const uint8_t *taint;       /* NULL, or n flags */
    size_t n;
} tstr;

#define TSTR(lit) ((tstr){lit, NULL, sizeof lit - 1})
bool ngpt_tmpl_str_eq(tstr a, tstr b);                     /* the same bytes */
bool ngpt_tmpl_str_is(tstr a, const char *lit);
tstr ngpt_tmpl_str_sub(tstr s, size_t from, size_t to);    /* bytes [from, to) */
tstr ngpt_tmpl_str_copy(tarena *a, const char *p, size_t n, bool tainted);

/* A growing string (the output, a macro's or a block's text). */
typedef struct tbuf {
    char *p;
    uint8_t *taint;             /* made when the first tainted byte comes */
    size_t n, cap, limit;
    tarena *a;
} tbuf;
void ngpt_tmpl_buf_put(tbuf *b, tstr s);
void ngpt_tmpl_buf_lit(tbuf *b, const char *p, size_t n);  /* template bytes */
void ngpt_tmpl_buf_add(tbuf *b, const char *p, size_t n, bool tainted);
tstr ngpt_tmpl_buf_str(const tbuf *b);

/* JavaScript's white space (String.prototype.trim, /\s/) at p[0..n): its
 * length in bytes, or 0. */
size_t ngpt_tmpl_js_space(const char *p, size_t n);
/* The code point at p[0..n) and its length; a byte that begins no UTF-8
 * sequence is a character of its own (U+FFFD, 1 byte): a message's text
 * passes through as it is (the reference, JavaScript, is never given such
 * bytes). */
uint32_t ngpt_tmpl_utf8_next(const char *p, size_t n, size_t *len);
/* "line L, column C" of byte at of text (len bytes), into out. */
void ngpt_tmpl_where(const char *text, size_t len, uint32_t at, char *out, size_t cap);
uint32_t ngpt_tmpl_str_hash(tstr s);       /* FNV-1a: scopes compare it before the names */
/* The offset of the first byte of p[0..n) that is not UTF-8, or n. */
size_t ngpt_tmpl_utf8_valid(const char *p, size_t n);
/* JavaScript's Number.prototype.toString of x into out (>= 32 bytes), and
 * its Number(text) (StringToNumber: NaN for what is not a number). */
size_t ngpt_tmpl_js_number(double x, char *out);
double ngpt_tmpl_js_to_number(tstr text);
/* strtod of digits with a '.' (whatever the locale's point). */
double ngpt_tmpl_strtod(const char *p, size_t n);

/* ---- values, as @huggingface/jinja's runtime has them */

typedef enum tkind {
    TV_UNDEF, TV_NULL, TV_BOOL, TV_INT, TV_FLOAT, TV_STR, TV_LIST, TV_TUPLE, TV_MAP, TV_KWARGS,
    TV_NS, TV_FUNC
} tkind;

typedef struct tval tval;
typedef struct tlist { size_t n; tval *v; } tlist;
typedef struct tmap { size_t n, cap; tstr *k; tval *v; } tmap;  /* in insertion order */
typedef struct tfunc tfunc;

struct tval {
    tkind kind;
    union {
        bool b;
        double num;             /* TV_INT and TV_FLOAT: JavaScript numbers both */
        tstr s;
        tlist *l;               /* TV_LIST, TV_TUPLE */
        tmap *m;                /* TV_MAP, TV_KWARGS, TV_NS */
        tfunc *f;
    } u;
};

tval ngpt_tmpl_val_str(tstr s);
tval ngpt_tmpl_val_num(tkind kind, double x);
tval ngpt_tmpl_val_bool(bool b);
tval ngpt_tmpl_val_list(tarena *a, tkind kind, size_t n);          /* n undefined elements */
tval ngpt_tmpl_val_map(tarena *a, tkind kind);
void ngpt_tmpl_map_set(tarena *a, tmap *m, tstr key, tval v);
const tval *ngpt_tmpl_map_get(const tmap *m, tstr key);
bool ngpt_tmpl_truthy(tval v);
const char *ngpt_tmpl_type_name(tval v); /* "StringValue", ... for messages */

/* JSON as the reference's toJSON writes it (null_undefined: undefined as
 * "null" rather than "undefined"); ascii: \uXXXX for U+007F and above.
 * false: v is or holds what the reference cannot write either (a tuple,
 * keyword arguments, a function). */
typedef struct tjson {
    int indent;                 /* 0: none */
    bool ascii, null_undefined;
    tstr item_sep, key_sep;     /* p NULL: the defaults */
} tjson;
bool ngpt_tmpl_json(tbuf *out, tval v, const tjson *o, int depth);

#include "template/ast.h"

#endif
