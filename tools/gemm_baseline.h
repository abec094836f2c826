/* gemm_baseline.h — a baseline commit's gemm, built into the gemm bench by
 * `make bench-gemm GEMM_BASELINE=<commit>`: the Makefile extracts that
 * commit's src/ref/gemm.c and arch/<isa>/gemm.c with git and renames their
 * symbols (tools/gemm_baseline.sed: every ngpt_f32_* function, so that
 * none clashes with the library's). Its ABI is the commit's: with the
 * trailing workspace parameter (NGPT_BENCH_BASELINE_WORK, which the
 * Makefile defines when the commit's gemm has it) or without (older). */
#ifndef NGPT_GEMM_BASELINE_H
#define NGPT_GEMM_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "gemm.h"       /* the panel layout the commit's other functions use */

#ifdef NGPT_BENCH_BASELINE_WORK
#define NGPT_BASE_WORK , float *work
#else
#define NGPT_BASE_WORK
#endif

void ngpt_base_gemm_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                        const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                        float *c, ptrdiff_t c_rs, bool accumulate NGPT_BASE_WORK);
#ifdef NGPT_BENCH_BASELINE_ISA
void ngpt_base_gemm(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                    const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias, float *c,
                    ptrdiff_t c_rs, bool accumulate NGPT_BASE_WORK);
#else
#define ngpt_base_gemm ngpt_base_gemm_ref   /* a scalar build: the baseline is its reference */
#endif

#endif
