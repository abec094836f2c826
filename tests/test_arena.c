/* test_arena.c — the planner's size is exact, a caller's buffer of that size
 * works at any alignment, one byte less is refused, and nothing is allocated
 * after init: the library's calls to malloc/calloc/realloc are counted. */
/* test-ldflags: -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc */
#include <stdlib.h>

#include "alloc_count.h"
#include "test.h"

static void exact_size(ngpt_mode mode, ngpt_trace trace)
{
    ngpt_config cfg = test_config_tiny();
    ngpt_shape s = ngpt_shape_default(mode);
    s.batch = 3, s.trace = trace, s.threads = 2;
    s.logits_rows = NGPT_LOGITS_ALL;    /* the forward with targets (a loss) */
    size_t bytes;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &bytes));
    unsigned char *buf = __real_malloc(bytes + 64);
    for (size_t shift = 0; shift < 64; shift += 7) {
        ngpt_context *ctx = NULL;
        CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, buf + shift, bytes - 1), NGPT_ERR_ARENA_TOO_SMALL);
        CHECK(ctx == NULL, "no context on failure");
        CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, buf + shift, bytes));
        if (!ctx) continue;
        size_t used = 0;
        CHECK_OK(ngpt_context_arena_used(ctx, &used));
        CHECK(used == bytes, "used %zu planned %zu", used, bytes);
        CHECK(((uintptr_t)ctx % 64) == 0, "context aligned");
        float *p;
        size_t n;
        CHECK_OK(ngpt_context_params(ctx, &p, &n));
        CHECK((uintptr_t)p % 64 == 0 && (unsigned char *)p > buf && (unsigned char *)(p + n) <= buf + shift + bytes,
              "parameters inside the caller's buffer");
        CHECK_OK(ngpt_context_params_init(ctx, 1));
        int32_t tok[3 * 16], tgt[3 * 16];
        for (int i = 0; i < 48; i++) tok[i] = (i * 37) % 256, tgt[i] = (i * 11) % 256;
        int before = allocations;
        float loss;
        CHECK_OK(ngpt_context_dropout_set(ctx, true, 5, 1));
        CHECK_OK(ngpt_context_forward(ctx, tok, 3, 16, tgt, &loss));
        CHECK_OK(ngpt_context_forward(ctx, tok, 2, 9, NULL, NULL));
        CHECK(allocations == before, "forward allocated %d times", allocations - before);
        ngpt_context_free(ctx);
    }
    free(buf);
}

static void internal_allocation(void)
{
    ngpt_config cfg = test_config_tiny();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    int before = allocations;
    ngpt_context *ctx;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0));
    CHECK(allocations == before + 1, "init allocates exactly once, did %d", allocations - before);
    ngpt_context_free(ctx);
    ngpt_context_free(NULL);
}

static void bad_shapes(void)
{
    ngpt_config cfg = test_config_tiny();
    size_t bytes;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    ngpt_shape b = s;
    b.batch = -1;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &cfg, &b, &bytes), NGPT_ERR_BAD_ARG);
    b = s, b.seq = 17;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &cfg, &b, &bytes), NGPT_ERR_BAD_ARG);
    b = s, b.threads = -1;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &cfg, &b, &bytes), NGPT_ERR_BAD_ARG);
    b = s, b.mode = (ngpt_mode)7;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &cfg, &b, &bytes), NGPT_ERR_BAD_ARG);
    b = s, b.trace = (ngpt_trace)7;
    CHECK_STATUS(ngpt_context_arena_size(NULL, &cfg, &b, &bytes), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_arena_size(NULL, NULL, &s, &bytes), NGPT_ERR_NULL_ARG);
    /* shape NULL, and zeros in every field, plan the default inference shape */
    size_t null_bytes = 0, zero_bytes = 0;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, NULL, &null_bytes));
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &(ngpt_shape){0}, &zero_bytes));
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &bytes));
    CHECK(null_bytes == bytes && zero_bytes == bytes, "shape NULL plans %zu bytes, zeros %zu, "
          "the default %zu", null_bytes, zero_bytes, bytes);
    CHECK_STATUS(ngpt_context_arena_size(NULL, &cfg, &s, NULL), NGPT_ERR_NULL_ARG);
    ngpt_context *ctx;
    CHECK_STATUS(ngpt_context_init(NULL, NULL, &cfg, &s, NULL, 0), NGPT_ERR_NULL_ARG);
    cfg.n_heads = 5;
    CHECK_STATUS(ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0), NGPT_ERR_BAD_CONFIG);
}

static void sizes_grow(void)
{
    /* More batch, sequence, training or a trace never needs less memory. */
    ngpt_config cfg = test_config_tiny();
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    size_t a, b, c, d, e;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &a));
    s.batch = 2;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &b));
    s.trace = NGPT_TRACE_FULL;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &c));
    s.mode = NGPT_MODE_TRAIN;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &d));
    s.threads = 4;
    CHECK_OK(ngpt_context_arena_size(NULL, &cfg, &s, &e));
    CHECK(a < b && b < c && c < d && d < e, "%zu %zu %zu %zu %zu", a, b, c, d, e);
}

int main(void)
{
    exact_size(NGPT_MODE_INFER, NGPT_TRACE_NONE);
    exact_size(NGPT_MODE_INFER, NGPT_TRACE_FULL);
    exact_size(NGPT_MODE_TRAIN, NGPT_TRACE_LAST_ROW);
    internal_allocation();
    bad_shapes();
    sizes_grow();
    return test_summary("test_arena");
}
