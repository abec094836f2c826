/* test_cpu.c — a library built for an instruction set the CPU lacks refuses
 * at ngpt_context_init with a message naming the build's kernels and what is
 * missing, never dying of SIGILL (src/base/cpu.c). The CPU this runs on has
 * what the build needs (or the test could not run): NGPT_CPU_HIDE makes the
 * check treat a feature as absent. x86-64 builds need FMA and AVX (every
 * file), avx2 builds AVX2 too, avx512 builds AVX-512 F/BW/VL/DQ as well
 * (and VNNI, built with VNNI=1); other targets have nothing to check. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

static ngpt_status init(ngpt_context **ctx)
{
    ngpt_config cfg = ngpt_config_default();
    cfg.context_len = 8, cfg.d_model = 8, cfg.n_layers = 1, cfg.n_heads = 2, cfg.d_ff = 16;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    return ngpt_context_init(ctx, NULL, &cfg, &shape, NULL, 0);
}

/* With NGPT_CPU_HIDE=hide, init refuses naming `label` and the build
 * (x86-64: other targets have no feature to hide). */
#if defined(__x86_64__)
static void refused(const char *hide, const char *label)
{
    setenv("NGPT_CPU_HIDE", hide, 1);
    ngpt_context *ctx = (ngpt_context *)1;
    CHECK_STATUS(init(&ctx), NGPT_ERR_UNSUPPORTED);
    const char *msg = ngpt_last_error();
    CHECK(ctx == NULL, "a refused init leaves no context");
    CHECK(!strncmp(msg, "ngpt_context_init: ", 19), "prefixed: %s", msg);
    CHECK(strstr(msg, "built for the " NGPT_ARCH_NAME " kernels") != NULL, "names the build: %s", msg);
    CHECK(strstr(msg, label) != NULL && strstr(msg, "NGPT_CPU_HIDE") != NULL,
          "names %s and why it is missing: %s", label, msg);
    unsetenv("NGPT_CPU_HIDE");
}
#endif

/* With NGPT_CPU_HIDE=hide (a feature the build does not need), init works. */
static void accepted(const char *hide)
{
    if (hide) setenv("NGPT_CPU_HIDE", hide, 1);
    ngpt_context *ctx = NULL;
    CHECK_OK(init(&ctx));
    ngpt_context_free(ctx);
    unsetenv("NGPT_CPU_HIDE");
}

int main(void)
{
    accepted(NULL);
    printf("cpu: %s\n", ngpt_build_info());
#if defined(__x86_64__)
    refused("fma", "lacks FMA");
    refused("avx", "lacks AVX ");
    refused("sse,avx512q,fma", "lacks FMA");     /* other names in the list are ignored */
    if (!strcmp(NGPT_ARCH_NAME, "avx512")) {
        refused("avx512bw", "lacks AVX-512BW");
        refused("avx512f,avx512dq", "lacks AVX-512F, AVX-512DQ");
        refused("avx512vl", "make ARCH=avx2");
        refused("avx2", "make ARCH=scalar");
#if defined(NGPT_ARCH_VNNI)
        refused("avx512vnni", "lacks AVX-512 VNNI");
        refused("avx512vnni", "make ARCH=avx512 VNNI=0");
        refused("avx512vnni,avx512bw", "lacks AVX-512BW, AVX-512 VNNI");
        refused("avx512vnni,avx512bw", "make ARCH=avx2");   /* the first missing says what to do */
        refused("avx512vnni,avx2", "make ARCH=scalar");
#else
        accepted("avx512vnni");
#endif
    } else if (!strcmp(NGPT_ARCH_NAME, "avx2")) {
        refused("avx2", "lacks AVX2");
        accepted("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni");
    } else {
        accepted("avx2,avx512f");
    }
#else
    accepted("fma,avx,avx2,avx512f");     /* nothing to check: the names mean nothing here */
#endif
    return test_summary("test_cpu");
}
