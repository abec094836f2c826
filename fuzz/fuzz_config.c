/* fuzz_config.c — `--config key=value` strings: each input line goes through
 * ngpt_config_set, then the result through validate, param_count,
 * arena_size (infer and train) and, for a model of at most MAX_PARAMS
 * parameters, init + init_weights + a forward in a caller buffer at an odd
 * offset (larger ones only cost time: every switch shows at any size; the
 * seeds are such small models). Properties:
 * a rejected line leaves the config unchanged; every failure has a message;
 * a config that validates can be planned, created and run with finite
 * logits and loss; ngpt_config_format prints what parses back to the same
 * config and always NUL-terminates. */
#include <math.h>

#include "runtime/config.h"     /* ngpt_config_compare */
#include "fuzz.h"

#define MAX_LINES 32
/* Models run when small: drawing the weights costs each input time in
 * proportion to their count, and the arena holds a fixed GEMM workspace
 * (about 1.5 MiB a thread with float32 weights) besides them. */
#define MAX_PARAMS (1u << 14)
#define MAX_ARENA (4u << 20)

static void round_trip(const ngpt_config *c)
{
    char buf[512];
    ngpt_config_format(c, buf, sizeof buf);
    ngpt_config back = ngpt_config_default();
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
        if (ngpt_config_set(&back, tok))
            fuzz_fail("format printed \"%s\", which does not parse: %s", tok, ngpt_last_error());
    if (ngpt_config_compare(c, &back))
        fuzz_fail("format does not round-trip: %s", ngpt_last_error());
}

static void run_model(const ngpt_config *c, size_t odd)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = c->context_len < 4 ? c->context_len : 4;
    s.logits_rows = NGPT_LOGITS_ALL;    /* a loss, and every row checked finite */
    size_t bytes, params;
    ngpt_status st = ngpt_context_arena_size(NULL, c, &s, &bytes);
    fuzz_expect_message(st, "ngpt_context_arena_size");
    if (st || bytes > MAX_ARENA || ngpt_config_param_count(c, &params) || params > MAX_PARAMS) return;
    unsigned char *buf = malloc(bytes + odd);
    ngpt_context *ctx = NULL;
    if (!buf) abort();
    if ((st = ngpt_context_init(&ctx, NULL, c, &s, buf + odd, bytes)))
        fuzz_fail("init of a planned config: %s", ngpt_last_error());
    size_t used = 0;
    if (ngpt_context_arena_used(ctx, &used) || used != bytes)
        fuzz_fail("arena_used %zu != planned %zu", used, bytes);
    if ((st = ngpt_context_params_init(ctx, 7))) fuzz_fail("init_weights: %s", ngpt_last_error());
    int32_t tok[8];
    for (int i = 0; i < 8; i++) tok[i] = (i * 37 + 11) % c->vocab_size;
    float loss = NAN;
    if ((st = ngpt_context_forward(ctx, tok, 1, s.seq, tok, &loss))) fuzz_fail("forward: %s", ngpt_last_error());
    const float *logits;
    if ((st = ngpt_context_logits(ctx, &logits))) fuzz_fail("logits: %s", ngpt_last_error());
    for (size_t i = 0; i < (size_t)s.seq * (size_t)c->vocab_size; i++)
        if (!isfinite(logits[i])) fuzz_fail("logit %zu is %g", i, (double)logits[i]);
    if (!isfinite(loss)) fuzz_fail("loss is %g", (double)loss);
    free(buf);
}

NGPT_FUZZ_ENTRY(config)
{
    ngpt_config c = ngpt_config_default();
    size_t start = 0;
    for (int lines = 0; start < size && lines < MAX_LINES; lines++) {
        const uint8_t *nl = memchr(data + start, '\n', size - start);
        size_t len = nl ? (size_t)(nl - (data + start)) : size - start;
        char *kv = malloc(len + 1);   /* exact size: ASan sees any over-read */
        if (!kv) abort();
        memcpy(kv, data + start, len);
        kv[len] = '\0';
        ngpt_config before = c;
        ngpt_status st = ngpt_config_set(&c, kv);
        fuzz_expect_message(st, "ngpt_config_set");
        if (st && ngpt_config_compare(&before, &c)) fuzz_fail("a rejected line changed the config");
        free(kv);
        start += len + 1;
    }
    /* format into every small buffer size: always terminated, never past size */
    for (size_t n = 0; n < 12; n++) {
        char *small = malloc(n ? n : 1);
        if (!small) abort();
        if (n) small[0] = 'x';
        ngpt_config_format(&c, small, n);
        if (n && memchr(small, '\0', n) == NULL) fuzz_fail("format(size %zu) not terminated", n);
        free(small);
    }
    ngpt_status st = ngpt_config_validate(&c);
    fuzz_expect_message(st, "ngpt_config_validate");
    size_t count;
    ngpt_status pc = ngpt_config_param_count(&c, &count);
    if ((st == NGPT_OK) != (pc == NGPT_OK)) fuzz_fail("validate and param_count disagree");
    ngpt_shape shapes[2] = {ngpt_shape_default(NGPT_MODE_INFER), ngpt_shape_default(NGPT_MODE_TRAIN)};
    for (int i = 0; i < 2; i++) {
        size_t bytes;
        ngpt_status as = ngpt_context_arena_size(NULL, &c, &shapes[i], &bytes);
        fuzz_expect_message(as, "ngpt_context_arena_size");
        if (st && !as) fuzz_fail("arena_size planned an invalid config");
    }
    if (st) return 0;
    round_trip(&c);
    run_model(&c, size % 61);
    return 0;
}
