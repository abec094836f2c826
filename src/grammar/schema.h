/* schema.h — JSON Schema to GBNF (schema.c, with pattern.c for `pattern`):
 * the subset docs/GENERATION.md ("JSON Schema") states, every other
 * keyword refused by name. */
#ifndef NGPT_GRAMMAR_SCHEMA_H
#define NGPT_GRAMMAR_SCHEMA_H

#include <stddef.h>

#include "base/error.h"

/* The GBNF of the schema's JSON text (len bytes) into *gbnf (malloc'd,
 * NUL-terminated, *n bytes). Bare messages naming the keyword and where it
 * is (a JSON pointer). */
ngpt_status ngpt_schema_to_gbnf(const char *schema, size_t len, char **gbnf, size_t *n);

#endif
