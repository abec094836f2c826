/* alloc_count.h — counts the heap allocations made by libngpt.a. A test that
 * includes it links with
 *     test-ldflags: -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
 * (a comment line the Makefile reads), so the library's calls, and only
 * those, go through these wrappers. */
#ifndef NGPT_ALLOC_COUNT_H
#define NGPT_ALLOC_COUNT_H

#include <stddef.h>

static int allocations;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { allocations++; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { allocations++; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { allocations++; return __real_realloc(p, n); }

#endif
