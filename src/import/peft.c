/* peft.c — PEFT adapter directories into ngpt's adapters and back
 * (ngpt.h, "LoRA adapters"; docs/IMPORT.md, "PEFT adapters"): the config
 * read or written by peft_config.c, the tensors by safetensors.c. PEFT
 * saves a module's lora_A (r, in) and lora_B (out, r) as
 * base_model.model.<module path>.lora_A.weight and .lora_B.weight
 * (src/peft/utils/save_and_load.py, https://github.com/huggingface/peft),
 * nn.Linear's layout whatever the base layer (GPT-2's Conv1D too:
 * fan_in_fan_out only transposes the merged delta, src/peft/tuners/lora/
 * layer.py), which is ngpt's A and B of the module. The one reordering:
 * a Llama-family model with RoPE on interleaved pairs (llama2.c's import)
 * holds q's and k's rows as Meta orders them and Hugging Face's models in
 * rotate_half's order, so B's rows of q_proj and k_proj are permuted as
 * the weights are (HF row h D + j D/2 + i is Meta row h D + 2i + j). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic_file.h"
#include "base/fpmode.h"
#include "import/peft.h"
#include "import/safetensors.h"
#include "io/adapter.h"
#include "io/model.h"
#include "runtime/derived.h"
#include "tokenizer/tokenizer.h"

enum { PATH_BYTES = 4096, KEY_BYTES = 256 };

static void in_dir(char *buf, const char *dir, const char *file)
{
    const size_t n = strlen(dir);
    snprintf(buf, PATH_BYTES, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", file);
}

/* The safetensors key of a module's lora_A (b false) or lora_B. */
static void key_of(const ngpt_peft_family *fam, int l, uint32_t bit, bool b, char *buf)
{
    char path[160];
    ngpt_peft_module_path(fam, l, bit, path, sizeof path);
    snprintf(buf, KEY_BYTES, "base_model.model.%s.lora_%c.weight", path, b ? 'B' : 'A');
}

/* Heads whose B rows are RoPE'd and stored in another pairing order than
 * Hugging Face's (q_proj's, k_proj's of an interleaved Llama), else 0. */
static int rotated_heads(const ngpt_config *cfg, uint32_t bit)
{
    if (cfg->mlp != NGPT_MLP_SWIGLU || cfg->rope_pairs != NGPT_ROPE_INTERLEAVED) return 0;
    return bit == NGPT_LORA_Q ? cfg->n_heads : bit == NGPT_LORA_K ? ngpt_cfg_kv_heads(cfg) : 0;
}

/* Row `hf` of a head-ordered B in Hugging Face's order is row meta_row(hf) in Meta's. */
static size_t meta_row(size_t hf, int D)
{
    const size_t h = hf / (size_t)D, j = hf % (size_t)D / (size_t)(D / 2), i = hf % (size_t)(D / 2);
    return h * (size_t)D + 2 * i + j;
}

/* A rows x r tensor between the orders: to_meta, HF's into Meta's; else back. */
static void reorder_rows(float *dst, const float *src, int rows, int r, int D, bool to_meta)
{
    for (size_t hf = 0; hf < (size_t)rows; hf++) {
        const size_t m = meta_row(hf, D);
        memcpy(dst + (to_meta ? m : hf) * (size_t)r, src + (to_meta ? hf : m) * (size_t)r,
               (size_t)r * sizeof(float));
    }
}

/* ------------------------------------------------------------ reading */

/* What a tensor of the file that no selected module owns probably is. */
static const char *unknown_kind(const char *name)
{
    if (strstr(name, "lora_magnitude_vector")) return "DoRA's magnitudes";
    if (strstr(name, "lora_embedding")) return "LoRA on an embedding";
    if (strstr(name, "modules_to_save")) return "a whole module saved beside the adapter";
    if (strstr(name, ".bias")) return "a trained bias";
    return "not the lora_A or lora_B weight of a module its adapter_config.json selects";
}

/* One tensor of f (name, shape (rows, cols)) into dst: float32, finite. */
static ngpt_status read_tensor(const ngpt_st_file *f, const char *name, int rows, int cols,
                               bool *seen, float *dst)
{
    const ngpt_st_tensor *t = ngpt_st_find(f, name);
    if (!t)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s lacks %s, which its adapter_config.json "
                         "selects", f->src, name);
    if (t->dtype == NGPT_ST_OTHER)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s is %s; ngpt reads F32, F16 and BF16",
                         f->src, name, t->dtype_name);
    if (t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s is not of shape (%d, %d), as r and the "
                         "model make it", f->src, name, rows, cols);
    ngpt_st_to_f32(t, 0, t->count, dst);
    for (size_t i = 0; i < t->count; i++)
        if (!isfinite(dst[i]))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s holds %g at element %zu", f->src, name,
                             (double)dst[i], i);
    seen[t - f->t] = true;
    return NGPT_OK;
}

/* The tensors of f into ad (its layout made for a model of fam). */
static ngpt_status read_tensors(const ngpt_st_file *f, const ngpt_peft_family *fam,
                                ngpt_adapter *ad)
{
    const ngpt_lora_layout *ll = &ad->ll;
    bool *seen = calloc(f->n ? f->n : 1, sizeof *seen);
    float *tmp = NULL;
    size_t tmp_n = 0;
    ngpt_status st = seen ? NGPT_OK : ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", f->src);
    char key[KEY_BYTES];
    for (int l = 0; !st && l < ll->n_layers; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        float *w = (float *)(uintptr_t)ad->w + ngpt_lora_layer_offset(ll, l);
        for (int i = 0; !st && i < ll->n_modules; i++) {
            const ngpt_lora_module *m = &ll->mod[i];
            const int heads = rotated_heads(&ad->cfg, m->target);
            key_of(fam, l, m->target, false, key);
            st = read_tensor(f, key, ll->rank, m->in, seen, w + m->a);
            key_of(fam, l, m->target, true, key);
            const size_t n = (size_t)m->rows * (size_t)ll->rank;
            if (!st && heads && n > tmp_n) {
                free(tmp);
                tmp = malloc(n * sizeof *tmp);
                tmp_n = tmp ? n : 0;
                if (!tmp) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", f->src);
            }
            if (!st) st = read_tensor(f, key, m->rows, ll->rank, seen, heads ? tmp : w + m->b);
            if (!st && heads)
                reorder_rows(w + m->b, tmp, m->rows, ll->rank, m->rows / heads, true);
        }
    }
    for (size_t i = 0; !st && i < f->n; i++)
        if (!seen[i])
            st = ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s holds %s: %s, which ngpt does not read",
                           f->src, f->t[i].name, unknown_kind(f->t[i].name));
    free(tmp);
    free(seen);
    return st;
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static ngpt_status import_peft(ngpt_adapter **out, ngpt_model *model, const char *dir)
{
    const ngpt_config *cfg = ngpt_model_cfg(model);
    const ngpt_peft_family *fam = ngpt_peft_family_of(cfg);
    if (!fam) return NGPT_ERR_UNSUPPORTED;
    char config[PATH_BYTES], weights[PATH_BYTES], bin[PATH_BYTES];
    in_dir(config, dir, "adapter_config.json");
    in_dir(weights, dir, "adapter_model.safetensors");
    in_dir(bin, dir, "adapter_model.bin");
    uint8_t *text = NULL;
    size_t size = 0;
    ngpt_lora_config lc;
    ngpt_lora_layout ll;
    uint64_t base;
    ngpt_status st = ngpt_tok_read_file(config, &text, &size);
    if (!st) st = ngpt_peft_config_read(text, size, config, cfg, fam, &lc);
    free(text);
    if (!st && (st = ngpt_lora_layout_compute(cfg, &lc, &ll))) {
        char why[300];
        snprintf(why, sizeof why, "%s", ngpt_last_error());
        return ngpt_fail(st, "%s does not fit the model: %s", config, why);
    }
    if (!st) st = ngpt_model_identity(model, &base);
    if (st) return st;
    if (!exists(weights) && exists(bin))
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s holds adapter_model.bin (a pickle) and no "
                         "adapter_model.safetensors; ngpt reads safetensors (save the adapter "
                         "with peft's save_pretrained, safe_serialization=True)", dir);
    ngpt_st_file f = {0};
    if ((st = ngpt_st_open(&f, weights))) return st;
    ngpt_adapter *ad = ngpt_adapter_alloc(cfg, &lc, &ll, false);
    st = ad ? read_tensors(&f, fam, ad)
            : ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate the adapter of %s", dir);
    if (!st) st = ngpt_adapter_pack(ad);    /* what inference multiplies by */
    ngpt_st_close(&f);
    if (st) {
        ngpt_adapter_close(ad);
        return st;
    }
    ad->base = base;
    *out = ad;
    return NGPT_OK;
}

ngpt_status ngpt_import_peft(ngpt_adapter **ad, const ngpt_model *model, const char *dir)
{
    NGPT_FPMODE_SCOPE;
    if (!ad) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_peft: NULL adapter");
    *ad = NULL;
    if (!model || !dir) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_peft: NULL model or dir");
    return ngpt_prefixed("ngpt_import_peft",
                         import_peft(ad, (ngpt_model *)(uintptr_t)model, dir));
}

/* ------------------------------------------------------------ writing */

/* adapter_model.safetensors of ad at path: each adapted layer's modules'
 * lora_A and lora_B, float32, B's rows in Hugging Face's order. */
static ngpt_status write_tensors(const ngpt_adapter *ad, const ngpt_peft_family *fam,
                                 const char *path)
{
    const ngpt_lora_layout *ll = &ad->ll;
    size_t layers = 0;
    for (int l = 0; l < ll->n_layers; l++) layers += ngpt_lora_layer_on(ll, l);
    const size_t n = layers * (size_t)ll->n_modules * 2;
    ngpt_st_out *t = calloc(n ? n : 1, sizeof *t);
    char (*keys)[KEY_BYTES] = calloc(n ? n : 1, KEY_BYTES);
    float *w = malloc((ll->total ? ll->total : 1) * sizeof *w);
    if (!t || !keys || !w) {
        free(t), free(keys), free(w);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory writing %s", path);
    }
    memcpy(w, ad->w, ll->total * sizeof *w);
    size_t k = 0;
    for (int l = 0; l < ll->n_layers; l++) {
        if (!ngpt_lora_layer_on(ll, l)) continue;
        float *lw = w + ngpt_lora_layer_offset(ll, l);
        const float *from = ad->w + ngpt_lora_layer_offset(ll, l);
        for (int i = 0; i < ll->n_modules; i++) {
            const ngpt_lora_module *m = &ll->mod[i];
            const int heads = rotated_heads(&ad->cfg, m->target);
            if (heads) reorder_rows(lw + m->b, from + m->b, m->rows, ll->rank, m->rows / heads, false);
            for (int b = 0; b < 2; b++, k++) {
                key_of(fam, l, m->target, b, keys[k]);
                t[k] = (ngpt_st_out){keys[k], b ? m->rows : ll->rank, b ? ll->rank : m->in,
                                     lw + (b ? m->b : m->a)};
            }
        }
    }
    ngpt_status st = ngpt_st_write(path, t, n);
    free(t), free(keys), free(w);
    return st;
}

static ngpt_status export_peft(const ngpt_adapter *ad, ngpt_model *model, const char *dir)
{
    ngpt_status st = ngpt_adapter_check_model(ad, model);
    const ngpt_peft_family *fam = st ? NULL : ngpt_peft_family_of(&ad->cfg);
    if (st || !fam) return st ? st : NGPT_ERR_UNSUPPORTED;
    char path[160];
    for (int i = 0; i < ad->ll.n_modules; i++)
        if (!ngpt_peft_module_path(fam, 0, ad->ll.mod[i].target, path, sizeof path))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "the adapter adapts %s, which %s's Hugging "
                             "Face model has no module for (its adapter would not load in "
                             "peft)", ad->ll.mod[i].name, fam->name);
    struct stat sb;
    if (mkdir(dir, 0755) != 0 && !(errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return ngpt_fail(NGPT_ERR_IO, "cannot make the directory %s: %s", dir,
                         errno == EEXIST ? "a file of that name exists" : strerror(errno));
    char config[PATH_BYTES], weights[PATH_BYTES];
    in_dir(config, dir, "adapter_config.json");
    in_dir(weights, dir, "adapter_model.safetensors");
    char *text = ngpt_peft_config_write(fam, &ad->lc, &ad->ll);
    if (!text) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory writing %s", config);
    st = write_tensors(ad, fam, weights);
    if (!st) st = ngpt_atomic_file_write(config, text, strlen(text));
    free(text);
    return st;
}

ngpt_status ngpt_adapter_export_peft(const ngpt_adapter *ad, const ngpt_model *model,
                                     const char *dir)
{
    NGPT_FPMODE_SCOPE;
    if (!ad || !model || !dir)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_adapter_export_peft: NULL argument");
    return ngpt_prefixed("ngpt_adapter_export_peft",
                         export_peft(ad, (ngpt_model *)(uintptr_t)model, dir));
}
