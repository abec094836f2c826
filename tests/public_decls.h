/* public_decls.h — the functions include/ngpt.h declares, read from the
 * header itself (the tests run from the source tree): a line at column 0,
 * not a comment, a preprocessor line or a typedef, whose first "(" follows
 * an ngpt_ name. test_public_api and test_fpmode fail when a declared
 * function is not covered, so a function added to the header later gets
 * its tests; tests/test_fpmode_scope.sh reads the header the same way. */
#ifndef NGPT_TEST_PUBLIC_DECLS_H
#define NGPT_TEST_PUBLIC_DECLS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define PUBLIC_DECLS_MAX 512

typedef struct public_decls {
    int count;
    char name[PUBLIC_DECLS_MAX][64];    /* "ngpt_config_set", ... */
} public_decls;

/* False when include/ngpt.h cannot be read (not run from the source tree). */
static inline bool public_decls_read(public_decls *d)
{
    FILE *h = fopen("include/ngpt.h", "r");
    d->count = 0;
    if (!h) return false;
    char line[1024];
    while (fgets(line, sizeof line, h) && d->count < PUBLIC_DECLS_MAX) {
        if (line[0] == ' ' || line[0] == '/' || line[0] == '*' || line[0] == '#') continue;
        if (strstr(line, "typedef")) continue;
        char *paren = strchr(line, '('), *p = paren;
        while (p && p > line && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                 (p[-1] >= '0' && p[-1] <= '9')))
            p--;
        if (!paren || strncmp(p, "ngpt_", 5) != 0) continue;
        const size_t k = (size_t)(paren - p);
        if (k >= sizeof d->name[0]) continue;
        memcpy(d->name[d->count], p, k);
        d->name[d->count++][k] = '\0';
    }
    fclose(h);
    return true;
}

/* Whether text holds a call of name: "name(". */
static inline bool public_decls_called_in(const char *text, const char *name)
{
    const size_t n = strlen(name);
    for (const char *s = strstr(text, name); s; s = strstr(s + 1, name))
        if (s[n] == '(' && (s == text || !(s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') ||
                                           (s[-1] >= '0' && s[-1] <= '9'))))
            return true;
    return false;
}

#endif
