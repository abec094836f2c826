/* checked.h — size arithmetic that reports overflow instead of wrapping,
 * and the library's alignment. Every size the arena planner, the layout and
 * the file readers compute goes through these. */
#ifndef NGPT_BASE_CHECKED_H
#define NGPT_BASE_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every arena region and every tensor in a checkpoint starts on this. */
#define NGPT_ALIGN 64

/* r = a * b; false on overflow. */
static inline bool ngpt_mul_ok(size_t a, size_t b, size_t *r)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *r = a * b;
    return true;
}

/* r = a + b; false on overflow. */
static inline bool ngpt_add_ok(size_t a, size_t b, size_t *r)
{
    if (b > SIZE_MAX - a) return false;
    *r = a + b;
    return true;
}

/* n rounded up to a multiple of NGPT_ALIGN (the caller keeps n small enough). */
static inline size_t ngpt_align64(size_t n)
{
    return (n + (NGPT_ALIGN - 1)) & ~(size_t)(NGPT_ALIGN - 1);
}

#endif
