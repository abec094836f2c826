/* fuzz_lora.h — what the LoRA targets (fuzz_adapter.c, fuzz_peft.c) share:
 * three fixed models, made once per process in a temporary folder, that
 * adapters are applied to. The seeds' adapters were made for them (an
 * adapter records its model's config and identity, the weights'
 * checksum), so their configs and weights must not change:
 *   FUZZ_TINY   fuzz_tiny_config() (V=16 T=8 C=8 L=1 H=2 d_ff=16)
 *   FUZZ_GPT2   the same with GPT-2's switches and L=2 (PEFT's c_attn, ...)
 *   FUZZ_LLAMA  the same with the Llama family's, one KV head, L=2
 * each with ngpt_context_params_init's weights of seed 7. */
#ifndef NGPT_FUZZ_LORA_H
#define NGPT_FUZZ_LORA_H

#include "fuzz.h"

typedef enum fuzz_model_kind { FUZZ_TINY, FUZZ_GPT2, FUZZ_LLAMA, FUZZ_MODELS } fuzz_model_kind;

static char fuzz_lora_root[256];
static ngpt_model *fuzz_lora_models[FUZZ_MODELS];

static void fuzz_lora_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", fuzz_lora_root, name);
}

static void fuzz_lora_cleanup(void)
{
    static const char *const files[] = {"tiny.ngpt", "gpt2.ngpt", "llama.ngpt", "a.lora", "b.lora",
                                        "in/adapter_config.json", "in/adapter_model.safetensors",
                                        "out/adapter_config.json", "out/adapter_model.safetensors",
                                        "out2/adapter_config.json", "out2/adapter_model.safetensors",
                                        "in", "out", "out2", ""};
    for (int i = 0; i < FUZZ_MODELS; i++) ngpt_model_close(fuzz_lora_models[i]);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[400];
        fuzz_lora_path(p, sizeof p, files[i]);
        if (unlink(p) != 0) rmdir(p);
    }
}

static ngpt_config fuzz_lora_config(fuzz_model_kind k)
{
    ngpt_config c = fuzz_tiny_config();
    static const char *const switches[FUZZ_MODELS] = {
        "", "L=2 pos=learned qkv_bias=1 proj_bias=1 gelu=tanh",
        "L=2 norm_type=rms mlp=swiglu mlp_bias=0 rope_pairs=halves kv_heads=1"};
    char buf[128];
    snprintf(buf, sizeof buf, "%s", switches[k]);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if (ngpt_config_set(&c, t)) fuzz_fail("fixed model %d: %s", (int)k, ngpt_last_error());
    return c;
}

/* The fixed model k, open (made on first use). */
static ngpt_model *fuzz_lora_model(fuzz_model_kind k)
{
    if (fuzz_lora_models[k]) return fuzz_lora_models[k];
    if (!fuzz_lora_root[0]) {
        snprintf(fuzz_lora_root, sizeof fuzz_lora_root, "%s/ngpt-fuzz-lora-XXXXXX", fuzz_tmpdir());
        if (!mkdtemp(fuzz_lora_root)) fuzz_fail("cannot make %s", fuzz_lora_root);
        atexit(fuzz_lora_cleanup);
    }
    static const char *const names[FUZZ_MODELS] = {"tiny.ngpt", "gpt2.ngpt", "llama.ngpt"};
    char path[400];
    fuzz_lora_path(path, sizeof path, names[k]);
    const ngpt_config c = fuzz_lora_config(k);
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = 1;
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, NULL, &c, &s, NULL, 0) || ngpt_context_params_init(ctx, 7) ||
        ngpt_context_save(ctx, path) || ngpt_model_open(&fuzz_lora_models[k], path))
        fuzz_fail("fixed model %d: %s", (int)k, ngpt_last_error());
    ngpt_context_free(ctx);
    return fuzz_lora_models[k];
}

/* An adapter applied to an inference context of model m: NGPT_OK and a
 * forward run, or the refusal of ngpt_context_adapters_set (with its
 * message; the context then applies none). */
static ngpt_status fuzz_lora_apply(ngpt_model *m, const ngpt_adapter *ad)
{
    ngpt_lora_config lc;
    ngpt_config cfg;
    if (ngpt_adapter_lora_config(ad, &lc) || ngpt_model_config(m, &cfg))
        fuzz_fail("config: %s", ngpt_last_error());
    ngpt_shape s = ngpt_shape_default(NGPT_MODE_INFER);
    s.seq = 4, s.adapter_rank = lc.rank;
    ngpt_context *ctx = NULL;
    if (ngpt_context_init(&ctx, m, NULL, &s, NULL, 0)) fuzz_fail("context: %s", ngpt_last_error());
    const float scale = 0.5f;
    ngpt_status st = ngpt_context_adapters_set(ctx, &ad, &scale, 1);
    fuzz_expect_message(st, "ngpt_context_adapters_set");
    int32_t tokens[4] = {1, 2, 3, 4 % cfg.vocab_size};
    if (!st && ngpt_context_forward(ctx, tokens, 1, 4, NULL, NULL))
        fuzz_fail("forward with an applied adapter: %s", ngpt_last_error());
    ngpt_context_free(ctx);
    return st;
}

#endif
