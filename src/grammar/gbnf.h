/* gbnf.h — a GBNF grammar's text as a tree (gbnf.c): llama.cpp's notation
 * (docs/GENERATION.md, "Grammars": rules `name ::= ...`, sequences, `|`,
 * `( )`, `* + ?`, `{m}` `{m,}` `{m,n}`, string literals and character
 * classes over code points, `.`, `#` comments, `root` the start). The
 * compiler (automaton.c) turns the tree into byte automata. */
#ifndef NGPT_GRAMMAR_GBNF_H
#define NGPT_GRAMMAR_GBNF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* The largest repetition count {m,n} takes, and the deepest ( ) nesting:
 * past them a grammar is refused, naming the place. */
#define NGPT_GBNF_MAX_REPEAT 10000
#define NGPT_GBNF_MAX_NESTING 256

typedef enum ngpt_gnode_kind {
    NGPT_GN_CHARS = 0,          /* one code point from ranges[a .. a + b) */
    NGPT_GN_REF,                /* rule a */
    NGPT_GN_SEQ,                /* kids[a .. a + b) one after another (b = 0: empty) */
    NGPT_GN_ALT,                /* one of kids[a .. a + b) */
    NGPT_GN_REPEAT              /* node `child` a to b times (b = -1: no limit) */
} ngpt_gnode_kind;

typedef struct ngpt_gnode {
    int32_t kind;
    int32_t a, b;
    int32_t child;
    int32_t line, col;          /* where it is written (1-based; column in bytes) */
    bool literal;               /* CHARS: a character of a string literal */
} ngpt_gnode;

typedef struct ngpt_grange {
    uint32_t lo, hi;            /* code points, inclusive */
} ngpt_grange;

typedef struct ngpt_gast {
    ngpt_gnode *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t *kids;
    int32_t n_kids, cap_kids;
    ngpt_grange *ranges;
    int32_t n_ranges, cap_ranges;
    /* rules, in the order they are first named (defined or used) */
    char **names;
    int32_t *body;              /* the rule's node, or -1 until defined */
    int32_t *line, *col;        /* where defined (or first used) */
    int32_t n_rules, cap_rules;
    int32_t root;
} ngpt_gast;

/* Parses len bytes of GBNF into *ast (which the caller frees with
 * ngpt_gbnf_free, also after a failure). Bare messages "line L, column C:
 * ...". */
ngpt_status ngpt_gbnf_parse(const char *text, size_t len, ngpt_gast *ast);

void ngpt_gbnf_free(ngpt_gast *ast);

#endif
