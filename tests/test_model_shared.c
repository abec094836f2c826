/* test_model_shared: one opened model (ngpt_model_open) shared by
 * inference contexts. A context sharing a model's weights gives
 * bit-identical logits and parameters to one that owns a copy of them
 * (ngpt_context_init with the model's config), for float32, 8-bit and
 * 4-bit weights and 1 and 3 threads; several contexts on several threads
 * generating at once each give what one context alone gives (make
 * test-tsan runs this under ThreadSanitizer); the model's read-only
 * weights are refused to writers; the model is not closed under its
 * contexts (sharing or owning a copy). */
#include <pthread.h>
#include <unistd.h>

#include "test.h"

enum { N_TOK = 12, N_GEN = 24, N_THREADS = 4, V = 250 };

static const char *kinds[] = {"f32", "q8", "q4"};
static char paths[3][64];
static ngpt_config file_cfg;    /* the float32 file's */

/* The tiny model (2 layers) with random weights as f32, and its 8-bit and
 * 4-bit quantizations, saved to temporary files. */
static void make_files(void)
{
    /* odd sizes: every Linear has rows past its last full panel of 16 and
     * inputs past its last full group of 32 (the edge cases of packing) */
    ngpt_config cfg = test_config_tiny();
    cfg.vocab_size = V, cfg.d_model = 24, cfg.d_ff = 40;
    cfg.dropout = 0.0f;
    file_cfg = cfg;
    ngpt_model *f32 = NULL;
    for (int k = 0; k < 3; k++) {
        snprintf(paths[k], sizeof paths[k], "/tmp/ngpt_model_shared_%d_%s.ngpt", (int)getpid(),
                 kinds[k]);
        ngpt_config c = cfg;
        c.weights = k == 0 ? NGPT_WEIGHTS_F32 : k == 1 ? NGPT_WEIGHTS_Q8 : NGPT_WEIGHTS_Q4;
        ngpt_context *ctx = NULL;
        if (k == 0) {
            CHECK_OK(ngpt_context_init(&ctx, NULL, &c, NULL, NULL, 0));
            if (ctx) CHECK_OK(ngpt_context_params_init(ctx, 7));
        } else if (f32) {       /* quantized as it is copied */
            CHECK_OK(ngpt_context_init(&ctx, f32, &c, NULL, NULL, 0));
        }
        if (!ctx) continue;
        CHECK_OK(ngpt_context_save(ctx, paths[k]));
        ngpt_context_free(ctx);
        if (k == 0) CHECK_OK(ngpt_model_open(&f32, paths[0]));
    }
    CHECK_OK(ngpt_model_close(f32));
}

static void tokens_of(int32_t *tok, int n, int salt)
{
    for (int i = 0; i < n; i++) tok[i] = (i * 37 + salt * 11 + 5) % V;
}

/* Logits and parameter checksums of a forward over N_TOK tokens. */
static void sums(ngpt_context *ctx, uint64_t *logits, uint64_t *params)
{
    int32_t tok[N_TOK];
    tokens_of(tok, N_TOK, 0);
    CHECK_OK(ngpt_context_forward(ctx, tok, 1, N_TOK, NULL, NULL));
    CHECK_OK(ngpt_context_logits_checksum(ctx, logits));
    CHECK_OK(ngpt_context_params_checksum(ctx, params));
}

static void same_as_copy(int k, int threads)
{
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = threads;
    s.logits_rows = NGPT_LOGITS_ALL;    /* every position's logits in the checksum */
    ngpt_config cfg;
    ngpt_context *copy = NULL, *shared = NULL;
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, paths[k]));
    if (!m) return;
    CHECK_OK(ngpt_model_config(m, &cfg));
    CHECK_OK(ngpt_context_init(&copy, m, &cfg, &s, NULL, 0));
    CHECK_OK(ngpt_context_init(&shared, m, NULL, &s, NULL, 0));
    if (!copy || !shared) return;
    uint64_t lo, po, ls, ps;
    sums(copy, &lo, &po);
    sums(shared, &ls, &ps);
    CHECK(lo == ls, "%s, %d threads: logits %016" PRIx64 " shared, %016" PRIx64
          " copied", kinds[k], threads, ls, lo);
    CHECK(po == ps, "%s, %d threads: parameters differ", kinds[k], threads);
    size_t a_copy, a_model;
    CHECK_OK(ngpt_context_arena_size(m, &cfg, &s, &a_copy));
    CHECK_OK(ngpt_context_arena_size(m, NULL, &s, &a_model));
    CHECK(a_model < a_copy, "%s: a model's context holds no weights (%zu, %zu)", kinds[k],
          a_model, a_copy);

    /* the model's weights are read only; it outlives its contexts */
    float *p;
    size_t n;
    CHECK_STATUS(ngpt_context_params(shared, &p, &n), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_context_params_init(shared, 1), NGPT_ERR_WRONG_MODE);
    CHECK_STATUS(ngpt_model_close(m), NGPT_ERR_WRONG_MODE);
    sums(shared, &ls, &ps);
    CHECK(lo == ls, "%s: refusals change nothing", kinds[k]);
    if (k > 0) {    /* 8-bit and 4-bit weights do not train (float32: answers()) */
        ngpt_shape train = ngpt_shape_default(NGPT_MODE_TRAIN);
        ngpt_context *t = NULL;
        CHECK_STATUS(ngpt_context_init(&t, m, NULL, &train, NULL, 0), NGPT_ERR_WRONG_MODE);
        CHECK(t == NULL, "no context on a refusal");
    }
    ngpt_context_free(shared);
    CHECK_STATUS(ngpt_model_close(m), NGPT_ERR_WRONG_MODE);    /* the copy still uses it */
    ngpt_context_free(copy);
    CHECK_OK(ngpt_model_close(m));
}

/* A model opened from memory, at an aligned and at an odd address, gives
 * the file's logits. */
static void from_memory(int k)
{
    FILE *f = fopen(paths[k], "rb");
    CHECK(f != NULL, "open %s", paths[k]);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    const size_t size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = aligned_alloc(64, ((size + 1) + 63) / 64 * 64);
    CHECK(fread(buf, 1, size, f) == size, "read");
    fclose(f);
    uint64_t want = 0, got, p;
    for (int odd = 0; odd < 2; odd++) {
        if (odd) memmove(buf + 1, buf, size);
        ngpt_model *m = NULL;
        ngpt_context *ctx = NULL;
        ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
        s.logits_rows = NGPT_LOGITS_ALL;
        CHECK_OK(ngpt_model_open_mem(&m, buf + odd, size));
        CHECK_OK(ngpt_context_init(&ctx, m, NULL, &s, NULL, 0));
        if (!ctx) continue;
        sums(ctx, &got, &p);
        if (!odd) want = got;
        CHECK(got == want, "%s in memory at offset %d", kinds[k], odd);
        ngpt_context_free(ctx);
        CHECK_OK(ngpt_model_close(m));
    }
    free(buf);
}

typedef struct job {
    const ngpt_model *m;
    const ngpt_adapter *ad;     /* applied at scale 0.5 * salt, or NULL */
    int salt;
    int32_t out[N_GEN];
    int32_t n;
    ngpt_status st;
} job;

/* Generates N_GEN tokens (sampled, seeded by salt) from a prompt of salt. */
static void *generate(void *arg)
{
    job *j = arg;
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.threads = 1 + j->salt % 2;
    s.adapter_rank = j->ad ? 8 : 0;
    ngpt_context *ctx = NULL;
    j->st = ngpt_context_init(&ctx, j->m, NULL, &s, NULL, 0);
    if (j->st) return NULL;
    const float scale = 0.5f * (float)j->salt;
    if (j->ad && (j->st = ngpt_context_adapters_set(ctx, &j->ad, &scale, 1))) {
        ngpt_context_free(ctx);
        return NULL;
    }
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = N_GEN;
    gc.sampler.temperature = 0.9f;
    gc.sampler.seed = (uint64_t)j->salt;
    int32_t prompt[N_TOK];
    tokens_of(prompt, N_TOK, j->salt);
    ngpt_generate_result r;
    j->st = ngpt_context_generate(ctx, &gc, prompt, N_TOK, j->out, N_GEN, NULL, NULL, &r);
    j->n = r.n_tokens;
    ngpt_context_free(ctx);
    return NULL;
}

/* An adapter of m whose B is not zero: one AdamW step of a new one. */
static ngpt_adapter *trained_adapter(ngpt_model *m)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/ngpt_shared_%d.lora", (int)getpid());
    ngpt_lora_config lc = ngpt_lora_config_default();
    CHECK_OK(ngpt_lora_config_set(&lc, "targets=all-linear"));
    ngpt_adapter *ad = NULL, *file = NULL;
    CHECK_OK(ngpt_adapter_create(&ad, m, &lc, 5));
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = 1, s.seq = N_TOK, s.adapter = ad;
    ngpt_context *t = NULL;
    if (ad) CHECK_OK(ngpt_context_init(&t, m, NULL, &s, NULL, 0));
    if (t) {
        int32_t tok[N_TOK], tgt[N_TOK];
        tokens_of(tok, N_TOK, 1);
        tokens_of(tgt, N_TOK, 2);
        ngpt_optim_config o = ngpt_optim_config_default();
        CHECK_OK(ngpt_context_forward(t, tok, 1, N_TOK, tgt, NULL));
        CHECK_OK(ngpt_context_backward(t));
        CHECK_OK(ngpt_context_optim_step(t, &o, 0.05f, NULL));
        CHECK_OK(ngpt_context_save(t, path));
        CHECK_OK(ngpt_adapter_open(&file, path));
        remove(path);
    }
    ngpt_context_free(t);
    CHECK_OK(ngpt_adapter_close(ad));
    return file;
}

/* Contexts generating on their own threads at once, every other one with
 * an adapter at its own scale, give what each gives alone. */
static void threads_share(int k)
{
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, paths[k]));
    if (!m) return;
    ngpt_adapter *ad = trained_adapter(m);
    job alone[N_THREADS], together[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        alone[i] = (job){.m = m, .ad = i % 2 ? ad : NULL, .salt = i};
        together[i] = alone[i];
        generate(&alone[i]);
        CHECK_OK(alone[i].st);
    }
    job plain = {.m = m, .salt = 3};       /* salt 3 without its adapter */
    generate(&plain);
    CHECK(ad && plain.n > 0 && memcmp(plain.out, alone[3].out, sizeof plain.out) != 0,
          "%s: the adapter changed nothing", kinds[k]);
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, generate, &together[i]) == 0, "thread %d", i);
    for (int i = 0; i < N_THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N_THREADS; i++) {
        CHECK_OK(together[i].st);
        CHECK(together[i].n == alone[i].n && together[i].n > 0 &&
              !memcmp(together[i].out, alone[i].out, (size_t)alone[i].n * sizeof(int32_t)),
              "%s: context %d on its own thread generated other tokens", kinds[k], i);
    }
    CHECK_OK(ngpt_adapter_close(ad));
    CHECK_OK(ngpt_model_close(m));
}

static void answers(void)
{
    ngpt_model *m = NULL;
    CHECK_OK(ngpt_model_open(&m, paths[0]));
    if (!m) return;
    ngpt_config a;
    CHECK_OK(ngpt_model_config(m, &a));
    CHECK(!memcmp(&a, &file_cfg, sizeof a), "the model's config is the file's");
    const ngpt_tokenizer *tok = (const ngpt_tokenizer *)1;
    CHECK_OK(ngpt_model_tokenizer(m, &tok));
    CHECK(tok == NULL, "the file carries no tokenizer");
    ngpt_train_state ts;
    CHECK_OK(ngpt_model_train_state(m, &ts));
    CHECK(!ts.has_state, "a model-only file has no training state");
    /* training contexts copy the model's weights into their own arenas (with
     * its config, or another dropout), which the model outlives */
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_TRAIN);
    s.batch = 1;
    ngpt_config dropout = a;
    dropout.dropout = 0.1f;
    ngpt_context *t = NULL, *td = NULL, *ref = NULL;
    CHECK_OK(ngpt_context_init(&t, m, NULL, &s, NULL, 0));
    CHECK_OK(ngpt_context_init(&td, m, &dropout, &s, NULL, 0));
    CHECK_OK(ngpt_context_init(&ref, m, NULL, NULL, NULL, 0));
    uint64_t h1 = 1, h2 = 2, h3 = 3;
    CHECK_OK(ngpt_context_params_checksum(t, &h1));
    CHECK_OK(ngpt_context_params_checksum(td, &h2));
    CHECK_OK(ngpt_context_params_checksum(ref, &h3));
    CHECK(h1 == h3 && h2 == h3, "training contexts made from a model hold its weights");
    ngpt_context_free(ref);
    ngpt_context_free(t);
    CHECK_STATUS(ngpt_model_close(m), NGPT_ERR_WRONG_MODE);
    ngpt_context_free(td);
    CHECK_OK(ngpt_model_close(m));
}

int main(void)
{
    make_files();
    for (int k = 0; k < 3; k++) {
        same_as_copy(k, 1);
        same_as_copy(k, 3);
        from_memory(k);
        threads_share(k);
    }
    answers();
    for (int k = 0; k < 3; k++) remove(paths[k]);
    return test_summary("test_model_shared");
}
