/* test_fpmode.c — the floating-point mode (src/base/fpmode.h, docs/DETERMINISM.md):
 *  - every function include/ngpt.h declares (the list tests/public_decls.h
 *    reads from the header, the one test_public_api covers) is called in a
 *    caller's mode of round toward zero, then of flush-to-zero and
 *    denormals-are-zero, each with a sticky flag already set: each call
 *    hands the caller's register back exactly, and every result (statuses,
 *    checksums of parameters, logits, files, tokens, strings) has the bits
 *    of the default mode's run, on a model whose activations are subnormal
 *    too, with one thread or three (every job split, so the pool's workers
 *    compute). A declared function that no call below covers fails the
 *    test, so a function added to the header later is covered here too.
 *    The calls include importing a small Hugging Face directory (and llama2.c files)
 *    (tests/hf_dir.h; F16 weights, some subnormal), in float32 and 8-bit,
 *    fine-tuning from the import and the checkpoint sizes of its files;
 *  - the hostile modes really change arithmetic here (else the above could
 *    not fail);
 *  - the canonical math keeps subnormals and rounds a product that is tiny
 *    only before rounding up to FLT_MIN, in the reference and the active
 *    kernels;
 *  - ARMv7: Advanced SIMD flushes set FPSCR.IDC/UFC, which the NEON kernels'
 *    exactness rests on (arch/neon/kernels_neon.h). */
#include <float.h>
#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "base/fpmode.h"
#include "gemm.h"
#include "hf_dir.h"
#include "kernels.h"
#include "kcase.h"
#include "llama2c_files.h"
#include "model/kv.h"          /* the cache's keys */
#include "public_decls.h"
#include "runtime/context.h"   /* the pool's inline threshold: split even tiny jobs */
#include "runtime/pool.h"
#include "test.h"

#if defined(__arm__)
#include <arm_neon.h>
#endif

/* A caller's mode other than the library's, with a sticky flag already set
 * (inexact), which every call must hand back. */
typedef enum hostile { ROUND_TOWARD_ZERO, FLUSH_TO_ZERO } hostile;
static const char *const HOSTILE_NAME[] = {"round toward zero", "flush-to-zero/denormals-are-zero"};

static ngpt_fpmode hostile_mode(hostile h)
{
    ngpt_fpmode m = ngpt_fpmode_get();
#if defined(__x86_64__) || defined(__i386__)
    m.reg = 0x1F80u | 0x0020u /* PE */ |
            (h == ROUND_TOWARD_ZERO ? 0x6000u /* RC */ : 0x8000u /* FTZ */ | 0x0040u /* DAZ */);
#elif defined(__aarch64__)
    m.fpcr = h == ROUND_TOWARD_ZERO ? 3u << 22 /* RMode RZ */ : 1u << 24 /* FZ: inputs and results */;
    m.fpsr = 0x10u;     /* IXC */
#elif defined(__arm__)
    m.reg = (h == ROUND_TOWARD_ZERO ? 3u << 22 : 1u << 24) | 0x10u /* IXC */;
#else
    if (h == ROUND_TOWARD_ZERO) {
        fesetround(FE_TOWARDZERO);
        m = ngpt_fpmode_get();
        fesetround(FE_TONEAREST);
    }
#endif
    return m;
}

static bool same_mode(const ngpt_fpmode *a, const ngpt_fpmode *b)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__arm__)
    return a->reg == b->reg;
#elif defined(__aarch64__)
    return a->fpcr == b->fpcr && a->fpsr == b->fpsr;
#else
    (void)a, (void)b;
    return true;
#endif
}

static ngpt_fpmode caller;          /* the mode each call below is made in */
static char called[1 << 16];        /* the expressions called in it, for the coverage */

static void note_called(const char *expr)
{
    if (!strstr(called, expr) && strlen(called) + strlen(expr) + 2 < sizeof called)
        strcat(strcat(called, expr), "\n");
}

/* Runs `stmt` (a public call) in the caller's mode; checks that the
 * caller's register is exactly the same after it. */
#define IN_CALLER_MODE(stmt, text)                                                 \
    do {                                                                           \
        ngpt_fpmode_set(&caller);                                                  \
        stmt;                                                                      \
        const ngpt_fpmode after_ = ngpt_fpmode_get();                              \
        ngpt_fpmode_set_library();                                                 \
        note_called(text);                                                         \
        CHECK(same_mode(&after_, &caller), "%s changed the caller's mode", text);  \
    } while (0)
/* A call that returns a status, which must be NGPT_OK. */
#define CALL(expr)                                                                 \
    do {                                                                           \
        ngpt_status st_call_ = NGPT_OK;                                            \
        IN_CALLER_MODE(st_call_ = (expr), #expr);                                  \
        CHECK(st_call_ == NGPT_OK, "%s -> %s: %s", #expr, ngpt_status_string(st_call_), \
              ngpt_last_error());                                                  \
    } while (0)
/* A call whose value is stored in lhs, or that returns nothing. */
#define CALL_TO(lhs, expr) IN_CALLER_MODE((lhs) = (expr), #expr)
#define CALL_VOID(expr) IN_CALLER_MODE(expr, #expr)

/* One run's results: a label and a hash of the bytes for each. */
typedef struct results {
    int n;
    const char *label[160];
    uint64_t hash[160];
} results;

static void note(results *r, const char *label, const void *data, size_t bytes)
{
    uint64_t h = 0xcbf29ce484222325u;   /* FNV-1a, in the test: no library call */
    for (size_t i = 0; i < bytes; i++) h = (h ^ ((const unsigned char *)data)[i]) * 0x100000001b3u;
    if (r->n < 160) r->label[r->n] = label, r->hash[r->n++] = h;
    else CHECK(false, "%s: more than 160 results: raise the limit", label);
}
#define NOTE(r, value) note(r, #value, &(value), sizeof(value))

static const char TEXT[] =
    "ngpt trains tiny transformers on boards, byte by byte, with the same bits everywhere. "
    "Every build gives one answer: scalar, AVX2, NEON, any thread count. The same bits, "
    "the same tokens, the same files, whatever mode the caller's thread runs in.";

/* The run's files, in TMPDIR. */
static char ckpt_path[256], train_path[256], tok_path[256], text_path[256], json_path[256],
    bpe_path[256], sess_path[256];

/* The final LayerNorm's weight times 1e-37: its outputs near 1e-37, so the
 * logits (sums of their products with the embeddings) and the gradients
 * through it are around FLT_MIN, many subnormal. */
static void tiny_logits(ngpt_context *ctx)
{
    ngpt_tensor_info t;
    float *params = NULL;
    size_t count = 0;
    CALL(ngpt_context_tensor_find(ctx, "ln_f.weight", &t));
    CALL(ngpt_context_params(ctx, &params, &count));
    if (params) for (size_t j = 0; j < t.count; j++) params[t.offset + j] *= 1e-37f;
}

/* A config's floats and its text (ngpt_config_format prints them). */
static void note_config(results *r, const char *label, const ngpt_config *c)
{
    char text[256];
    const float floats[] = {c->dropout, c->rope_theta};
    CALL_VOID(ngpt_config_format(c, text, sizeof text));
    note(r, label, text, strlen(text));
    note(r, label, floats, sizeof floats);
}

static void note_params(results *r, const char *label, ngpt_context *ctx)
{
    uint64_t h = 0;
    CALL(ngpt_context_params_checksum(ctx, &h));
    note(r, label, &h, sizeof h);
}

static void note_logits(results *r, const char *label, ngpt_context *ctx)
{
    uint64_t h = 0;
    CALL(ngpt_context_logits_checksum(ctx, &h));
    note(r, label, &h, sizeof h);
}

/* The keys a slot's cache holds (their rotation is arithmetic: a change of
 * the last bit does not always reach the logits of a tiny model). */
static void note_keys(results *r, const char *label, const ngpt_context *ctx, int32_t slot)
{
    for (int l = 0; l < ctx->cfg.n_layers; l++)
        note(r, label, ngpt_kv_keys(ctx, l, slot),
             (size_t)ngpt_kv_len(ctx, slot) * (size_t)ctx->cfg.d_model * sizeof(float));
}

static void note_file(results *r, const char *label, const char *path)
{
    size_t n = 0;
    unsigned char *b = test_read_file(path, &n);
    CHECK(b != NULL, "%s: %s was written", label, path);
    note(r, label, b ? b : (unsigned char *)"", n);
    free(b);
}

/* A context of the given shape and thread count, every job split. */
static ngpt_context *make(const ngpt_config *cfg, ngpt_shape shape, int32_t threads)
{
    ngpt_context *ctx = NULL;
    shape.threads = threads;
    CALL(ngpt_context_init(&ctx, NULL, cfg, &shape, NULL, 0));
    if (ctx) ctx->plan.threads.pool->inline_below = 0.0;
    return ctx;
}

/* The calls that need no context. */
static void base_and_config(results *r, ngpt_config *cfg)
{
    const char *s = NULL;
    CALL_TO(s, ngpt_status_string(NGPT_ERR_NUMERIC));
    note(r, "status string", s, strlen(s));
    CALL_TO(s, ngpt_build_info());
    note(r, "build info", s, strlen(s));
    CALL_VOID(ngpt_abort_callback_set(NULL, NULL));
    CALL_VOID(ngpt_progress_callback_set(NULL, NULL));
    CALL_TO(s, ngpt_stop_reason_string(NGPT_STOP_SEQUENCE));
    note(r, "stop reason", s, strlen(s));
    uint64_t sum = 0;
    CALL_TO(sum, ngpt_checksum_bytes(TEXT, sizeof TEXT));
    NOTE(r, sum);

    ngpt_config c = test_config_tiny();
    CALL_TO(c, ngpt_config_default());
    note_config(r, "default config", &c);
    *cfg = test_config_tiny();
    CALL(ngpt_config_set(cfg, "dropout=0.1"));
    CALL(ngpt_config_set(cfg, "rope_theta=5000.3"));
    CALL(ngpt_config_validate(cfg));
    note_config(r, "config set", cfg);
    size_t count = 0, bytes = 0;
    CALL(ngpt_config_param_count(cfg, &count));
    NOTE(r, count);
    ngpt_shape shape;
    CALL_TO(shape, ngpt_shape_default(NGPT_MODE_TRAIN));
    NOTE(r, shape);
    CALL(ngpt_context_arena_size(NULL, cfg, &shape, &bytes));
    NOTE(r, bytes);
    ngpt_optim_config opt;
    CALL_TO(opt, ngpt_optim_config_default());
    CALL(ngpt_optim_config_validate(&opt));
    const float opt_floats[] = {opt.lr, opt.min_lr, opt.beta1, opt.beta2, opt.eps,
                                opt.weight_decay, opt.clip};
    NOTE(r, opt_floats);
    ngpt_sampler sampler;
    CALL_TO(sampler, ngpt_sampler_default());
    CALL(ngpt_sampler_validate(&sampler, 256));
    const float sampler_floats[] = {sampler.temperature, sampler.top_p, sampler.min_p,
                                    sampler.repeat_penalty};
    NOTE(r, sampler_floats);
    ngpt_generate_config gc;
    CALL_TO(gc, ngpt_generate_config_default());
    NOTE(r, gc.length_penalty);
    ngpt_tokenizer_train_config tc;
    CALL_TO(tc, ngpt_tokenizer_train_config_default());
    NOTE(r, tc.vocab_size);
    CALL_TO(s, ngpt_last_error());
}

/* GPT-2's character for byte b (bytes_to_unicode), as UTF-8. */
static size_t gpt2_char(char *out, int b)
{
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    int c = b;
    if (!printable) {
        c = 256;
        for (int x = 0; x < b; x++)
            c += !((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE);
    }
    if (c == '"' || c == '\\') return (size_t)sprintf(out, "\\%c", c);
    if (c < 0x80) return (size_t)sprintf(out, "%c", c);
    return (size_t)sprintf(out, "%c%c", 0xC0 | c >> 6, 0x80 | (c & 0x3F));
}

/* GPT-2's files for bytes and one merge ("t" "h"), then <|endoftext|> and
 * ChatML's markers. */
static void write_gpt2_files(void)
{
    FILE *j = fopen(json_path, "w"), *m = fopen(bpe_path, "w");
    CHECK(j && m, "GPT-2 files in TMPDIR");
    if (!j || !m) {
        if (j) fclose(j);
        if (m) fclose(m);
        return;
    }
    char ch[8];
    fputc('{', j);
    int id = 0;                                 /* ids in GPT-2's order: printable first */
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < 256; b++) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            if (printable != (pass == 0)) continue;
            ch[gpt2_char(ch, b)] = '\0';
            fprintf(j, "\"%s\": %d, ", ch, id++);
        }
    fprintf(j, "\"th\": 256, \"<|endoftext|>\": 257, \"<|im_start|>\": 258, "
            "\"<|im_end|>\": 259}\n");
    fprintf(m, "#version: 0.2\nt h\n");
    fclose(j);
    fclose(m);
}

/* Tokenizers: trained, saved, loaded four ways, encoding and decoding.
 * Returns the trained one. */
static ngpt_tokenizer *tokenizers(results *r)
{
    ngpt_tokenizer_train_config tc = ngpt_tokenizer_train_config_default();
    tc.vocab_size = 300;
    const void *texts[1] = {TEXT};
    const size_t sizes[1] = {sizeof TEXT - 1};
    ngpt_tokenizer *tok = NULL, *loaded = NULL;
    CALL(ngpt_tokenizer_train(&tok, &tc, texts, sizes, 1));
    if (!tok) return NULL;
    ngpt_tokenizer_info info;
    CALL(ngpt_tokenizer_describe(tok, &info));
    NOTE(r, info);
    const int32_t *ends = NULL;
    int32_t n_ends = 0;
    CALL(ngpt_tokenizer_end_tokens(tok, &ends, &n_ends));
    if (ends) note(r, "end tokens", ends, (size_t)n_ends * sizeof *ends);
    CALL(ngpt_tokenizer_save(tok, tok_path));
    note_file(r, "tokenizer file", tok_path);
    static unsigned char buf[1 << 16];
    size_t size = 0;
    CALL(ngpt_tokenizer_save_mem(tok, buf, sizeof buf, &size));
    note(r, "tokenizer bytes", buf, size);
    CALL(ngpt_tokenizer_load(&loaded, tok_path));
    CALL_VOID(ngpt_tokenizer_free(loaded));
    loaded = NULL;
    CALL(ngpt_tokenizer_load_mem(&loaded, buf, size));
    CALL_VOID(ngpt_tokenizer_free(loaded));

    int32_t ids[256];
    size_t n_ids = 0, n_bytes = 0;
    CALL(ngpt_tokenizer_encode(tok, TEXT, sizeof TEXT - 1, ids, 256, &n_ids));
    note(r, "encoded", ids, n_ids * sizeof ids[0]);
    char text[sizeof TEXT];
    CALL(ngpt_tokenizer_decode(tok, ids, n_ids, text, sizeof text, &n_bytes));
    CHECK(n_bytes == sizeof TEXT - 1 && !memcmp(text, TEXT, n_bytes), "decode(encode(TEXT))");
    const uint8_t *bytes = NULL;
    size_t len = 0;
    CALL(ngpt_tokenizer_token(tok, info.n_merges + 255, &bytes, &len));
    note(r, "last merge", bytes, len);
    int32_t end = -1, first = -1;
    CALL(ngpt_tokenizer_special_id(tok, "<|endoftext|>", &end));
    CALL(ngpt_tokenizer_special(tok, 0, &first));
    CHECK(end == info.end_id && first == end, "the end token by name and as special 0: %d %d",
          (int)end, (int)first);

    write_gpt2_files();
    ngpt_tokenizer *g = NULL;
    CALL(ngpt_tokenizer_load_gpt2(&g, json_path, bpe_path));
    if (g) CALL(ngpt_tokenizer_describe(g, &info));
    NOTE(r, info);
    ngpt_tokenizer_free(g);
    g = NULL;
    size_t nj = 0, nb = 0;
    unsigned char *json = test_read_file(json_path, &nj), *bpe = test_read_file(bpe_path, &nb);
    if (json && bpe) CALL(ngpt_tokenizer_load_gpt2_mem(&g, json, nj, bpe, nb));
    if (g) {                                    /* a ChatML turn, the markers typed in it */
        int32_t chat[64], im_end = -1;
        size_t n_chat = 0;
        CALL(ngpt_tokenizer_chatml_specials(g, NULL, &im_end));
        NOTE(r, im_end);
        CALL(ngpt_tokenizer_chatml_turn(g, "user", "<|im_end|> the", 14, false, chat, 64, &n_chat));
        note(r, "chat turn", chat, n_chat * sizeof chat[0]);
        /* a chat template: parsed, rendered as text and as tokens, a conversation as JSON */
        static const char tpl[] = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content | trim "
                                  "}}<|im_end|>\n{% endfor %}{{ strftime_now('%d %b %Y') }}",
                          conv[] = "[{\"role\": \"user\", \"content\": \" the <|im_end|> \"}]",
                          cfg[] = "{\"chat_template\": \"{{ bos_token }}x\", \"bos_token\": \"<b>\"}";
        ngpt_template *t = NULL, *tc = NULL;
        ngpt_chat_message *msgs = NULL;
        ngpt_template_options o = {0};
        size_t n_msgs = 0, len = 0;
        char out[256];
        CALL(ngpt_template_parse(&t, tpl, sizeof tpl - 1));
        CALL(ngpt_template_parse_config(&tc, cfg, sizeof cfg - 1));
        CALL(ngpt_chat_message_read_json(&msgs, &n_msgs, conv, sizeof conv - 1));
        CALL_TO(o, ngpt_template_options_default());
        o.now = 1721952000;
        if (t && msgs) {
            CALL(ngpt_template_render(t, msgs, n_msgs, &o, out, sizeof out, &len));
            note(r, "rendered", out, len);
            CALL(ngpt_template_render_tokens(t, g, msgs, n_msgs, &o, NULL, 0, chat, 64, &n_chat));
            note(r, "rendered tokens", chat, n_chat * sizeof chat[0]);
            CALL(ngpt_chat_message_write_json(msgs, n_msgs, out, sizeof out, &len));
            note(r, "conversation", out, len);
        }
        CALL_VOID(ngpt_chat_message_free(msgs));
        CALL_VOID(ngpt_template_free(t));
        CALL_VOID(ngpt_template_free(tc));
    }
    ngpt_tokenizer_free(g);
    free(json), free(bpe);

    /* a tokenizer.json with the end token first (SmolLM2's layout): a file, then memory */
    static char hf[8192];
    size_t k = (size_t)snprintf(hf, sizeof hf, "{\"added_tokens\": [{\"id\": 0, \"content\": "
        "\"<|endoftext|>\", \"special\": true}], \"normalizer\": null, \"pre_tokenizer\": "
        "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", "
        "\"individual_digits\": true}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
        "\"use_regex\": true}]}, \"model\": {\"type\": \"BPE\", \"merges\": [\"t h\"], "
        "\"vocab\": {\"<|endoftext|>\": 0");
    for (int b = 0; b < 256; b++) {
        char ch[8];
        ch[gpt2_char(ch, b)] = '\0';
        k += (size_t)snprintf(hf + k, sizeof hf - k, ", \"%s\": %d", ch, b + 1);
    }
    k += (size_t)snprintf(hf + k, sizeof hf - k, ", \"th\": 257}}}");
    FILE *f = fopen(json_path, "w");
    if (f) fputs(hf, f), fclose(f);
    g = NULL;
    CALL(ngpt_tokenizer_load_hf(&g, json_path));
    if (g) {
        int32_t hf_ids[16];
        size_t n_hf = 0;
        CALL(ngpt_tokenizer_describe(g, &info));
        NOTE(r, info);
        CALL(ngpt_tokenizer_encode(g, "the 12", 6, hf_ids, 16, &n_hf));
        note(r, "tokenizer.json's ids", hf_ids, n_hf * sizeof hf_ids[0]);
    }
    ngpt_tokenizer_free(g);
    g = NULL;
    CALL(ngpt_tokenizer_load_hf_mem(&g, hf, k));
    ngpt_tokenizer_free(g);
    return tok;
}

/* Training: a step by hand, then ngpt_context_train_step and ngpt_context_evaluate on
 * data from a file and from memory, the train checkpoint saved and read. */
static void training(results *r, const ngpt_config *cfg, bool tiny, int32_t threads,
                     const ngpt_tokenizer *bpe)
{
    ngpt_shape train = ngpt_shape_default(NGPT_MODE_TRAIN);
    train.batch = 2, train.seq = 16;
    ngpt_context *ctx = make(cfg, train, threads);
    if (!ctx) return;
    ngpt_config got;
    ngpt_shape shape;
    size_t used = 0, count = 0;
    int32_t n_tensors = 0;
    ngpt_tensor_info info;
    CALL(ngpt_context_config(ctx, &got));
    CALL(ngpt_context_shape(ctx, &shape));
    CALL(ngpt_context_arena_used(ctx, &used));
    CALL(ngpt_context_tensor_count(ctx, &n_tensors));
    CALL(ngpt_context_tensor_at(ctx, n_tensors - 1, &info));
    CALL(ngpt_context_prepare(ctx));
    CALL(ngpt_context_params_init(ctx, 42));
    if (tiny) tiny_logits(ctx);
    note_params(r, "initialized", ctx);

    int32_t tok[32], tgt[32];
    for (int i = 0; i < 32; i++) tok[i] = (unsigned char)TEXT[i], tgt[i] = (unsigned char)TEXT[i + 1];
    ngpt_optim_config opt = ngpt_optim_config_default();
    float lr = 0, loss = 0, grad_norm = 0;
    CALL(ngpt_optim_config_lr(&opt, 10, &lr));
    NOTE(r, lr);
    CALL(ngpt_context_dropout_set(ctx, true, 7, 3));
    CALL(ngpt_context_forward(ctx, tok, 2, 16, tgt, &loss));
    NOTE(r, loss);
    note_logits(r, "logits", ctx);
    const float *logits = NULL;
    CALL(ngpt_context_logits(ctx, &logits));
    CALL(ngpt_context_grads_zero(ctx));
    CALL(ngpt_context_backward(ctx));
    float *grads = NULL;
    CALL(ngpt_context_grads(ctx, &grads, &count));
    if (grads) note(r, "gradients", grads, count * sizeof *grads);
    CALL(ngpt_context_optim_step(ctx, &opt, lr, &grad_norm));
    NOTE(r, grad_norm);
    CALL(ngpt_context_optim_skip(ctx));
    uint64_t steps = 0;
    CALL(ngpt_context_step_count(ctx, &steps));
    NOTE(r, steps);
    note_params(r, "stepped", ctx);

    ngpt_data *data = NULL, *file_data = NULL, *token_data = NULL;
    const char *paths[1] = {text_path};
    CALL(ngpt_data_open(&file_data, paths, 1, 0.25f, 16));
    CALL(ngpt_data_open_mem(&data, TEXT, sizeof TEXT - 1, 0.25f, 16));
    CALL(ngpt_data_open_mem(&token_data, TEXT, sizeof TEXT - 1, 0.25f, 4));
    if (data && file_data && token_data) {
        size_t train_bytes = 0, eval_bytes = 0, train_tokens = 0, eval_tokens = 0, n = 0;
        uint64_t hash = 0, batch_bytes = 0;
        const uint8_t *text = NULL;
        CALL(ngpt_data_sizes(file_data, &train_bytes, &eval_bytes));
        CALL(ngpt_data_checksum(file_data, &hash));
        NOTE(r, hash);
        CALL(ngpt_data_batch(data, NGPT_SPLIT_TRAIN, 3, 1, 2, 16, tok, tgt));
        note(r, "batch", tok, sizeof tok);
        CALL(ngpt_data_batch_bytes(data, NGPT_SPLIT_EVAL, 3, 0, 1, 4, &batch_bytes));
        CALL(ngpt_data_text(data, NGPT_SPLIT_EVAL, &text, &n));
        if (bpe) CALL(ngpt_data_tokenize(token_data, bpe, 4));
        /* conversations need a ChatML tokenizer: the fpmode one is not */
        ngpt_status chat_st = NGPT_OK;
        if (bpe) CALL_TO(chat_st, ngpt_data_tokenize_chat(file_data, bpe, NULL, NULL, 4));
        CHECK(!bpe || chat_st == NGPT_ERR_UNSUPPORTED || chat_st == NGPT_ERR_BAD_ARG,
              "ngpt_data_tokenize_chat: %s", ngpt_last_error());
        CALL(ngpt_data_token_counts(token_data, &train_tokens, &eval_tokens));
        NOTE(r, train_tokens);
        CALL(ngpt_context_train_step(ctx, &opt, data, 5, 2, 16, &loss, &lr, &grad_norm));
        NOTE(r, loss);
        note_params(r, "trained", ctx);
        CALL(ngpt_context_evaluate(ctx, data, 9, 2, 2, 16, &loss));
        NOTE(r, loss);
    }
    CALL_VOID(ngpt_data_free(data));
    ngpt_data_free(file_data);
    ngpt_data_free(token_data);

    ngpt_train_state ts = {.seed = 5, .batch = 2, .seq = 16, .opt = opt, .best_eval_loss = loss,
                           .holdout = 0.25f, .eval_every = 10, .eval_batches = 2};
    CALL(ngpt_context_save_train(ctx, train_path, &ts));
    note_file(r, "train checkpoint", train_path);
    memset(&ts, 0, sizeof ts);
    ngpt_shape resume_shape;
    CALL(ngpt_context_shape(ctx, &resume_shape));
    CALL_VOID(ngpt_context_free(ctx));
    /* the checkpoint opened as a model (file, then memory): its training
     * state, and training contexts that continue it or start afresh */
    ngpt_model *m = NULL;
    CALL(ngpt_model_open(&m, train_path));
    if (m) {
        CALL(ngpt_model_train_state(m, &ts));
        const float ts_floats[] = {ts.best_eval_loss, ts.holdout, ts.opt.lr, ts.opt.eps};
        NOTE(r, ts_floats);
        resume_shape.threads = threads;
        CALL(ngpt_context_init(&ctx, m, NULL, &resume_shape, NULL, 0));
        if (ctx) {
            note_params(r, "train checkpoint continued", ctx);
            CALL(ngpt_context_optim_reset(ctx));
            CALL(ngpt_context_step_count(ctx, &steps));
            NOTE(r, steps);
            ngpt_context_free(ctx);
        }
        CALL(ngpt_model_close(m));
    }
    size_t size = 0;
    unsigned char *file = test_read_file(train_path, &size);
    if (file) {
        CALL(ngpt_model_open_mem(&m, file, size));
        CALL(ngpt_model_close(m));
    }
    free(file);
}

/* Inference on a model with the tokenizer attached: the checkpoint saved
 * and read, a traced forward, the KV cache (shifted too), sampling and
 * generation (past the context, so the window shifts); then the float32
 * checkpoint loaded into an 8-bit context, which quantizes it. */
static void inference(results *r, ngpt_config cfg, bool tiny, int32_t threads,
                      const ngpt_tokenizer *bpe)
{
    ngpt_tokenizer_info info;
    if (bpe) {
        CALL(ngpt_tokenizer_describe(bpe, &info));
        cfg.vocab_size = info.n_tokens;
    }
    ngpt_shape infer = ngpt_shape_default(NGPT_MODE_INFER);
    infer.batch = 2, infer.seq = 16, infer.trace = NGPT_TRACE_LAST_ROW;
    ngpt_context *ctx = make(&cfg, infer, threads);
    if (!ctx) return;
    CALL(ngpt_context_params_init(ctx, 42));
    if (tiny) tiny_logits(ctx);
    const ngpt_tokenizer *attached = NULL;
    if (bpe) CALL(ngpt_context_tokenizer_set(ctx, bpe));
    CALL(ngpt_context_tokenizer(ctx, &attached));
    CALL(ngpt_context_save(ctx, ckpt_path));
    note_file(r, "checkpoint", ckpt_path);
    ngpt_config read;
    size_t size = 0;
    unsigned char *file = test_read_file(ckpt_path, &size);

    int32_t tok[24], out[8], len = 0, sampled = -1;
    for (int i = 0; i < 24; i++) tok[i] = (unsigned char)TEXT[3 * i];
    CALL(ngpt_context_forward(ctx, tok, 2, 8, NULL, NULL));
    note_logits(r, "traced logits", ctx);
    const float *probs = NULL, *logits = NULL;
    size_t count = 0;
    CALL(ngpt_context_trace(ctx, 1, &probs, &count));
    if (probs) note(r, "attention trace", probs, count * sizeof *probs);
    CALL(ngpt_context_cache_prefill(ctx, tok, 2, 8));
    CALL(ngpt_context_cache_decode(ctx, tok + 16, 2));
    note_logits(r, "decoded", ctx);
    CALL(ngpt_context_cache_shift(ctx, 0, 3));
    note_keys(r, "keys after a shift", ctx, 0);
    CALL(ngpt_context_cache_decode(ctx, tok + 18, 2));
    note_logits(r, "decoded after a shift", ctx);
    CALL(ngpt_context_cache_copy(ctx, 1, 0));
    const int32_t *cached = NULL;
    CALL(ngpt_context_cache_len(ctx, 1, &len));
    CALL(ngpt_context_cache_tokens(ctx, 1, &cached, &len));
    if (cached) note(r, "cached tokens", cached, (size_t)len * sizeof *cached);
    CALL(ngpt_context_cache_clear(ctx, 1));
    CALL(ngpt_context_cache_prefill_slot(ctx, 1, tok, 5));
    note_logits(r, "prefilled slot", ctx);
    /* a session of slot 1 saved and restored (file and memory), truncated, fed on */
    CALL(ngpt_context_cache_save(ctx, 1, sess_path));
    note_file(r, "session", sess_path);
    size_t sess_size = 0;
    CALL(ngpt_context_cache_save_mem(ctx, 1, NULL, 0, &sess_size));
    unsigned char *sess = malloc(sess_size);
    if (sess) {
        CALL(ngpt_context_cache_save_mem(ctx, 1, sess, sess_size, &sess_size));
        CALL(ngpt_context_cache_load_mem(ctx, 0, sess, sess_size));
        free(sess);
    }
    CALL(ngpt_context_cache_clear(ctx, 1));
    CALL(ngpt_context_cache_load(ctx, 1, sess_path));
    CALL(ngpt_context_cache_truncate(ctx, 1, 4));
    CALL(ngpt_context_cache_prefill_slot(ctx, 1, tok + 4, 1));
    note_logits(r, "fed after a session restore", ctx);
    ngpt_sampler s = ngpt_sampler_default();
    s.temperature = 0.8f, s.top_p = 0.9f, s.seed = 3;
    CALL(ngpt_context_logits(ctx, &logits));
    if (logits) CALL(ngpt_context_sample(ctx, &s, logits, tok, 9, 0, 9, &sampled));
    NOTE(r, sampled);
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler = s, gc.max_tokens = 8, gc.context_mode = NGPT_CONTEXT_SHIFT;
    ngpt_generate_result res;
    CALL(ngpt_context_generate(ctx, &gc, tok, 12, out, 8, NULL, NULL, &res));
    NOTE(r, out);
    NOTE(r, res);
    /* under a grammar of a JSON Schema (and one of GBNF text): the same tokens */
    ngpt_grammar *gs = NULL, *gt = NULL;
    const char *gtext = NULL;
    const ngpt_tokenizer *gtok = NULL;
    CALL(ngpt_context_tokenizer(ctx, &gtok));
    static const char schema[] = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\","
                                 "\"minimum\":-5,\"maximum\":5}},\"required\":[\"a\"]}";
    CALL(ngpt_grammar_from_json_schema(&gs, gtok, schema, sizeof schema - 1));
    CALL(ngpt_grammar_parse(&gt, gtok, "root ::= [a-z]+ \".\"", 19));
    if (gs) CALL(ngpt_grammar_text(gs, &gtext, NULL));
    if (gtext) note(r, "schema's grammar", gtext, strlen(gtext));
    gc.grammar = gs, gc.context_mode = NGPT_CONTEXT_EXACT;
    memset(out, 0, sizeof out);
    if (gs) CALL(ngpt_context_generate(ctx, &gc, tok, 12, out, 8, NULL, NULL, &res));
    NOTE(r, out);
    NOTE(r, res);
    CALL_VOID(ngpt_grammar_free(gs));
    CALL_VOID(ngpt_grammar_free(gt));
    ngpt_context_free(ctx);

    /* the file opened once as a model: its answers, a context on its
     * weights (logits), a training context loaded from it */
    ngpt_model *model = NULL;
    CALL(ngpt_model_open(&model, ckpt_path));
    if (model) {
        const ngpt_tokenizer *mt = NULL;
        ngpt_train_state mts;
        size_t arena = 0;
        CALL(ngpt_model_config(model, &read));
        note_config(r, "checkpoint config", &read);
        CALL(ngpt_model_tokenizer(model, &mt));
        CALL(ngpt_model_train_state(model, &mts));
        NOTE(r, mts.has_state);
        ngpt_shape ms = infer;
        ms.threads = threads;
        CALL(ngpt_context_arena_size(model, NULL, &ms, &arena));     /* per thread count: not noted */
        ngpt_context *mctx = NULL;
        CALL(ngpt_context_init(&mctx, model, NULL, &ms, NULL, 0));
        if (mctx) {
            mctx->plan.threads.pool->inline_below = 0.0;
            CALL(ngpt_context_forward(mctx, tok, 2, 8, NULL, NULL));
            note_logits(r, "model context logits", mctx);
            ngpt_context_free(mctx);
        }
        ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
        ts.batch = 2, ts.seq = 8, ts.threads = threads;
        ngpt_context *tctx = NULL;
        CALL(ngpt_context_init(&tctx, model, NULL, &ts, NULL, 0));
        if (tctx) {
            note_params(r, "copied from a model", tctx);
            ngpt_context_free(tctx);
        }
        /* the case: quantized as copied, in the library's rounding */
        infer.trace = NGPT_TRACE_NONE, infer.threads = threads;
        CALL(ngpt_config_set(&read, "weights=q8"));
        CALL(ngpt_context_init(&ctx, model, &read, &infer, NULL, 0));
        if (ctx) {
            ctx->plan.threads.pool->inline_below = 0.0;
            note_params(r, "q8 copied", ctx);
            CALL(ngpt_context_forward(ctx, tok, 2, 8, NULL, NULL));
            note_logits(r, "q8 logits", ctx);
            ngpt_context_free(ctx);
        }
    }
    CALL(ngpt_model_close(model));
    if (file) {
        CALL(ngpt_model_open_mem(&model, file, size));
        CALL(ngpt_model_close(model));
    }
    free(file);
}

/* The imported Hugging Face directory's files, in hf_dir.h's root; and
 * llama2.c's files (llama2c_files.h) and their import. */
static char import_path[600], import_q8_path[600];
static char l2c_model[600], l2c_tokenizer[600], l2c_out[600];

/* A file's size: what ngpt_config_file_size must say. */
static size_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (size_t)sb.st_size : 0;
}

/* A PEFT adapter directory of the imported model: an adapter (its B set
 * to values down to subnormals) exported and read back, then merged (in
 * double, rounded once) into a copy of the model. */
static void peft(results *r, ngpt_model *m, int32_t threads)
{
    char dir[640];
    snprintf(dir, sizeof dir, "%s/peft", root);
    ngpt_lora_config lc;
    CALL_TO(lc, ngpt_lora_config_default());
    CALL(ngpt_lora_config_set(&lc, "targets=c_attn,mlp.c_proj"));
    ngpt_adapter *made = NULL, *back = NULL;
    CALL(ngpt_adapter_create(&made, m, &lc, 5));
    if (!made) return;
    float *w = (float *)(uintptr_t)made->w;
    for (size_t i = 0; i < made->ll.total; i++)
        if (w[i] == 0.0f) w[i] = ldexpf((float)(i % 7) - 3.0f, -(int)(i % 140));
    CALL(ngpt_adapter_export_peft(made, m, dir));
    CALL(ngpt_import_peft(&back, m, dir));
    if (back) note(r, "PEFT adapter read back", back->w, back->ll.total * sizeof(float));
    ngpt_config cfg;
    CALL(ngpt_model_config(m, &cfg));
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = 1, shape.seq = 16, shape.threads = threads;
    ngpt_context *own = NULL;
    CALL(ngpt_context_init(&own, m, &cfg, &shape, NULL, 0));
    const float scale = 0.3f;
    if (own && back) {
        CALL(ngpt_context_adapters_merge(own, (const ngpt_adapter *const *)&back, &scale, 1));
        note_params(r, "adapter merged", own);
    }
    ngpt_context_free(own);
    CALL(ngpt_adapter_close(back));
    CALL(ngpt_adapter_close(made));
    char file[700];
    for (int i = 0; i < 2; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, i ? "adapter_config.json" : "adapter_model.safetensors");
        unlink(file);
    }
    rmdir(dir);
}

/* The directory main wrote, imported in float32 and 8-bit (which divides
 * and rounds), its config read both ways, each file's size computed
 * without a context, the float32 import loaded for fine-tuning (from the
 * file and from memory: the same parameters) and trained a step, the 8-bit
 * one's logits. */
static void importing(results *r, bool tiny, int32_t threads)
{
    char dir[600], config[600];
    snprintf(dir, sizeof dir, "%s/gpt2", root);
    path_of(config, sizeof config, "gpt2", "config.json");
    ngpt_import_options opt = {0};
    CALL_TO(opt, ngpt_import_options_default());
    CALL(ngpt_import_hf(dir, &opt, import_path));
    note_file(r, "imported", import_path);
    opt.store = NGPT_WEIGHTS_Q8;
    CALL(ngpt_import_hf(dir, &opt, import_q8_path));
    note_file(r, "imported 8-bit", import_q8_path);

    ngpt_config cfg = {0}, q8 = {0};
    CALL(ngpt_import_hf_config(config, &cfg));
    note_config(r, "import config", &cfg);
    size_t n = 0;
    unsigned char *json = test_read_file(config, &n);
    if (json) CALL(ngpt_import_hf_config_mem(json, n, &cfg));
    free(json);
    note_config(r, "import config from memory", &cfg);
    char tok_config[600];
    snprintf(tok_config, sizeof tok_config, "%s/tokenizer_config.json", root);
    static const char tc_text[] = "{\"eos_token\": {\"content\": \"<|endoftext|>\"}, "
                                  "\"chat_template\": \"<|im_start|>x<|im_end|>\"}";
    FILE *tc_file = fopen(tok_config, "wb");
    if (tc_file) fwrite(tc_text, 1, sizeof tc_text - 1, tc_file), fclose(tc_file);
    ngpt_hf_tokenizer_config tc;
    memset(&tc, 0, sizeof tc);
    CALL(ngpt_import_hf_tokenizer_config(tok_config, &tc));
    note(r, "tokenizer_config.json", &tc, sizeof tc);

    const ngpt_tokenizer *tok = NULL;
    size_t bytes = 0, q8_bytes = 0;
    ngpt_model *m = NULL, *m8 = NULL;
    CALL(ngpt_model_open(&m, import_path));
    CALL(ngpt_model_open(&m8, import_q8_path));
    if (!m || !m8) {
        ngpt_model_close(m), ngpt_model_close(m8);
        return;
    }
    ngpt_template *model_template = NULL;       /* the directory has no tokenizer_config.json */
    CALL(ngpt_model_template(m, &model_template));
    CHECK(!model_template, "no chat template");
    CALL(ngpt_model_config(m, &cfg));
    CALL(ngpt_model_config(m8, &q8));
    CALL(ngpt_model_tokenizer(m, &tok));
    CALL(ngpt_config_file_size(&cfg, tok, &bytes));
    CALL(ngpt_config_file_size(&q8, tok, &q8_bytes));
    NOTE(r, bytes);
    NOTE(r, q8_bytes);
    CHECK(bytes == file_size(import_path) && q8_bytes == file_size(import_q8_path),
          "ngpt_config_file_size: %zu and %zu bytes, the imports %zu and %zu", bytes, q8_bytes,
          file_size(import_path), file_size(import_q8_path));

    int32_t ids[17];
    for (int i = 0; i < 17; i++) ids[i] = (unsigned char)TEXT[5 * i];
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_TRAIN);
    shape.batch = 1, shape.seq = 16;
    shape.threads = threads;
    ngpt_context *ctx = NULL;
    CALL(ngpt_context_init(&ctx, m, NULL, &shape, NULL, 0));
    if (ctx) {
        ctx->plan.threads.pool->inline_below = 0.0;
        uint64_t from_file = 0;
        float loss = 0, grad_norm = 0;
        CALL(ngpt_context_params_checksum(ctx, &from_file));
        NOTE(r, from_file);
        if (tiny) tiny_logits(ctx);
        CALL(ngpt_context_forward(ctx, ids, 1, 16, ids + 1, &loss));
        NOTE(r, loss);
        note_logits(r, "fine-tuned model's logits", ctx);
        ngpt_optim_config oc = ngpt_optim_config_default();
        CALL(ngpt_context_grads_zero(ctx));
        CALL(ngpt_context_backward(ctx));
        CALL(ngpt_context_optim_step(ctx, &oc, oc.lr, &grad_norm));
        NOTE(r, grad_norm);
        note_params(r, "fine-tuned a step", ctx);
    }
    ngpt_context_free(ctx);

    peft(r, m, threads);

    shape = ngpt_shape_default(NGPT_MODE_INFER);
    shape.batch = 1, shape.seq = 16, shape.threads = threads;
    shape.logits_rows = NGPT_LOGITS_ALL;
    ctx = NULL;
    CALL(ngpt_context_init(&ctx, m8, NULL, &shape, NULL, 0));
    if (ctx) {
        ctx->plan.threads.pool->inline_below = 0.0;
        CALL(ngpt_context_forward(ctx, ids, 1, 16, NULL, NULL));
        note_logits(r, "8-bit import's logits", ctx);
    }
    ngpt_context_free(ctx);
    ngpt_model_close(m);
    ngpt_model_close(m8);

    /* llama2.c's files (main wrote them), imported in 8 bits, its header's config */
    opt.store = NGPT_WEIGHTS_Q8;
    CALL(ngpt_import_llama2c(l2c_model, l2c_tokenizer, &opt, l2c_out));
    note_file(r, "llama2.c import", l2c_out);
    CALL(ngpt_import_llama2c_config(l2c_model, &cfg));
    note_config(r, "llama2.c config", &cfg);
}

/* LoRA on the training checkpoint's model: an adapter made, trained a
 * step on the frozen model, saved and read back (file and memory), and
 * applied by an inference context. */
static void adapting(results *r, int32_t threads)
{
    ngpt_model *m = NULL;
    ngpt_lora_config lc;
    CALL_TO(lc, ngpt_lora_config_default());
    CALL(ngpt_lora_config_set(&lc, "targets=all-linear"));
    CALL(ngpt_lora_config_set(&lc, "alpha=5.5"));
    CALL(ngpt_lora_config_validate(&lc));
    char text[256];
    CALL_VOID(ngpt_lora_config_format(&lc, text, sizeof text));     /* its floats printed */
    note(r, "lora config text", text, strlen(text));
    CALL(ngpt_model_open(&m, train_path));
    if (!m) return;
    ngpt_adapter *ad = NULL, *back = NULL, *mem = NULL;
    CALL(ngpt_adapter_create(&ad, m, &lc, 3));
    ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
    ts.batch = 2, ts.seq = 16, ts.threads = threads, ts.adapter = ad;
    ngpt_context *tr = NULL, *inf = NULL;
    CALL(ngpt_context_init(&tr, m, NULL, &ts, NULL, 0));
    if (tr) {
        tr->plan.threads.pool->inline_below = 0.0;
        int32_t tok[32], tgt[32];
        for (int i = 0; i < 32; i++) tok[i] = (unsigned char)TEXT[i], tgt[i] = (unsigned char)TEXT[i + 1];
        ngpt_optim_config o = ngpt_optim_config_default();
        float loss = 0, norm = 0;
        CALL(ngpt_context_forward(tr, tok, 2, 16, tgt, &loss));
        CALL(ngpt_context_backward(tr));
        CALL(ngpt_context_optim_step(tr, &o, 1e-2f, &norm));
        NOTE(r, loss);
        NOTE(r, norm);
        note_params(r, "adapter trained", tr);
        CALL(ngpt_context_save(tr, sess_path));
        note_file(r, "adapter file", sess_path);
        CALL_VOID(ngpt_context_free(tr));
    }
    CALL(ngpt_adapter_open(&back, sess_path));
    size_t size = 0;
    unsigned char *file = test_read_file(sess_path, &size);
    if (file) CALL(ngpt_adapter_open_mem(&mem, file, size));
    free(file);
    ngpt_train_state st;
    if (back) {
        CALL(ngpt_adapter_lora_config(back, &lc));
        CALL(ngpt_adapter_train_state(back, &st));
        ngpt_adapter_info info;
        CALL(ngpt_adapter_describe(back, &info));
        NOTE(r, info.scale);
        CALL(ngpt_adapter_save(back, sess_path));
    }
    ngpt_shape is = ngpt_shape_default(NGPT_MODE_INFER);
    is.batch = 1, is.seq = 16, is.threads = threads, is.adapter_rank = 8;
    CALL(ngpt_context_init(&inf, m, NULL, &is, NULL, 0));
    if (inf && back) {
        const float scale = 0.7f;
        CALL(ngpt_context_adapters_set(inf, (const ngpt_adapter *const *)&back, &scale, 1));
        int32_t tok[16];
        for (int i = 0; i < 16; i++) tok[i] = (unsigned char)TEXT[i];
        CALL(ngpt_context_forward(inf, tok, 1, 16, NULL, NULL));
        note_logits(r, "adapted logits", inf);
    }
    ngpt_context_free(inf);
    CALL(ngpt_adapter_close(back));
    CALL(ngpt_adapter_close(mem));
    CALL(ngpt_adapter_close(ad));
    CALL(ngpt_model_close(m));
}

/* Every public function, each called in `caller`'s mode. */
static void scenario(results *r, bool tiny, int32_t threads)
{
    memset(r, 0, sizeof *r);
    ngpt_config cfg;
    base_and_config(r, &cfg);
    ngpt_tokenizer *bpe = tokenizers(r);
    training(r, &cfg, tiny, threads, bpe);
    adapting(r, threads);
    inference(r, cfg, tiny, threads, bpe);
    CALL_VOID(ngpt_tokenizer_free(bpe));
    importing(r, tiny, threads);
}

/* The first result that differs from the default mode's, by name. */
static void same_results(const results *want, const results *got, const char *what)
{
    CHECK(want->n == got->n, "%s: %d results, the default mode %d", what, got->n, want->n);
    for (int i = 0; i < want->n && i < got->n; i++)
        CHECK(want->hash[i] == got->hash[i] && !strcmp(want->label[i], got->label[i]),
              "%s: %s differs from the default mode's", what, got->label[i]);
}

/* Each public function declared in ngpt.h was called in a hostile mode. */
static void every_function_covered(void)
{
    static public_decls decls;
    CHECK(public_decls_read(&decls), "run from the source tree: cannot open include/ngpt.h");
    for (int i = 0; i < decls.count; i++)
        CHECK(public_decls_called_in(called, decls.name[i]),
              "%s() is declared in ngpt.h but not called here in a hostile floating-point mode: "
              "add it to scenario() with CALL, CALL_TO or CALL_VOID", decls.name[i]);
    CHECK(decls.count > 50, "found %d declarations", decls.count);
    printf("fpmode: %d public functions, each called in two hostile modes\n", decls.count);
}

static void caller_mode_kept(void)
{
    static results def, def_tiny, bad;
    caller = ngpt_fpmode_get();     /* the default mode */
    scenario(&def, false, 1);
    scenario(&def_tiny, true, 1);
    printf("fpmode: %d results a run\n", def.n);
    CHECK(def.n > 40 && def.n == def_tiny.n && memcmp(def.hash, def_tiny.hash, sizeof def.hash),
          "the tiny model differs (%d results)", def.n);
    called[0] = '\0';
    static const int32_t threads[] = {1, 3};
    for (int h = 0; h < 2; h++)
        for (int t = 0; t < 2; t++) {
            char what[128];
            caller = hostile_mode((hostile)h);
            snprintf(what, sizeof what, "%s, threads=%d", HOSTILE_NAME[h], (int)threads[t]);
            scenario(&bad, false, threads[t]);
            same_results(&def, &bad, what);
            snprintf(what, sizeof what, "%s, threads=%d, subnormal activations", HOSTILE_NAME[h],
                     (int)threads[t]);
            scenario(&bad, true, threads[t]);
            same_results(&def_tiny, &bad, what);
        }
    ngpt_fpmode_set_library();
    every_function_covered();
}

/* The hostile mode changes what plain arithmetic gives here, so the checks
 * above can fail; back in the library's mode it does not. */
static void hostile_mode_bites(void)
{
    /* volatile results: stored before the mode changes back */
    volatile float one = 1.0f, three = 3.0f, tiny = FLT_MIN, half = 0.5f;
    volatile float third = one / three, sub = tiny * half;
    const ngpt_fpmode rz = hostile_mode(ROUND_TOWARD_ZERO), ftz = hostile_mode(FLUSH_TO_ZERO);
    ngpt_fpmode_set(&rz);
    volatile float third_rz = one / three;
    ngpt_fpmode_set(&ftz);
    volatile float sub_ftz = tiny * half;
    ngpt_fpmode_set_library();
    CHECK(third_rz != third, "round toward zero took no effect");
    CHECK(sub == 0x1p-127f, "the library's mode keeps subnormals: %a", (double)sub);
    CHECK(third == 0x1.555556p-2f, "the library's mode rounds to nearest: %a", (double)third);
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__)
    CHECK(sub_ftz == 0.0f, "flush-to-zero took no effect: %a", (double)sub_ftz);
#else
    (void)sub_ftz;
#endif
}

/* KC_BAND_A * KC_BAND_B (kcase.h) is below FLT_MIN before rounding,
 * FLT_MIN after. IEEE (and x86 even under FTZ) gives FLT_MIN, an ARM flush
 * 0; the canonical math gives FLT_MIN everywhere. */
static void band_rounds_up(void)
{
    const float a = KC_BAND_A, b = KC_BAND_B;
    CHECK((double)a * (double)b < (double)FLT_MIN, "the exact product is tiny");
    const ngpt_kernels *tables[2] = {&ngpt_kernels_ref, &ngpt_kernels_active};
    float *work = aligned_alloc(64, NGPT_GEMM_WORK_BYTES);
    CHECK(work != NULL, "gemm workspace");
    for (int t = 0; t < 2 && work; t++) {
        float av[8], bv[8], c[8];
        for (int i = 0; i < 8; i++) av[i] = a, bv[i] = b, c[i] = -1.0f;
        /* 1 x 8 outputs of k = 1 (a NEON row), then 8 x 1 */
        tables[t]->gemm(1, 8, 1, av, 1, 1, bv, 8, 1, NULL, c, 8, false, work);
        for (int i = 0; i < 8; i++)
            CHECK(c[i] == FLT_MIN, "%s gemm: %a", tables[t]->name, (double)c[i]);
    }
    free(work);
}

#if defined(__arm__)
static uint32_t fpscr(void)
{
    ngpt_fpmode m = ngpt_fpmode_get();
    return m.reg;
}

/* ARMv7 Advanced SIMD: a subnormal input sets IDC, a flushed result UFC. */
static void armv7_flush_flags(void)
{
    volatile float sub = 0x1p-140f, tiny = 0x1p-70f, one = 1.0f;
    ngpt_fpmode_set_library();
    float32x4_t r = vaddq_f32(vdupq_n_f32(sub), vdupq_n_f32(one));
    __asm__ __volatile__("" : : "w"(r));
    CHECK((fpscr() & 0x80u) != 0, "IDC after a subnormal input: %08x", fpscr());
    ngpt_fpmode_set_library();
    r = vmulq_f32(vdupq_n_f32(tiny), vdupq_n_f32(tiny));
    __asm__ __volatile__("" : : "w"(r));
    CHECK((fpscr() & 0x08u) != 0 && vgetq_lane_f32(r, 0) == 0.0f, "UFC after a flushed result: %08x",
          fpscr());
    ngpt_fpmode_set_library();
    const float s = tiny * tiny;        /* the VFP unit keeps it */
    CHECK(s == 0x1p-140f, "VFP subnormal: %a", (double)s);
}
#endif

int main(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const int pid = (int)getpid();
    snprintf(ckpt_path, sizeof ckpt_path, "%s/ngpt-fpmode-%d.ngpt", tmp, pid);
    snprintf(train_path, sizeof train_path, "%s/ngpt-fpmode-%d-train.ngpt", tmp, pid);
    snprintf(tok_path, sizeof tok_path, "%s/ngpt-fpmode-%d.tok", tmp, pid);
    snprintf(text_path, sizeof text_path, "%s/ngpt-fpmode-%d.txt", tmp, pid);
    snprintf(json_path, sizeof json_path, "%s/ngpt-fpmode-%d-encoder.json", tmp, pid);
    snprintf(bpe_path, sizeof bpe_path, "%s/ngpt-fpmode-%d-vocab.bpe", tmp, pid);
    snprintf(sess_path, sizeof sess_path, "%s/ngpt-fpmode-%d.sess", tmp, pid);
    FILE *f = fopen(text_path, "w");
    if (f) fputs(TEXT, f), fclose(f);
    /* a Hugging Face directory to import: root/gpt2 (tests/hf_dir.h) */
    snprintf(root, sizeof root, "%s/ngpt-fpmode-%d-hf", tmp, pid);
    snprintf(import_path, sizeof import_path, "%s/imported.ngpt", root);
    snprintf(import_q8_path, sizeof import_q8_path, "%s/imported-q8.ngpt", root);
    make_tokenizer();
    make_model(27, DT_F16);
    /* a directory a killed run of the same pid left is used again */
    CHECK((mkdir(root, 0755) == 0 || errno == EEXIST) && write_dir("gpt2", &(dir_opts){.dt = DT_F16}),
          "a Hugging Face directory in %s", root);
    free_tensors();
    snprintf(l2c_model, sizeof l2c_model, "%s/model.bin", root);
    snprintf(l2c_tokenizer, sizeof l2c_tokenizer, "%s/tokenizer.bin", root);
    snprintf(l2c_out, sizeof l2c_out, "%s/llama2c.ngpt", root);
    CHECK(llama2c_write_files(l2c_model, l2c_tokenizer), "llama2.c files in %s", root);
    ngpt_fpmode_set_library();
    hostile_mode_bites();
    band_rounds_up();
#if defined(__arm__)
    armv7_flush_flags();
#endif
    caller_mode_kept();
    const char *const files[] = {ckpt_path, train_path, tok_path, text_path, json_path, bpe_path,
                                 sess_path};
    for (int i = 0; i < 7; i++) unlink(files[i]);
    static const char *const hf_files[] = {"config.json", "vocab.json", "merges.txt",
                                           "model.safetensors"};
    for (int i = 0; i < 4; i++) {
        char p[600];
        path_of(p, sizeof p, "gpt2", hf_files[i]);
        unlink(p);
    }
    char gpt2_dir[600];
    snprintf(gpt2_dir, sizeof gpt2_dir, "%s/gpt2", root);
    char tok_config[600];   /* scenario()'s */
    snprintf(tok_config, sizeof tok_config, "%s/tokenizer_config.json", root);
    unlink(import_path), unlink(import_q8_path), rmdir(gpt2_dir);
    unlink(l2c_model), unlink(l2c_tokenizer), unlink(l2c_out), unlink(tok_config), rmdir(root);
    return test_summary("test_fpmode");
}
