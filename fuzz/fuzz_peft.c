/* fuzz_peft.c — PEFT adapter directories (ngpt_import_peft; docs/IMPORT.md,
 * "PEFT adapters"). The first byte picks what the rest is:
 *   0  an adapter_config.json, read for the fixed GPT-2 and Llama models
 *      (fuzz_lora.h) by src/import/peft_config.c: the options, and the
 *      modules target_modules selects (lists, regular expressions,
 *      layers_to_transform)
 *   1  an adapter_config.json, a NUL byte, then an adapter_model.safetensors:
 *      a directory imported for the fixed GPT-2 model
 *   2  the same for the fixed Llama model
 * Properties: every failure leaves a message (ngpt_import_peft's with its
 * prefix) and no adapter; a config that reads is a valid LoRA config whose
 * layout fits the model; an imported adapter exports, imports again and
 * exports the same two files byte for byte, and applied to the model runs a
 * forward. Seeds: fuzz/corpus/peft, made by ngpt_adapter_export_peft of
 * adapters of the fixed models (c_attn; c_proj of layer 1 with rsLoRA;
 * all-linear; q_proj,v_proj; layers 0) and hand-written configs (regular
 * expressions, exclude_modules, layers_pattern). This target reaches an
 * internal header, as tests do: the config reader has no public function
 * of its own. */
#include <sys/stat.h>

#include "import/peft.h"
#include "fuzz_lora.h"

static void config_only(const uint8_t *data, size_t size)
{
    for (int k = FUZZ_GPT2; k <= FUZZ_LLAMA; k++) {
        const ngpt_config cfg = fuzz_lora_config((fuzz_model_kind)k);
        const ngpt_peft_family *fam = ngpt_peft_family_of(&cfg);
        ngpt_lora_config lc;
        ngpt_lora_layout ll;
        if (!fam) fuzz_fail("the fixed model %d has no family", k);
        unsigned char *b = fuzz_copy(data, size);
        ngpt_status st = ngpt_peft_config_read(b, size, "fuzz adapter_config.json", &cfg, fam, &lc);
        free(b);
        if (st && !ngpt_last_error()[0]) fuzz_fail("a refused config left no message");
        if (!st && (ngpt_lora_config_validate(&lc) || ngpt_lora_layout_compute(&cfg, &lc, &ll)))
            fuzz_fail("a config read does not fit its model: %s", ngpt_last_error());
    }
}

static void write_to(const char *dir, const char *name, const uint8_t *data, size_t size)
{
    char p[500];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fuzz_fail("cannot write %s", p);
}

/* Whether the two files of directories a and b hold the same bytes. */
static bool same_files(const char *a, const char *b)
{
    static const char *const files[] = {"adapter_config.json", "adapter_model.safetensors"};
    for (int i = 0; i < 2; i++) {
        char pa[500], pb[500];
        snprintf(pa, sizeof pa, "%s/%s", a, files[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, files[i]);
        FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
        int x = 0, y = 0;
        while (fa && fb && x == y && x != EOF) x = fgetc(fa), y = fgetc(fb);
        if (fa) fclose(fa);
        if (fb) fclose(fb);
        if (!fa || !fb || x != y) return false;
    }
    return true;
}

static void directory(const uint8_t *data, size_t size, fuzz_model_kind k)
{
    ngpt_model *m = fuzz_lora_model(k);
    char in[400], out[400], out2[400];
    fuzz_lora_path(in, sizeof in, "in");
    fuzz_lora_path(out, sizeof out, "out");
    fuzz_lora_path(out2, sizeof out2, "out2");
    mkdir(in, 0755);
    const uint8_t *nul = memchr(data, 0, size);
    const size_t n = nul ? (size_t)(nul - data) : size;
    write_to(in, "adapter_config.json", data, n);
    write_to(in, "adapter_model.safetensors", nul ? nul + 1 : data, nul ? size - n - 1 : 0);
    ngpt_adapter *ad = (ngpt_adapter *)(uintptr_t)1, *back = NULL;
    ngpt_status st = ngpt_import_peft(&ad, m, in);
    fuzz_expect_message(st, "ngpt_import_peft");
    if (st && ad) fuzz_fail("a failed import (%s) gave an adapter", ngpt_status_string(st));
    if (st) return;
    if (ngpt_adapter_export_peft(ad, m, out) || ngpt_import_peft(&back, m, out) ||
        ngpt_adapter_export_peft(back, m, out2))
        fuzz_fail("an imported adapter does not export and import again: %s", ngpt_last_error());
    if (!same_files(out, out2)) fuzz_fail("exported, imported and exported again: other bytes");
    if (fuzz_lora_apply(m, back)) fuzz_fail("an imported adapter is refused by its model");
    if (ngpt_adapter_close(back) || ngpt_adapter_close(ad)) fuzz_fail("close: %s", ngpt_last_error());
}

NGPT_FUZZ_ENTRY(peft)
{
    if (size < 1) return 0;
    const uint8_t mode = data[0] % 3;
    data++, size--;
    if (mode == 0) config_only(data, size);
    else directory(data, size, mode == 1 ? FUZZ_GPT2 : FUZZ_LLAMA);
    return 0;
}
