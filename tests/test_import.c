/* test_import.c — ngpt_import_hf on small Hugging Face GPT-2 directories
 * this test writes itself (config.json, safetensors in F32, F16 and BF16,
 * with and without the "transformer." prefix, one sharded with an index,
 * vocab.json + merges.txt and tokenizer.json of a tiny byte-level BPE),
 * with random weights from a fixed seed:
 *  - every imported parameter equals the value written, bit for bit
 *    (Conv1D transposes, F16 and BF16 widened by an independent formula);
 *  - the imported model's logits have one golden checksum on every build
 *    and thread count; the 8-bit import is byte for byte the file `ngpt
 *    quantize` makes of the float32 one; both tokenizer routes give one
 *    tokenizer;
 *  - bad files (truncated, wrong dtype, offsets past the end, overlapping
 *    or holey offsets, a duplicate name, shapes that disagree with
 *    config.json, an unknown activation, bad JSON, a foreign pre-tokenizer)
 *    are refused with one line naming ngpt_import_hf, and nothing is
 *    written;
 *  - the published configs of gpt2, gpt2-medium, gpt2-large, gpt2-xl and
 *    distilgpt2 are accepted and have their published parameter counts.
 * The directories are written by tests/hf_dir.h (test_fpmode imports one too). */
#include "base/fpmode.h"
#include "hf_dir.h"
#include "test.h"

/* The logits of the float32 import on tokens (i * 7 + 3) % V, 1 x T: the
 * same on every build and thread count (made by the scalar reference). */
#define GOLDEN_LOGITS 0x8ff4b8025f65b9ceull
/* ... and of its 8-bit import. */
#define GOLDEN_LOGITS_Q8 0x0e942402540b365bull

/* ------------------------------------------------------------ checks */

/* An inference context owning a copy of the model file's weights (read
 * through ngpt_context_params), keeping every position's logits; *m is
 * the model, open until test_context_close. */
static ngpt_context *load(const char *path, int threads, ngpt_model **m)
{
    ngpt_config cfg;
    ngpt_context *ctx = NULL;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    s.logits_rows = NGPT_LOGITS_ALL;
    if (ngpt_model_open(m, path) || ngpt_model_config(*m, &cfg) ||
        ngpt_context_init(&ctx, *m, &cfg, &s, NULL, 0)) {
        fprintf(stderr, "load %s: %s\n", path, ngpt_last_error());
        ngpt_model_close(*m);
        *m = NULL;
        return NULL;
    }
    return ctx;
}

/* The ngpt name of each Hugging Face tensor, and whether it is transposed. */
static bool ngpt_name(const char *hf, char *out, size_t size, bool *transpose)
{
    static const char *const map[][2] = {
        {"ln_1.weight", "ln1.weight"}, {"ln_1.bias", "ln1.bias"},
        {"attn.c_attn.weight", "attn.qkv.weight"}, {"attn.c_attn.bias", "attn.qkv.bias"},
        {"attn.c_proj.weight", "attn.proj.weight"}, {"attn.c_proj.bias", "attn.proj.bias"},
        {"ln_2.weight", "ln2.weight"}, {"ln_2.bias", "ln2.bias"},
        {"mlp.c_fc.weight", "mlp.fc1.weight"}, {"mlp.c_fc.bias", "mlp.fc1.bias"},
        {"mlp.c_proj.weight", "mlp.fc2.weight"}, {"mlp.c_proj.bias", "mlp.fc2.bias"}};
    *transpose = false;
    if (!strcmp(hf, "wte.weight")) return snprintf(out, size, "tok_emb.weight"), true;
    if (!strcmp(hf, "wpe.weight")) return snprintf(out, size, "pos_emb.weight"), true;
    if (!strcmp(hf, "ln_f.weight") || !strcmp(hf, "ln_f.bias"))
        return snprintf(out, size, "ln_f.%s", hf + 5), true;
    int l, used = 0;
    if (sscanf(hf, "h.%d.%n", &l, &used) != 1 || !used) return false;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(hf + used, map[i][0])) {
            snprintf(out, size, "blocks.%d.%s", l, map[i][1]);
            *transpose = strstr(hf, ".weight") && strncmp(hf + used, "ln_", 3);
            return true;
        }
    return false;
}

/* Every parameter of the imported model equals the value written (but
 * `unlisted` of them, which the caller checks: an untied lm_head). */
static void check_params(const char *label, const char *model, size_t unlisted)
{
    ngpt_model *m = NULL;
    ngpt_context *ctx = load(model, 1, &m);
    CHECK(ctx != NULL, "%s: the import loads", label);
    if (!ctx) return;
    float *p;
    size_t count;
    CHECK_OK(ngpt_context_params(ctx, &p, &count));
    size_t seen = 0, wrong = 0;
    for (int i = 0; i < n_hf_tensors; i++) {
        const hf_tensor *t = &hf_tensors[i];
        char name[64];
        bool tr;
        ngpt_tensor_info info;
        if (!ngpt_name(t->name, name, sizeof name, &tr) || ngpt_context_tensor_find(ctx, name, &info)) {
            CHECK(false, "%s: %s has no ngpt tensor", label, t->name);
            continue;
        }
        seen += info.count;
        const int rows = info.shape[0], cols = info.ndim > 1 ? info.shape[1] : 1;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                const float want = tr ? t->val[(size_t)c * rows + r] : t->val[(size_t)r * cols + c];
                const float got = p[info.offset + (size_t)r * cols + c];
                wrong += memcmp(&want, &got, 4) != 0;
            }
    }
    CHECK(seen + unlisted == count && wrong == 0, "%s: %zu of %zu parameters differ from the file's (%zu "
          "of %zu compared)", label, wrong, count, seen, count);
    test_context_close(ctx, m);
}

static uint64_t logits_hash(const char *model, int threads)
{
    ngpt_model *m = NULL;
    ngpt_context *ctx = load(model, threads, &m);
    uint64_t h = 0;
    int32_t tokens[T];
    for (int i = 0; i < T; i++) tokens[i] = (i * 7 + 3) % V;
    if (ctx && !ngpt_context_forward(ctx, tokens, 1, T, NULL, NULL)) ngpt_context_logits_checksum(ctx, &h);
    test_context_close(ctx, m);
    return h;
}

/* What ngpt_tokenizer_describe says of the tokenizer the model file
 * carries (end_id -2 and a message when it has none). */
static ngpt_tokenizer_info tokenizer_of(const char *model)
{
    ngpt_model *m = NULL;
    const ngpt_tokenizer *tok = NULL;
    ngpt_tokenizer_info info = {.end_id = -2};
    if (ngpt_model_open(&m, model) || ngpt_model_tokenizer(m, &tok) || !tok ||
        ngpt_tokenizer_describe(tok, &info))
        fprintf(stderr, "tokenizer of %s: %s\n", model, ngpt_last_error());
    ngpt_model_close(m);
    return info;
}

static uint64_t tokenizer_sum(const char *model) { return tokenizer_of(model).checksum; }

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static ngpt_status import_dir(const char *dir, const char *out, ngpt_weights store)
{
    char d[600], o[600];
    snprintf(d, sizeof d, "%s/%s", root, dir);
    snprintf(o, sizeof o, "%s/%s", root, out);
    ngpt_import_options opt = ngpt_import_options_default();
    opt.store = store;
    return ngpt_import_hf(d, &opt, o);
}

/* What ngpt quantize makes of float32 checkpoint f32: `store` at out (a
 * context of the model under its config with `store` weights, which keeps
 * its tokenizer). */
static void quantize(const char *f32, const char *out, ngpt_weights store)
{
    ngpt_config cfg = test_file_config(f32);
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = 1;
    cfg.weights = store;
    ngpt_model *m = NULL;
    ngpt_context *ctx = test_context_open(&m, f32, &cfg, &s);
    if (ctx) CHECK_OK(ngpt_context_save(ctx, out));
    test_context_close(ctx, m);
}

/* The F32 model in every layout: the same parameters; one golden. */
static void good_dirs(void)
{
    static const struct { const char *dir; dir_opts o; } cases[] = {
        {"f32", {.dt = DT_F32}},
        {"f32_prefix", {.dt = DT_F32, .prefix = true, .masks = true, .lm_head = true}},
        {"f32_sharded", {.dt = DT_F32, .shards = 3, .masks = true}},
        {"f16", {.dt = DT_F16}},
        {"bf16_prefix", {.dt = DT_BF16, .prefix = true, .masks = true}},
        {"bf16_sharded", {.dt = DT_BF16, .shards = 2, .prefix = true}},
    };
    char out[600], first[600];
    uint64_t golden = 0, tok_sum = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        make_model(27, cases[c].o.dt);
        CHECK(write_dir(cases[c].dir, &cases[c].o), "write %s", cases[c].dir);
        char name[64];
        snprintf(name, sizeof name, "%s.ngpt", cases[c].dir);
        snprintf(out, sizeof out, "%s/%s", root, name);
        CHECK_OK(import_dir(cases[c].dir, name, NGPT_WEIGHTS_F32));
        check_params(cases[c].dir, out, 0);
        const uint64_t h = logits_hash(out, 1);
        if (cases[c].o.dt == DT_F32) {
            if (!golden) golden = h, tok_sum = tokenizer_sum(out), snprintf(first, sizeof first, "%s", out);
            CHECK(h == golden, "%s: logits %016" PRIx64 ", the plain F32 import's %016" PRIx64,
                  cases[c].dir, h, golden);
            CHECK(test_same_file(out, first), "%s imports to the same file as f32", cases[c].dir);
        }
        CHECK(tokenizer_sum(out) == tok_sum, "%s: the same tokenizer", cases[c].dir);
    }
    printf("logits of the f32 import: %016" PRIx64 "\n", golden);
    if (GOLDEN_LOGITS) CHECK_HASH(golden, GOLDEN_LOGITS);
    CHECK(logits_hash(first, 3) == golden, "3 threads: the same logits");

    /* the 8-bit import is what ngpt quantize makes of the float32 one */
    snprintf(out, sizeof out, "%s/f32_q8.ngpt", root);
    CHECK_OK(import_dir("f32", "f32_q8.ngpt", NGPT_WEIGHTS_Q8));
    char quantized[600];
    snprintf(quantized, sizeof quantized, "%s/quantized.ngpt", root);
    quantize(first, quantized, NGPT_WEIGHTS_Q8);
    CHECK(test_same_file(out, quantized), "the q8 import is ngpt quantize's file, byte for byte");
    const uint64_t hq = logits_hash(out, 1);
    printf("logits of the q8 import: %016" PRIx64 "\n", hq);
    if (GOLDEN_LOGITS_Q8) CHECK_HASH(hq, GOLDEN_LOGITS_Q8);
    CHECK(logits_hash(out, 2) == hq, "q8, 2 threads: the same logits");

    /* so is the 4-bit import, of ngpt quantize --weights q4 */
    snprintf(out, sizeof out, "%s/f32_q4.ngpt", root);
    CHECK_OK(import_dir("f32", "f32_q4.ngpt", NGPT_WEIGHTS_Q4));
    quantize(first, quantized, NGPT_WEIGHTS_Q4);
    CHECK(test_same_file(out, quantized), "the q4 import is ngpt quantize's file, byte for byte");
    const uint64_t h4 = logits_hash(out, 1);
    printf("logits of the q4 import: %016" PRIx64 "\n", h4);
    CHECK(h4 != hq, "the q4 import's logits are the q8 import's");
    CHECK(logits_hash(out, 2) == h4, "q4, 2 threads: the same logits");
}

/* The progress callback: an import reports its bytes as it writes, makes
 * the same file, and cancelled leaves the previous file as it was. */
static int progress_calls, progress_cancel_at;
static bool on_progress(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    (void)user;
    progress_calls++;
    CHECK(stage == NGPT_PROGRESS_WRITE && done <= total, "progress %d: %llu of %llu", (int)stage,
          (unsigned long long)done, (unsigned long long)total);
    return progress_calls != progress_cancel_at;
}

static void import_progress(void)
{
    char first[600], again[600];
    snprintf(first, sizeof first, "%s/f32.ngpt", root);
    snprintf(again, sizeof again, "%s/f32_again.ngpt", root);
    ngpt_progress_callback_set(on_progress, NULL);
    CHECK_OK(import_dir("f32", "f32_again.ngpt", NGPT_WEIGHTS_F32));
    CHECK(progress_calls > 1 && test_same_file(again, first),
          "a watched import: %d reports, the same file", progress_calls);
    progress_calls = 0, progress_cancel_at = 2;
    CHECK_STATUS(import_dir("f32", "f32.ngpt", NGPT_WEIGHTS_Q8), NGPT_ERR_STOPPED);
    CHECK(strstr(ngpt_last_error(), "ngpt_import_hf: cancelled by the progress callback") &&
              strstr(ngpt_last_error(), "unchanged") && test_same_file(again, first),
          "a cancelled import: %s", ngpt_last_error());
    ngpt_progress_callback_set(NULL, NULL);
}

/* FTZ + DAZ + round toward zero, with a sticky flag set (test_fpmode.c's). */
static ngpt_fpmode hostile_mode(void)
{
    ngpt_fpmode m = ngpt_fpmode_get();
#if defined(__x86_64__) || defined(__i386__)
    m.reg = 0x1F80u | 0x8000u | 0x0040u | 0x6000u | 0x0020u;
#elif defined(__aarch64__)
    m.fpcr = (1u << 24) | (3u << 22);
    m.fpsr = 0x10u;
#elif defined(__arm__)
    m.reg = (1u << 24) | (3u << 22) | 0x10u;
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

/* A caller in a hostile floating-point mode gets the same files (the F16
 * model has subnormal values; the 8-bit import divides and rounds) and its
 * mode back. */
static void caller_mode(void)
{
    char normal[600], hostile[600];
    snprintf(normal, sizeof normal, "%s/f16_q8.ngpt", root);
    snprintf(hostile, sizeof hostile, "%s/f16_q8_hostile.ngpt", root);
    CHECK_OK(import_dir("f16", "f16_q8.ngpt", NGPT_WEIGHTS_Q8));
    const ngpt_fpmode caller = hostile_mode();
    ngpt_fpmode_set(&caller);
    const ngpt_status st = import_dir("f16", "f16_q8_hostile.ngpt", NGPT_WEIGHTS_Q8);
    const ngpt_fpmode after = ngpt_fpmode_get();
    ngpt_fpmode_set_library();
    CHECK(st == NGPT_OK, "import in a hostile mode: %s", ngpt_last_error());
    CHECK(same_mode(&after, &caller), "ngpt_import_hf changed the caller's mode");
    CHECK(test_same_file(normal, hostile), "the same 8-bit file in the caller's hostile mode");
}

/* tie_word_embeddings false: lm_head.weight is the model's own (here -wte). */
static void untied(void)
{
    char out[600];
    make_model(27, DT_F32);
    CHECK(write_dir("untied", &(dir_opts){.lm_head = true, .lm_head_neg = true, .untied = true}),
          "write untied");
    snprintf(out, sizeof out, "%s/untied.ngpt", root);
    CHECK_OK(import_dir("untied", "untied.ngpt", NGPT_WEIGHTS_F32));
    check_params("untied", out, (size_t)V * C);
    ngpt_model *m = NULL;
    ngpt_context *ctx = load(out, 1, &m);
    ngpt_tensor_info head;
    float *p;
    size_t count, wrong = 0;
    if (!ctx || ngpt_context_tensor_find(ctx, "lm_head.weight", &head) || ngpt_context_params(ctx, &p, &count)) {
        CHECK(false, "untied: lm_head.weight: %s", ngpt_last_error());
    } else {
        for (size_t i = 0; i < head.count; i++) wrong += p[head.offset + i] != -hf_tensors[0].val[i];
        CHECK(wrong == 0 && head.count == (size_t)V * C, "untied: lm_head.weight is the file's "
              "(%zu differ)", wrong);
    }
    test_context_close(ctx, m);
}

/* tokenizer.json in both merge forms gives vocab.json + merges.txt's tokenizer. */
static void tokenizer_json(void)
{
    char d[600], o[600], ref[600], p[600];
    snprintf(ref, sizeof ref, "%s/f32.ngpt", root);
    const uint64_t want = tokenizer_sum(ref);
    for (int pairs = 0; pairs < 2; pairs++) {
        make_model(27, DT_F32);
        dir_opts opt = {.dt = DT_F32};
        CHECK(write_dir("tokjson", &opt), "write tokjson");
        path_of(p, sizeof p, "tokjson", "vocab.json");
        unlink(p);
        path_of(p, sizeof p, "tokjson", "merges.txt");
        unlink(p);
        CHECK(write_tokenizer_json("tokjson", pairs, GPT2_PRE), "write tokenizer.json");
        snprintf(d, sizeof d, "%s/tokjson", root);
        snprintf(o, sizeof o, "%s/tokjson.ngpt", root);
        CHECK_OK(ngpt_import_hf(d, NULL, o));
        CHECK(tokenizer_sum(o) == want, "tokenizer.json (%s merges) is vocab.json + merges.txt's "
              "tokenizer", pairs ? "pair" : "string");
        CHECK(test_same_file(o, ref), "the same file as from vocab.json + merges.txt");
    }
    /* a foreign pre-tokenizer or normalizer is refused by name */
    static const char *const foreign[] = {
        "{\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true}",
        "{\"type\": \"Whitespace\"}",
        "{\"type\": \"Sequence\", \"pretokenizers\": []}",
    };
    for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        CHECK(write_tokenizer_json("tokjson", false, foreign[i]), "write");
        unlink(o);
        CHECK_STATUS(ngpt_import_hf(d, NULL, o), NGPT_ERR_UNSUPPORTED);
        CHECK(strstr(ngpt_last_error(), i == 0 ? "add_prefix_space" : i == 1 ? "Whitespace" : "Sequence"),
              "the message names it: %s", ngpt_last_error());
        CHECK(!exists(o), "nothing written");
    }
    /* files named one by one, no directory */
    const char *w[1];
    char cfgp[600], wp[600], vp[600], mp[600];
    path_of(cfgp, sizeof cfgp, "f32_sharded", "config.json");
    path_of(wp, sizeof wp, "f32_sharded", "model.safetensors.index.json");
    path_of(vp, sizeof vp, "f32", "vocab.json");
    path_of(mp, sizeof mp, "f32", "merges.txt");
    w[0] = wp;
    ngpt_import_options opt = ngpt_import_options_default();
    opt.config = cfgp, opt.weights = w, opt.n_weights = 1, opt.vocab = vp, opt.merges = mp;
    snprintf(o, sizeof o, "%s/named.ngpt", root);
    CHECK_OK(ngpt_import_hf(NULL, &opt, o));
    CHECK(test_same_file(o, ref), "files named one by one: the same file");
}

/* One bad directory: refused with one line naming ngpt_import_hf (and
 * `needle`), nothing written. */
static void refused(const char *dir, const dir_opts *o, ngpt_status want, const char *needle)
{
    char out[600];
    make_model(27, o->dt);
    CHECK(write_dir(dir, o), "write %s", dir);
    snprintf(out, sizeof out, "%s/%s.ngpt", root, dir);
    ngpt_status st = import_dir(dir, strrchr(out, '/') + 1, NGPT_WEIGHTS_F32);
    const char *msg = ngpt_last_error();
    CHECK(st == want, "%s: %s (want %s): %s", dir, ngpt_status_string(st), ngpt_status_string(want), msg);
    CHECK(!strncmp(msg, "ngpt_import_hf: ", 16) && !strchr(msg, '\n') && strstr(msg, needle),
          "%s: one line naming ngpt_import_hf and \"%s\": %s", dir, needle, msg);
    CHECK(!exists(out), "%s: nothing written", dir);
}

static void bad_dirs(void)
{
    refused("truncated", &(dir_opts){.sp = SP_TRUNCATED}, NGPT_ERR_BAD_FORMAT, "truncated");
    refused("dtype", &(dir_opts){.sp = SP_DTYPE}, NGPT_ERR_BAD_FORMAT, "is I32");
    refused("dtype16", &(dir_opts){.dt = DT_BF16, .sp = SP_DTYPE}, NGPT_ERR_BAD_FORMAT, "is I16");
    refused("past_end", &(dir_opts){.sp = SP_PAST_END}, NGPT_ERR_BAD_FORMAT, "past the end");
    refused("overlap", &(dir_opts){.sp = SP_OVERLAP}, NGPT_ERR_BAD_FORMAT, "overlaps");
    refused("hole", &(dir_opts){.sp = SP_HOLE}, NGPT_ERR_BAD_FORMAT, "hole");
    refused("duplicate", &(dir_opts){.sp = SP_DUPLICATE}, NGPT_ERR_BAD_FORMAT, "named twice");
    refused("span", &(dir_opts){.sp = SP_SPAN}, NGPT_ERR_BAD_FORMAT, "spans");
    refused("bad_json", &(dir_opts){.sp = SP_BAD_JSON}, NGPT_ERR_BAD_FORMAT, "not valid JSON");
    refused("big_header", &(dir_opts){.sp = SP_BIG_HEADER}, NGPT_ERR_BAD_FORMAT, "100,000,000");
    refused("extra", &(dir_opts){.sp = SP_EXTRA_TENSOR}, NGPT_ERR_BAD_FORMAT, "h.0.attn.rotary");
    refused("shape", &(dir_opts){.n_positions = T / 2}, NGPT_ERR_BAD_FORMAT, "wpe.weight");
    refused("shard_bad", &(dir_opts){.shards = 2, .sp = SP_HOLE}, NGPT_ERR_BAD_FORMAT, "hole");
    refused("activation", &(dir_opts){.activation = "relu"}, NGPT_ERR_UNSUPPORTED, "relu");
    refused("lm_head", &(dir_opts){.lm_head = true, .lm_head_neg = true}, NGPT_ERR_BAD_FORMAT,
            "differs from wte.weight");
    refused("no_lm_head", &(dir_opts){.untied = true}, NGPT_ERR_BAD_FORMAT, "lm_head.weight");
    refused("gelu_fast", &(dir_opts){.activation = "gelu_fast"}, NGPT_ERR_UNSUPPORTED, "gelu_fast");

    /* a config.json that is not JSON, and one that says another epsilon */
    char p[600];
    dir_opts ok = {0};
    make_model(27, DT_F32);
    CHECK(write_dir("cfg", &ok), "write cfg");
    path_of(p, sizeof p, "cfg", "config.json");
    CHECK(write_file(p, "{\"model_type\": \"gpt2\", ", 24), "write");
    CHECK_STATUS(import_dir("cfg", "cfg.ngpt", NGPT_WEIGHTS_F32), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "not valid JSON"), "%s", ngpt_last_error());
    static const char *const refuse[][2] = {
        {"{\"model_type\": \"gpt2\", \"layer_norm_epsilon\": 1e-6}", "layer_norm_epsilon"},
        {"{\"model_type\": \"gpt2\", \"scale_attn_by_inverse_layer_idx\": true}", "scale_attn_by_inverse_layer_idx"},
        {"{\"model_type\": \"mistral\"}", "mistral"},
        {"{\"model_type\": \"gpt2\", \"activation_function\": \"silu\"}", "silu"},
        {"{\"model_type\": \"gpt2\", \"scale_attn_weights\": false}", "scale_attn_weights"},
    };
    ngpt_config cfg;
    for (size_t i = 0; i < sizeof refuse / sizeof refuse[0]; i++) {
        ngpt_status st = ngpt_import_hf_config_mem(refuse[i][0], strlen(refuse[i][0]), &cfg);
        CHECK(st == NGPT_ERR_UNSUPPORTED && strstr(ngpt_last_error(), refuse[i][1]) &&
              !strncmp(ngpt_last_error(), "ngpt_import_hf_config_mem: ", 27),
              "%s: %s", refuse[i][0], ngpt_last_error());
    }
    static const char *const malformed[] = {
        "{\"model_type\": \"gpt2\", \"n_embd\": 64.5}", "{\"model_type\": \"gpt2\", \"n_head\": -1}",
        "{\"model_type\": \"gpt2\", \"n_embd\": 64, \"n_embd\": 128}", "[1, 2]", "{} x",
        "{\"model_type\": \"gpt2\", \"n_embd\": 65, \"n_head\": 4}",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        ngpt_status st = ngpt_import_hf_config_mem(malformed[i], strlen(malformed[i]), &cfg);
        CHECK(st != NGPT_OK && !strncmp(ngpt_last_error(), "ngpt_import_hf_config_mem: ", 27),
              "%s: %s", malformed[i], ngpt_last_error());
    }
}

/* The published configs (their config.json, abridged to what ngpt reads
 * plus a few it ignores) and their published parameter counts. */
static void published_configs(void)
{
    static const struct { const char *name; int layers, embd, heads; size_t params; } models[] = {
        {"gpt2", 12, 768, 12, 124439808u},
        {"gpt2-medium", 24, 1024, 16, 354823168u},
        {"gpt2-large", 36, 1280, 20, 774030080u},
        {"gpt2-xl", 48, 1600, 25, 1557611200u},
        {"distilgpt2", 6, 768, 12, 81912576u},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char json[1024];
        int n = snprintf(json, sizeof json,
            "{\"activation_function\": \"gelu_new\", \"architectures\": [\"GPT2LMHeadModel\"], "
            "\"attn_pdrop\": 0.1, \"bos_token_id\": 50256, \"embd_pdrop\": 0.1, "
            "\"eos_token_id\": 50256, \"initializer_range\": 0.02, \"layer_norm_epsilon\": 1e-05, "
            "\"model_type\": \"gpt2\", \"n_ctx\": 1024, \"n_embd\": %d, \"n_head\": %d, "
            "\"n_layer\": %d, \"n_positions\": 1024, \"resid_pdrop\": 0.1, "
            "\"summary_activation\": null, \"summary_first_dropout\": 0.1, "
            "\"summary_proj_to_labels\": true, \"summary_type\": \"cls_index\", "
            "\"summary_use_proj\": true, \"task_specific_params\": {\"text-generation\": "
            "{\"do_sample\": true, \"max_length\": 50}}, \"vocab_size\": 50257}",
            models[i].embd, models[i].heads, models[i].layers);
        ngpt_config cfg;
        size_t params = 0, f32 = 0, q8 = 0;
        CHECK_OK(ngpt_import_hf_config_mem(json, (size_t)n, &cfg));
        CHECK_OK(ngpt_config_param_count(&cfg, &params));
        CHECK(params == models[i].params, "%s: %zu parameters, published %zu", models[i].name,
              params, models[i].params);
        CHECK(cfg.vocab_size == 50257 && cfg.context_len == 1024 && cfg.d_ff == 4 * models[i].embd &&
              cfg.gelu == NGPT_GELU_TANH && cfg.proj_bias && cfg.qkv_bias && cfg.tie_lm_head &&
              cfg.pos == NGPT_POS_LEARNED && cfg.final_norm && cfg.norm == NGPT_NORM_PRE,
              "%s: GPT-2's switches", models[i].name);
        /* (a 32-bit machine cannot address gpt2-xl's float32 arena: overflow) */
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        ngpt_status st = ngpt_context_arena_size(NULL, &cfg, &s, &f32);
        CHECK(st == NGPT_OK || (sizeof(size_t) < 8 && st == NGPT_ERR_OVERFLOW), "%s: f32 arena: %s",
              models[i].name, ngpt_last_error());
        cfg.weights = NGPT_WEIGHTS_Q8;
        st = ngpt_context_arena_size(NULL, &cfg, &s, &q8);
        CHECK(st == NGPT_OK || (sizeof(size_t) < 8 && st == NGPT_ERR_OVERFLOW), "%s: q8 arena: %s",
              models[i].name, ngpt_last_error());
        size_t train = 0;
        ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
        ts.batch = 4, ts.seq = 256;
        cfg.weights = NGPT_WEIGHTS_F32;
        st = ngpt_context_arena_size(NULL, &cfg, &ts, &train);
        CHECK(st == NGPT_OK || (sizeof(size_t) < 8 && st == NGPT_ERR_OVERFLOW), "%s: train arena: %s",
              models[i].name, ngpt_last_error());
        printf("%-12s %13zu parameters; arena: infer B=1 T=1024 f32 %6.1f MiB, q8 %6.1f MiB; "
               "train B=4 T=256 %7.1f MiB\n", models[i].name, params, f32 / 1048576.0,
               q8 / 1048576.0, train / 1048576.0);
    }
}

/* A Llama directory (GQA 2:1, head_dim 24 with C/H 16, RMSNorm, SwiGLU,
 * rotate-half RoPE): imported in every dtype and tie, the same logits on
 * every build and thread count; the q8 import is ngpt quantize's file. */
static uint64_t llama_import(const char *dir, int dt, bool untied, ngpt_weights store)
{
    char out[64];
    make_llama(41, dt, untied);
    CHECK(write_llama_dir(dir, &(dir_opts){.dt = dt, .untied = untied}, NULL), "write %s", dir);
    snprintf(out, sizeof out, "%s%s.ngpt", dir, store == NGPT_WEIGHTS_Q8 ? "_q8" : "");
    CHECK_OK(import_dir(dir, out, store));
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, out);
    const uint64_t h = logits_hash(path, 1);
    CHECK(h == logits_hash(path, 2), "%s: the same logits on 1 and 2 threads", dir);
    return h;
}

static void llama(void)
{
    /* the config as ngpt plans it */
    make_llama(41, DT_F32, false);
    CHECK(write_llama_dir("llama_f32", &(dir_opts){0}, NULL), "write llama_f32");
    char p[600];
    ngpt_config cfg;
    path_of(p, sizeof p, "llama_f32", "config.json");
    CHECK_OK(ngpt_import_hf_config(p, &cfg));
    CHECK(cfg.norm_type == NGPT_NORM_RMS && cfg.mlp == NGPT_MLP_SWIGLU && !cfg.mlp_bias &&
              !cfg.qkv_bias && !cfg.proj_bias && cfg.n_kv_heads == LKV && cfg.head_dim == LD &&
              cfg.rope_pairs == NGPT_ROPE_HALVES && cfg.pos == NGPT_POS_ROPE &&
              cfg.rope_theta == 100000.0f && cfg.norm_eps == 1e-5f && cfg.tie_lm_head &&
              cfg.context_len == T && cfg.d_ff == LF && cfg.final_norm,
          "Llama's switches");
    /* golden: the logits of the F32 import (tests/golden's convention: on
     * every build and thread count) */
    const uint64_t f32 = llama_import("llama_f32", DT_F32, false, NGPT_WEIGHTS_F32);
    CHECK(f32 == UINT64_C(0xaca41ded21c40915), "llama F32 logits checksum %016llx", (unsigned long long)f32);
    const uint64_t untied = llama_import("llama_untied", DT_BF16, true, NGPT_WEIGHTS_F32);
    CHECK(untied == UINT64_C(0xc3cda7995f58187a), "llama BF16 untied logits checksum %016llx",
          (unsigned long long)untied);
    const uint64_t f16 = llama_import("llama_f16", DT_F16, false, NGPT_WEIGHTS_F32);
    CHECK(f16 != f32, "F16 values differ from F32's, so do the logits");
    llama_import("llama_f32", DT_F32, false, NGPT_WEIGHTS_Q8);
    char q8[600], quantized[600];
    snprintf(q8, sizeof q8, "%s/llama_f32_q8.ngpt", root);
    snprintf(p, sizeof p, "%s/llama_f32.ngpt", root);
    snprintf(quantized, sizeof quantized, "%s/llama_quantized.ngpt", root);
    quantize(p, quantized, NGPT_WEIGHTS_Q8);
    CHECK(test_same_file(q8, quantized), "the Llama q8 import is ngpt quantize's file");

    /* a shorter context (opt.context_len); not a longer or negative one */
    char d[600], o[600];
    snprintf(d, sizeof d, "%s/llama_f32", root);
    snprintf(o, sizeof o, "%s/llama_short.ngpt", root);
    ngpt_import_options opt = ngpt_import_options_default();
    CHECK(opt.context_len == 0, "the default context is config.json's");
    opt.context_len = T / 2;
    CHECK_OK(ngpt_import_hf(d, &opt, o));
    cfg = test_file_config(o);
    CHECK(cfg.context_len == T / 2, "context_len %d: T=%d", T / 2, (int)cfg.context_len);
    const int32_t bad_context[] = {-1, T + 1};
    for (int i = 0; i < 2; i++) {
        opt.context_len = bad_context[i];
        CHECK_STATUS(ngpt_import_hf(d, &opt, o), NGPT_ERR_BAD_ARG);
        CHECK(strstr(ngpt_last_error(), "context"), "%s", ngpt_last_error());
    }

    /* refusals, one line naming the function and what is wrong */
    static const struct { const char *name, *extra; int spoilt; ngpt_status st; const char *needle; }
    bad[] = {
        {"l_scaling", "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.0},", 0,
         NGPT_ERR_UNSUPPORTED, "rope_scaling"},
        {"l_params", "\"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 4.0},", 0,
         NGPT_ERR_UNSUPPORTED, "rope_parameters"},
        {"l_window", "\"sliding_window\": 4096,", 0, NGPT_ERR_UNSUPPORTED, "sliding_window"},
        {"l_moe", "\"num_local_experts\": 8,", 0, NGPT_ERR_UNSUPPORTED, "num_local_experts"},
        {"l_tp", "\"pretraining_tp\": 2,", 0, NGPT_ERR_UNSUPPORTED, "pretraining_tp"},
        {"l_act", "\"hidden_act\": \"gelu\",", 0, NGPT_ERR_UNSUPPORTED, "hidden_act \"gelu\""},
        {"l_arch", "\"architectures\": [\"LlamaForSequenceClassification\"],", 0,
         NGPT_ERR_UNSUPPORTED, "architectures"},
        {"l_kv", "\"num_key_value_heads\": 3,", 0, NGPT_ERR_BAD_CONFIG, "n_kv_heads"},
        {"l_missing", NULL, SP_MISSING, NGPT_ERR_BAD_FORMAT, "model.norm.weight"},
        {"l_dtype", NULL, SP_DTYPE, NGPT_ERR_BAD_FORMAT, "ngpt imports F32, F16 and BF16"},
        {"l_shape", "\"intermediate_size\": 64,", 0, NGPT_ERR_BAD_FORMAT, "gate_proj.weight"},
        {"l_extra", NULL, SP_EXTRA_TENSOR, NGPT_ERR_BAD_FORMAT, "not part of the Llama model"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_llama(41, DT_F32, false);
        if (bad[i].spoilt == SP_MISSING) {      /* model.norm.weight, the last */
            hf_tensor *t = &hf_tensors[--n_hf_tensors];
            free(t->val), free(t->bytes);
        }
        dir_opts o = {.sp = bad[i].spoilt == SP_MISSING ? SP_NONE : (spoil)bad[i].spoilt};
        CHECK(write_llama_dir(bad[i].name, &o, bad[i].extra), "write %s", bad[i].name);
        char out[64];
        snprintf(out, sizeof out, "%s.ngpt", bad[i].name);
        ngpt_status st = import_dir(bad[i].name, out, NGPT_WEIGHTS_F32);
        const char *msg = ngpt_last_error();
        CHECK(st == bad[i].st && !strncmp(msg, "ngpt_import_hf: ", 16) && !strchr(msg, '\n') &&
                  strstr(msg, bad[i].needle),
              "%s: %s (want %s naming \"%s\"): %s", bad[i].name, ngpt_status_string(st),
              ngpt_status_string(bad[i].st), bad[i].needle, msg);
    }
}

/* ------------------------------------------------------------ Qwen, Llama 3 */

static const char QWEN2_KEYS[] = "\"model_type\": \"qwen2\", \"architectures\": "
                                 "[\"Qwen2ForCausalLM\"], \"sliding_window\": 32768, "
                                 "\"use_sliding_window\": false, \"max_window_layers\": 2,";
static const char QWEN3_KEYS[] = "\"model_type\": \"qwen3\", \"architectures\": "
                                 "[\"Qwen3ForCausalLM\"], \"sliding_window\": null, "
                                 "\"use_sliding_window\": false, \"max_window_layers\": 2,";
/* Llama 3's rope_scaling, at a context where the heads of 24 have pairs
 * in all three of its bands */
static const char LLAMA3_KEYS[] = "\"rope_scaling\": {\"factor\": 8.0, \"low_freq_factor\": 1.0, "
                                  "\"high_freq_factor\": 4.0, "
                                  "\"original_max_position_embeddings\": 64, "
                                  "\"rope_type\": \"llama3\"},";

/* make_llama_as's model (kind, rows) written with config keys `keys`,
 * imported (store); the logits' checksum, the same on 1 and 2 threads. */
static uint64_t family_import(const char *dir, int kind, int dt, bool untied, const char *keys,
                              ngpt_weights store)
{
    char out[64];
    make_llama_as(43, dt, untied, kind, V);
    CHECK(write_llama_dir(dir, &(dir_opts){.dt = dt, .untied = untied}, keys), "write %s", dir);
    snprintf(out, sizeof out, "%s%s.ngpt", dir, store == NGPT_WEIGHTS_Q8 ? "_q8"
                                                 : store == NGPT_WEIGHTS_Q4 ? "_q4" : "");
    CHECK_OK(import_dir(dir, out, store));
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, out);
    const uint64_t h = logits_hash(path, 1);
    CHECK(h == logits_hash(path, 2), "%s: the same logits on 1 and 2 threads", dir);
    return h;
}

/* The config ngpt plans of make_llama_as's F32 model (kind) written in dir
 * with config keys `keys`. */
static ngpt_config dir_config(const char *dir, int kind, const char *keys)
{
    char p[600];
    ngpt_config cfg = {0};
    make_llama_as(43, DT_F32, false, kind, V);
    CHECK(write_llama_dir(dir, &(dir_opts){0}, keys), "write %s", dir);
    path_of(p, sizeof p, dir, "config.json");
    CHECK_OK(ngpt_import_hf_config(p, &cfg));
    return cfg;
}

/* family_import's F32 model of dir imported with --weights q8 and q4 in
 * one step: ngpt quantize's files of the float32 import (already made). */
static void quantized_imports(const char *dir, int kind, const char *keys)
{
    for (int k = 0; k < 2; k++) {
        const ngpt_weights w = k ? NGPT_WEIGHTS_Q4 : NGPT_WEIGHTS_Q8;
        family_import(dir, kind, DT_F32, false, keys, w);
        char got[600], f32[600], want[600];
        snprintf(got, sizeof got, "%s/%s_%s.ngpt", root, dir, k ? "q4" : "q8");
        snprintf(f32, sizeof f32, "%s/%s.ngpt", root, dir);
        snprintf(want, sizeof want, "%s/%s_quantized.ngpt", root, dir);
        quantize(f32, want, w);
        CHECK(test_same_file(got, want), "the %s %s import is ngpt quantize's file", dir,
              k ? "q4" : "q8");
    }
}

/* A published config.json (text) as ngpt plans it: its parameter count
 * is the published one. */
static ngpt_config published_config(const char *json, const char *name, size_t published)
{
    ngpt_config cfg = {0};
    size_t params = 0;
    CHECK_OK(ngpt_import_hf_config_mem(json, strlen(json), &cfg));
    CHECK_OK(ngpt_config_param_count(&cfg, &params));
    CHECK(params == published, "%s: %zu parameters, published %zu", name, params, published);
    printf("%-13s %11zu parameters\n", name, params);
    return cfg;
}

/* The published configs of Qwen2.5-0.5B and -1.5B, Qwen3-0.6B and
 * Llama-3.2-1B (their hub copies' keys and values) map to their published
 * parameter counts, with T the import's default. */
static void published_qwen_llama3(void)
{
    static const char *const configs[4] = {
        "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, "
        "\"bos_token_id\": 151643, \"eos_token_id\": 151643, \"hidden_act\": \"silu\", "
        "\"hidden_size\": 896, \"initializer_range\": 0.02, \"intermediate_size\": 4864, "
        "\"max_position_embeddings\": 32768, \"max_window_layers\": 24, \"model_type\": \"qwen2\", "
        "\"num_attention_heads\": 14, \"num_hidden_layers\": 24, \"num_key_value_heads\": 2, "
        "\"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0, \"sliding_window\": 32768, "
        "\"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.40.1\", \"use_cache\": true, \"use_sliding_window\": false, "
        "\"vocab_size\": 151936}",
        "{\"architectures\": [\"Qwen2ForCausalLM\"], \"attention_dropout\": 0.0, "
        "\"bos_token_id\": 151643, \"eos_token_id\": 151643, \"hidden_act\": \"silu\", "
        "\"hidden_size\": 1536, \"initializer_range\": 0.02, \"intermediate_size\": 8960, "
        "\"max_position_embeddings\": 131072, \"max_window_layers\": 28, \"model_type\": \"qwen2\", "
        "\"num_attention_heads\": 12, \"num_hidden_layers\": 28, \"num_key_value_heads\": 2, "
        "\"rms_norm_eps\": 1e-06, \"rope_theta\": 1000000.0, \"sliding_window\": 131072, "
        "\"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.40.1\", \"use_cache\": true, \"use_sliding_window\": false, "
        "\"vocab_size\": 151936}",
        "{\"architectures\": [\"Qwen3ForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 151643, \"eos_token_id\": 151645, "
        "\"head_dim\": 128, \"hidden_act\": \"silu\", \"hidden_size\": 1024, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 3072, "
        "\"max_position_embeddings\": 40960, \"max_window_layers\": 28, \"model_type\": \"qwen3\", "
        "\"num_attention_heads\": 16, \"num_hidden_layers\": 28, \"num_key_value_heads\": 8, "
        "\"rms_norm_eps\": 1e-06, \"rope_scaling\": null, \"rope_theta\": 1000000, "
        "\"sliding_window\": null, \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.51.0\", \"use_cache\": true, \"use_sliding_window\": false, "
        "\"vocab_size\": 151936}",
        "{\"architectures\": [\"LlamaForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"bos_token_id\": 128000, \"eos_token_id\": 128001, "
        "\"head_dim\": 64, \"hidden_act\": \"silu\", \"hidden_size\": 2048, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 8192, "
        "\"max_position_embeddings\": 131072, \"mlp_bias\": false, \"model_type\": \"llama\", "
        "\"num_attention_heads\": 32, \"num_hidden_layers\": 16, \"num_key_value_heads\": 8, "
        "\"pretraining_tp\": 1, \"rms_norm_eps\": 1e-05, \"rope_scaling\": {\"factor\": 32.0, "
        "\"high_freq_factor\": 4.0, \"low_freq_factor\": 1.0, "
        "\"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"}, "
        "\"rope_theta\": 500000.0, \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.45.0.dev0\", \"use_cache\": true, \"vocab_size\": 128256}",
    };
    static const char *const names[4] = {"Qwen2.5-0.5B", "Qwen2.5-1.5B", "Qwen3-0.6B",
                                         "Llama-3.2-1B"};
    const size_t published[4] = {494032768u, 1543714304u, 596049920u, 1235814400u};
    for (int i = 0; i < 4; i++) {
        const ngpt_config cfg = published_config(configs[i], names[i], published[i]);
        CHECK(cfg.context_len == NGPT_IMPORT_CONTEXT_DEFAULT && cfg.tie_lm_head &&
                  cfg.qkv_bias == (i < 2) && !cfg.proj_bias && cfg.qk_norm == (i == 2) &&
                  cfg.rope_scaling == (i == 3 ? NGPT_ROPE_SCALING_LLAMA3 : NGPT_ROPE_SCALING_NONE),
              "%s: T=%d and the family's switches", names[i], (int)cfg.context_len);
    }
    ngpt_config l3;
    CHECK_OK(ngpt_import_hf_config_mem(configs[3], strlen(configs[3]), &l3));
    CHECK(l3.rope_factor == 32.0f && l3.rope_low_freq_factor == 1.0f &&
              l3.rope_high_freq_factor == 4.0f && l3.rope_original_context == 8192 &&
              l3.rope_theta == 500000.0f, "Llama 3.2's rope_scaling");
}

static void qwen_llama3(void)
{
    published_qwen_llama3();
    /* the configs as ngpt plans them */
    ngpt_config cfg = dir_config("qwen2_f32", 2, QWEN2_KEYS);
    CHECK(cfg.qkv_bias && !cfg.proj_bias && !cfg.qk_norm && cfg.context_len == T &&
              cfg.rope_scaling == NGPT_ROPE_SCALING_NONE, "Qwen2's switches");
    cfg = dir_config("qwen3_f32", 3, QWEN3_KEYS);
    CHECK(!cfg.qkv_bias && !cfg.proj_bias && cfg.qk_norm && cfg.head_dim == LD,
          "Qwen3's switches");

    /* goldens: the F32 imports' logits, on every build and thread count */
    const uint64_t q2 = family_import("qwen2_f32", 2, DT_F32, false, QWEN2_KEYS, NGPT_WEIGHTS_F32);
    CHECK(q2 == UINT64_C(0xbf3dd9ea53cfd41d), "qwen2 F32 logits checksum %016llx", (unsigned long long)q2);
    const uint64_t q3 = family_import("qwen3_f32", 3, DT_F32, false, QWEN3_KEYS, NGPT_WEIGHTS_F32);
    CHECK(q3 == UINT64_C(0x4ec8d3d537b91595), "qwen3 F32 logits checksum %016llx", (unsigned long long)q3);
    const uint64_t l3 = family_import("llama3_f32", 0, DT_F32, false, LLAMA3_KEYS,
                                      NGPT_WEIGHTS_F32);
    CHECK(l3 == UINT64_C(0x991bee40f09e0ce2), "llama3 F32 logits checksum %016llx", (unsigned long long)l3);
    /* other dtypes and ties; q8 and q4 in one step, ngpt quantize's files */
    family_import("qwen2_bf16", 2, DT_BF16, true, QWEN2_KEYS, NGPT_WEIGHTS_F32);
    family_import("qwen3_f16", 3, DT_F16, true, QWEN3_KEYS, NGPT_WEIGHTS_F32);
    quantized_imports("qwen2_f32", 2, QWEN2_KEYS);
    quantized_imports("qwen3_f32", 3, QWEN3_KEYS);
    quantized_imports("llama3_f32", 0, LLAMA3_KEYS);

    /* a vocabulary larger than the tokenizer's ids (Qwen's 151936 rows for
     * 151669 ids; here a tokenizer.json): imported; those rows are never
     * sampled */
    enum { ROWS = V + 36 };
    char extra[512], p[600];
    snprintf(extra, sizeof extra, "%s \"vocab_size\": %d,", QWEN2_KEYS, (int)ROWS);
    make_llama_as(43, DT_F32, false, 2, ROWS);
    CHECK(write_llama_dir("qwen2_rows", &(dir_opts){0}, extra), "write qwen2_rows");
    path_of(p, sizeof p, "qwen2_rows", "vocab.json");
    unlink(p);
    path_of(p, sizeof p, "qwen2_rows", "merges.txt");
    unlink(p);
    CHECK(write_tokenizer_json_chat("qwen2_rows", false, GPT2_PRE, true), "tokenizer.json");
    CHECK_OK(import_dir("qwen2_rows", "qwen2_rows.ngpt", NGPT_WEIGHTS_F32));
    path_of(p, sizeof p, "qwen2_rows.ngpt", "");
    snprintf(p, sizeof p, "%s/qwen2_rows.ngpt", root);
    ngpt_model *m = NULL;
    ngpt_context *ctx = NULL;
    if (!ngpt_model_open(&m, p) && !ngpt_context_init(&ctx, m, NULL, NULL, NULL, 0)) {
        const ngpt_tokenizer *tok = NULL;
        ngpt_tokenizer_info ti;
        CHECK_OK(ngpt_context_tokenizer(ctx, &tok));
        CHECK(tok && !ngpt_tokenizer_describe(tok, &ti) && ti.n_tokens == V,
              "the tokenizer keeps its %d ids", (int)V);
        static float logits[ROWS];
        for (int i = 0; i < ROWS; i++) logits[i] = (float)(i % 7);
        logits[ROWS - 1] = 100.0f, logits[V] = 90.0f;       /* rows without a token: highest */
        ngpt_sampler s = ngpt_sampler_default();
        int32_t tok_id = -1;
        s.temperature = 0.0f;
        CHECK_OK(ngpt_context_sample(ctx, &s, logits, NULL, 0, 0, 0, &tok_id));
        CHECK(tok_id >= 0 && tok_id < V, "greedy picked %d, a row without a token", (int)tok_id);
        s.temperature = 1.0f;
        for (uint64_t k = 0; k < 50; k++) {
            CHECK_OK(ngpt_context_sample(ctx, &s, logits, NULL, 0, 0, k, &tok_id));
            CHECK(tok_id >= 0 && tok_id < V, "sampled %d, a row without a token", (int)tok_id);
        }
    } else {
        CHECK(false, "open %s: %s", p, ngpt_last_error());
    }
    test_context_close(ctx, m);

    /* a longer context than the default, up to config.json's; refusals */
    snprintf(extra, sizeof extra, "%s \"max_position_embeddings\": 5000,", QWEN2_KEYS);
    make_llama_as(43, DT_F32, false, 2, V);
    CHECK(write_llama_dir("qwen2_long", &(dir_opts){0}, extra), "write qwen2_long");
    CHECK_OK(import_dir("qwen2_long", "qwen2_long.ngpt", NGPT_WEIGHTS_F32));
    snprintf(p, sizeof p, "%s/qwen2_long.ngpt", root);
    CHECK(test_file_config(p).context_len == NGPT_IMPORT_CONTEXT_DEFAULT, "the default context");
    char d[600], o[600];
    snprintf(d, sizeof d, "%s/qwen2_long", root);
    snprintf(o, sizeof o, "%s/qwen2_longer.ngpt", root);
    ngpt_import_options opt = ngpt_import_options_default();
    opt.context_len = 5000;
    CHECK_OK(ngpt_import_hf(d, &opt, o));
    CHECK(test_file_config(o).context_len == 5000, "--context 5000");
    opt.context_len = 5001;
    CHECK_STATUS(ngpt_import_hf(d, &opt, o), NGPT_ERR_BAD_ARG);
    static const char Q2_TYPE[] = "\"model_type\": \"qwen2\",";
    static const char Q2_ARCH[] = "\"architectures\": [\"Qwen2ForCausalLM\"],";
    static const char Q2_BOTH[] = "\"model_type\": \"qwen2\", \"architectures\": "
                                  "[\"Qwen2ForCausalLM\"],";
    static const struct { const char *name, *extra, *more; ngpt_status st; const char *needle; }
    bad[] = {
        {"q_yarn", "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0},", QWEN2_KEYS,
         NGPT_ERR_UNSUPPORTED, "rope_type \"yarn\""},
        {"q_dynamic", "\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0},", QWEN2_KEYS,
         NGPT_ERR_UNSUPPORTED, "rope_type \"dynamic\""},
        {"q_l3_key", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, "
         "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
         "\"original_max_position_embeddings\": 64, \"beta_fast\": 32},", QWEN2_KEYS,
         NGPT_ERR_UNSUPPORTED, "rope_scaling.beta_fast"},
        {"q_l3_missing", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0},",
         QWEN2_KEYS, NGPT_ERR_BAD_FORMAT, "low_freq_factor"},
        {"q_window", "\"use_sliding_window\": true, \"sliding_window\": 16,", Q2_BOTH,
         NGPT_ERR_UNSUPPORTED, "use_sliding_window"},
        {"q_layers", "\"layer_types\": [\"full_attention\", \"sliding_attention\"],", QWEN2_KEYS,
         NGPT_ERR_UNSUPPORTED, "layer_types"},
        {"q_moe", "\"num_experts\": 8,", QWEN2_KEYS, NGPT_ERR_UNSUPPORTED, "num_experts"},
        {"q_vision", "\"vision_config\": {\"depth\": 32},", QWEN2_KEYS, NGPT_ERR_UNSUPPORTED,
         "vision_config"},
        {"q_mlp_bias", "\"mlp_bias\": true,", QWEN2_KEYS, NGPT_ERR_UNSUPPORTED, "mlp_bias"},
        {"q_arch", "\"architectures\": [\"Qwen2ForSequenceClassification\"],", Q2_TYPE,
         NGPT_ERR_UNSUPPORTED, "Qwen2ForCausalLM"},
        {"q_moe_type", "\"model_type\": \"qwen2_moe\",", Q2_ARCH, NGPT_ERR_UNSUPPORTED,
         "qwen2_moe"},
        {"q_vl_type", "\"model_type\": \"qwen2_5_vl\",", Q2_ARCH, NGPT_ERR_UNSUPPORTED,
         "qwen2_5_vl"},
        {"l3_window", "\"sliding_window\": 4096,", "", NGPT_ERR_UNSUPPORTED, "sliding_window"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_llama_as(43, DT_F32, false, 2, V);
        snprintf(extra, sizeof extra, "%s %s", bad[i].extra, bad[i].more);
        CHECK(write_llama_dir(bad[i].name, &(dir_opts){0}, extra), "write %s", bad[i].name);
        char out[64];
        snprintf(out, sizeof out, "%s.ngpt", bad[i].name);
        ngpt_status st = import_dir(bad[i].name, out, NGPT_WEIGHTS_F32);
        const char *msg = ngpt_last_error();
        snprintf(p, sizeof p, "%s/%s", root, out);
        CHECK(st == bad[i].st && !strncmp(msg, "ngpt_import_hf: ", 16) && !strchr(msg, '\n') &&
                  strstr(msg, bad[i].needle) && !exists(p),
              "%s: %s (want %s naming \"%s\"): %s", bad[i].name, ngpt_status_string(st),
              ngpt_status_string(bad[i].st), bad[i].needle, msg);
    }
    /* a Qwen2 file without its q, k and v biases is refused naming one */
    make_llama_as(43, DT_F32, false, 0, V);
    CHECK(write_llama_dir("q_nobias", &(dir_opts){0}, QWEN2_KEYS), "write q_nobias");
    CHECK_STATUS(import_dir("q_nobias", "q_nobias.ngpt", NGPT_WEIGHTS_F32), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "q_proj.bias") != NULL, "%s", ngpt_last_error());
    make_llama_as(43, DT_F32, false, 0, V);
    CHECK(write_llama_dir("q_nonorm", &(dir_opts){0}, QWEN3_KEYS), "write q_nonorm");
    CHECK_STATUS(import_dir("q_nonorm", "q_nonorm.ngpt", NGPT_WEIGHTS_F32), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "q_norm.weight") != NULL, "%s", ngpt_last_error());
}

static const char *const CHATML_CONFIG =
    "{\"add_prefix_space\": false, \"bos_token\": \"<|im_start|>\", \"eos_token\": "
    "\"<|im_end|>\", \"chat_template\": \"{% for message in messages %}{{'<|im_start|>' + "
    "message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}\", "
    "\"model_max_length\": 8192, \"pad_token\": \"<|im_end|>\"}";

static int32_t end_id_of(const char *model) { return tokenizer_of(model).end_id; }

/* The end tokens of a model file's tokenizer as "a b c" (ngpt_tokenizer_end_tokens). */
static void end_tokens_of(const char *model, char *out, size_t cap)
{
    ngpt_model *m = NULL;
    const ngpt_tokenizer *tok = NULL;
    const int32_t *ids = NULL;
    int32_t n = 0;
    out[0] = '\0';
    if (ngpt_model_open(&m, model) || ngpt_model_tokenizer(m, &tok) || !tok ||
        ngpt_tokenizer_end_tokens(tok, &ids, &n))
        snprintf(out, cap, "error: %s", ngpt_last_error());
    for (int32_t i = 0; i < n; i++) {
        const size_t k = strlen(out);
        snprintf(out + k, cap - k, "%s%d", i ? " " : "", (int)ids[i]);
    }
    ngpt_model_close(m);
}

/* tokenizer_config.json (and generation_config.json) choose the end token
 * and add_bos_token the BOS: exact ids; a name that is no special token and
 * a disagreeing generation_config.json are refused by name, nothing written. */
static void tokenizer_configs(void)
{
    char d[600], o[600], cfg[600], gen[600];
    CHECK(write_chat_dir("chat"), "write chat");
    snprintf(d, sizeof d, "%s/chat", root);
    snprintf(o, sizeof o, "%s/chat.ngpt", root);
    path_of(cfg, sizeof cfg, "chat", "tokenizer_config.json");
    path_of(gen, sizeof gen, "chat", "generation_config.json");
    CHECK_OK(ngpt_import_hf(d, NULL, o));
    CHECK(end_id_of(o) == V - 1, "no tokenizer_config.json: <|endoftext|> (%d) ends", V - 1);
    /* the end tokens: the end of text, then generation_config.json's others */
    static const struct { const char *cfg, *gen; int32_t end; const char *ends; } good[] = {
        {"{\"eos_token\": \"<|im_end|>\"}", NULL, V - 2, "298"},
        {"{\"eos_token\": {\"__type\": \"AddedToken\", \"content\": \"<|im_start|>\", "
         "\"lstrip\": false}, \"add_bos_token\": false}", NULL, V - 3, "297"},
        {"{\"eos_token\": \"<|endoftext|>\", \"bos_token\": null}", "{\"eos_token_id\": [298, 299]}",
         V - 1, "299 298"},
        {NULL, "{\"bos_token_id\": 1, \"eos_token_id\": 298}", V - 2, "298"},
        {"{\"model_max_length\": 8192}", "{\"eos_token_id\": [297, 299, 297]}", V - 3, "297 299"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        unlink(cfg), unlink(gen);
        if (good[i].cfg) CHECK(write_file(cfg, good[i].cfg, strlen(good[i].cfg)), "write");
        if (good[i].gen) CHECK(write_file(gen, good[i].gen, strlen(good[i].gen)), "write");
        CHECK_OK(ngpt_import_hf(d, NULL, o));
        CHECK(end_id_of(o) == good[i].end, "config %zu: end %d, want %d", i, (int)end_id_of(o),
              (int)good[i].end);
        char ends[200];
        end_tokens_of(o, ends, sizeof ends);
        CHECK(!strcmp(ends, good[i].ends), "config %zu: end tokens %s, want %s", i, ends,
              good[i].ends);
    }
    /* add_bos_token: prompts begin with bos_token */
    static const char bos_cfg[] = "{\"eos_token\": \"<|im_end|>\", \"bos_token\": "
                                  "\"<|im_start|>\", \"add_bos_token\": true}";
    unlink(gen);
    CHECK(write_file(cfg, bos_cfg, strlen(bos_cfg)), "write");
    CHECK_OK(ngpt_import_hf(d, NULL, o));
    CHECK(tokenizer_of(o).bos_id == V - 3 && end_id_of(o) == V - 2,
          "add_bos_token: BOS %d, want %d", (int)tokenizer_of(o).bos_id, V - 3);
    /* generation ends at any of them, by default: a logit bias makes the
     * second end token (<|im_end|>, 298) the likeliest after a few tokens */
    unlink(cfg), unlink(gen);
    CHECK(write_file(gen, "{\"eos_token_id\": [299, 298]}", 28), "write");
    CHECK_OK(ngpt_import_hf(d, NULL, o));
    ngpt_model *m = NULL;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_model_open(&m, o));
    if (m) CHECK_OK(ngpt_context_init(&ctx, m, NULL, NULL, NULL, 0));
    if (ctx) {
        float bias[V];
        for (int i = 0; i < V; i++) bias[i] = i == 298 ? 1e3f : 0.0f;
        ngpt_generate_config gc = ngpt_generate_config_default();
        gc.sampler.temperature = 0.0f, gc.sampler.logit_bias = bias, gc.max_tokens = 8;
        const int32_t prompt[2] = {'h', 'i'};
        int32_t out[8];
        ngpt_generate_result r;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 2, out, 8, NULL, NULL, &r));
        CHECK(r.reason == NGPT_STOP_END_TOKEN && r.end_token == 298 && r.n_tokens == 0,
              "the model's second end token ends generation (%s, end %d, %d tokens)",
              ngpt_stop_reason_string(r.reason), (int)r.end_token, (int)r.n_tokens);
        gc.ignore_end = true;
        CHECK_OK(ngpt_context_generate(ctx, &gc, prompt, 2, out, 8, NULL, NULL, &r));
        CHECK(r.reason == NGPT_STOP_MAX_TOKENS && r.end_token == -1 && r.n_tokens == 8,
              "ignore_end goes on (%s)", ngpt_stop_reason_string(r.reason));
    }
    ngpt_context_free(ctx);
    ngpt_model_close(m);
    static const struct { const char *cfg, *gen, *needle; ngpt_status st; } bad[] = {
        {"{\"eos_token\": \"</s>\"}", NULL, "eos_token \"</s>\" is not a special token",
         NGPT_ERR_BAD_FORMAT},
        {"{\"bos_token\": \"</s>\", \"add_bos_token\": true}", NULL,
         "bos_token \"</s>\" is not a special token", NGPT_ERR_BAD_FORMAT},
        {"{\"eos_token\": \"<|im_end|>\"}", "{\"eos_token_id\": 299}", "is not among", NGPT_ERR_BAD_FORMAT},
        {NULL, "{\"eos_token_id\": 5}", "eos_token_id 5 is not a special token", NGPT_ERR_BAD_FORMAT},
        {"{\"eos_token\": 7}", NULL, "eos_token is neither a string", NGPT_ERR_BAD_FORMAT},
        {"{\"eos_token\": \"<|endoftext|>\", \"add_eos_token\": true}", NULL, "add_eos_token=true",
         NGPT_ERR_UNSUPPORTED},
        {"[1, 2]", NULL, "is not a JSON object", NGPT_ERR_BAD_FORMAT},
        {NULL, "{\"eos_token_id\": \"x\"}", "eos_token_id is not a token id", NGPT_ERR_BAD_FORMAT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unlink(cfg), unlink(gen), unlink(o);
        if (bad[i].cfg) CHECK(write_file(cfg, bad[i].cfg, strlen(bad[i].cfg)), "write");
        if (bad[i].gen) CHECK(write_file(gen, bad[i].gen, strlen(bad[i].gen)), "write");
        const ngpt_status st = ngpt_import_hf(d, NULL, o);
        const char *msg = ngpt_last_error();
        CHECK(st == bad[i].st && !strncmp(msg, "ngpt_import_hf: ", 16) && !strchr(msg, '\n') &&
              strstr(msg, bad[i].needle), "bad config %zu: %s naming \"%s\": %s", i,
              ngpt_status_string(st), bad[i].needle, msg);
        CHECK(!exists(o), "bad config %zu: nothing written", i);
    }
    /* named by option, beside the directory's (which it replaces) */
    unlink(gen);
    char named[600];
    snprintf(named, sizeof named, "%s/chatml_config.json", root);
    CHECK(write_file(named, CHATML_CONFIG, strlen(CHATML_CONFIG)), "write");
    ngpt_import_options opt = ngpt_import_options_default();
    opt.tokenizer_config = named;
    CHECK_OK(ngpt_import_hf(d, &opt, o));
    CHECK(end_id_of(o) == V - 2, "--tokenizer-config's eos_token <|im_end|>");
    /* what it says about chat */
    ngpt_hf_tokenizer_config tc;
    CHECK_OK(ngpt_import_hf_tokenizer_config(named, &tc));
    CHECK(!strcmp(tc.end_token, "<|im_end|>") && !strcmp(tc.bos_token, "<|im_start|>") &&
          tc.add_bos == 0 && tc.chat_template == NGPT_TEMPLATE_CHATML, "ChatML config read");
    static const char *const llama3 =
        "{\"bos_token\": \"<|begin_of_text|>\", \"eos_token\": \"<|eot_id|>\", \"chat_template\": "
        "\"{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}\"}";
    CHECK(write_file(named, llama3, strlen(llama3)), "write");
    CHECK_OK(ngpt_import_hf_tokenizer_config(named, &tc));
    CHECK(tc.chat_template == NGPT_TEMPLATE_OTHER && !strcmp(tc.end_token, "<|eot_id|>"),
          "Llama-3's template is not ChatML");
    CHECK(write_file(named, "{}", 2), "write");
    CHECK_OK(ngpt_import_hf_tokenizer_config(named, &tc));
    CHECK(tc.chat_template == NGPT_TEMPLATE_NONE && !tc.end_token[0], "no template, no eos");
    CHECK_STATUS(ngpt_import_hf_tokenizer_config(named, NULL), NGPT_ERR_NULL_ARG);
    unlink(named);
    CHECK_STATUS(ngpt_import_hf_tokenizer_config(named, &tc), NGPT_ERR_IO);
    CHECK(strstr(ngpt_last_error(), "ngpt_import_hf_tokenizer_config: "), "%s", ngpt_last_error());
    unlink(cfg);
}

static void api_defaults(void)
{
    ngpt_import_options o = ngpt_import_options_default();
    CHECK(o.store == NGPT_WEIGHTS_F32 && !o.config && !o.weights && !o.vocab && !o.merges &&
          !o.tokenizer_json && !o.tokenizer_config, "defaults: everything from the directory, float32");
}

/* test_import --write DIR: DIR/gpt2 (F32, bare names), DIR/gpt2_bf16
 * (BF16, "transformer.", 2 shards) and DIR/llama (BF16, tied), for
 * tests/test_cli_import.sh. */
static int write_only(const char *dir)
{
    snprintf(root, sizeof root, "%s", dir);
    make_tokenizer();
    make_model(27, DT_F32);
    bool ok = write_dir("gpt2", &(dir_opts){.dt = DT_F32});
    make_model(27, DT_BF16);
    ok = ok && write_dir("gpt2_bf16", &(dir_opts){.dt = DT_BF16, .prefix = true, .shards = 2});
    make_llama(41, DT_BF16, false);
    ok = ok && write_llama_dir("llama", &(dir_opts){.dt = DT_BF16}, NULL);
    char p[600];
    ok = ok && write_chat_dir("llama_chat");
    path_of(p, sizeof p, "llama_chat", "tokenizer_config.json");
    ok = ok && write_file(p, CHATML_CONFIG, strlen(CHATML_CONFIG));
    free_tensors();
    if (!ok) fprintf(stderr, "test_import: cannot write %s\n", dir);
    return !ok;
}

/* ------------------------------------------------------------ Gemma 3 */

/* Gemma 3's text model on make_llama_as's shape (kind 4): every local
 * layer's window (5) shorter than the logits' 32 positions, layer 1 of
 * the 2 global (pattern 2), the local RoPE base and the scores' scalar
 * other than the global base and the head size (24), capped logits */
#define GEMMA3_TYPE "\"model_type\": \"gemma3_text\", "
#define GEMMA3_ARCH "\"architectures\": [\"Gemma3ForCausalLM\"], "
#define GEMMA3_ACT "\"hidden_activation\": \"gelu_pytorch_tanh\", "
#define GEMMA3_REST "\"query_pre_attn_scalar\": 20, \"sliding_window\": 5, " \
                    "\"sliding_window_pattern\": 2, \"rope_local_base_freq\": 100.0, " \
                    "\"final_logit_softcapping\": 30.0, \"attn_logit_softcapping\": null,"
static const char GEMMA3_KEYS[] = GEMMA3_TYPE GEMMA3_ARCH GEMMA3_ACT GEMMA3_REST;

/* The published configs of Gemma-3-270M (newer: layer_types, no
 * tie_word_embeddings key) and Gemma-3-1B (sliding_window_pattern), their
 * hub copies' keys and values: their parameter counts and switches. */
static void published_gemma3(void)
{
    char types[18 * 24] = "";
    for (int i = 0; i < 18; i++)
        strcat(types, (i + 1) % 6 ? "\"sliding_attention\"" : "\"full_attention\""),
            strcat(types, i < 17 ? ", " : "");
    static char c270[2048];
    snprintf(c270, sizeof c270,
             "{\"_sliding_window_pattern\": 6, \"architectures\": [\"Gemma3ForCausalLM\"], "
             "\"attention_bias\": false, \"attention_dropout\": 0.0, "
             "\"attn_logit_softcapping\": null, \"bos_token_id\": 2, \"eos_token_id\": 1, "
             "\"final_logit_softcapping\": null, \"head_dim\": 256, "
             "\"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": 640, "
             "\"initializer_range\": 0.02, \"intermediate_size\": 2048, \"layer_types\": [%s], "
             "\"max_position_embeddings\": 32768, \"model_type\": \"gemma3_text\", "
             "\"num_attention_heads\": 4, \"num_hidden_layers\": 18, \"num_key_value_heads\": 1, "
             "\"pad_token_id\": 0, \"query_pre_attn_scalar\": 256, \"rms_norm_eps\": 1e-06, "
             "\"rope_local_base_freq\": 10000.0, \"rope_scaling\": null, "
             "\"rope_theta\": 1000000.0, \"sliding_window\": 512, \"torch_dtype\": \"bfloat16\", "
             "\"transformers_version\": \"4.55.0.dev0\", \"use_bidirectional_attention\": false, "
             "\"use_cache\": true, \"vocab_size\": 262144}", types);
    static const char c1b[] =
        "{\"architectures\": [\"Gemma3ForCausalLM\"], \"attention_bias\": false, "
        "\"attention_dropout\": 0.0, \"attn_logit_softcapping\": null, \"bos_token_id\": 2, "
        "\"cache_implementation\": \"hybrid\", \"eos_token_id\": [1, 106], "
        "\"final_logit_softcapping\": null, \"head_dim\": 256, "
        "\"hidden_activation\": \"gelu_pytorch_tanh\", \"hidden_size\": 1152, "
        "\"initializer_range\": 0.02, \"intermediate_size\": 6912, "
        "\"max_position_embeddings\": 32768, \"model_type\": \"gemma3_text\", "
        "\"num_attention_heads\": 4, \"num_hidden_layers\": 26, \"num_key_value_heads\": 1, "
        "\"pad_token_id\": 0, \"query_pre_attn_scalar\": 256, \"rms_norm_eps\": 1e-06, "
        "\"rope_local_base_freq\": 10000, \"rope_scaling\": null, \"rope_theta\": 1000000, "
        "\"sliding_window\": 512, \"sliding_window_pattern\": 6, \"torch_dtype\": \"bfloat16\", "
        "\"transformers_version\": \"4.50.0.dev0\", \"use_cache\": true, \"vocab_size\": 262144}";
    const char *const configs[2] = {c270, c1b};
    static const char *const names[2] = {"Gemma-3-270M", "Gemma-3-1B"};
    const size_t published[2] = {268098176u, 999885952u};
    /* sqrt(640) = 25.298 and sqrt(1152) = 33.941 rounded to bfloat16 */
    const float scale[2] = {25.25f, 34.0f};
    for (int i = 0; i < 2; i++) {
        const ngpt_config cfg = published_config(configs[i], names[i], published[i]);
        CHECK(cfg.context_len == NGPT_IMPORT_CONTEXT_DEFAULT && cfg.tie_lm_head &&
                  cfg.norm == NGPT_NORM_SANDWICH && cfg.norm_offset && cfg.qk_norm &&
                  cfg.mlp == NGPT_MLP_GEGLU && cfg.gelu == NGPT_GELU_TANH &&
                  cfg.sliding_window == 512 && cfg.sliding_pattern == 6 &&
                  cfg.rope_local_theta == 10000.0f && cfg.rope_theta == 1e6f &&
                  cfg.attn_scalar == 256.0f && cfg.logit_softcap == 0.0f &&
                  cfg.emb_scale == scale[i] && cfg.norm_eps == 1e-6f,
              "%s: T=%d and Gemma 3's switches (emb_scale %g)", names[i], (int)cfg.context_len,
              (double)cfg.emb_scale);
    }
}

static void gemma3(void)
{
    published_gemma3();
    const ngpt_config cfg = dir_config("gemma3_f32", 4, GEMMA3_KEYS);
    CHECK(cfg.sliding_window == 5 && cfg.sliding_pattern == 2 && cfg.attn_scalar == 20.0f &&
              cfg.rope_local_theta == 100.0f && cfg.logit_softcap == 30.0f &&
              cfg.emb_scale == 8.0f && cfg.head_dim == LD && cfg.n_kv_heads == LKV,
          "Gemma 3's switches");
    /* golden: the F32 import's logits, on every build and thread count */
    const uint64_t g = family_import("gemma3_f32", 4, DT_F32, false, GEMMA3_KEYS, NGPT_WEIGHTS_F32);
    CHECK(g == UINT64_C(0xecb01f56f3eb3752), "gemma3 F32 logits checksum %016llx", (unsigned long long)g);
    family_import("gemma3_bf16", 4, DT_BF16, true, GEMMA3_KEYS, NGPT_WEIGHTS_F32);
    quantized_imports("gemma3_f32", 4, GEMMA3_KEYS);
    /* refusals by name, one line, nothing written */
    static const struct { const char *name, *extra; const char *needle; } bad[] = {
        {"g_multimodal", "\"model_type\": \"gemma3\", " GEMMA3_ARCH GEMMA3_ACT GEMMA3_REST,
         "gemma3_text"},
        {"g_bidir", "\"use_bidirectional_attention\": true,", "use_bidirectional_attention"},
        {"g_types", "\"layer_types\": [\"full_attention\", \"sliding_attention\"],",
         "layer_types"},
        {"g_params", "\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"default\"}},",
         "rope_parameters"},
        {"g_act", GEMMA3_TYPE GEMMA3_ARCH "\"hidden_activation\": \"relu\", " GEMMA3_REST,
         "hidden_activation"},
        {"g_scaling", "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8.0},",
         "rope_scaling"},
        {"g_arch", GEMMA3_TYPE "\"architectures\": [\"Gemma3ForConditionalGeneration\"], "
         GEMMA3_ACT GEMMA3_REST, "architectures"},
        {"g_dtype", "\"torch_dtype\": \"float8\",", "torch_dtype"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char keys[1024];      /* the extra keys, or (model_type ...) a whole set */
        snprintf(keys, sizeof keys, "%s%s", bad[i].extra,
                 strstr(bad[i].extra, "model_type") || strstr(bad[i].extra, "architectures") ||
                         strstr(bad[i].extra, "hidden_activation") ? "" : GEMMA3_KEYS);
        make_llama_as(43, DT_F32, false, 4, V);
        CHECK(write_llama_dir(bad[i].name, &(dir_opts){0}, keys), "write %s", bad[i].name);
        char out[64], o[700];
        snprintf(out, sizeof out, "%s.ngpt", bad[i].name);
        ngpt_status st = import_dir(bad[i].name, out, NGPT_WEIGHTS_F32);
        const char *msg = ngpt_last_error();
        snprintf(o, sizeof o, "%s/%s", root, out);
        CHECK(st == NGPT_ERR_UNSUPPORTED && !strncmp(msg, "ngpt_import_hf: ", 16) &&
                  !strchr(msg, '\n') && strstr(msg, bad[i].needle) && access(o, F_OK) != 0,
              "%s: %s naming \"%s\": %s", bad[i].name, ngpt_status_string(st), bad[i].needle, msg);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_only(argv[2]);
    snprintf(root, sizeof root, "%s/ngpt-test-import-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    make_tokenizer();
    api_defaults();
    good_dirs();
    import_progress();
    caller_mode();
    untied();
    tokenizer_json();
    tokenizer_configs();
    bad_dirs();
    published_configs();
    llama();
    qwen_llama3();
    gemma3();
    free_tensors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (test_failed == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return test_summary("test_import");
}
