/* names.c — the names of ngpt's builtins (names.h). */
#include "template/names.h"

static const char *const FILTERS[F_COUNT] = {
    "safe", "tojson", "trim", "length", "first", "last", "default", "join", "upper", "lower",
    "replace", "string", "list", "items", "reverse", "abs", "int", "float", "bool"};

static const char *const TESTS[T_COUNT] = {
    "boolean", "callable", "odd", "even", "false", "true", "none", "string", "number", "integer",
    "iterable", "mapping", "sequence", "defined", "undefined"};

const char *const ngpt_tmpl_method_names[M_COUNT] = {
    "", "upper", "lower", "strip", "lstrip", "rstrip", "startswith", "endswith", "split",
    "replace", "title", "capitalize", "get", "items", "keys", "values", "dictsort",
    "namespace", "raise_exception", "range", "strftime_now"};

const char *const ngpt_tmpl_special_names[TMPL_SPECIALS] = {
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};

int ngpt_tmpl_name_find(tstr name, const char *const *names, int first, int n)
{
    for (int i = first; i < n; i++)
        if (ngpt_tmpl_str_is(name, names[i])) return i;
    return -1;
}

int ngpt_tmpl_filter_id(tstr name) { return ngpt_tmpl_name_find(name, FILTERS, 0, F_COUNT); }
int ngpt_tmpl_test_id(tstr name) { return ngpt_tmpl_name_find(name, TESTS, 0, T_COUNT); }
bool ngpt_tmpl_is_method(tstr name)
{
    const int m = ngpt_tmpl_name_find(name, ngpt_tmpl_method_names, M_UPPER, G_NAMESPACE);
    return m >= 0 && m != M_TITLE && m != M_CAPITALIZE && m != M_DICTSORT;
}

