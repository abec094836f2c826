/* ast.h — a template's tokens and syntax tree (lex.c, parse.c), and the
 * state that evaluates it (eval.c, builtins.c). The tree is
 * @huggingface/jinja's, node for node, so that evaluating it gives that
 * renderer's text; what ngpt does not evaluate is refused when parsing. */
#ifndef NGPT_TEMPLATE_AST_H
#define NGPT_TEMPLATE_AST_H

/* Limits that keep any template bounded (docs/GENERATION.md, "Chat templates"). */
#define TMPL_SOURCE_MAX ((size_t)1 << 20)       /* bytes of template text */
#define TMPL_PARSE_ARENA ((size_t)64 << 20)     /* a parsed template's memory */
#define TMPL_NEST_MAX 100                       /* blocks and brackets inside each other */
#define TMPL_RENDER_ARENA ((size_t)256 << 20)   /* a render's memory */
#define TMPL_OUTPUT_MAX ((size_t)16 << 20)      /* bytes of any rendered string */
#define TMPL_STEPS_MAX 10000000u                /* statements and expressions evaluated */
#define TMPL_CALL_DEPTH 50                      /* macro calls inside each other */
#define TMPL_RANGE_MAX 100000                   /* elements of range() */

typedef enum ttype {
    TK_TEXT, TK_NUM, TK_STR, TK_IDENT, TK_EQUALS, TK_LPAREN, TK_RPAREN, TK_OPEN_STMT,
    TK_CLOSE_STMT, TK_OPEN_EXPR, TK_CLOSE_EXPR, TK_LBRACKET, TK_RBRACKET, TK_LBRACE, TK_RBRACE,
    TK_COMMA, TK_DOT, TK_COLON, TK_PIPE, TK_ADD, TK_MUL, TK_POW, TK_CMP, TK_UNARY, TK_COMMENT
} ttype;

typedef struct ttoken {
    ttype type;
    tstr v;                     /* its text (a string literal's: unescaped) */
    uint32_t at;                /* its offset in the template as written */
} ttoken;

/* The tokens of text (len bytes, valid UTF-8), after Hugging Face's
 * preprocessing (trim_blocks, lstrip_blocks, one final newline dropped,
 * {% generation %} tags removed). */
ttoken *ngpt_tmpl_lex(ngpt_template *t, const char *text, size_t len, size_t *n);

typedef enum nkind {
    N_TEXT, N_COMMENT, N_INT, N_FLOAT, N_STR, N_ARRAY, N_TUPLE, N_DICT, N_IDENT, N_MEMBER,
    N_SLICE, N_CALL, N_KWARG, N_UNARY, N_BINARY, N_FILTER, N_TEST, N_SELECT, N_TERNARY,
    N_SET, N_IF, N_FOR, N_MACRO, N_BREAK, N_CONTINUE
} nkind;

typedef enum top {
    OP_ADD, OP_SUB, OP_CAT, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_EQ, OP_NE, OP_LT,
    OP_GT, OP_LE, OP_GE, OP_IN, OP_NOT_IN, OP_AND, OP_OR, OP_NOT, OP_NEG, OP_POS
} top;

typedef struct node node;
typedef struct nlist { size_t n; node **v; } nlist;
struct node {
    nkind kind;
    int op;                     /* N_UNARY, N_BINARY: a top; N_FILTER, N_TEST: the builtin */
    bool flag;                  /* N_MEMBER: [computed]; N_TEST: negated; N_FILTER: called */
    uint32_t at;                /* where it begins in the template (for messages) */
    uint32_t hash;              /* N_IDENT, N_KWARG: of the name */
    tstr s;                     /* text, string or name */
    double num;                 /* N_INT, N_FLOAT */
    node *a, *b, *c;            /* operands, object and property, condition and branches */
    nlist list, alt;            /* arguments, elements, bodies; the else branch */
};

enum { TMPL_BOS, TMPL_EOS, TMPL_UNK, TMPL_SEP, TMPL_PAD, TMPL_CLS, TMPL_MASK, TMPL_SPECIALS };

struct ngpt_template {
    tarena arena;               /* the tree and everything it points to */
    jmp_buf fail;
    const char *text;           /* the template as written (positions in messages) */
    size_t len;
    nlist body;
    tstr special[TMPL_SPECIALS];        /* the special tokens it renders with (n 0: unset) */
};

/* Parses text into t->body; unwinds through t->arena on an error. */
void ngpt_tmpl_parse_tree(ngpt_template *t, const char *text, size_t len);

/* ---- evaluation */

/* A function value: a builtin (builtins.c's number, bound to self for a
 * method) or, with id 0, the macro node. */
struct tfunc {
    int id;
    tval self;
    const node *macro;
};

typedef struct tenv tenv;
typedef struct tstate {
    tarena a;                   /* the render's memory */
    jmp_buf fail;
    const ngpt_template *t;
    tbuf *out;                  /* where statements write */
    uint64_t steps;
    int depth;                  /* macro calls */
    int64_t now;                /* strftime_now's time: 0 = the clock */
} tstate;

/* Records "line L, column C: ..." at node n and unwinds. */
_Noreturn void ngpt_tmpl_fail_at(tstate *s, const node *n, ngpt_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Scopes (state.c): a variable set in e; looked up from e outwards. */
tenv *ngpt_tmpl_env(tstate *s, tenv *parent);
void ngpt_tmpl_env_set(tstate *s, tenv *e, tstr name, uint32_t hash, tval v);
tval ngpt_tmpl_env_get(const tenv *e, tstr name, uint32_t hash);
/* Renders body into s->out (eval.c). */
void ngpt_tmpl_exec(tstate *s, tenv *global, const nlist *body);
/* Writes v as the renderer's toString does (nothing for none and undefined). */
void ngpt_tmpl_write(tstate *s, const node *n, tbuf *out, tval v);
/* JavaScript's String(v.value), which + and ~ join. */
tstr ngpt_tmpl_raw_string(tstate *s, const node *n, tval v);

/* ---- builtins.c: filters, tests, methods and global functions (names.h) */

tval ngpt_tmpl_filter(tstate *s, const node *n, tval v, tval *args, size_t n_args, tmap *kwargs);
bool ngpt_tmpl_test(tstate *s, const node *n, tval v);
/* obj.name or obj[key], including builtin methods bound to obj */
tval ngpt_tmpl_member(tstate *s, const node *n, tval obj, tval key);
/* Calls fn, a builtin (args: positional, then the keyword arguments as one
 * TV_KWARGS; a macro is eval.c's to call). */
tval ngpt_tmpl_call(tstate *s, const node *n, tval fn, tval *args, size_t n_args);
void ngpt_tmpl_globals(tstate *s, tenv *global);
/* JavaScript's == (loose) and === (strict) on values. */
bool ngpt_tmpl_loose_eq(tstate *s, const node *n, tval a, tval b);
bool ngpt_tmpl_strict_eq(tval a, tval b);

#endif
