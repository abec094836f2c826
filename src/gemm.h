/* gemm.h — what the matrix-product kernels of src/kernels.inc (gemm, pack_w,
 * gemm_packed: their contracts are in the list) share with their callers:
 * the packed-weight layout, the workspace, the block sizes and how to split
 * a product across threads. Included by kernels.h. Every product keeps
 * docs/DESIGN.md §4: each output is one fma chain over k in increasing order from
 * +0.0f, then + bias, then added to the old C when accumulating.
 *
 * Packed weights (one layout for every ISA, so the reference, AVX2 and NEON
 * read the same bytes): a Linear's W (n outputs, k inputs), stored (n, k) as
 * in PyTorch, becomes ceil(n/16) panels of 16 output columns, each panel k
 * rows of 16 floats:
 *     wp[(j/16)*k*16 + kk*16 + j%16] = W[j][kk],  zero past n.
 * Panel p starts at wp + p*k*16 (ngpt_gemm_panel). One kk row of a panel is
 * exactly one 64-byte line when wp is 64-byte aligned, and a product walks
 * each panel from its first byte to its last.
 *
 * Splitting work across threads (only independent outputs, never k):
 *  - rows: call with a + i0*a_rs, c + i0*c_rs and m = the row count;
 *  - columns of a packed product: j0 a multiple of 16, call with
 *    ngpt_gemm_panel(wp, k, j0), bias + j0, c + j0 and n = the column count;
 *  - columns of gemm: b + j0*b_cs, bias + j0, c + j0, n = the column count.
 * Any split gives the same bits (each output's chain is the same whatever
 * tile computes it). Each concurrent call needs its own workspace.
 *
 * The weight gradient dW = dY^T X splits the same way (rows are W's output
 * rows, columns its inputs): every thread runs whole chains over B*T. Each
 * part packs its own blocks of B (k = B*T rows of X) and, for every
 * NC-column block, of A: ops.c cuts a weight gradient into whole NC-column
 * blocks where it has one for every thread (no extra packing), else into
 * one row part per thread.
 *
 * Workspace: gemm takes `work`, NGPT_GEMM_WORK_BYTES bytes aligned to 64,
 * private to the call while it runs: the arena holds one per thread,
 * thread t's at plan.threads.gemm_work + t * NGPT_GEMM_WORK_FLOATS. It holds the
 * packed A and B blocks and, when accumulating over more than one k block,
 * the partial chains. gemm_packed needs none (its B is packed already, its
 * A read in place). Nothing larger than about 12 KiB goes on the stack, so
 * pool threads and small boards are safe.
 *
 * Weights packed once: pack_w after each optimizer step (training) or at
 * load (inference) into an arena region of ngpt_packed_w_floats(n, k)
 * floats per Linear, then gemm_packed for x W^T: the forward's Linear
 * layers, prefill, and decode (m <= 8 rows: one token or a few beams)
 * without repacking anything per token. */
#ifndef NGPT_GEMM_H
#define NGPT_GEMM_H

#include <stdbool.h>
#include <stddef.h>

/* The packed panel width NR (two 8-lane groups: AVX2 two __m256, NEON four
 * float32x4_t, AVX-512 one __m512), and the register tile's rows MR of the
 * ISAs whose tile is one panel wide (AVX2, NEON: 6x16). An ISA may choose
 * its own tile in arch/gemm_blocked.h (AVX-512: 8 rows x two panels). */
#define NGPT_GEMM_MR 6
#define NGPT_GEMM_NR 16

/* Cache blocks (floats), the same on every build, chosen for a 32-64 KiB
 * L1d and a >= 512 KiB L2 (Zen 4/5: 48 KiB / 1 MiB; Cortex-A76: 64 KiB /
 * 512 KiB, which holds the A and B blocks, 400 KiB):
 *  KC  k rows per block: one B micro-panel (KC x 16 = 16 KiB) stays in L1
 *      while every A micro-panel of the block streams past it; a chain leaves
 *      the registers once per KC steps (stored as a float, reloaded, continued).
 *  MC  rows of the packed A block (MC x KC = 144 KiB), which stays in L2 while
 *      the B panels of the block pass over it.
 *  NC  columns of the packed B block (KC x NC = 256 KiB, L2/L3).
 *  MS  rows whose partial chains the workspace holds when accumulating
 *      (MS x NC = 1.1 MiB): C keeps the addend until the chain is done, so the
 *      partials cannot live in C, and B is packed once per MS rows. 1152
 *      (8 MC) covers every weight gradient of the default model (out <= 1024:
 *      B packed once per k block, 5-8% faster than 288 on qkv and fc1). */
#define NGPT_GEMM_KC 256
#define NGPT_GEMM_MC 144
#define NGPT_GEMM_NC 256
#define NGPT_GEMM_MS 1152

/* Workspace of one gemm call: packed A block | packed B block | partials. */
#define NGPT_GEMM_WORK_FLOATS                                                          \
    (NGPT_GEMM_MC * NGPT_GEMM_KC + NGPT_GEMM_KC * NGPT_GEMM_NC + NGPT_GEMM_MS * NGPT_GEMM_NC)
#define NGPT_GEMM_WORK_BYTES (NGPT_GEMM_WORK_FLOATS * sizeof(float))

/* Floats of a packed (n, k) weight. */
static inline size_t ngpt_packed_w_floats(int n, int k)
{
    return (size_t)((n + NGPT_GEMM_NR - 1) / NGPT_GEMM_NR) * (size_t)k * NGPT_GEMM_NR;
}

/* The panel holding output column j0 (j0 a multiple of 16). */
static inline const float *ngpt_gemm_panel(const float *wp, int k, int j0)
{
    return wp + (size_t)(j0 / NGPT_GEMM_NR) * (size_t)k * NGPT_GEMM_NR;
}

#endif
