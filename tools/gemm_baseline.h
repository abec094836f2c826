/* gemm_baseline.h — a baseline commit's gemm (the ABI before the workspace
 * parameter), built into the gemm bench by `make bench-gemm GEMM_BASELINE=<commit>`:
 * the Makefile extracts that commit's src/ref/gemm.c and arch/<isa>/gemm.c with
 * git and renames their symbols (tools/gemm_baseline.sed). */
#ifndef NGPT_GEMM_BASELINE_H
#define NGPT_GEMM_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

void ngpt_base_gemm_ref(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                        const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias,
                        float *c, ptrdiff_t c_rs, bool accumulate);
#ifdef NGPT_BENCH_BASELINE_ISA
void ngpt_base_gemm(int m, int n, int k, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
                    const float *b, ptrdiff_t b_rs, ptrdiff_t b_cs, const float *bias, float *c,
                    ptrdiff_t c_rs, bool accumulate);
#else
#define ngpt_base_gemm ngpt_base_gemm_ref   /* a scalar build: the baseline is its reference */
#endif

#endif
