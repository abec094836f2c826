/* cpu.h — whether this CPU runs what the library was built for: the x86-64
 * builds need FMA and AVX (the baseline every file is compiled with) and
 * their kernels' instruction sets (avx2: AVX2; avx512: AVX2 and AVX-512
 * F/BW/VL/DQ, and VNNI when built with VNNI=1), asked of cpuid with the OS's support of the registers. Other
 * targets have nothing to check at run time. */
#ifndef NGPT_BASE_CPU_H
#define NGPT_BASE_CPU_H

#include "ngpt.h"

/* NGPT_OK, or NGPT_ERR_UNSUPPORTED with a message (no prefix) naming the
 * build's kernels, what they need and what this CPU lacks. The environment
 * variable NGPT_CPU_HIDE (comma-separated names: fma, avx, avx2, avx512f,
 * avx512bw, avx512vl, avx512dq, avx512vnni) makes it treat those features as absent, so
 * the refusal can be tested on a CPU that has them; "amx" in it keeps the
 * AVX-512 8-bit product off AMX tiles (arch/avx512/q8.c reads it). */
ngpt_status ngpt_cpu_check(void);

#endif
