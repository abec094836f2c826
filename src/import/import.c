/* import.c — the public importer (ngpt.h, "importing a Hugging Face
 * model"): which files to read, read them, check them against each other
 * and stream the model into its checkpoint (hf_config.c, shards.c,
 * hf_tokenizer.c, hf_write.c with hf_gpt2.c or hf_llama.c); llama2.c's
 * model.bin and tokenizer.bin (llama2c.c, tokenizer/scored.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cpu.h"
#include "base/fpmode.h"
#include "import/hf_config.h"
#include "import/hf_tokenizer.h"
#include "import/hf_tokenizer_config.h"
#include "import/llama2c.h"
#include "tokenizer/scored.h"
#include "tokenizer/tokenizer.h"

ngpt_import_options ngpt_import_options_default(void)
{
    NGPT_FPMODE_SCOPE;
    return (ngpt_import_options){.store = NGPT_WEIGHTS_F32};
}

/* A file of the directory, into buf; NULL without a directory. */
static const char *in_dir(const char *dir, const char *file, char *buf, size_t size)
{
    if (!dir) return NULL;
    const size_t n = strlen(dir);
    snprintf(buf, size, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", file);
    return buf;
}

static bool exists(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0;
}

static bool ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

static ngpt_status read_config(const char *path, ngpt_config *cfg, const ngpt_hf_family **fam,
                               int32_t *positions)
{
    uint8_t *text = NULL;
    size_t size = 0;
    ngpt_status st = ngpt_tok_read_file(path, &text, &size);
    if (!st) st = ngpt_hf_config_parse(text, size, path, cfg, fam, positions);
    free(text);
    return st;
}

static ngpt_status open_weights(const char *dir, const ngpt_import_options *o, ngpt_shards *w)
{
    char one[4096], index[4096];
    if (o->weights) {
        if (o->n_weights < 1)
            return ngpt_fail(NGPT_ERR_BAD_ARG, "n_weights is %d with a list of weight files",
                             (int)o->n_weights);
        for (int32_t i = 0; i < o->n_weights; i++)
            if (!o->weights[i])
                return ngpt_fail(NGPT_ERR_NULL_ARG, "weight file %d is NULL", (int)i);
        if (o->n_weights == 1 && ends_with(o->weights[0], ".json"))
            return ngpt_shards_open_index(w, o->weights[0]);
        return ngpt_shards_open(w, o->weights, (size_t)o->n_weights);
    }
    const char *single = in_dir(dir, "model.safetensors", one, sizeof one);
    const char *idx = in_dir(dir, "model.safetensors.index.json", index, sizeof index);
    if (!dir) return ngpt_fail(NGPT_ERR_NULL_ARG, "no directory and no weight files named");
    if (exists(single)) return ngpt_shards_open(w, &single, 1);
    if (exists(idx)) return ngpt_shards_open_index(w, idx);
    return ngpt_fail(NGPT_ERR_IO, "%s holds neither model.safetensors nor "
                     "model.safetensors.index.json (ngpt reads safetensors; a model saved as "
                     "pytorch_model.bin must be converted first)", dir);
}

static ngpt_status open_tokenizer(const char *dir, const ngpt_import_options *o,
                                  ngpt_tokenizer **tok)
{
    char vb[4096], mb[4096], jb[4096];
    if (o->tokenizer_json && (o->vocab || o->merges))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "name either tokenizer.json or vocab.json + "
                         "merges.txt, not both");
    if (!o->tokenizer_json) {
        const char *vocab = o->vocab ? o->vocab : in_dir(dir, "vocab.json", vb, sizeof vb);
        const char *merges = o->merges ? o->merges : in_dir(dir, "merges.txt", mb, sizeof mb);
        if (o->vocab || o->merges || (exists(vocab) && exists(merges))) {
            if (!vocab || !merges)
                return ngpt_fail(NGPT_ERR_NULL_ARG, "vocab.json and merges.txt go together; "
                                 "name both");
            return ngpt_hf_tokenizer_files(tok, vocab, merges);
        }
    }
    const char *json = o->tokenizer_json ? o->tokenizer_json
                                         : in_dir(dir, "tokenizer.json", jb, sizeof jb);
    if (!o->tokenizer_json && !exists(json))
        return ngpt_fail(NGPT_ERR_IO, "%s holds no tokenizer: neither vocab.json + merges.txt "
                         "nor tokenizer.json", dir ? dir : "(no directory)");
    uint8_t *text = NULL;
    size_t size = 0;
    ngpt_status st = ngpt_tok_read_file(json, &text, &size);
    if (!st) st = ngpt_hf_tokenizer_json(tok, text, size, json);
    free(text);
    return st;
}

/* tokenizer_config.json (named, or the directory's) and the directory's
 * generation_config.json decide the end token (neither: tok as it is);
 * tokenizer_config.json's chat template, or the directory's
 * chat_template.jinja, is the model's (*blob: its tensor's bytes, or NULL). */
static ngpt_status tokenizer_config(const char *dir, const ngpt_import_options *o,
                                    ngpt_tokenizer **tok, char **blob, size_t *blob_size)
{
    char cb[4096], gb[4096], jb[4096];
    const char *cfg_path = o->tokenizer_config ? o->tokenizer_config
                                               : in_dir(dir, "tokenizer_config.json", cb, sizeof cb);
    const char *gen_path = in_dir(dir, "generation_config.json", gb, sizeof gb);
    const char *jinja_path = in_dir(dir, "chat_template.jinja", jb, sizeof jb);
    const bool have_cfg = o->tokenizer_config || exists(cfg_path), have_gen = exists(gen_path);
    const bool have_jinja = exists(jinja_path);
    ngpt_hf_tokenizer_config cfg;
    uint8_t *text = NULL, *gen = NULL, *jinja = NULL;
    size_t size = 0, gen_size = 0, jinja_size = 0;
    ngpt_status st = NGPT_OK;
    if (have_cfg && !(st = ngpt_tok_read_file(cfg_path, &text, &size)))
        st = ngpt_hf_tok_config_parse(text, size, cfg_path, &cfg);
    if (!st && have_gen) st = ngpt_tok_read_file(gen_path, &gen, &gen_size);
    if (!st && have_jinja) st = ngpt_tok_read_file(jinja_path, &jinja, &jinja_size);
    if (!st && (have_cfg || have_gen))
        st = ngpt_hf_tok_config_apply(tok, have_cfg ? &cfg : NULL, have_cfg ? cfg_path : NULL,
                                      have_gen ? gen : NULL, gen_size, gen_path);
    if (!st)
        st = ngpt_hf_chat_template(text, size, cfg_path, jinja, jinja_size, blob, blob_size);
    free(text);
    free(gen);
    free(jinja);
    return st;
}

/* The output's storage: store, and lm_head_q4 with 4-bit weights only. */
static ngpt_status storage_check(const ngpt_import_options *o)
{
    if (o->store != NGPT_WEIGHTS_F32 && o->store != NGPT_WEIGHTS_Q8 &&
        o->store != NGPT_WEIGHTS_Q4)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "store is %d; use NGPT_WEIGHTS_F32, "
                         "NGPT_WEIGHTS_Q8 or NGPT_WEIGHTS_Q4", (int)o->store);
    if (o->lm_head_q4 && o->store != NGPT_WEIGHTS_Q4)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "lm_head_q4 needs store NGPT_WEIGHTS_Q4 (a 4-bit "
                         "lm_head goes with 4-bit weights)");
    return NGPT_OK;
}

static ngpt_status import(const char *dir, const ngpt_import_options *o, const char *out)
{
    char cb[4096];
    ngpt_status sst = storage_check(o);
    if (sst) return sst;
    if (o->context_len < 0)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "context_len is %d; use 0 (config.json's) or a "
                         "positive length", (int)o->context_len);
    const char *config = o->config ? o->config : in_dir(dir, "config.json", cb, sizeof cb);
    if (!config) return ngpt_fail(NGPT_ERR_NULL_ARG, "no directory and no config.json named");
    ngpt_status st = ngpt_cpu_check();     /* a q8/q4 import runs the quantizing kernels */
    ngpt_config cfg;
    const ngpt_hf_family *fam = NULL;
    int32_t positions = 0;
    if (st || (st = read_config(config, &cfg, &fam, &positions))) return st;
    ngpt_tokenizer *tok = NULL;
    ngpt_shards w = {0};
    char *blob = NULL;
    size_t blob_size = 0;
    if (!(st = open_tokenizer(dir, o, &tok)) &&
        !(st = tokenizer_config(dir, o, &tok, &blob, &blob_size)) &&
        !(st = ngpt_tok_within(&tok, cfg.vocab_size, "the tokenizer")) && !(st = open_weights(dir, o, &w))) {
        const ngpt_stream_extras x = {tok, blob, blob_size};
        st = ngpt_hf_write(fam, &cfg, &w, &x, o->store, o->lm_head_q4, o->context_len, positions,
                           out);
    }
    ngpt_shards_close(&w);
    ngpt_tokenizer_free(tok);
    free(blob);
    return st;
}

ngpt_status ngpt_import_hf(const char *dir, const ngpt_import_options *opt, const char *out_path)
{
    NGPT_FPMODE_SCOPE;
    if (!out_path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_hf: NULL out_path");
    const ngpt_import_options o = opt ? *opt : ngpt_import_options_default();
    ngpt_status st = NGPT_RESERVED_CHECK("import_options", &o);
    return ngpt_prefixed("ngpt_import_hf", st ? st : import(dir, &o, out_path));
}

ngpt_status ngpt_import_hf_config_mem(const void *data, size_t size, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!data || !cfg)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_hf_config_mem: NULL argument");
    return ngpt_prefixed("ngpt_import_hf_config_mem",
                         ngpt_hf_config_parse(data, size, "the config.json buffer", cfg, NULL,
                                              NULL));
}

ngpt_status ngpt_import_hf_config(const char *config_json, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!config_json || !cfg)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_hf_config: NULL argument");
    return ngpt_prefixed("ngpt_import_hf_config", read_config(config_json, cfg, NULL, NULL));
}

/* ------------------------------------------------------------- llama2.c */

static ngpt_status llama2c_header(const char *path, ngpt_llama2c_header *h)
{
    unsigned char hdr[NGPT_LLAMA2C_HEADER_MAX];
    FILE *f = fopen(path, "rb");
    if (!f) return ngpt_fail(NGPT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    const size_t got = fread(hdr, 1, sizeof hdr, f);
    fclose(f);
    return ngpt_llama2c_parse_header(hdr, got, path, h);
}

static ngpt_status import_llama2c(const char *model, const char *tokenizer,
                                  const ngpt_import_options *o, const char *out)
{
    ngpt_status sst = storage_check(o);
    if (sst) return sst;
    ngpt_llama2c_header h;
    ngpt_status st = ngpt_cpu_check();
    if (st || (st = llama2c_header(model, &h))) return st;
    uint8_t *text = NULL;
    size_t size = 0;
    ngpt_tokenizer *tok = NULL;
    if (!(st = ngpt_tok_read_file(tokenizer, &text, &size)))
        st = ngpt_tok_scored_read_llama2c(&tok, text, size, h.cfg.vocab_size, tokenizer);
    free(text);
    if (!st) st = ngpt_llama2c_write(model, tok, o->store, o->lm_head_q4, out);
    ngpt_tokenizer_free(tok);
    return st;
}

ngpt_status ngpt_import_llama2c(const char *model_bin, const char *tokenizer_bin,
                                const ngpt_import_options *opt, const char *out_path)
{
    NGPT_FPMODE_SCOPE;
    if (!model_bin || !tokenizer_bin || !out_path)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_llama2c: NULL %s", !model_bin
                         ? "model_bin" : !tokenizer_bin ? "tokenizer_bin" : "out_path");
    const ngpt_import_options o = opt ? *opt : ngpt_import_options_default();
    ngpt_status st = NGPT_RESERVED_CHECK("import_options", &o);
    return ngpt_prefixed("ngpt_import_llama2c",
                         st ? st : import_llama2c(model_bin, tokenizer_bin, &o, out_path));
}

ngpt_status ngpt_import_llama2c_config(const char *model_bin, ngpt_config *cfg)
{
    NGPT_FPMODE_SCOPE;
    if (!model_bin || !cfg)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_import_llama2c_config: NULL argument");
    ngpt_llama2c_header h;
    ngpt_status st = llama2c_header(model_bin, &h);
    if (!st) *cfg = h.cfg;
    return ngpt_prefixed("ngpt_import_llama2c_config", st);
}
