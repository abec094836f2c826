/* kernels.h — the kernel ABI: every hot loop of the model is one kernel of
 * the list in kernels.inc (name, op file, signature, contract, which ISAs
 * have it), and everything here that names a kernel is generated from it.
 *
 * The scalar reference implementations (src/ref/<op>.c, suffix _ref) are the
 * specification. An ISA (arch/<isa>/<op>.c) implements the same functions and
 * must match the reference bit for bit; its table (arch/<isa>/table.c) is
 * chosen at build time as ngpt_kernels_active, and points the kernels its
 * column of the list marks REF at the reference. Determinism: docs/DESIGN.md §4.
 */
#ifndef NGPT_KERNELS_H
#define NGPT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"   /* the dropout key */
#include "gemm.h"       /* the gemm family's packed layout, workspace and block sizes */
#include "q8.h"         /* the 8-bit kernels' rule and layouts */
#include "q4.h"         /* the 4-bit kernels' rule and layout */

/* Reductions over rows use 8 virtual lanes: lane l sums elements i with
 * i % 8 == l in increasing i from +0.0f, then
 * ((p0+p4)+(p2+p6)) + ((p1+p5)+(p3+p7)). */
#define NGPT_LANES 8

/* Softmax/log-sum-exp terms with x - max below this are exactly 0, so no
 * canonical result is subnormal (ARMv7 NEON flushes subnormals to zero). */
#define NGPT_EXP_CUTOFF (-70.0f)

/* Per-step AdamW scalars (float, computed once per step by the optimizer). */
typedef struct ngpt_adamw_coef {
    float gmul;         /* gradient multiplier: clip coefficient / micro-batches */
    float beta1, one_minus_beta1, beta2, one_minus_beta2;
    float step_size;    /* (float)(lr / (1 - beta1^t)), computed in double */
    float bc2_sqrt;     /* (float)sqrt(1 - beta2^t), computed in double */
    float eps;
    float decay;        /* (float)(1 - lr*weight_decay) in double, or 1.0f */
} ngpt_adamw_coef;

/* ngpt_<kernel>_fn: the type of each kernel. */
#define NGPT_KERNEL(kernel, op, ret, params, ...) typedef ret(*ngpt_##kernel##_fn) params;
#include "kernels.inc"

/* A table of kernels: one field per kernel of the list, in its order. */
typedef struct ngpt_kernels {
    const char *name;           /* "scalar", "avx2", "avx512", "neon", ... */
#define NGPT_KERNEL(kernel, op, ret, params, ...) ngpt_##kernel##_fn kernel;
#include "kernels.inc"
} ngpt_kernels;

extern const ngpt_kernels ngpt_kernels_ref;     /* src/ref/table.c */
extern const ngpt_kernels ngpt_kernels_active;  /* chosen at build time */

/* The reference kernels, callable directly (ISA kernels run them on the
 * parts they leave, tests compare against them). */
#define NGPT_KERNEL(kernel, op, ret, params, ...) ret ngpt_f32_##kernel##_ref params;
#include "kernels.inc"

/* Building blocks of the tables; use as `#define NGPT_KERNEL <one of these>`
 * before including kernels.inc inside a table's initializer.
 *   NGPT_REF_ENTRY               .kernel = the reference
 * For an ISA, each column entry of the list picks through NGPT_ISA_ENTRY:
 *   NGPT_ISA_ENTRY(kernel, isa, SIMD)   .kernel = ngpt_f32_<kernel>__<isa>
 *   NGPT_ISA_ENTRY(kernel, isa, REF)    .kernel = ngpt_f32_<kernel>_ref
 *   NGPT_ISA_ENTRY(kernel, isa, AVX2)   .kernel = ngpt_f32_<kernel>__avx2
 * and NGPT_ISA_PROTO declares the kernels a table names besides the
 * reference (SIMD: the ISA's own; AVX2: the AVX2 one it borrows). The flag
 * is expanded first, so an ISA may map flags of its own to these. */
#define NGPT_REF_ENTRY(kernel, ...) .kernel = ngpt_f32_##kernel##_ref,
#define NGPT_ISA_ENTRY(kernel, isa, flag) NGPT_ISA_ENTRY_(kernel, isa, flag)
#define NGPT_ISA_ENTRY_(kernel, isa, flag) .kernel = NGPT_ISA_FN_##flag(kernel, isa),
#define NGPT_ISA_FN_SIMD(kernel, isa) ngpt_f32_##kernel##__##isa
#define NGPT_ISA_FN_REF(kernel, isa) ngpt_f32_##kernel##_ref
#define NGPT_ISA_FN_AVX2(kernel, isa) ngpt_f32_##kernel##__avx2
#define NGPT_ISA_PROTO(kernel, isa, flag, ret, params) NGPT_ISA_PROTO_(kernel, isa, flag, ret, params)
#define NGPT_ISA_PROTO_(kernel, isa, flag, ret, params) NGPT_ISA_PROTO_##flag(kernel, isa, ret, params)
#define NGPT_ISA_PROTO_SIMD(kernel, isa, ret, params) ret ngpt_f32_##kernel##__##isa params;
#define NGPT_ISA_PROTO_REF(kernel, isa, ret, params)
#define NGPT_ISA_PROTO_AVX2(kernel, isa, ret, params) ret ngpt_f32_##kernel##__avx2 params;

/* Combines 8 lane partial sums in the canonical tree. */
static inline float ngpt_lanes_combine(const float p[NGPT_LANES])
{
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

#endif
