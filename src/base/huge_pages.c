/* huge_pages.c — MADV_HUGEPAGE or MADV_NOHUGEPAGE over a block's 2 MiB-aligned part
 * (huge_pages.h). */
#if !defined(__APPLE__)
#define _DEFAULT_SOURCE         /* glibc: madvise's MADV_HUGEPAGE */
#endif
#include <stdint.h>
#include <sys/mman.h>

#include "base/huge_pages.h"

#if defined(MADV_HUGEPAGE) || defined(MADV_NOHUGEPAGE)
/* madvise over the 2 MiB-aligned part of [p, p + bytes), if any */
static void advise_aligned(void *p, size_t bytes, int advice)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    const uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, (size_t)(hi - lo), advice);
}
#endif

void ngpt_huge_pages_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    advise_aligned(p, bytes, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

void ngpt_huge_pages_decline(void *p, size_t bytes)
{
#ifdef MADV_NOHUGEPAGE
    advise_aligned(p, bytes, MADV_NOHUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}
