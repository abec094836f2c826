/* huge_pages.h — large blocks read at the memory's speed (base/huge_pages.c).
 * A decode step streams every weight once; with 4 KiB pages that is a page
 * walk every 4 KiB, and under a hypervisor each walk is two-dimensional.
 * Backed by 2 MiB transparent huge pages instead, the same read is faster
 * (a 2-vCPU Zen 4 VM: 29 GB/s against 24-26 on one thread; an 8-bit
 * Qwen2.5-0.5B-shaped decode from a context's own weights 42.6 tok/s
 * against 32.9). So every block that holds weights
 * or an arena asks for them: the arena the library allocates, a model's
 * copies, and a model file's mapping, whose page cache the kernel then
 * fills with huge folios when the file is first read (a file already cached
 * keeps the folios it has). The KV cache inside an arena declines them
 * (ngpt_huge_pages_decline). Linux's MADV_HUGEPAGE; elsewhere, and where the
 * system says no, nothing changes: it is advice, never an error. */
#ifndef NGPT_BASE_HUGE_PAGES_H
#define NGPT_BASE_HUGE_PAGES_H

#include <stddef.h>

/* Advises huge pages for the 2 MiB-aligned part of [p, p + bytes), before
 * its pages are first touched (a fresh calloc or mmap; a block under 2 MiB
 * has no such part). */
void ngpt_huge_pages_advise(void *p, size_t bytes);

/* Takes the advice back for the 2 MiB-aligned part of [p, p + bytes): a
 * block inside an advised one that is touched a little at a time (a KV
 * cache: each token writes one row per layer), where a first touch would
 * clear 2 MiB at once. */
void ngpt_huge_pages_decline(void *p, size_t bytes);

#endif
