/* test_lora_golden.c — goldens of LoRA training, the same constant on every
 * build and thread count: an adapter trained a few AdamW steps on the
 * quick-start model's shape (ngpt_config_default, its weights drawn by
 * ngpt_context_params_init), and on a Llama-family model imported from a
 * Hugging Face directory (tests/hf_dir.h: GQA, head_dim, RMSNorm, SwiGLU,
 * rotate-half RoPE), float32 and 8-bit; then the adapted model's logits. */
#include <unistd.h>

#include "test.h"
#include "hf_dir.h"

enum { BATCH = 2, SEQ = 24, STEPS = 3 };

/* STEPS steps of adapter lc (seed 7) on m at `threads`; the adapter's
 * checksum, and in *logits the checksum of the logits of an inference
 * context applying it. */
static uint64_t train(ngpt_model *m, const char *lora, int threads, uint64_t *logits)
{
    ngpt_lora_config lc = ngpt_lora_config_default();
    CHECK(test_lora_apply(&lc, lora), "lora settings %s: %s", lora, ngpt_last_error());
    ngpt_config cfg;
    CHECK_OK(ngpt_model_config(m, &cfg));
    ngpt_adapter *ad = NULL, *back = NULL;
    CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 7));
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = BATCH, s.seq = SEQ, s.threads = threads, s.adapter = ad;
    ngpt_context *ctx = NULL, *inf = NULL;
    if (ad) CHECK_OK(ngpt_context_init(&ctx, m, NULL, &s, NULL, 0));
    uint64_t h = 0;
    *logits = 0;
    if (!ctx) goto out;
    ngpt_optim_config o = ngpt_optim_config_default();
    o.lr = 1e-3f, o.warmup = 0, o.weight_decay = 0.0f;
    int32_t tok[BATCH * SEQ], tgt[BATCH * SEQ];
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < BATCH * SEQ; i++) {
            tok[i] = (int32_t)((i * 37 + step * 11 + 5) % cfg.vocab_size);
            tgt[i] = (tok[i] * 3 + 1) % cfg.vocab_size;
        }
        CHECK_OK(ngpt_context_grads_zero(ctx));
        CHECK_OK(ngpt_context_dropout_set(ctx, true, 3, (uint64_t)step));
        CHECK_OK(ngpt_context_forward(ctx, tok, BATCH, SEQ, tgt, NULL));
        CHECK_OK(ngpt_context_backward(ctx));
        CHECK_OK(ngpt_context_optim_step(ctx, &o, o.lr, NULL));
    }
    CHECK_OK(ngpt_context_params_checksum(ctx, &h));
    char path[600];
    snprintf(path, sizeof path, "%s/golden.lora", root);
    CHECK_OK(ngpt_context_save(ctx, path));
    CHECK_OK(ngpt_adapter_open(&back, path));
    ngpt_shape is = ngpt_shape_default(NGPT_MODE_INFER);
    is.batch = BATCH, is.seq = SEQ, is.threads = threads, is.adapter_rank = lc.rank;
    is.logits_rows = NGPT_LOGITS_ALL;
    const float scale = 0.5f;
    if (back) CHECK_OK(ngpt_context_init(&inf, m, NULL, &is, NULL, 0));
    if (inf) {
        CHECK_OK(ngpt_context_adapters_set(inf, (const ngpt_adapter *const *)&back, &scale, 1));
        CHECK_OK(ngpt_context_forward(inf, tok, BATCH, SEQ, NULL, NULL));
        CHECK_OK(ngpt_context_logits_checksum(inf, logits));
    }
out:
    ngpt_context_free(inf);
    ngpt_context_free(ctx);
    CHECK_OK(ngpt_adapter_close(back));
    CHECK_OK(ngpt_adapter_close(ad));
    return h;
}

static void golden(ngpt_model *m, const char *what, const char *lora, uint64_t want,
                   uint64_t want_logits)
{
    uint64_t l1 = 0, l3 = 0;
    const uint64_t h1 = train(m, lora, 1, &l1), h3 = train(m, lora, 3, &l3);
    printf("lora golden [%s | %s]: adapter %016llx, logits %016llx\n", what, lora,
           (unsigned long long)h1, (unsigned long long)l1);
    CHECK(h1 == h3 && l1 == l3, "[%s] 1 and 3 threads differ", what);
    CHECK_HASH(h1, want);
    CHECK_HASH(l1, want_logits);
}

/* The quick-start model's shape, its weights drawn from seed 42. */
static void quick_start(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/default.ngpt", root);
    ngpt_config cfg = ngpt_config_default();
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, NULL, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 42));
    if (ctx) CHECK_OK(ngpt_context_save(ctx, path));
    ngpt_context_free(ctx);
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, path));
    if (m) golden(m, "quick-start shape", "targets=c_attn,c_proj r=8", 0x37f6eee2cb7aa5efull,
                  0xee298f7f9395d0a3ull);
    CHECK_OK(ngpt_model_close(m));
}

/* A Llama-family model imported from its Hugging Face directory, float32
 * and 8-bit (ngpt import --weights q8). */
static void imported_llama(void)
{
    make_llama(41, DT_F32, false);
    CHECK(write_llama_dir("llama", &(dir_opts){.dt = DT_F32}, NULL), "write the directory");
    char dir[600], out[600];
    snprintf(dir, sizeof dir, "%s/llama", root);
    for (int q = 0; q < 2; q++) {
        snprintf(out, sizeof out, "%s/llama%s.ngpt", root, q ? "_q8" : "");
        ngpt_import_options opt = ngpt_import_options_default();
        opt.store = q ? NGPT_WEIGHTS_Q8 : NGPT_WEIGHTS_F32;
        CHECK_OK(ngpt_import_hf(dir, &opt, out));
        ngpt_model *m = NULL;
        CHECK_OK(ngpt_model_open(&m, out));
        if (m) golden(m, q ? "imported Llama, q8" : "imported Llama, f32", "targets=all-linear r=4",
                      q ? 0xfe1c8d088c127ec2ull : 0xaca7652ba87b0f41ull,
                      q ? 0x0041dd3dc835e308ull : 0xc51a9fb36c99f916ull);
        CHECK_OK(ngpt_model_close(m));
    }
}

int main(void)
{
    snprintf(root, sizeof root, "%s/ngpt-lora-golden-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    make_tokenizer();
    quick_start();
    imported_llama();
    free_tensors();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) printf("could not remove %s\n", root);
    return test_summary("test_lora_golden");
}
