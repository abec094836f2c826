/* pattern.h — a JSON Schema "pattern" (a regular expression) as GBNF over a
 * JSON string's text (pattern.c). The subset, read the same by ECMA-262 and
 * Python's re (what validators run): literals and escapes, classes with
 * ranges and negation, `.`, \d \w \s and their negations, groups ( ),
 * (?: ), (?<name> ), `|`, the quantifiers * + ? {m} {m,} {m,n} (lazy ones
 * too: the same strings), ^ at the start and $ at the end of an
 * alternative. Unanchored, as the specification says: without ^ any text
 * may come before, without $ after. Where the two engines differ ngpt
 * writes what both accept: `.` is no line terminator, \d is [0-9], \w
 * [A-Za-z0-9_], \s the six ASCII spaces, \D \W \S printable ASCII. */
#ifndef NGPT_GRAMMAR_PATTERN_H
#define NGPT_GRAMMAR_PATTERN_H

#include "base/error.h"
#include "grammar/gbnf.h"
#include "grammar/text.h"

/* Appends to t the GBNF of the strings (as JSON text, between the quotes)
 * that contain a match of pattern; jchar is the GBNF of one JSON string
 * character (what may come before and after). Bare messages naming what
 * is not supported and where. */
ngpt_status ngpt_pattern_to_gbnf(const char *pattern, const char *jchar, ngpt_text *t);

#endif
