/* test_dirty_arena.c — the library never reads arena memory it has not
 * written: contexts made in a caller's arena filled with NaN bytes (0xff:
 * every float a NaN, every int -1), at an odd address, compute exactly what
 * contexts in the library's own allocation compute (ngpt_context_init
 * clears only the state that starts at zero: parameters, gradients, AdamW
 * moments, cache lengths). The same with 3 threads; valgrind's memcheck
 * (make valgrind) checks the same from the other side. */
#include <math.h>

#include "model/acts.h"
#include "scenario.h"

int main(void)
{
#ifdef NGPT_POISON_SHARED
    /* the poison build (make SANITIZE=1, POISON=1): a buffer handed to its
     * next user holds NaN until that user writes it, so every test of this
     * build checks that the wiring's sharing (model/acts.c) is right */
    float handed[5] = {1, 2, 3, 4, 5};
    ngpt_acts_handover(handed, 4);
    CHECK(isnan(handed[0]) && isnan(handed[3]) && handed[4] == 5.0f,
          "a handed-over buffer is poisoned, and only its n floats");
#endif
    ngpt_config tiny = test_config_tiny();
    results clean, r;
    char diff[256];
    scenario_run(&tiny, 3, 16, (variant){1, false, false}, &clean);
    scenario_run(&tiny, 3, 16, (variant){1, false, true}, &r);
    CHECK(!memcmp(&r, &clean, sizeof r), "NaN-filled arena: %s",
          scenario_diff(&r, &clean, diff, sizeof diff));
    scenario_run(&tiny, 3, 16, (variant){3, true, true}, &r);
    CHECK(!memcmp(&r, &clean, sizeof r), "NaN-filled arena, 3 threads: %s",
          scenario_diff(&r, &clean, diff, sizeof diff));
    /* a fresh context: zero parameters (LayerNorm weights 1), gradients,
     * step count and cache lengths */
    for (int mode = 0; mode < 2; mode++) {
        ngpt_shape s = ngpt_shape_default(mode ? NGPT_MODE_TRAIN : NGPT_MODE_INFER);
        s.batch = 2, s.seq = 8;
        size_t bytes = 0, n, bad = 0;
        CHECK_OK(ngpt_context_arena_size(NULL, &tiny, &s, &bytes));
        unsigned char *arena = malloc(bytes);
        ngpt_context *ctx = NULL;
        if (arena) {
            memset(arena, 0xff, bytes);
            CHECK_OK(ngpt_context_init(&ctx, NULL, &tiny, &s, arena, bytes));
        }
        if (ctx) {
            float *p, *g;
            CHECK_OK(ngpt_context_params(ctx, &p, &n));
            for (size_t i = 0; i < n; i++) bad += !(p[i] == 0.0f || p[i] == 1.0f);
            if (mode) {
                CHECK_OK(ngpt_context_grads(ctx, &g, &n));
                for (size_t i = 0; i < n; i++) bad += g[i] != 0.0f;
                uint64_t steps = 1;
                CHECK_OK(ngpt_context_step_count(ctx, &steps));
                bad += steps != 0;
            } else {
                for (int32_t slot = 0; slot < 2; slot++) {
                    int32_t len = -1;
                    CHECK_OK(ngpt_context_cache_len(ctx, slot, &len));
                    bad += len != 0;
                }
            }
            CHECK(bad == 0, "%s: %zu values not cleared", mode ? "train" : "infer", bad);
            ngpt_context_free(ctx);
        }
        free(arena);
    }
    return test_summary("test_dirty_arena");
}
