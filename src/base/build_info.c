/* build_info.c — one line naming what was built, for bug reports and benches. */
#include <sleef.h>
#include <utf8proc.h>
#include <xxhash.h>

#include "base/fpmode.h"
#include "ngpt.h"

#define NGPT_STR2(x) #x
#define NGPT_STR(x) NGPT_STR2(x)

#if defined(__clang__)
#define NGPT_CC "clang-" NGPT_STR(__clang_major__) "." NGPT_STR(__clang_minor__)
#elif defined(__GNUC__)
#define NGPT_CC "gcc-" NGPT_STR(__GNUC__) "." NGPT_STR(__GNUC_MINOR__)
#else
#define NGPT_CC "unknown-cc"
#endif

#if defined(__x86_64__)
#define NGPT_TARGET "x86_64"
#elif defined(__aarch64__)
#define NGPT_TARGET "aarch64"
#elif defined(__arm__)
#define NGPT_TARGET "armv7"
#else
#define NGPT_TARGET "other"
#endif

#ifndef NGPT_BUILD_FLAGS
#define NGPT_BUILD_FLAGS "unknown"
#endif

#ifndef NGPT_ARCH_NAME
#define NGPT_ARCH_NAME "scalar"
#endif

const char *ngpt_build_info(void)
{
    NGPT_FPMODE_SCOPE;
    return "ngpt " NGPT_STR(NGPT_VERSION_MAJOR) "." NGPT_STR(NGPT_VERSION_MINOR) "."
           NGPT_STR(NGPT_VERSION_PATCH) " kernels=" NGPT_ARCH_NAME " target=" NGPT_TARGET
           " sleef=" NGPT_STR(SLEEF_VERSION_MAJOR) "." NGPT_STR(SLEEF_VERSION_MINOR) "."
           NGPT_STR(SLEEF_VERSION_PATCHLEVEL) " xxhash=" NGPT_STR(XXH_VERSION_MAJOR) "."
           NGPT_STR(XXH_VERSION_MINOR) "." NGPT_STR(XXH_VERSION_RELEASE) " utf8proc="
           NGPT_STR(UTF8PROC_VERSION_MAJOR) "." NGPT_STR(UTF8PROC_VERSION_MINOR) "."
           NGPT_STR(UTF8PROC_VERSION_PATCH) " cc=" NGPT_CC " flags=" NGPT_BUILD_FLAGS;
}
