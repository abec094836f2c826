/* fuzz_session.c — arbitrary bytes as a session in memory:
 * ngpt_context_cache_load_mem into slot 1 of a context of the tiny model (seed 1),
 * the input as it is and resealed (its checksum fixed, so the checks behind
 * it are reached). Properties: a refused load leaves a message and slot 1
 * exactly as it was; an accepted one saves back to the same bytes (but the
 * tokenizer field, as the context has none; a version 1 file as its version
 * 2 image) and the slot can be fed on. Seeds: sessions of that model (0, 3
 * and 8 tokens), version 1 and 2, and one of a q8 cache (refused: the
 * context's is float32). */
#include "fuzz.h"

static ngpt_context *ctx;

static void free_ctx(void) { ngpt_context_free(ctx); }

/* Slot 1's session image into buf (cap bytes); its size, 0 on failure. */
static size_t image_of(unsigned char *buf, size_t cap)
{
    size_t n = 0;
    return ngpt_context_cache_save_mem(ctx, 1, buf, cap, &n) ? 0 : n;
}

static void check(const unsigned char *b, size_t size)
{
    static const int32_t held[3] = {5, 9, 2};
    static unsigned char before[1 << 14], after[1 << 14];
    if (ngpt_context_cache_clear(ctx, 1) || ngpt_context_cache_prefill_slot(ctx, 1, held, 3))
        fuzz_fail("prefill: %s", ngpt_last_error());
    const size_t nb = image_of(before, sizeof before);
    ngpt_status st = ngpt_context_cache_load_mem(ctx, 1, b, size);
    fuzz_expect_message(st, "ngpt_context_cache_load_mem");
    const size_t na = image_of(after, sizeof after);
    if (st) {
        if (!nb || na != nb || memcmp(before, after, na) != 0)
            fuzz_fail("a refused session (%s) changed the slot", ngpt_last_error());
        return;
    }
    /* the same bytes, but for a tokenizer the file names and this context has
     * none (accepted: the tokens are the caller's), which the save writes as
     * 0, and so the checksum */
    static const unsigned char none[8];
    const bool named = memcmp(b + 24, none, 8) != 0;
    /* a version 1 file (no KV bytes at 96..103) saves back as version 2:
     * compare the version 2 image it stands for */
    uint32_t version;
    memcpy(&version, b + 8, 4);
    static unsigned char v2[(1 << 14) + 8];
    if (version == 1 && size + 8 <= sizeof v2) {
        const uint32_t two = 2;
        memcpy(v2, b, 96);
        memcpy(v2 + 8, &two, 4);
        memset(v2 + 96, 0, 8);
        memcpy(v2 + 104, b + 96, size - 96);
        size += 8;
        const uint64_t sum = XXH3_64bits(v2, size - 8);
        memcpy(v2 + size - 8, &sum, 8);
        b = v2;
    }
    if (na != size || (named ? memcmp(after, b, 24) != 0 ||
                                   memcmp(after + 32, b + 32, size - 40) != 0
                             : memcmp(after, b, size) != 0))
        fuzz_fail("an accepted session of %zu bytes saves back as %zu other bytes", size, na);
    int32_t len = 0, tok = 3;
    if (ngpt_context_cache_len(ctx, 1, &len)) fuzz_fail("len: %s", ngpt_last_error());
    if (len < 8 && ngpt_context_cache_prefill_slot(ctx, 1, &tok, 1))
        fuzz_fail("feeding a restored slot of %d tokens: %s", (int)len, ngpt_last_error());
}

NGPT_FUZZ_ENTRY(session)
{
    if (!ctx) {
        ngpt_config c = fuzz_tiny_config();
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        s.batch = 2, s.threads = 1;
        if (ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0) || ngpt_context_params_init(ctx, 1))
            fuzz_fail("context: %s", ngpt_last_error());
        atexit(free_ctx);
    }
    unsigned char *b = fuzz_copy(data, size);
    check(b, size);
    if (size >= 8) {        /* resealed: the last 8 bytes are the XXH3-64 of the rest */
        const uint64_t sum = XXH3_64bits(b, size - 8);
        memcpy(b + size - 8, &sum, 8);
        check(b, size);
    }
    free(b);
    return 0;
}
