/* fuzz_import.c — what ngpt_import_hf reads. The first byte picks what the
 * rest is:
 *   0  a safetensors file (the reader, src/import/safetensors.c)
 *   1  the same without its 8-byte length: the header length is put in
 *      front (2 bytes from the input, little-endian), so that the fuzzer
 *      works on the JSON and the data
 *   2  a config.json (ngpt_import_hf_config_mem)
 *   3  a tokenizer.json (src/import/hf_tokenizer.c: GPT-2's, SmolLM2's,
 *      Llama 3's, Qwen's and Gemma's pipelines; seeds tokenizer_*)
 *   4  the model.safetensors of a directory whose config.json (V=257 T=4
 *      C=8 L=1 H=2) and tokenizer.json (GPT-2's 256 byte characters and
 *      <|endoftext|>) are fixed: the whole ngpt_import_hf, tensor mapping
 *      and writing included
 *   5  the same with a fixed Llama config.json (V=257 T=4 C=8 L=1 H=2,
 *      one KV head, head_dim 6, intermediate 12, tied): q|k|v and gate|up
 *      stacked from Llama's tensor names
 *   6  a llama2.c tokenizer.bin of 259 + (the first byte % 32) tokens
 *      (src/tokenizer/scored.c)
 *   7  a llama2.c model.bin (versions 0-2; seeds llama2c_model and _v2)
 *      imported with a fixed tokenizer.bin (260
 *      tokens: tests/llama2c_files.h's): the whole ngpt_import_llama2c
 *   8  a tokenizer_config.json, then (after a NUL byte, if any) a
 *      generation_config.json, applied to mode 4's tokenizer.json
 *      (src/import/hf_tokenizer_config.c)
 * Properties: every failure leaves a message (the public function's with
 * its prefix); a safetensors file that opens has unique names, and its
 * tensors tile the data exactly inside the buffer and convert to float32
 * (ASan sees any read past them: the buffer is an exact-size copy); a
 * config that maps validates and can be sized; an end token set by a
 * tokenizer_config.json is a special token (or none); a tokenizer that loads
 * round-trips a text (with every byte in its vocabulary and no special
 * token taking white space; else it may only drop bytes); an import that fails
 * writes nothing, one that succeeds writes a checkpoint of the config. Seeds: fuzz/corpus/import
 * (made like tests/test_import.c's files). This target reaches two
 * internal headers, as tests do: the reader and the tokenizer mapping have
 * no public function of their own. */
#include "import/hf_tokenizer.h"
#include "import/hf_tokenizer_config.h"
#include "import/safetensors.h"
#include "tokenizer/scored.h"
#include "fuzz.h"
#include "../tests/llama2c_files.h"

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
    if (ngpt_tokenizer_describe(tok, &info) || info.n_tokens < 1)
        fuzz_fail("a loaded tokenizer has %d tokens", (int)info.n_tokens);
    /* a vocabulary that lacks some bytes drops them (SmolLM2's kind), and a
     * special token matched in text may take the white space beside it */
    bool every_byte = info.n_tokens == 256 + info.n_merges + info.n_special ||
                      info.normalizer == NGPT_NORMALIZER_SPACE_MARK;     /* byte fallback */
    for (int32_t i = 0; tok->added_flags && i < tok->n_special; i++)
        every_byte &= !(tok->added_flags[i] & (NGPT_ADDED_LSTRIP | NGPT_ADDED_RSTRIP));
    if (ngpt_tokenizer_encode(tok, "hello, world", 12, ids, 32, &n) ||
        ngpt_tokenizer_decode(tok, ids, n, text, sizeof text, &back) ||
        (every_byte && (back != 12 || memcmp(text, "hello, world", 12))) || back > 12)
        fuzz_fail("a loaded tokenizer does not round-trip: %s", ngpt_last_error());
    ngpt_tokenizer_free(tok);
}

/* The fixed files of mode 4, written once into a temporary folder. */
static char dir[256];

static bool write_text(const char *name, const char *text)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static void remove_dir(void)
{
    static const char *const files[] = {"config.json", "llama.json", "tokenizer.json",
                                        "model.safetensors", "model.bin", "tokenizer.bin"};
    char path[300];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

static bool setup(void)
{
    if (dir[0]) return true;
    snprintf(dir, sizeof dir, "%s/ngpt-fuzz-import-XXXXXX", fuzz_tmpdir());
    if (!mkdtemp(dir)) return false;
    atexit(remove_dir);
    /* tokenizer.json: byte b's character is b for the printable ones and
     * U+0100 + n for the n-th other byte; ids in GPT-2's order */
    static char tok[8192];
    size_t n = (size_t)snprintf(tok, sizeof tok, "{\"model\": {\"type\": \"BPE\", \"merges\": [], "
                                "\"vocab\": {");
    int id = 0, others = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < 256; b++) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
            if (printable != (pass == 0)) continue;
            const unsigned cp = printable ? (unsigned)b : 256u + (unsigned)others++;
            char c[8];
            if (cp == '"' || cp == '\\') snprintf(c, sizeof c, "\\%c", (char)cp);
            else if (cp < 0x80) snprintf(c, sizeof c, "%c", (char)cp);
            else snprintf(c, sizeof c, "%c%c", (char)(0xC0 | cp >> 6), (char)(0x80 | (cp & 63)));
            n += (size_t)snprintf(tok + n, sizeof tok - n, "%s\"%s\": %d", id ? ", " : "", c, id);
            id++;
        }
    snprintf(tok + n, sizeof tok - n, "}}, \"added_tokens\": [{\"id\": 256, \"content\": "
             "\"<|endoftext|>\", \"special\": true}], \"normalizer\": null, \"pre_tokenizer\": "
             "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}}");
    char model_bin[300], tokenizer_bin[300];
    snprintf(model_bin, sizeof model_bin, "%s/model.bin", dir);
    snprintf(tokenizer_bin, sizeof tokenizer_bin, "%s/tokenizer.bin", dir);
    return llama2c_write_files(model_bin, tokenizer_bin) && write_text("tokenizer.json", tok) &&
           write_text("config.json", "{\"model_type\": \"gpt2\", \"vocab_size\": 257, "
                      "\"n_positions\": 4, \"n_embd\": 8, \"n_layer\": 1, \"n_head\": 2}") &&
           write_text("llama.json", "{\"model_type\": \"llama\", \"vocab_size\": 257, "
                      "\"max_position_embeddings\": 4, \"hidden_size\": 8, "
                      "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
                      "\"num_key_value_heads\": 1, \"head_dim\": 6, \"intermediate_size\": 12, "
                      "\"tie_word_embeddings\": true}");
}

/* The config of the model file at path, through the model reader. */
static ngpt_status model_config(const char *path, ngpt_config *cfg)
{
    ngpt_model *m = NULL;
    ngpt_status st = ngpt_model_open(&m, path);
    if (!st) st = ngpt_model_config(m, cfg);
    ngpt_model_close(m);
    return st;
}

static void import_dir(const uint8_t *data, size_t size, bool llama)
{
    char weights[300], out[300], config[300];
    if (!setup()) fuzz_fail("cannot write the fixed files");
    snprintf(weights, sizeof weights, "%s/model.safetensors", dir);
    snprintf(out, sizeof out, "%s/out.ngpt", dir);
    FILE *f = fopen(weights, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fuzz_fail("cannot write %s", weights);
    ngpt_import_options opt = ngpt_import_options_default();
    snprintf(config, sizeof config, "%s/llama.json", dir);
    if (llama) opt.config = config;
    ngpt_status st = ngpt_import_hf(dir, &opt, out);
    fuzz_expect_message(st, "ngpt_import_hf");
    ngpt_config cfg;
    if (st && access(out, F_OK) == 0) fuzz_fail("a refused import wrote %s", out);
    if (!st && (model_config(out, &cfg) || cfg.vocab_size != 257 || cfg.d_model != 8))
        fuzz_fail("an import wrote a checkpoint that does not open as its config: %s",
                  ngpt_last_error());
    unlink(out);
}

static void llama2c_tokenizer(const uint8_t *data, size_t size)
{
    if (size < 1) return;
    const int32_t n = 259 + data[0] % 32;
    unsigned char *b = fuzz_copy(data + 1, size - 1);
    ngpt_tokenizer *tok = NULL;
    ngpt_status st = ngpt_tok_scored_read_llama2c(&tok, b, size - 1, n, "fuzz tokenizer.bin");
    if (st && !ngpt_last_error()[0]) fuzz_fail("a refused tokenizer.bin left no message");
    if (!st) {
        ngpt_tokenizer_info info;
        int32_t ids[32];
        size_t k = 0, back = 0;
        if (ngpt_tokenizer_describe(tok, &info) || info.n_tokens != n || info.bos_id != 1)
            fuzz_fail("a loaded tokenizer.bin has %d tokens, not %d", (int)info.n_tokens, (int)n);
        if (ngpt_tokenizer_encode(tok, "hello, world", 12, ids, 32, &k) ||
            ngpt_tokenizer_decode(tok, ids, k, NULL, 0, &back))
            fuzz_fail("a loaded tokenizer.bin does not encode: %s", ngpt_last_error());
    }
    ngpt_tokenizer_free(tok);
    free(b);
}

static void llama2c_model(const uint8_t *data, size_t size)
{
    char model[300], tokenizer[300], out[300];
    if (!setup()) fuzz_fail("cannot write the fixed files");
    snprintf(model, sizeof model, "%s/model.bin", dir);
    snprintf(tokenizer, sizeof tokenizer, "%s/tokenizer.bin", dir);
    snprintf(out, sizeof out, "%s/out.ngpt", dir);
    FILE *f = fopen(model, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fuzz_fail("cannot write %s", model);
    ngpt_status st = ngpt_import_llama2c(model, tokenizer, NULL, out);
    fuzz_expect_message(st, "ngpt_import_llama2c");
    ngpt_config cfg;
    if (st && access(out, F_OK) == 0) fuzz_fail("a refused import wrote %s", out);
    if (!st && (model_config(out, &cfg) || cfg.vocab_size != 260))
        fuzz_fail("an import wrote a checkpoint that does not open as its config: %s",
                  ngpt_last_error());
    unlink(out);
}

/* A fresh copy of mode 4's tokenizer.json (mode 8 changes it): read once,
 * then loaded from its image, which costs a tenth of reading the JSON. */
static ngpt_tokenizer *fixed_tokenizer(void)
{
    static uint8_t *image;
    static size_t image_size;
    ngpt_tokenizer *tok = NULL;
    if (!image) {
        char path[300];
        if (!setup()) fuzz_fail("cannot write the fixed files");
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        if (ngpt_tokenizer_load_hf(&tok, path) || ngpt_tokenizer_save_mem(tok, NULL, 0, &image_size) ||
            !(image = malloc(image_size)) || ngpt_tokenizer_save_mem(tok, image, image_size, &image_size))
            fuzz_fail("the fixed tokenizer.json: %s", ngpt_last_error());
        ngpt_tokenizer_free(tok);
    }
    if (ngpt_tokenizer_load_mem(&tok, image, image_size))
        fuzz_fail("the fixed tokenizer.json's image: %s", ngpt_last_error());
    return tok;
}

static void tokenizer_config(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    const size_t cfg_size = nul ? (size_t)(nul - data) : size;
    ngpt_tokenizer *tok = fixed_tokenizer();
    ngpt_hf_tokenizer_config cfg;
    ngpt_status st = ngpt_hf_tok_config_parse(data, cfg_size, "fuzz tokenizer_config.json", &cfg);
    if (!st)
        st = ngpt_hf_tok_config_apply(&tok, &cfg, "fuzz tokenizer_config.json", nul ? nul + 1 : NULL,
                                      nul ? size - cfg_size - 1 : 0, "fuzz generation_config.json");
    if (st && !ngpt_last_error()[0]) fuzz_fail("a refused tokenizer_config.json left no message");
    ngpt_tokenizer_info info;
    int32_t end = -1;
    if (ngpt_tokenizer_describe(tok, &info)) fuzz_fail("describe: %s", ngpt_last_error());
    if (!st && info.end_id != -1 && (ngpt_tokenizer_special(tok, 0, &end) || end != info.end_id))
        fuzz_fail("the end token %d is not the special token", (int)info.end_id);
    if (st && info.end_id != 256) fuzz_fail("a refused config changed the end token");
    ngpt_tokenizer_free(tok);
}

NGPT_FUZZ_ENTRY(import)
{
    if (size < 1) return 0;
    const uint8_t mode = data[0] % 9;
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
    } else if (mode == 3) {
        tokenizer_json(data, size);
    } else if (mode == 4 || mode == 5) {
        import_dir(data, size, mode == 5);
    } else if (mode == 6) {
        llama2c_tokenizer(data, size);
    } else if (mode == 7) {
        llama2c_model(data, size);
    } else {
        tokenizer_config(data, size);
    }
    return 0;
}
