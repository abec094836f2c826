/* fpmode.h — the floating-point mode the library computes in (docs/DESIGN.md §4,
 * docs/DETERMINISM.md): round to nearest even, subnormals kept (no
 * flush-to-zero, no denormals-are-zero), IEEE NaN propagation, every
 * exception masked. Its results are then the same on x86-64 (MXCSR 0x1F80),
 * AArch64 (FPCR 0) and ARMv7 (FPSCR 0), whatever mode the caller set: an
 * audio or game engine with FTZ/DAZ on, or a process that loaded a library
 * built with -ffast-math (crtfastmath sets FTZ/DAZ at startup).
 *
 * Every function include/ngpt.h declares starts its body with
 *     NGPT_FPMODE_SCOPE;
 * as its first line, whether or not it computes today: it saves the calling
 * thread's register, sets the library's mode, and on every return puts the
 * caller's register back exactly (control bits and status flags). One rule
 * with no exceptions, because "does not compute" does not stay true (a
 * function gains a callee that quantizes, as 0.2's ngpt_checkpoint_load did) and
 * is hard to see (under DAZ even a float comparison depends on the mode).
 * tests/test_fpmode_scope.sh fails when a declared function's definition
 * does not start with it, naming the file and line; tests/test_fpmode.c
 * calls every declared function in two hostile modes. The pool's threads
 * set the mode once when they start (ngpt_fpmode_set_library). Nesting is
 * harmless; a call costs a register read and one or two writes.
 *
 * Elsewhere (another architecture) only the rounding mode is set, through
 * <fenv.h>. */
#ifndef NGPT_BASE_FPMODE_H
#define NGPT_BASE_FPMODE_H

#include <stdint.h>

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__) && !defined(__arm__)
#include <fenv.h>
#endif

/* The library's control bits: x86 MXCSR with every exception masked and
 * FTZ, DAZ, RC clear; ARMv7 FPSCR all clear. (AArch64: FPCR 0.) The asm
 * below has memory clobbers so that no computation's stores move across a
 * mode change. */
#if defined(__x86_64__) || defined(__i386__)
#define NGPT_FPMODE_LIBRARY 0x1F80u
#elif defined(__arm__)
#define NGPT_FPMODE_LIBRARY 0u
#endif

/* A thread's floating-point control and status, as the hardware holds it. */
typedef struct ngpt_fpmode {
#if defined(__x86_64__) || defined(__i386__) || defined(__arm__)
    uint32_t reg;               /* MXCSR, or ARMv7's FPSCR */
#elif defined(__aarch64__)
    uint64_t fpcr, fpsr;
#else
    fenv_t env;
#endif
} ngpt_fpmode;

static inline ngpt_fpmode ngpt_fpmode_get(void)
{
    ngpt_fpmode m;
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("stmxcsr %0" : "=m"(m.reg) : : "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(m.fpcr) : : "memory");
    __asm__ __volatile__("mrs %0, fpsr" : "=r"(m.fpsr) : : "memory");
#elif defined(__arm__)
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(m.reg) : : "memory");
#else
    fegetenv(&m.env);
#endif
    return m;
}

static inline void ngpt_fpmode_set(const ngpt_fpmode *m)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("ldmxcsr %0" : : "m"(m->reg) : "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("msr fpcr, %0" : : "r"(m->fpcr) : "memory");
    __asm__ __volatile__("msr fpsr, %0" : : "r"(m->fpsr) : "memory");
#elif defined(__arm__)
    __asm__ __volatile__("vmsr fpscr, %0" : : "r"(m->reg) : "memory");
#else
    fesetenv(&m->env);
#endif
}

/* Whether m's control bits are the library's (status flags aside). */
static inline int ngpt_fpmode_is_library(const ngpt_fpmode *m)
{
#if defined(__x86_64__) || defined(__i386__)
    return (m->reg & ~0x3Fu) == NGPT_FPMODE_LIBRARY;    /* bits 0-5 are the flags */
#elif defined(__aarch64__)
    return m->fpcr == 0;
#elif defined(__arm__)
    return (m->reg & 0x07F79F00u) == NGPT_FPMODE_LIBRARY;  /* AHP DN FZ RMode Stride Len traps */
#else
    return fegetround() == FE_TONEAREST;
#endif
}

/* Sets the library's mode on this thread (flags cleared). */
static inline void ngpt_fpmode_set_library(void)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__arm__)
    const ngpt_fpmode m = {NGPT_FPMODE_LIBRARY};
    ngpt_fpmode_set(&m);
#elif defined(__aarch64__)
    const ngpt_fpmode m = {0, 0};
    ngpt_fpmode_set(&m);
#else
    fesetround(FE_TONEAREST);
#endif
}

/* Saves the caller's mode and sets the library's (only if it differs). */
static inline ngpt_fpmode ngpt_fpmode_enter(void)
{
    const ngpt_fpmode caller = ngpt_fpmode_get();
    if (!ngpt_fpmode_is_library(&caller)) ngpt_fpmode_set_library();
    return caller;
}

/* Puts the caller's mode back, flags included. */
static inline void ngpt_fpmode_leave(const ngpt_fpmode *caller) { ngpt_fpmode_set(caller); }

/* At the top of a public function's body: the library's mode until it
 * returns, by whichever return. */
#define NGPT_FPMODE_SCOPE \
    const ngpt_fpmode ngpt_fpmode_caller_ __attribute__((cleanup(ngpt_fpmode_leave), unused)) = \
        ngpt_fpmode_enter()

#endif
