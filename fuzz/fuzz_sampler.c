/* fuzz_sampler.c — sampler settings: every field of ngpt_sampler (floats
 * from raw bits, so NaN, Inf, negative zero and subnormals too), banned ids,
 * a logit bias, the recent tokens and the logits row itself come from the
 * input, for a V=16 context. Properties: validate and sample agree (a
 * setting validate rejects, sample rejects too); a successful sample is a
 * token id in 0..V-1 that is not banned; every failure has a message. */
#include <math.h>

#include "fuzz.h"

#define V 16

static ngpt_context *ctx;

NGPT_FUZZ_ENTRY(sampler)
{
    if (!ctx) {
        ngpt_config cfg = fuzz_tiny_config();
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        if (ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0)) fuzz_fail("init: %s", ngpt_last_error());
    }
    fuzz_reader r = {data, size};
    ngpt_sampler s = ngpt_sampler_default();
    uint8_t which = fuzz_u8(&r);     /* which fields come from the input */
    if (which & 1) s.temperature = fuzz_f32(&r);
    if (which & 2) s.top_k = fuzz_i32(&r);
    if (which & 4) s.top_p = fuzz_f32(&r);
    if (which & 8) s.min_p = fuzz_f32(&r);
    if (which & 16) s.repeat_penalty = fuzz_f32(&r), s.repeat_window = fuzz_i32(&r);
    s.seed = (uint64_t)fuzz_i32(&r);
    int32_t banned[8];
    float bias[V];
    if (which & 32) {
        s.n_banned = fuzz_u8(&r) % 9;
        for (int i = 0; i < s.n_banned; i++) banned[i] = (int8_t)fuzz_u8(&r);
        s.banned = banned;
    }
    if (which & 64) {
        for (int i = 0; i < V; i++) bias[i] = fuzz_f32(&r);
        s.logit_bias = bias;
    }
    int32_t n_recent = fuzz_u8(&r) % 40, recent[40];
    for (int i = 0; i < n_recent; i++) recent[i] = (which & 128) ? (int8_t)fuzz_u8(&r) : fuzz_u8(&r) % V;
    float *logits = malloc(V * sizeof(float));   /* exact size for ASan */
    for (int i = 0; i < V; i++) logits[i] = r.n >= 4 ? fuzz_f32(&r) : (float)(i % 5) - 2.0f;
    int32_t sequence = (int32_t)(fuzz_u8(&r) % 4);
    uint64_t index = fuzz_u8(&r);

    ngpt_status vs = ngpt_sampler_validate(&s, V);
    fuzz_expect_message(vs, "ngpt_sampler_validate");
    int32_t token = -12345;
    ngpt_status st = ngpt_context_sample(ctx, &s, logits, n_recent ? recent : NULL, n_recent, sequence,
                                 index, &token);
    fuzz_expect_message(st, "ngpt_context_sample");
    if (vs && !st) fuzz_fail("sample accepted settings validate rejects: %s", ngpt_status_string(vs));
    if (!st) {
        if (token < 0 || token >= V) fuzz_fail("sampled token %d", (int)token);
        for (int i = 0; i < s.n_banned; i++)
            if (banned[i] == token) fuzz_fail("sampled banned token %d", (int)token);
    }
    free(logits);
    return 0;
}
