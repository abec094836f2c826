/* schema.c — JSON Schema to GBNF (schema.h). */
#include "grammar/schema.h"

ngpt_status ngpt_schema_to_gbnf(const char *schema, size_t len, char **gbnf, size_t *n)
{
    (void)schema, (void)len, (void)gbnf, (void)n;
    return ngpt_fail(NGPT_ERR_UNSUPPORTED, "not yet");
}
