/* names.h — what a template calls builtins by (names.c): the filters,
 * tests, methods and global functions of ngpt's subset, numbered
 * (parse.c refuses any other name; builtins.c runs them by number), and
 * the special tokens' variables apply_chat_template passes. */
#ifndef NGPT_TEMPLATE_NAMES_H
#define NGPT_TEMPLATE_NAMES_H

#include "template/tmpl.h"

enum {
    F_SAFE, F_TOJSON, F_TRIM, F_LENGTH, F_FIRST, F_LAST, F_DEFAULT, F_JOIN, F_UPPER, F_LOWER,
    F_REPLACE, F_STRING, F_LIST, F_ITEMS, F_REVERSE, F_ABS, F_INT, F_FLOAT, F_BOOL, F_COUNT
};
enum {
    T_BOOLEAN, T_CALLABLE, T_ODD, T_EVEN, T_FALSE, T_TRUE, T_NONE, T_STRING, T_NUMBER,
    T_INTEGER, T_ITERABLE, T_MAPPING, T_SEQUENCE, T_DEFINED, T_UNDEFINED, T_COUNT
};
/* Function values: 0 is a macro (eval.c), then the methods (bound to a
 * string or a mapping), then the globals. */
enum {
    M_MACRO, M_UPPER, M_LOWER, M_STRIP, M_LSTRIP, M_RSTRIP, M_STARTSWITH, M_ENDSWITH, M_SPLIT,
    M_REPLACE, M_TITLE, M_CAPITALIZE, M_GET, M_ITEMS, M_KEYS, M_VALUES, M_DICTSORT,
    G_NAMESPACE, G_RAISE, G_RANGE, G_STRFTIME, M_COUNT
};
extern const char *const ngpt_tmpl_method_names[M_COUNT];
extern const char *const ngpt_tmpl_special_names[TMPL_SPECIALS];

/* The number of name among names[first..n), or -1. */
int ngpt_tmpl_name_find(tstr name, const char *const *names, int first, int n);
int ngpt_tmpl_filter_id(tstr name);       /* its number, or -1: not in ngpt's subset */
int ngpt_tmpl_test_id(tstr name);
bool ngpt_tmpl_is_method(tstr name);      /* a method ngpt calls on strings and mappings */

#endif
