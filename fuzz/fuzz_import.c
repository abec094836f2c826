/* fuzz_import.c — what ngpt_import_hf reads. The first byte picks what the
 * rest is:
 *   0  a safetensors file (the reader, src/import/safetensors.c)
 *   1  the same without its 8-byte length: the header length is put in
 *      front (2 bytes from the input, little-endian), so that the fuzzer
 *      works on the JSON and the data
 *   2  a config.json (ngpt_import_hf_config_mem)
 *   3  a tokenizer.json (src/import/hf_tokenizer.c)
 * Properties: every failure leaves a message (the public function's with
 * its prefix); a safetensors file that opens has unique names, and its
 * tensors tile the data exactly inside the buffer and convert to float32
 * (ASan sees any read past them: the buffer is an exact-size copy); a
 * config that maps validates and can be sized; a tokenizer that loads has
 * at least the 256 bytes and round-trips a text. Seeds: fuzz/corpus/import
 * (made like tests/test_import.c's files). This target reaches two
 * internal headers, as tests do: the reader and the tokenizer mapping have
 * no public function of their own. */
#include "import/hf_tokenizer.h"
#include "import/safetensors.h"
#include "fuzz.h"

static void safetensors(const uint8_t *data, size_t size)
{
    unsigned char *b = fuzz_copy(data, size);
    ngpt_st_file f = {0};
    ngpt_status st = ngpt_st_parse(&f, b, size, "fuzz.safetensors");
    if (st && !ngpt_last_error()[0]) fuzz_fail("a refused file left no message");
    if (!st) {
        uint64_t hn;
        memcpy(&hn, b, 8);
        size_t total = 0;
        for (size_t i = 0; i < f.n; i++) {
            const ngpt_st_tensor *t = &f.t[i];
            if (i && strcmp(f.t[i - 1].name, t->name) >= 0) fuzz_fail("names not sorted and unique");
            if (t->data < b + 8 + hn || t->data + t->bytes > b + size)
                fuzz_fail("tensor %s lies outside the data", t->name);
            total += t->bytes;
            if (ngpt_st_find(&f, t->name) != t) fuzz_fail("find(%s) misses it", t->name);
            if (t->dtype != NGPT_ST_OTHER && t->count <= 4096) {
                float v[4096];
                ngpt_st_to_f32(t, 0, t->count, v);
            }
        }
        if (total != size - 8 - hn) fuzz_fail("tensors hold %zu of %zu data bytes", total,
                                              (size_t)(size - 8 - hn));
    }
    ngpt_st_close(&f);
    free(b);
}

static void tokenizer_json(const uint8_t *data, size_t size)
{
    ngpt_tokenizer *tok = NULL;
    ngpt_status st = ngpt_hf_tokenizer_json(&tok, data, size, "fuzz tokenizer.json");
    if (st && !ngpt_last_error()[0]) fuzz_fail("a refused tokenizer.json left no message");
    if (st) return;
    ngpt_tokenizer_info info;
    int32_t ids[32];
    size_t n = 0, back = 0;
    char text[32];
    if (ngpt_tokenizer_describe(tok, &info) || info.n_tokens < 256)
        fuzz_fail("a loaded tokenizer has %d tokens", (int)info.n_tokens);
    if (ngpt_tokenizer_encode(tok, "hello, world", 12, ids, 32, &n) ||
        ngpt_tokenizer_decode(tok, ids, n, text, sizeof text, &back) || back != 12 ||
        memcmp(text, "hello, world", 12))
        fuzz_fail("a loaded tokenizer does not round-trip: %s", ngpt_last_error());
    ngpt_tokenizer_free(tok);
}

NGPT_FUZZ_ENTRY(import)
{
    if (size < 1) return 0;
    const uint8_t mode = data[0] % 4;
    data++, size--;
    if (mode == 0) {
        safetensors(data, size);
    } else if (mode == 1) {
        if (size < 2) return 0;
        const uint64_t hn = (uint64_t)data[0] | (uint64_t)data[1] << 8;
        unsigned char *b = malloc(size + 6);
        if (!b) abort();
        memcpy(b, &hn, 8);
        memcpy(b + 8, data + 2, size - 2);
        safetensors(b, size + 6);
        free(b);
    } else if (mode == 2) {
        ngpt_config cfg;
        size_t params;
        ngpt_status st = ngpt_import_hf_config_mem(data, size, &cfg);
        fuzz_expect_message(st, "ngpt_import_hf_config_mem");
        if (!st && (ngpt_config_validate(&cfg) || ngpt_config_param_count(&cfg, &params)))
            fuzz_fail("a mapped config does not validate: %s", ngpt_last_error());
    } else {
        tokenizer_json(data, size);
    }
    return 0;
}
