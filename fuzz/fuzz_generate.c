/* fuzz_generate.c — prompt bytes through ngpt_context_generate on a tiny byte model
 * (V=256 T=16 C=8 L=1): the first bytes pick the settings (max_tokens,
 * temperature, top-k, end token, up to two stop sequences, beam width,
 * no_cache, stop at context full, context mode exact/shift/invalid), the
 * rest is the prompt (empty and longer-than-T prompts included). Properties:
 * a success returns at most max_tokens byte tokens, streamed exactly as
 * returned, with no stop sequence inside, and reports the prompt cropped to
 * its last T tokens and which end token stopped it; a failure has a
 * message; the KV cache never holds more than T tokens. */
#include "fuzz.h"

#define T 16

static ngpt_context *ctx;

typedef struct stream {
    int32_t got[64];
    int32_t n;
} stream;

static int on_token(int32_t token, void *user)
{
    stream *s = user;
    if (s->n < 64) s->got[s->n] = token;
    s->n++;
    return 0;
}

static bool contains(const int32_t *out, int32_t n, const char *stop)
{
    size_t k = strlen(stop);
    for (int32_t i = 0; k && i + (int32_t)k <= n; i++) {
        size_t j = 0;
        while (j < k && out[i + (int32_t)j] == (unsigned char)stop[j]) j++;
        if (j == k) return true;
    }
    return false;
}

NGPT_FUZZ_ENTRY(generate)
{
    if (!ctx) {
        ngpt_config cfg = ngpt_config_default();
        cfg.context_len = T, cfg.d_model = 8, cfg.n_layers = 1, cfg.n_heads = 2, cfg.d_ff = 16;
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        s.batch = 2;
        if (ngpt_context_init(&ctx, NULL, &cfg, &s, NULL, 0) || ngpt_context_params_init(ctx, 42))
            fuzz_fail("init: %s", ngpt_last_error());
    }
    fuzz_reader r = {data, size};
    ngpt_generate_config gc = ngpt_generate_config_default();
    uint8_t flags = fuzz_u8(&r);
    gc.max_tokens = (int32_t)(fuzz_u8(&r) % 24) - 2;     /* includes 0 and negatives; T + 5 at most */
    gc.sampler.temperature = (float)(fuzz_u8(&r) % 8) * 0.25f;
    gc.sampler.top_k = fuzz_u8(&r) % 5;
    gc.sampler.seed = fuzz_u8(&r);
    const int32_t end = (flags & 1) ? (int32_t)fuzz_u8(&r) - 1 : -1;     /* -1: none */
    gc.end_tokens = &end, gc.n_end_tokens = end >= 0;
    gc.beam_width = (flags & 2) ? fuzz_u8(&r) % 4 : 0;
    /* beam search refuses the draw's settings: most beam inputs search,
     * those with top-k 4 reach the refusal */
    if (gc.beam_width > 0 && gc.sampler.top_k != 4) gc.sampler.temperature = 1.0f, gc.sampler.top_k = 0;
    gc.no_cache = flags & 4;
    gc.stop_at_context_full = flags & 8;
    gc.context_mode = (ngpt_context_mode)((flags >> 6) % 3);     /* 2: not a mode */
    char stop_buf[2][T + 2];
    const char *stops[2] = {stop_buf[0], stop_buf[1]};
    gc.n_stop = (flags >> 4) % 3;
    for (int i = 0; i < gc.n_stop; i++) {
        size_t k = fuzz_u8(&r) % (T + 2);
        for (size_t j = 0; j < k; j++) stop_buf[i][j] = (char)(fuzz_u8(&r) | 1);   /* no NUL */
        stop_buf[i][k] = '\0';
    }
    gc.stop = gc.n_stop ? stops : NULL;
    int32_t n_prompt = (int32_t)r.n;
    int32_t *prompt = malloc((size_t)(n_prompt ? n_prompt : 1) * sizeof(int32_t));
    for (int32_t i = 0; i < n_prompt; i++) prompt[i] = r.p[i];
    int32_t *out = malloc(64 * sizeof(int32_t));
    stream got = {.n = 0};
    ngpt_generate_result res = {0};
    ngpt_status st = ngpt_context_generate(ctx, &gc, prompt, n_prompt, out, 64, on_token, &got, &res);
    fuzz_expect_message(st, "ngpt_context_generate");
    if (!st) {
        if (res.n_tokens < 0 || res.n_tokens > gc.max_tokens || res.n_tokens > res.n_generated)
            fuzz_fail("%d output tokens of %d generated, max %d", (int)res.n_tokens,
                      (int)res.n_generated, (int)gc.max_tokens);
        int32_t kept = n_prompt < T ? n_prompt : T;
        if (res.prompt_tokens != kept || res.prompt_dropped != n_prompt - kept)
            fuzz_fail("a prompt of %d: %d kept, %d dropped", (int)n_prompt,
                      (int)res.prompt_tokens, (int)res.prompt_dropped);
        if (got.n != res.n_tokens) fuzz_fail("streamed %d tokens, returned %d", (int)got.n, (int)res.n_tokens);
        if (res.end_token != (res.reason == NGPT_STOP_END_TOKEN ? end : -1))
            fuzz_fail("stopped by %s, end token %d", ngpt_stop_reason_string(res.reason),
                      (int)res.end_token);
        for (int32_t i = 0; i < res.n_tokens; i++) {
            if (out[i] < 0 || out[i] > 255) fuzz_fail("token %d", (int)out[i]);
            if (out[i] != got.got[i]) fuzz_fail("stream and output differ at %d", (int)i);
        }
        for (int i = 0; i < gc.n_stop; i++)
            if (contains(out, res.n_tokens, stops[i])) fuzz_fail("stop sequence %d in the output", i);
    }
    int32_t len = -1;
    if (ngpt_context_cache_len(ctx, 0, &len) || len < 0 || len > T) fuzz_fail("cache holds %d tokens", (int)len);
    free(prompt);
    free(out);
    return 0;
}
