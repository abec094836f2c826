/* prefetch_ahead.h — the prefetch of the 8- and 4-bit products' weights
 * (arch/<isa>/q8.c, q4.c): each 64-byte line of a panel, when it is
 * loaded, asks for the line WEIGHTS_AHEAD bytes on into L2. A decode's
 * weights come from L3 or memory, and the hardware prefetchers alone leave
 * the loads waiting: on Emerald Rapids (one thread, SmolLM2-135M's one-row
 * products, 60 interleaved runs) 8 KiB ahead into L2 ran a token's q8
 * products 1.4-1.6x and q4's 1.2-1.4x as fast (AVX-512; AVX2 1.4x both);
 * 1-4 KiB ahead or into L1 less. Past a panel is the next panel, which the
 * walk reads next. One prefetch per load, never a loop of prefetches: gcc
 * deletes a loop that only prefetches (arch/gemm_blocked.h). A prefetch
 * computes nothing (the same bits) and never faults; the address is an
 * integer, so no pointer leaves its array.
 *
 * AMD is the other way round (prefetch_few_rows). */
#ifndef NGPT_ARCH_PREFETCH_AHEAD_H
#define NGPT_ARCH_PREFETCH_AHEAD_H

#include <stdbool.h>
#include <stdint.h>

enum { WEIGHTS_AHEAD = 8192 };

static inline __attribute__((always_inline)) void prefetch_ahead(const void *line)
{
    __builtin_prefetch((const void *)((uintptr_t)line + WEIGHTS_AHEAD), 0, 2);   /* 2: into L2 */
}

/* Whether a walk of the weights with few rows (a decode's one, up to 4)
 * prefetches: not on AMD, whose own prefetchers stream such a walk from
 * memory faster alone. Zen 4, one thread, the one-row products of a
 * Qwen2.5-0.5B-shaped token (309 MB of 4-bit weights, 2 MiB pages),
 * against the bench's read probe in the same run: AVX-512 4-bit 70-76% of
 * it with the prefetch, 95-101% without (1.25-1.40x; 2 rows 1.23x, 4
 * rows even); AVX2 4-bit 80-86% -> 94-97%, AVX2 8-bit 72-84% -> 97-101%
 * (arch/avx512/q8.c's paced walk already had none). Into L1 instead
 * (prefetcht0) was as fast as none; the L2 hint is what costs. More rows
 * are bound by the arithmetic, and keep the prefetch. libgcc's (and
 * compiler-rt's) cpu model is read once at start-up. */
static inline bool prefetch_few_rows(void)
{
    return !__builtin_cpu_is("amd");
}

#endif
