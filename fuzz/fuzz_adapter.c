/* fuzz_adapter.c — arbitrary bytes as an ngpt adapter file in memory
 * (ngpt_adapter_open_mem; docs/FORMAT.md, "Adapter files"), as they are and
 * resealed (fuzz_reseal: the size field and the checksum fixed, so that the
 * fuzzer reaches the metadata, the LoRA config and the tensor set).
 * Properties: a failed open leaves a message naming the function and no
 * adapter; an opened adapter's config validates and its training state
 * reads; saved, opened and saved again it writes the same bytes; applied to
 * the fixed tiny model (fuzz_lora.h) it runs a forward, or is refused with
 * a message (another model's: NGPT_ERR_CONFIG_MISMATCH). Seeds:
 * fuzz/corpus/adapter, adapters of that model made by ngpt_adapter_create
 * (q_proj,v_proj r=4; all-linear of layer 0 with rsLoRA and dropout, B
 * nonzero) and an adapter's training file (moments and train.* metadata). */
#include "fuzz_lora.h"

static void check(const unsigned char *b, size_t size)
{
    ngpt_adapter *ad = (ngpt_adapter *)(uintptr_t)1;    /* a failed open must clear it */
    ngpt_status st = ngpt_adapter_open_mem(&ad, b, size);
    fuzz_expect_message(st, "ngpt_adapter_open_mem");
    if (st && ad) fuzz_fail("a failed open (%s) gave an adapter", ngpt_status_string(st));
    if (st) return;
    ngpt_lora_config lc;
    ngpt_train_state ts;
    if (ngpt_adapter_lora_config(ad, &lc) || ngpt_lora_config_validate(&lc))
        fuzz_fail("an opened adapter's config does not validate: %s", ngpt_last_error());
    if (ngpt_adapter_train_state(ad, &ts)) fuzz_fail("train state: %s", ngpt_last_error());
    char a[400], c[400];
    fuzz_lora_path(a, sizeof a, "a.lora");
    fuzz_lora_path(c, sizeof c, "b.lora");
    ngpt_adapter *back = NULL;
    if (ngpt_adapter_save(ad, a) || ngpt_adapter_open(&back, a) || ngpt_adapter_save(back, c))
        fuzz_fail("an opened adapter does not save and open again: %s", ngpt_last_error());
    FILE *fa = fopen(a, "rb"), *fc = fopen(c, "rb");
    int x = 0, y = 0;
    while (fa && fc && x == y && x != EOF) x = fgetc(fa), y = fgetc(fc);
    if (!fa || !fc || x != y) fuzz_fail("saved, opened and saved again: other bytes");
    fclose(fa), fclose(fc);
    st = fuzz_lora_apply(fuzz_lora_model(FUZZ_TINY), ad);
    if (st && st != NGPT_ERR_CONFIG_MISMATCH)
        fuzz_fail("an adapter refused with %s: %s", ngpt_status_string(st), ngpt_last_error());
    if (ngpt_adapter_close(back) || ngpt_adapter_close(ad)) fuzz_fail("close: %s", ngpt_last_error());
}

NGPT_FUZZ_ENTRY(adapter)
{
    unsigned char *b = fuzz_copy(data, size);
    check(b, size);
    if (size >= 136) {
        fuzz_reseal(b, size);
        check(b, size);
    }
    free(b);
    return 0;
}
