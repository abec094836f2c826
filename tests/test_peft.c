/* test_peft.c — PEFT adapter directories (ngpt_import_peft,
 * ngpt_adapter_export_peft) and merging adapters into a model
 * (ngpt_context_adapters_merge), on the small GPT-2 and Llama models of
 * tests/hf_dir.h, imported, with adapter directories this test writes:
 *  - every imported A and B equals the value written (F32, F16, BF16), in
 *    the right module and layer, with r, alpha, rsLoRA, dropout, the
 *    targets and layers of the config;
 *  - which modules target_modules selects (lists, suffixes, regular
 *    expressions as Python reads them, all-linear, exclude_modules,
 *    layers_to_transform and layers_pattern, the model type's default);
 *  - export then import gives the adapter's floats bit for bit, and export
 *    writes the same bytes twice;
 *  - a Llama model with RoPE on interleaved pairs (llama2.c's layout) gets
 *    B's rows of q_proj and k_proj permuted as its weights are: the same
 *    logits as the halves model with the adapter, the same exported bytes;
 *  - a merged model's weights are W + s B A summed in double and rounded
 *    once, and its logits those of the adapters applied;
 *  - every refusal (options, tensors, models, contexts) is one line with
 *    its status and no adapter.
 * --write DIR writes a GPT-2 directory (gpt2) and an adapter for it (peft)
 * for tests/test_cli_lora.sh. PyTorch's side: tests/interop/test_peft.py. */
#include <math.h>
#include <sys/stat.h>

#include "hf_dir.h"
#include "import/peft.h"
#include "runtime/context.h"
#include "test.h"

static char gpt2_model[700], llama_model[700], halves_model[700], scratch[700];

/* The Linears of the two families as PEFT names them in a block, with
 * their (in, out). */
typedef struct module { const char *path; uint32_t bit; int in, out; } module;
static const module GPT2[] = {
    {"attn.c_attn", NGPT_LORA_QKV, C, 3 * C}, {"attn.c_proj", NGPT_LORA_O, C, C},
    {"mlp.c_fc", NGPT_LORA_FC1, C, F},        {"mlp.c_proj", NGPT_LORA_DOWN, F, C},
};
static const module LLAMA[] = {
    {"self_attn.q_proj", NGPT_LORA_Q, C, LH * LD},   {"self_attn.k_proj", NGPT_LORA_K, C, LKV * LD},
    {"self_attn.v_proj", NGPT_LORA_V, C, LKV * LD},  {"self_attn.o_proj", NGPT_LORA_O, LH * LD, C},
    {"mlp.gate_proj", NGPT_LORA_GATE, C, LF},        {"mlp.up_proj", NGPT_LORA_UP, C, LF},
    {"mlp.down_proj", NGPT_LORA_DOWN, LF, C},
};
#define ALL_GPT2 (NGPT_LORA_QKV | NGPT_LORA_O | NGPT_LORA_FC1 | NGPT_LORA_DOWN)
#define ALL_LLAMA (NGPT_LORA_Q | NGPT_LORA_K | NGPT_LORA_V | NGPT_LORA_O | NGPT_LORA_GATE | \
                   NGPT_LORA_UP | NGPT_LORA_DOWN)

/* What a written adapter directory holds. */
typedef struct peft_dir {
    bool llama;
    uint32_t bits;              /* the modules, in every layer of `layers` */
    uint32_t layers;            /* bit l (0: every layer) */
    int r, dt;
    spoil sp;
    const char *config;         /* adapter_config.json; NULL: made from the fields above */
    int skip;                   /* 1 + the index of a tensor left out, or 0 */
    const char *extra;          /* the name of one more (r, C) tensor, or NULL */
} peft_dir;

/* The tensors (hf_tensors, A then B of each module of each layer) and
 * files of adapter directory `name` in root. */
static bool write_peft(const char *name, const peft_dir *p)
{
    char dir[600], path[700], text[1024];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return false;
    free_tensors();
    rng = 1234;
    const module *mods = p->llama ? LLAMA : GPT2;
    const int n_mods = p->llama ? 7 : 4;
    int k = 0;
    for (int l = 0; l < L; l++) {
        if (p->layers && !(p->layers >> l & 1)) continue;
        for (int i = 0; i < n_mods; i++) {
            if (!(p->bits & mods[i].bit)) continue;
            for (int b = 0; b < 2; b++, k++) {
                char key[200];
                snprintf(key, sizeof key, "base_model.model.%s.%d.%s.lora_%c.weight",
                         p->llama ? "model.layers" : "transformer.h", l, mods[i].path, "AB"[b]);
                if (k + 1 != p->skip) add(key, b ? mods[i].out : p->r, b ? p->r : mods[i].in, 'w', p->dt);
            }
        }
    }
    if (p->extra) add(p->extra, p->r, C, 'w', p->dt);
    const char *config = p->config;
    if (!config) {
        char targets[300] = "", layers[100] = "null";
        for (int i = 0; i < n_mods; i++)
            if (p->bits & mods[i].bit)
                snprintf(targets + strlen(targets), sizeof targets - strlen(targets), "%s\"%s\"",
                         targets[0] ? ", " : "", mods[i].path);
        if (p->layers) {
            snprintf(layers, sizeof layers, "[");
            for (int l = 0; l < L; l++)
                if (p->layers >> l & 1)
                    snprintf(layers + strlen(layers), sizeof layers - strlen(layers), "%s%d",
                             layers[1] ? ", " : "", l);
            strcat(layers, "]");
        }
        snprintf(text, sizeof text,
                 "{\"peft_type\": \"LORA\", \"task_type\": \"CAUSAL_LM\", \"r\": %d, "
                 "\"lora_alpha\": 12, \"lora_dropout\": 0.05, \"use_rslora\": %s, "
                 "\"target_modules\": [%s], \"layers_to_transform\": %s, \"bias\": \"none\", "
                 "\"fan_in_fan_out\": %s, \"use_dora\": false, \"modules_to_save\": null, "
                 "\"rank_pattern\": {}, \"alpha_pattern\": {}, \"init_lora_weights\": true, "
                 "\"megatron_core\": \"megatron.core\", \"loftq_config\": {}, \"revision\": null}",
                 p->r, p->llama ? "true" : "false", targets, layers,
                 p->llama ? "false" : "true");
        config = text;
    }
    snprintf(path, sizeof path, "%s/adapter_config.json", dir);
    if (!write_file(path, config, strlen(config))) return false;
    snprintf(path, sizeof path, "%s/adapter_model.safetensors", dir);
    unlink(path);
    return write_safetensors(path, 0, n_hf_tensors, &(dir_opts){.dt = p->dt, .sp = p->sp}, false);
}

static void dir_of(char *buf, const char *name) { snprintf(buf, 600, "%s/%s", root, name); }

/* ngpt_import_peft of directory `name` on the model at path. */
static ngpt_status import_dir(const char *model_path, const char *name, ngpt_adapter **ad)
{
    char dir[600];
    dir_of(dir, name);
    ngpt_model *m = NULL;
    ngpt_status st = ngpt_model_open(&m, model_path);
    if (!st) st = ngpt_import_peft(ad, m, dir);
    char keep[600];
    snprintf(keep, sizeof keep, "%s", ngpt_last_error());
    ngpt_model_close(m);
    if (st) ngpt_fail(st, "%s", keep);
    return st;
}

/* ------------------------------------------------------------ values */

/* ad's floats are the tensors write_peft wrote for p, each in its place. */
static void check_values(const ngpt_adapter *ad, const peft_dir *p, const char *what)
{
    const ngpt_lora_layout *ll = &ad->ll;
    int k = 0, wrong = 0;
    for (int l = 0; l < L; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        for (int i = 0; i < ll->n_modules; i++)
            for (int b = 0; b < 2; b++, k++) {
                const hf_tensor *t = &hf_tensors[k];
                const float *w = ad->w + ngpt_lora_layer_offset(ll, l) +
                                 (b ? ll->mod[i].b : ll->mod[i].a);
                wrong += memcmp(w, t->val, t->count * sizeof(float)) != 0;
            }
    }
    CHECK(k == n_hf_tensors && wrong == 0, "[%s] %d of %d tensors differ from the file's (%d "
          "read)", what, wrong, n_hf_tensors, k);
    CHECK(ad->lc.rank == p->r && ad->lc.alpha == 12.0f && ad->lc.dropout == 0.05f &&
              ad->lc.rslora == p->llama, "[%s] config r=%d alpha=%g dropout=%g rslora=%d", what,
          (int)ad->lc.rank, (double)ad->lc.alpha, (double)ad->lc.dropout, (int)ad->lc.rslora);
    CHECK(ad->lc.layers == p->layers, "[%s] layers 0x%llx want 0x%x", what,
          (unsigned long long)ad->lc.layers, p->layers);
}

static bool same_lora_config(const ngpt_lora_config *a, const ngpt_lora_config *b)
{
    return a->rank == b->rank && !memcmp(&a->alpha, &b->alpha, 4) && a->rslora == b->rslora &&
           a->targets == b->targets && a->layers == b->layers && !memcmp(&a->dropout, &b->dropout, 4);
}

static void imports(void)
{
    static const struct { const char *name; peft_dir p; } good[] = {
        {"g_all_f16", {false, ALL_GPT2, 0, 8, DT_F16, SP_NONE, NULL, 0, NULL}},
        {"g_attn_bf16", {false, NGPT_LORA_QKV | NGPT_LORA_O, 2, 4, DT_BF16, SP_NONE, NULL, 0, NULL}},
        {"l_all_f32", {true, ALL_LLAMA, 0, 6, DT_F32, SP_NONE, NULL, 0, NULL}},
        {"l_qv_1", {true, NGPT_LORA_Q | NGPT_LORA_V, 1, 3, DT_F32, SP_NONE, NULL, 0, NULL}},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const peft_dir *p = &good[i].p;
        CHECK(write_peft(good[i].name, p), "cannot write %s", good[i].name);
        ngpt_adapter *ad = NULL;
        CHECK_OK(import_dir(p->llama ? llama_model : gpt2_model, good[i].name, &ad));
        if (!ad) continue;
        check_values(ad, p, good[i].name);
        CHECK(ad->lc.targets == p->bits, "[%s] targets 0x%x want 0x%x", good[i].name,
              (unsigned)ad->lc.targets, p->bits);
        /* export, import: the same floats; export again: the same bytes */
        ngpt_model *m = NULL;
        ngpt_adapter *back = NULL;
        char out[600], out2[600], f1[700], f2[700];
        dir_of(out, "exported"), dir_of(out2, "exported2");
        CHECK_OK(ngpt_model_open(&m, p->llama ? llama_model : gpt2_model));
        CHECK_OK(ngpt_adapter_export_peft(ad, m, out));
        CHECK_OK(ngpt_import_peft(&back, m, out));
        CHECK(back && back->ll.total == ad->ll.total &&
                  !memcmp(back->w, ad->w, ad->ll.total * sizeof(float)) &&
                  same_lora_config(&back->lc, &ad->lc) && back->base == ad->base,
              "[%s] exported and imported again, the adapter differs", good[i].name);
        CHECK_OK(ngpt_adapter_export_peft(back, m, out2));
        for (int f = 0; f < 2; f++) {
            const char *file = f ? "adapter_config.json" : "adapter_model.safetensors";
            snprintf(f1, sizeof f1, "%s/%s", out, file), snprintf(f2, sizeof f2, "%s/%s", out2, file);
            CHECK(test_same_file(f1, f2), "[%s] a second export writes another %s", good[i].name, file);
        }
        CHECK_OK(ngpt_adapter_close(back));
        CHECK_OK(ngpt_adapter_close(ad));
        ngpt_model_close(m);
    }
}

/* ------------------------------------------------------------ selection */

/* The targets and layers adapter_config.json `json` selects on the model
 * at path (through the reader peft.c calls), or the failure's status. */
static ngpt_status selection(const char *path, const char *json, uint32_t *targets,
                             uint64_t *layers)
{
    ngpt_config cfg = test_file_config(path);
    const ngpt_peft_family *fam = ngpt_peft_family_of(&cfg);
    ngpt_lora_config lc;
    char text[1200];
    snprintf(text, sizeof text, "{\"peft_type\": \"LORA\", %s}", json);
    ngpt_status st = fam ? ngpt_peft_config_read(text, strlen(text), "cfg", &cfg, fam, &lc)
                         : NGPT_ERR_UNSUPPORTED;
    *targets = st ? 0 : lc.targets, *layers = st ? 0 : lc.layers;
    return st;
}

static void selecting(void)
{
    static const struct { bool llama; const char *json; uint32_t targets; uint64_t layers; } ok[] = {
        {true, "\"target_modules\": null", NGPT_LORA_Q | NGPT_LORA_V, 0},
        {false, "\"target_modules\": null", NGPT_LORA_QKV, 0},
        {true, "\"target_modules\": \"all-linear\"", NGPT_LORA_ALL_LINEAR, 0},
        {true, "\"target_modules\": \"ALL-LINEAR\"", NGPT_LORA_ALL_LINEAR, 0},
        {false, "\"target_modules\": \"all-linear\"", NGPT_LORA_ALL_LINEAR, 0},
        {true, "\"target_modules\": \"all-linear\", \"exclude_modules\": [\"down_proj\"]",
         ALL_LLAMA & ~(uint32_t)NGPT_LORA_DOWN, 0},
        {false, "\"target_modules\": [\"c_proj\"]", NGPT_LORA_O | NGPT_LORA_DOWN, 0},
        {false, "\"target_modules\": [\"attn.c_proj\", \"c_fc\"]", NGPT_LORA_O | NGPT_LORA_FC1, 0},
        {false, "\"target_modules\": [\"c_proj\"], \"exclude_modules\": "
                "\"transformer\\\\.h\\\\.\\\\d+\\\\.mlp\\\\.c_proj\"", NGPT_LORA_O, 0},
        {false, "\"target_modules\": [\"h.1.attn.c_attn\"]", NGPT_LORA_QKV, 2},
        {false, "\"target_modules\": [\"transformer.h.0.mlp.c_fc\"], \"layers_to_transform\": 1",
         NGPT_LORA_FC1, 1},     /* a name listed whole ignores the layers */
        {false, "\"target_modules\": [\"c_fc\"], \"layers_to_transform\": 1", NGPT_LORA_FC1, 2},
        {true, "\"target_modules\": [\"q_proj\"], \"layers_to_transform\": [0], "
               "\"layers_pattern\": \"layers\"", NGPT_LORA_Q, 1},
        {true, "\"target_modules\": [\"q_proj\"], \"layers_to_transform\": [0, 1], "
               "\"layers_pattern\": [\"blocks\", \"layers\"]", NGPT_LORA_Q, 0},
        {true, "\"target_modules\": \".*\\\\.(q_proj|v_proj)\"", NGPT_LORA_Q | NGPT_LORA_V, 0},
        {true, "\"target_modules\": \".*q_proj|.*v_proj\"", NGPT_LORA_Q | NGPT_LORA_V, 0},
        {true, "\"target_modules\": \"model\\\\.layers\\\\.[1]\\\\.self_attn\\\\.(?:q|k)_proj\"",
         NGPT_LORA_Q | NGPT_LORA_K, 2},
        {true, "\"target_modules\": \"model.layers.\\\\d{1,2}.mlp.(gate|up)_proj\"",
         NGPT_LORA_GATE | NGPT_LORA_UP, 0},
        {true, "\"target_modules\": \".*?[\\\\w]+\\\\.down_proj\"", NGPT_LORA_DOWN, 0},
        {true, "\"target_modules\": \".*_proj\"", ALL_LLAMA, 0},
        {true, "\"target_modules\": \"model\\\\.layers\\\\.0\\\\.mlp\\\\.down_proj{1}\"",
         NGPT_LORA_DOWN, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint32_t t;
        uint64_t l;
        ngpt_status st = selection(ok[i].llama ? llama_model : gpt2_model, ok[i].json, &t, &l);
        CHECK(st == NGPT_OK && t == ok[i].targets && l == ok[i].layers,
              "%s: %s, targets 0x%x layers 0x%llx (want 0x%x 0x%llx): %s", ok[i].json,
              ngpt_status_string(st), (unsigned)t, (unsigned long long)l,
              (unsigned)ok[i].targets, (unsigned long long)ok[i].layers, st ? ngpt_last_error() : "");
    }
    static const struct { bool llama; const char *json; ngpt_status st; const char *says; } bad[] = {
        {false, "\"target_modules\": [\"lm_head\"]", NGPT_ERR_UNSUPPORTED, "lm_head"},
        {true, "\"target_modules\": [\"embed_tokens\"]", NGPT_ERR_UNSUPPORTED, "embed_tokens"},
        {false, "\"target_modules\": [\"ln_1\"]", NGPT_ERR_UNSUPPORTED, "not a Linear"},
        {false, "\"target_modules\": [\"attn\"]", NGPT_ERR_UNSUPPORTED, "attn"},
        {true, "\"target_modules\": \".*\"", NGPT_ERR_UNSUPPORTED, "does not adapt"},
        {true, "\"target_modules\": [\"nothing\"]", NGPT_ERR_BAD_FORMAT, "none"},
        {true, "\"target_modules\": []", NGPT_ERR_BAD_FORMAT, "none"},
        {false, "\"target_modules\": [\"h.0.attn.c_attn\", \"h.1.mlp.c_fc\"]",
         NGPT_ERR_UNSUPPORTED, "same modules"},
        {true, "\"target_modules\": \"(?=q).*\"", NGPT_ERR_UNSUPPORTED, "regular expression"},
        {true, "\"target_modules\": \".*\\\\bq_proj\"", NGPT_ERR_UNSUPPORTED, "regular expression"},
        {true, "\"target_modules\": \"(a)\\\\1\"", NGPT_ERR_UNSUPPORTED, "regular expression"},
        {true, "\"target_modules\": \"q{1000}\"", NGPT_ERR_UNSUPPORTED, "regular expression"},
        {true, "\"target_modules\": \"[\"", NGPT_ERR_UNSUPPORTED, "regular expression"},
        {true, "\"target_modules\": \".*\", \"layers_to_transform\": [0]", NGPT_ERR_BAD_FORMAT,
         "string"},
        {true, "\"target_modules\": [\"q_proj\"], \"layers_pattern\": \"layers\"",
         NGPT_ERR_BAD_FORMAT, "needs layers_to_transform"},
        {true, "\"target_modules\": [\"q_proj\"], \"layers_to_transform\": [0], "
               "\"layers_pattern\": \"lay.rs\"", NGPT_ERR_UNSUPPORTED, "plain name"},
        {true, "\"target_modules\": [\"q_proj\"], \"layers_to_transform\": [-1]",
         NGPT_ERR_BAD_FORMAT, "layers_to_transform"},
        {true, "\"target_modules\": 3", NGPT_ERR_BAD_FORMAT, "target_modules"},
        {true, "\"target_modules\": [\"q_proj\"], \"r\": 0", NGPT_ERR_BAD_FORMAT, "r 0"},
        {true, "\"target_modules\": [\"q_proj\"], \"r\": 4096", NGPT_ERR_UNSUPPORTED, "r 4096"},
        {true, "\"target_modules\": [\"q_proj\"], \"lora_alpha\": -1", NGPT_ERR_BAD_FORMAT, "lora_alpha"},
        {true, "\"target_modules\": [\"q_proj\"], \"lora_dropout\": 1", NGPT_ERR_BAD_FORMAT, "lora_dropout"},
        {true, "\"target_modules\": [\"q_proj\"], \"use_rslora\": 1", NGPT_ERR_BAD_FORMAT, "use_rslora"},
        {true, "\"use_dora\": true", NGPT_ERR_UNSUPPORTED, "use_dora"},
        {true, "\"bias\": \"all\"", NGPT_ERR_UNSUPPORTED, "bias"},
        {true, "\"bias\": \"lora_only\"", NGPT_ERR_UNSUPPORTED, "bias"},
        {true, "\"modules_to_save\": [\"lm_head\"]", NGPT_ERR_UNSUPPORTED, "modules_to_save"},
        {true, "\"rank_pattern\": {\"q_proj\": 8}", NGPT_ERR_UNSUPPORTED, "rank_pattern"},
        {true, "\"alpha_pattern\": {\"q_proj\": 8}", NGPT_ERR_UNSUPPORTED, "alpha_pattern"},
        {true, "\"lora_bias\": true", NGPT_ERR_UNSUPPORTED, "lora_bias"},
        {true, "\"init_lora_weights\": \"pissa_niter_4\"", NGPT_ERR_UNSUPPORTED, "pissa"},
        {true, "\"init_lora_weights\": \"loftq\"", NGPT_ERR_UNSUPPORTED, "loftq"},
        {true, "\"use_magic\": 1", NGPT_ERR_UNSUPPORTED, "use_magic"},
        {true, "\"r\": 4, \"r\": 4", NGPT_ERR_BAD_FORMAT, "twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint32_t t;
        uint64_t l;
        ngpt_status st = selection(bad[i].llama ? llama_model : gpt2_model, bad[i].json, &t, &l);
        CHECK(st == bad[i].st && strstr(ngpt_last_error(), bad[i].says) &&
                  !strchr(ngpt_last_error(), '\n'),
              "%s: %s (want %s, saying \"%s\"): %s", bad[i].json, ngpt_status_string(st),
              ngpt_status_string(bad[i].st), bad[i].says, ngpt_last_error());
    }
    ngpt_config cfg = test_config_tiny();
    CHECK(ngpt_peft_family_of(&cfg) == NULL && strstr(ngpt_last_error(), "neither"),
          "the default model is no PEFT family: %s", ngpt_last_error());
    ngpt_lora_config lc;
    static const char *const not_peft[] = {"{\"r\": 4}", "{\"peft_type\": \"IA3\"}", "[]", "{"};
    for (size_t i = 0; i < sizeof not_peft / sizeof not_peft[0]; i++) {
        cfg = test_file_config(gpt2_model);
        ngpt_status st = ngpt_peft_config_read(not_peft[i], strlen(not_peft[i]), "cfg", &cfg,
                                               ngpt_peft_family_of(&cfg), &lc);
        CHECK(st == NGPT_ERR_BAD_FORMAT || st == NGPT_ERR_UNSUPPORTED, "%s is read: %s",
              not_peft[i], ngpt_status_string(st));
    }
}

/* ------------------------------------------------------------ refusals */

static void refusals(void)
{
    static const struct { const char *name; peft_dir p; ngpt_status st; const char *says; } bad[] = {
        {"b_dtype", {false, NGPT_LORA_QKV, 0, 4, DT_F32, SP_DTYPE, NULL, 0, NULL},
         NGPT_ERR_UNSUPPORTED, "I32"},
        {"b_trunc", {false, NGPT_LORA_QKV, 0, 4, DT_F32, SP_TRUNCATED, NULL, 0, NULL},
         NGPT_ERR_BAD_FORMAT, "safetensors"},
        {"b_missing", {false, NGPT_LORA_QKV, 0, 4, DT_F32, SP_NONE, NULL, 2, NULL},
         NGPT_ERR_BAD_FORMAT, "lacks base_model.model.transformer.h.0.attn.c_attn.lora_B"},
        {"b_dora", {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE, NULL, 0,
                    "base_model.model.model.layers.0.self_attn.q_proj.lora_magnitude_vector"},
         NGPT_ERR_UNSUPPORTED, "DoRA"},
        {"b_bias", {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE, NULL, 0,
                    "base_model.model.model.layers.0.self_attn.q_proj.bias"},
         NGPT_ERR_UNSUPPORTED, "bias"},
        {"b_named", {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE, NULL, 0,
                     "base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight"},
         NGPT_ERR_UNSUPPORTED, "lora_A.default.weight"},
        {"b_rank", {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE,
                    "{\"peft_type\": \"LORA\", \"r\": 5, \"target_modules\": [\"q_proj\"]}", 0, NULL},
         NGPT_ERR_BAD_FORMAT, "shape (5, 64)"},
        {"b_dora_cfg", {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE,
                        "{\"peft_type\": \"LORA\", \"r\": 4, \"use_dora\": true}", 0, NULL},
         NGPT_ERR_UNSUPPORTED, "use_dora"},
        {"b_json", {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE, "{\"peft_type\": \"LORA\",", 0, NULL},
         NGPT_ERR_BAD_FORMAT, "JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const peft_dir *p = &bad[i].p;
        CHECK(write_peft(bad[i].name, p), "cannot write %s", bad[i].name);
        ngpt_adapter *ad = (ngpt_adapter *)&ad;
        ngpt_status st = import_dir(p->llama ? llama_model : gpt2_model, bad[i].name, &ad);
        CHECK(st == bad[i].st && ad == NULL && strstr(ngpt_last_error(), bad[i].says) &&
                  !strncmp(ngpt_last_error(), "ngpt_import_peft: ", 18),
              "[%s] %s (want %s, saying \"%s\"): %s", bad[i].name, ngpt_status_string(st),
              ngpt_status_string(bad[i].st), bad[i].says, ngpt_last_error());
    }
    /* a NaN in B; a pickle and no safetensors; no directory; a default model */
    peft_dir nan = {true, NGPT_LORA_Q, 0, 4, DT_F32, SP_NONE, NULL, 0, NULL};
    char path[700], dir[600];
    CHECK(write_peft("b_nan", &nan), "cannot write b_nan");
    ((float *)(void *)hf_tensors[1].bytes)[5] = NAN;
    dir_of(dir, "b_nan");
    snprintf(path, sizeof path, "%s/adapter_model.safetensors", dir);
    CHECK(write_safetensors(path, 0, n_hf_tensors, &(dir_opts){.dt = DT_F32}, false), "rewrite");
    ngpt_adapter *ad = NULL;
    CHECK_STATUS(import_dir(llama_model, "b_nan", &ad), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "nan"), "the NaN: %s", ngpt_last_error());
    char bin[700];
    snprintf(bin, sizeof bin, "%s/adapter_model.bin", dir);
    CHECK(rename(path, bin) == 0, "rename");
    CHECK_STATUS(import_dir(llama_model, "b_nan", &ad), NGPT_ERR_UNSUPPORTED);
    CHECK(strstr(ngpt_last_error(), "adapter_model.bin"), "the pickle: %s", ngpt_last_error());
    CHECK_STATUS(import_dir(llama_model, "nonexistent", &ad), NGPT_ERR_IO);
    ngpt_config cfg = test_config_tiny();
    ngpt_context *ctx = NULL;
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_INFER);
    CHECK_OK(ngpt_context_init(&ctx, NULL, &cfg, &sh, NULL, 0));
    if (ctx) CHECK_OK(ngpt_context_save(ctx, scratch));
    ngpt_context_free(ctx);
    CHECK_STATUS(import_dir(scratch, "l_qv_1", &ad), NGPT_ERR_UNSUPPORTED);
    CHECK(ad == NULL && strstr(ngpt_last_error(), "neither"), "a default model: %s", ngpt_last_error());
}

/* Exports refused: another model's adapter, a module Hugging Face's
 * GPT-2 lacks (q_proj's rows of c_attn), a file in the way. */
static void export_refusals(void)
{
    ngpt_model *g = NULL, *l = NULL;
    ngpt_adapter *ad = NULL, *q = NULL;
    CHECK_OK(ngpt_model_open(&g, gpt2_model));
    CHECK_OK(ngpt_model_open(&l, llama_model));
    CHECK_OK(import_dir(gpt2_model, "g_all_f16", &ad));
    ngpt_lora_config lc = ngpt_lora_config_default();
    CHECK_OK(ngpt_lora_config_set(&lc, "targets=q_proj"));
    if (g) CHECK_OK(ngpt_adapter_create(&q, g, &lc, 1));
    char out[600];
    dir_of(out, "x_out");
    if (ad && q && l) {
        CHECK_STATUS(ngpt_adapter_export_peft(ad, l, out), NGPT_ERR_CONFIG_MISMATCH);
        CHECK_STATUS(ngpt_adapter_export_peft(q, g, out), NGPT_ERR_UNSUPPORTED);
        CHECK(strstr(ngpt_last_error(), "attn.q"), "q's rows: %s", ngpt_last_error());
        CHECK_STATUS(ngpt_adapter_export_peft(ad, g, gpt2_model), NGPT_ERR_IO);
        CHECK_STATUS(ngpt_adapter_export_peft(ad, g, "/nonexistent/x/y"), NGPT_ERR_IO);
    }
    ngpt_adapter_close(ad), ngpt_adapter_close(q);
    ngpt_model_close(g), ngpt_model_close(l);
}

/* ------------------------------------------------------------ merging */

static float *logits_copy(ngpt_context *ctx, const int32_t *tok, int n, int V)
{
    const float *lg;
    if (ngpt_context_forward(ctx, tok, 1, n, NULL, NULL) || ngpt_context_logits(ctx, &lg)) return NULL;
    float *out = malloc((size_t)n * (size_t)V * sizeof *out);
    memcpy(out, lg, (size_t)n * (size_t)V * sizeof *out);
    return out;
}

static double rel_diff(const float *a, const float *b, size_t n)
{
    /* Branches, not fmax: aarch64 GCC 12 at -O2 -march=armv8-a crashes
     * vectorizing the two fmax reductions of one loop (an internal error in
     * vect_transform_reduction). */
    double worst = 0, big = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]), m = fabs((double)b[i]);
        if (d > worst) worst = d;
        if (m > big) big = m;
    }
    return worst / big;
}

/* An adapter (imported from `name`) applied twice at 0.75 and 0.25 against
 * the model with it merged at 1: the merged weights exactly W + s B A in
 * double, rounded once, and the logits within float noise. */
static void merging(const char *model_path, const char *name)
{
    ngpt_model *m = NULL;
    ngpt_adapter *ad = NULL;
    ngpt_context *inf = NULL, *own = NULL, *plain = NULL;
    CHECK_OK(ngpt_model_open(&m, model_path));
    CHECK_OK(import_dir(model_path, name, &ad));
    if (!m || !ad) goto out;
    ngpt_config cfg = test_file_config(model_path);
    ngpt_shape is = ngpt_shape_default(NGPT_MODE_INFER);
    is.seq = T, is.logits_rows = NGPT_LOGITS_ALL, is.adapter_rank = ad->lc.rank;
    CHECK_OK(ngpt_context_init(&inf, m, NULL, &is, NULL, 0));
    CHECK_OK(ngpt_context_init(&own, m, &cfg, &is, NULL, 0));
    CHECK_OK(ngpt_context_init(&plain, m, &cfg, &is, NULL, 0));
    if (!inf || !own || !plain) goto out;
    const ngpt_adapter *two[2] = {ad, ad};
    const float halves[2] = {0.75f, 0.25f}, one = 1.0f;
    CHECK_OK(ngpt_context_adapters_set(inf, two, halves, 2));
    CHECK_OK(ngpt_context_adapters_merge(own, (const ngpt_adapter *const *)&ad, &one, 1));
    /* each merged weight, computed here the same way */
    float *wm, *w0;
    size_t n;
    CHECK_OK(ngpt_context_params(own, &wm, &n));
    CHECK_OK(ngpt_context_params(plain, &w0, &n));
    const ngpt_lora_layout *ll = &ad->ll;
    const double s = ad->lc.alpha / (ad->lc.rslora ? sqrt(ll->rank) : (double)ll->rank);
    size_t wrong = 0, moved = 0, total = 0;
    for (int l = 0; l < cfg.n_layers; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        for (int i = 0; i < ll->n_modules; i++) {
            const ngpt_lora_module *md = &ll->mod[i];
            const float *A = ad->w + ngpt_lora_layer_offset(ll, l) + md->a;
            const float *Bm = ad->w + ngpt_lora_layer_offset(ll, l) + md->b;
            const size_t at = ngpt_linear_weight(&own->lay, l, md->linear);
            for (int j = 0; j < md->rows; j++)
                for (int k = 0; k < md->in; k++) {
                    double d = 0.0;
                    for (int r = 0; r < ll->rank; r++)
                        d += (double)Bm[j * ll->rank + r] * A[r * md->in + k];
                    const size_t e = at + (size_t)(md->row0 + j) * (size_t)md->in + (size_t)k;
                    const float want = (float)((double)w0[e] + s * d);
                    wrong += memcmp(&wm[e], &want, 4) != 0;
                    moved += wm[e] != w0[e];
                    total++;
                }
        }
    }
    CHECK(wrong == 0 && moved > total / 2, "[%s] %zu of %zu merged weights differ from W + s B A "
          "rounded once (%zu moved)", name, wrong, total, moved);
    CHECK_OK(ngpt_context_prepare(own));
    int32_t tok[T];
    for (int i = 0; i < T; i++) tok[i] = (i * 37 + 5) % V;
    float *a = logits_copy(inf, tok, T, V), *b = logits_copy(own, tok, T, V),
          *c = logits_copy(plain, tok, T, V);
    if (a && b && c) {
        const double e = rel_diff(a, b, (size_t)T * V), d = rel_diff(c, b, (size_t)T * V);
        CHECK(e < 2e-5 && d > 1e-3, "[%s] merged vs applied: %.3g, vs the model: %.3g", name, e, d);
    }
    free(a), free(b), free(c);
    /* refusals: a model's shared weights, adapters applied, a quantized
     * copy, another model's adapter, a bad scale */
    const float nan_scale = NAN;
    CHECK_STATUS(ngpt_context_adapters_merge(inf, (const ngpt_adapter *const *)&ad, &one, 1),
                 NGPT_ERR_WRONG_MODE);
    CHECK_OK(ngpt_context_adapters_set(own, (const ngpt_adapter *const *)&ad, &one, 0));
    CHECK_STATUS(ngpt_context_adapters_merge(own, (const ngpt_adapter *const *)&ad, &nan_scale, 1),
                 NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_context_adapters_merge(own, (const ngpt_adapter *const *)&ad, &one, 1),
                 NGPT_ERR_CONFIG_MISMATCH);     /* own's weights are merged now: another model */
    ngpt_context *q8 = NULL;
    CHECK_OK(ngpt_config_set(&cfg, "weights=q8"));
    CHECK_OK(ngpt_context_init(&q8, m, &cfg, &is, NULL, 0));
    if (q8) {
        CHECK_STATUS(ngpt_context_adapters_merge(q8, (const ngpt_adapter *const *)&ad, &one, 1),
                     NGPT_ERR_UNSUPPORTED);
        CHECK(strstr(ngpt_last_error(), "then quantize"), "q8: %s", ngpt_last_error());
    }
    ngpt_context_free(q8);
out:
    ngpt_context_free(inf), ngpt_context_free(own), ngpt_context_free(plain);
    CHECK_OK(ngpt_adapter_close(ad));
    ngpt_model_close(m);
}

/* ------------------------------------------------------------ RoPE pairs */

/* halves_model's weights as a model with RoPE on interleaved pairs (q's
 * and k's rows of each head reordered: HF row h D + j D/2 + i is row
 * h D + 2i + j), saved at `out`. */
static bool interleaved_twin(const char *out)
{
    ngpt_model *m = NULL;
    ngpt_context *from = NULL, *to = NULL;
    ngpt_config cfg = test_file_config(halves_model);
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = 1;
    bool ok = !ngpt_model_open(&m, halves_model) && !ngpt_context_init(&from, m, NULL, &sh, NULL, 0);
    cfg.rope_pairs = NGPT_ROPE_INTERLEAVED;
    ok = ok && !ngpt_context_init(&to, NULL, &cfg, &sh, NULL, 0);
    float *a, *b;
    size_t n, n2;
    ok = ok && !ngpt_context_params(from, &a, &n) && !ngpt_context_params(to, &b, &n2) && n == n2;
    if (ok) {
        memcpy(b, a, n * sizeof *a);
        for (int l = 0; l < cfg.n_layers; l++) {
            const size_t w = ngpt_linear_weight(&to->lay, l, NGPT_LINEAR_QKV);
            for (int part = 0; part < 2; part++) {      /* q's heads, then k's */
                const int heads = part ? LKV : LH, row0 = part ? LH * LD : 0;
                for (int hf = 0; hf < heads * LD; hf++) {
                    const int h = hf / LD, j = hf % LD / (LD / 2), i = hf % (LD / 2);
                    memcpy(b + w + (size_t)(row0 + h * LD + 2 * i + j) * C,
                           a + w + (size_t)(row0 + hf) * C, C * sizeof(float));
                }
            }
        }
        ok = !ngpt_context_save(to, out);
    }
    ngpt_context_free(from), ngpt_context_free(to);
    ngpt_model_close(m);
    return ok;
}

/* The logits of the model at path with the adapter of directory `name`. */
static float *adapted_logits(const char *path, const char *name, ngpt_adapter **keep)
{
    ngpt_model *m = NULL;
    ngpt_context *ctx = NULL;
    ngpt_adapter *ad = NULL;
    float *lg = NULL;
    ngpt_shape is = ngpt_shape_default(NGPT_MODE_INFER);
    is.seq = T, is.logits_rows = NGPT_LOGITS_ALL, is.adapter_rank = 8;
    const float one = 1.0f;
    int32_t tok[T];
    for (int i = 0; i < T; i++) tok[i] = (i * 11 + 3) % V;
    if (!ngpt_model_open(&m, path) && !import_dir(path, name, &ad) &&
        !ngpt_context_init(&ctx, m, NULL, &is, NULL, 0) &&
        !ngpt_context_adapters_set(ctx, (const ngpt_adapter *const *)&ad, &one, 1))
        lg = logits_copy(ctx, tok, T, V);
    CHECK(lg != NULL, "adapted logits of %s: %s", path, ngpt_last_error());
    ngpt_context_free(ctx);
    *keep = ad;
    ngpt_model_close(m);
    return lg;
}

static void rope_pairs(void)
{
    char twin[600], out1[600], out2[600];
    dir_of(twin, "interleaved.ngpt");
    CHECK(interleaved_twin(twin), "the interleaved twin: %s", ngpt_last_error());
    ngpt_adapter *a = NULL, *b = NULL;
    float *x = adapted_logits(halves_model, "l_all_f32", &a);
    float *y = adapted_logits(twin, "l_all_f32", &b);
    if (x && y) {
        const double e = rel_diff(y, x, (size_t)T * V);
        CHECK(e < 1e-5, "interleaved vs halves with the adapter: %.3g", e);
    }
    dir_of(out1, "x_halves"), dir_of(out2, "x_interleaved");
    ngpt_model *m1 = NULL, *m2 = NULL;
    CHECK_OK(ngpt_model_open(&m1, halves_model));
    CHECK_OK(ngpt_model_open(&m2, twin));
    if (a && b && m1 && m2) {
        CHECK(memcmp(a->w, b->w, a->ll.total * sizeof(float)) != 0, "q's and k's B rows moved");
        CHECK_OK(ngpt_adapter_export_peft(a, m1, out1));
        CHECK_OK(ngpt_adapter_export_peft(b, m2, out2));
        char f1[700], f2[700];
        snprintf(f1, sizeof f1, "%s/adapter_model.safetensors", out1);
        snprintf(f2, sizeof f2, "%s/adapter_model.safetensors", out2);
        CHECK(test_same_file(f1, f2), "the two exports hold other tensors");
    }
    free(x), free(y);
    ngpt_adapter_close(a), ngpt_adapter_close(b);
    ngpt_model_close(m1), ngpt_model_close(m2);
}

/* ------------------------------------------------------------ setup */

static bool import_model(const char *dir, char *out)
{
    char d[600];
    dir_of(d, dir);
    snprintf(out, 700, "%s.ngpt", d);
    const ngpt_status st = ngpt_import_hf(d, NULL, out);
    CHECK(st == NGPT_OK, "import %s: %s", dir, ngpt_last_error());
    return st == NGPT_OK;
}

static bool write_models(void)
{
    make_tokenizer();
    make_model(27, DT_F32);
    bool ok = write_dir("gpt2", &(dir_opts){.dt = DT_F32});
    make_llama(41, DT_F32, false);
    return ok && write_llama_dir("llama", &(dir_opts){.dt = DT_F32}, NULL);
}

static int write_only(const char *dir)
{
    snprintf(root, sizeof root, "%s", dir);
    bool ok = write_models() &&
              write_peft("peft", &(peft_dir){false, ALL_GPT2, 0, 8, DT_F16, SP_NONE, NULL, 0, NULL});
    free_tensors();
    if (!ok) fprintf(stderr, "test_peft: cannot write %s\n", dir);
    return !ok;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_only(argv[2]);
    snprintf(root, sizeof root, "%s/ngpt-test-peft-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(scratch, sizeof scratch, "%s/scratch.ngpt", root);
    if (write_models() && import_model("gpt2", gpt2_model) && import_model("llama", llama_model)) {
        memcpy(halves_model, llama_model, sizeof halves_model);
        imports();
        selecting();
        refusals();
        export_refusals();
        merging(gpt2_model, "g_all_f16");
        merging(llama_model, "l_qv_1");
        rope_pairs();
    }
    free_tensors();
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (test_failed == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return test_summary("test_peft");
}
