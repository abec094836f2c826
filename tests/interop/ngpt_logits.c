/* ngpt_logits.c — the C side of the PyTorch interop tests (make test-interop):
 *
 *   ngpt_logits MODEL.ngpt TOKENS OUT               eval logits of one sequence
 *   ngpt_logits --greedy N MODEL.ngpt TOKENS OUT    N greedy tokens after the prompt
 *   ngpt_logits --adapter FILE.lora [--greedy N] ...   the same with a LoRA adapter applied
 *
 * TOKENS: raw little-endian int32 token ids (one sequence, at most T).
 * OUT: raw float32 logits (n, V), or the N generated int32 tokens.
 * Greedy decoding runs a full eval forward over the last min(len, T) tokens
 * per step (no KV cache) and takes the argmax (among the tokenizer's ids),
 * lowest index on ties: the
 * reference behaviour a cached decoder must reproduce. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ngpt.h"

static void *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            char *b = realloc(buf, cap);
            if (!b) break;
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *size = n;
    return buf;
}

static int fail(const char *what)
{
    fprintf(stderr, "ngpt_logits: %s: %s\n", what, ngpt_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    long greedy = -1;
    const char *adapter = NULL;
    if (argc >= 6 && !strcmp(argv[1], "--adapter")) {
        adapter = argv[2];
        argv += 2, argc -= 2;
    }
    if (argc == 6 && !strcmp(argv[1], "--greedy")) {
        greedy = strtol(argv[2], NULL, 10);
        argv += 2, argc -= 2;
    }
    if (argc != 4 || greedy == 0 || greedy < -1) {
        fprintf(stderr, "usage: ngpt_logits [--adapter FILE] [--greedy N] MODEL.ngpt TOKENS.i32 OUT\n");
        return 2;
    }
    ngpt_model *model;
    ngpt_config cfg;
    if (ngpt_model_open(&model, argv[1]) || ngpt_model_config(model, &cfg)) return fail(argv[1]);
    size_t bytes = 0;
    int32_t *prompt = read_all(argv[2], &bytes);
    size_t n = bytes / sizeof(int32_t);
    if (!prompt || n == 0 || bytes % sizeof(int32_t)) {
        fprintf(stderr, "ngpt_logits: %s: not a non-empty int32 file\n", argv[2]);
        return 1;
    }
    if (greedy < 0 && n > (size_t)cfg.context_len) {
        fprintf(stderr, "ngpt_logits: %zu tokens > T=%d\n", n, (int)cfg.context_len);
        return 1;
    }
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.seq = cfg.context_len;            /* a forward over up to T tokens */
    shape.logits_rows = NGPT_LOGITS_ALL;    /* every position's logits are written */
    ngpt_adapter *ad = NULL;
    ngpt_lora_config lc;
    if (adapter && (ngpt_adapter_open(&ad, adapter) || ngpt_adapter_lora_config(ad, &lc)))
        return fail(adapter);
    if (ad) shape.adapter_rank = lc.rank;
    ngpt_context *ctx;
    if (ngpt_context_init(&ctx, model, NULL, &shape, NULL, 0)) return fail("init");
    const float one = 1.0f;
    if (ad && ngpt_context_adapters_set(ctx, (const ngpt_adapter *const *)&ad, &one, 1))
        return fail(adapter);
    FILE *out = fopen(argv[3], "wb");
    if (!out) {
        fprintf(stderr, "ngpt_logits: cannot write %s\n", argv[3]);
        return 1;
    }
    const float *logits;
    const int32_t V = cfg.vocab_size, T = cfg.context_len;
    /* greedy picks among the tokenizer's ids: rows past them (Qwen's) have no token */
    int32_t NT = V;
    const ngpt_tokenizer *tk = NULL;
    ngpt_tokenizer_info ti;
    if (!ngpt_model_tokenizer(model, &tk) && tk && !ngpt_tokenizer_describe(tk, &ti) &&
        ti.n_tokens < V)
        NT = ti.n_tokens;
    if (greedy < 0) {
        if (ngpt_context_forward(ctx, prompt, 1, (int32_t)n, NULL, NULL) || ngpt_context_logits(ctx, &logits))
            return fail("forward");
        fwrite(logits, sizeof(float), n * (size_t)V, out);
    } else {
        int32_t *seq = malloc((n + (size_t)greedy) * sizeof(int32_t));
        memcpy(seq, prompt, n * sizeof(int32_t));
        for (long g = 0; g < greedy; g++) {
            int32_t len = (int32_t)(n + (size_t)g), win = len < T ? len : T;
            if (ngpt_context_forward(ctx, seq + len - win, 1, win, NULL, NULL) || ngpt_context_logits(ctx, &logits))
                return fail("forward");
            const float *row = logits + (size_t)(win - 1) * V;
            int32_t best = 0;
            for (int32_t v = 1; v < NT; v++)
                if (row[v] > row[best]) best = v;
            seq[len] = best;
        }
        fwrite(seq + n, sizeof(int32_t), (size_t)greedy, out);
        free(seq);
    }
    if (fclose(out)) return 1;
    ngpt_context_free(ctx);
    ngpt_adapter_close(ad);
    ngpt_model_close(model);
    free(prompt);
    return 0;
}
