/* data.c — the data loader: files concatenated, a held-out tail of the
 * bytes, random windows of seq+1 bytes from Philox; or, once a tokenizer
 * has encoded each split (ngpt_data_tokenize), windows of seq+1 tokens.
 * Reading files allocates one buffer and tokenizing one more (documented in
 * ngpt.h); drawing batches allocates nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fpmode.h"
#include "base/rng.h"
#include "base/checked.h"
#include "tokenizer/tokenizer.h"
#include "train/train.h"

struct ngpt_data {
    const uint8_t *bytes;
    size_t size, train_size;    /* train = [0, train_size), eval = [train_size, size) */
    uint8_t *owned;
    uint64_t hash;              /* XXH3-64 of all the bytes */
    uint8_t max_byte[2];        /* the largest byte of each split (ngpt_split order) */
    /* Tokenized (ngpt_data_tokenize): the tokens of the train split, then
     * those of the eval split, and the byte length of every id. */
    int32_t *tokens;            /* NULL: the bytes are the tokens */
    size_t n_tokens[2];
    int32_t max_token[2];
    uint16_t *token_bytes;      /* (n_ids) */
    /* Conversations (ngpt_data_tokenize_chat): whether each token is a
     * target (an assistant's), parallel to tokens; NULL: every one is */
    uint8_t *trained;
};

static uint8_t max_of(const uint8_t *p, size_t n)
{
    uint8_t m = 0;
    for (size_t i = 0; i < n; i++) m = p[i] > m ? p[i] : m;
    return m;
}

static ngpt_status check_common(ngpt_data **data, float holdout, int32_t seq)
{
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "NULL data pointer");
    *data = NULL;
    if (!(holdout >= 0.0f && holdout < 1.0f))
        return ngpt_fail(NGPT_ERR_BAD_ARG, "holdout must be in [0, 1), got %g", (double)holdout);
    if (seq < 1) return ngpt_fail(NGPT_ERR_BAD_ARG, "seq must be >= 1, got %d", (int)seq);
    return NGPT_OK;
}

/* Splits and checks that both splits hold a window of seq+1 bytes. */
static ngpt_status finish(ngpt_data **out, const uint8_t *bytes, size_t size, uint8_t *owned,
                          float holdout, int32_t seq)
{
    size_t eval = (size_t)((double)size * (double)holdout);
    size_t need = (size_t)seq + 1;
    if (size - eval < need || (holdout > 0.0f && eval < need)) {
        free(owned);
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%zu bytes split into %zu for training and %zu "
                         "held out (holdout %g), but each part needs at least seq+1 = %zu "
                         "bytes; use more data or another holdout",
                         size, size - eval, eval, (double)holdout, need);
    }
    ngpt_data *d = malloc(sizeof *d);
    if (!d) {
        free(owned);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the data");
    }
    memset(d, 0, sizeof *d);
    d->bytes = bytes;
    d->size = size;
    d->train_size = size - eval;
    d->owned = owned;
    d->hash = ngpt_checksum_bytes(bytes, size);
    d->max_byte[NGPT_SPLIT_TRAIN] = max_of(bytes, d->train_size);
    d->max_byte[NGPT_SPLIT_EVAL] = max_of(bytes + d->train_size, eval);
    *out = d;
    return NGPT_OK;
}

/* The two constructors: messages without a prefix, added by their public
 * wrappers below. */
static ngpt_status open_mem(ngpt_data **data, const void *bytes, size_t size, float holdout,
                            int32_t seq)
{
    ngpt_status st = check_common(data, holdout, seq);
    if (st) return st;
    if (!bytes) return ngpt_fail(NGPT_ERR_NULL_ARG, "NULL bytes");
    if (size == 0) return ngpt_fail(NGPT_ERR_BAD_ARG, "the buffer is empty");
    return finish(data, bytes, size, NULL, holdout, seq);
}

/* Size of an open file, or -1. */
static long file_size(FILE *f)
{
    if (fseek(f, 0, SEEK_END) != 0) return -1;
    long n = ftell(f);
    if (fseek(f, 0, SEEK_SET) != 0) return -1;
    return n;
}

static ngpt_status open_files(ngpt_data **data, const char *const *paths, int32_t n_paths,
                              float holdout, int32_t seq)
{
    ngpt_status st = check_common(data, holdout, seq);
    if (st) return st;
    if (!paths) return ngpt_fail(NGPT_ERR_NULL_ARG, "NULL path list");
    if (n_paths < 1) return ngpt_fail(NGPT_ERR_BAD_ARG, "no data files given");
    size_t total = 0;
    for (int32_t i = 0; i < n_paths; i++) {     /* sizes first: one allocation */
        if (!paths[i]) return ngpt_fail(NGPT_ERR_NULL_ARG, "path %d is NULL", (int)i);
        FILE *f = fopen(paths[i], "rb");
        if (!f) return ngpt_fail(NGPT_ERR_IO, "cannot open %s: %s", paths[i], strerror(errno));
        long n = file_size(f);
        fclose(f);
        if (n < 0) return ngpt_fail(NGPT_ERR_IO, "cannot read the size of %s", paths[i]);
        if (n == 0) return ngpt_fail(NGPT_ERR_BAD_ARG, "%s is empty", paths[i]);
        if ((size_t)n < (size_t)seq + 1)
            return ngpt_fail(NGPT_ERR_BAD_ARG, "%s has %ld bytes, shorter than one window "
                             "of seq+1 = %zu bytes; use a longer file or a smaller seq",
                             paths[i], n, (size_t)seq + 1);
        if (!ngpt_add_ok(total, (size_t)n, &total))
            return ngpt_fail(NGPT_ERR_OVERFLOW, "the files' total size overflows size_t");
    }
    uint8_t *buf = malloc(total);
    if (!buf) return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot allocate %zu bytes", total);
    size_t off = 0;
    for (int32_t i = 0; i < n_paths; i++) {
        FILE *f = fopen(paths[i], "rb");
        long n = f ? file_size(f) : -1;
        if (!f || n < 0 || (size_t)n > total - off || fread(buf + off, 1, (size_t)n, f) != (size_t)n) {
            if (f) fclose(f);
            free(buf);
            return ngpt_fail(NGPT_ERR_IO, "reading %s failed (did it change while it was read?)",
                             paths[i]);
        }
        fclose(f);
        off += (size_t)n;
    }
    return finish(data, buf, off, buf, holdout, seq);
}

ngpt_status ngpt_data_open_mem(ngpt_data **data, const void *bytes, size_t size, float holdout,
                               int32_t seq)
{
    NGPT_FPMODE_SCOPE;
    return ngpt_prefixed("ngpt_data_open_mem", open_mem(data, bytes, size, holdout, seq));
}

ngpt_status ngpt_data_open(ngpt_data **data, const char *const *paths, int32_t n_paths,
                           float holdout, int32_t seq)
{
    NGPT_FPMODE_SCOPE;
    return ngpt_prefixed("ngpt_data_open", open_files(data, paths, n_paths, holdout, seq));
}

void ngpt_data_free(ngpt_data *data)
{
    NGPT_FPMODE_SCOPE;
    if (!data) return;
    free(data->owned);
    free(data->tokens);
    free(data->token_bytes);
    free(data->trained);
    free(data);
}

ngpt_status ngpt_data_sizes(const ngpt_data *d, size_t *train_bytes, size_t *eval_bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !train_bytes || !eval_bytes)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_sizes: NULL argument");
    *train_bytes = d->train_size;
    *eval_bytes = d->size - d->train_size;
    return NGPT_OK;
}

ngpt_status ngpt_data_checksum(const ngpt_data *d, uint64_t *hash)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !hash) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_checksum: NULL argument");
    *hash = d->hash;
    return NGPT_OK;
}

/* The split's bytes: base and length. */
static const uint8_t *split_bytes(const ngpt_data *d, ngpt_split split, size_t *n)
{
    *n = split == NGPT_SPLIT_EVAL ? d->size - d->train_size : d->train_size;
    return d->bytes + (split == NGPT_SPLIT_EVAL ? d->train_size : 0);
}

/* A tokenized split's tokens: base and count. */
static const int32_t *split_tokens(const ngpt_data *d, ngpt_split split, size_t *n)
{
    *n = d->n_tokens[split];
    return d->tokens + (split == NGPT_SPLIT_EVAL ? d->n_tokens[NGPT_SPLIT_TRAIN] : 0);
}

ngpt_status ngpt_data_check(const ngpt_data *d, ngpt_split split, int32_t seq, int32_t vocab_size)
{
    size_t n;
    const char *name = split == NGPT_SPLIT_EVAL ? "eval" : "train";
    const char *unit = d->tokens ? "tokens" : "bytes";
    if (d->tokens) split_tokens(d, split, &n);
    else split_bytes(d, split, &n);
    if (n < (size_t)seq + 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "the %s split of the data has %zu %s, fewer than "
                         "one window of seq+1 = %zu", name, n, unit, (size_t)seq + 1);
    const int32_t largest = d->tokens ? d->max_token[split] : d->max_byte[split];
    if (vocab_size > 0 && largest >= vocab_size)
        return ngpt_fail(NGPT_ERR_BAD_TOKEN, "the %s split of the data holds %s %d, which is "
                         "not a token id of this model (V=%d)", name, d->tokens ? "token" : "byte",
                         (int)largest, (int)vocab_size);
    return NGPT_OK;
}

/* Whether the tokens of a split from position `at` are targets (a
 * conversation's marks), or NULL: all are. */
static const uint8_t *trained_of(const ngpt_data *d, ngpt_split split, size_t at)
{
    if (!d->trained) return NULL;
    return d->trained + (split == NGPT_SPLIT_EVAL ? d->n_tokens[NGPT_SPLIT_TRAIN] : 0) + at;
}

/* The start of window b of batch `index` in a split of n tokens: a Philox
 * draw (stream NGPT_STREAM_DATA | split, counter (index, b)), uniform over
 * the n - seq valid starts. */
static uint64_t window_start(ngpt_split split, uint64_t seed, uint64_t index, int32_t b,
                             int32_t seq, size_t n)
{
    uint32_t w[4];
    ngpt_rng_block(seed, NGPT_STREAM_DATA | (uint32_t)split, index, (uint64_t)b, w);
    return (((uint64_t)w[0] << 32) | w[1]) % (uint64_t)(n - (size_t)seq);
}

void ngpt_data_batch_unchecked(const ngpt_data *d, ngpt_split split, uint64_t seed, uint64_t index,
                    int32_t batch, int32_t seq, int32_t *tokens, int32_t *targets)
{
    size_t n;
    if (d->tokens) {
        const int32_t *base = split_tokens(d, split, &n);
        for (int32_t b = 0; b < batch; b++) {
            const size_t at = window_start(split, seed, index, b, seq, n);
            const int32_t *win = base + at;
            int32_t *tgt = targets + (size_t)b * seq;
            memcpy(tokens + (size_t)b * seq, win, (size_t)seq * sizeof *win);
            memcpy(tgt, win + 1, (size_t)seq * sizeof *win);
            const uint8_t *kept = trained_of(d, split, at + 1);
            for (int32_t t = 0; kept && t < seq; t++)
                if (!kept[t]) tgt[t] = NGPT_TARGET_IGNORE;
        }
        return;
    }
    const uint8_t *base = split_bytes(d, split, &n);
    for (int32_t b = 0; b < batch; b++) {
        const uint8_t *win = base + window_start(split, seed, index, b, seq, n);
        for (int32_t t = 0; t < seq; t++) {
            tokens[(size_t)b * seq + t] = win[t];
            targets[(size_t)b * seq + t] = win[t + 1];
        }
    }
}

/* The checks a batch of a split shares (a message prefixed by fn). */
static ngpt_status check_batch_args(const char *fn, const ngpt_data *d, ngpt_split split,
                                    int32_t batch, int32_t seq)
{
    if (split != NGPT_SPLIT_TRAIN && split != NGPT_SPLIT_EVAL)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: split %d is not an ngpt_split value", fn,
                         (int)split);
    if (batch < 1 || seq < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "%s: batch and seq must be >= 1, got %d and %d", fn,
                         (int)batch, (int)seq);
    return ngpt_prefixed(fn, ngpt_data_check(d, split, seq, 0));
}

ngpt_status ngpt_data_batch(const ngpt_data *d, ngpt_split split, uint64_t seed, uint64_t index,
                            int32_t batch, int32_t seq, int32_t *tokens, int32_t *targets)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !tokens || !targets)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_batch: NULL argument");
    ngpt_status st = check_batch_args("ngpt_data_batch", d, split, batch, seq);
    if (st) return st;
    ngpt_data_batch_unchecked(d, split, seed, index, batch, seq, tokens, targets);
    return NGPT_OK;
}

ngpt_status ngpt_data_batch_bytes(const ngpt_data *d, ngpt_split split, uint64_t seed,
                                  uint64_t index, int32_t batch, int32_t seq, uint64_t *bytes)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !bytes) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_batch_bytes: NULL argument");
    ngpt_status st = check_batch_args("ngpt_data_batch_bytes", d, split, batch, seq);
    if (st) return st;
    uint64_t sum = 0;
    if (!d->tokens) {
        sum = (uint64_t)batch * (uint64_t)seq;
    } else {
        size_t n;
        const int32_t *base = split_tokens(d, split, &n);
        for (int32_t b = 0; b < batch; b++) {
            const size_t at = window_start(split, seed, index, b, seq, n);
            const uint8_t *kept = trained_of(d, split, at);
            for (int32_t t = 1; t <= seq; t++)
                if (!kept || kept[t]) sum += d->token_bytes[base[at + t]];
        }
    }
    *bytes = sum;
    return NGPT_OK;
}

ngpt_status ngpt_data_text(const ngpt_data *d, ngpt_split split, const uint8_t **bytes,
                           size_t *size)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !bytes || !size) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_text: NULL argument");
    if (split != NGPT_SPLIT_TRAIN && split != NGPT_SPLIT_EVAL)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_data_text: split %d is not an ngpt_split value",
                         (int)split);
    *bytes = split_bytes(d, split, size);
    return NGPT_OK;
}

ngpt_status ngpt_data_token_counts(const ngpt_data *d, size_t *train_tokens, size_t *eval_tokens)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !train_tokens || !eval_tokens)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_token_counts: NULL argument");
    *train_tokens = d->tokens ? d->n_tokens[NGPT_SPLIT_TRAIN] : d->train_size;
    *eval_tokens = d->tokens ? d->n_tokens[NGPT_SPLIT_EVAL] : d->size - d->train_size;
    return NGPT_OK;
}

/* Encodes the splits into d's token array (a bare message on failure;
 * then d is unchanged). */
static ngpt_status tokenize(ngpt_data *d, const ngpt_tokenizer *tok, int32_t seq)
{
    /* ids <= bytes, + a scored tokenizer's " " per split; a normalizer may
     * lengthen the text: then the splits are counted first */
    size_t cap = d->size + 2;
    ngpt_status st = NGPT_OK;
    for (int s = 0; s < 2 && (tok->flags & NGPT_TOK_NFC) && !st; s++) {
        size_t n, count = 0;
        const uint8_t *text = split_bytes(d, (ngpt_split)s, &n);
        st = ngpt_tokenizer_encode(tok, text, n, NULL, 0, &count);
        cap += count > n ? count - n : 0;
    }
    int32_t *ids = st ? NULL : malloc((cap ? cap : 1) * sizeof *ids);
    uint16_t *lens = st ? NULL : malloc((size_t)tok->n_tokens * sizeof *lens);
    if (!st && (!ids || !lens))
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the tokens of %zu bytes", cap);
    size_t used = 0, count[2] = {0, 0};
    int32_t largest[2] = {0, 0};
    for (int s = 0; s < 2 && !st; s++) {
        size_t n;
        const uint8_t *text = split_bytes(d, (ngpt_split)s, &n);
        if ((st = ngpt_tokenizer_encode(tok, text, n, ids + used, cap - used, &count[s]))) {
            char why[400];
            snprintf(why, sizeof why, "%s", ngpt_last_error());
            st = ngpt_fail(st, "encoding the %s split failed: %s", s ? "held-out" : "training", why);
        }
        for (size_t i = 0; i < count[s]; i++)
            largest[s] = ids[used + i] > largest[s] ? ids[used + i] : largest[s];
        used += count[s];
    }
    const bool held_out = d->size > d->train_size;
    for (int s = 0; s < 1 + held_out && !st; s++)
        if (count[s] < (size_t)seq + 1)
            st = ngpt_fail(NGPT_ERR_BAD_ARG, "the %s split encodes to %zu tokens, fewer than one "
                           "window of seq+1 = %zu; use more data or a shorter seq",
                           s ? "held-out" : "training", count[s], (size_t)seq + 1);
    if (st) {
        free(ids);
        free(lens);
        return st;
    }
    for (int32_t id = 0; id < tok->n_tokens; id++) {
        size_t len;
        ngpt_tok_bytes(tok, id, &len);
        lens[id] = (uint16_t)len;
    }
    int32_t *fit = realloc(ids, (used ? used : 1) * sizeof *ids);
    d->tokens = fit ? fit : ids;
    d->token_bytes = lens;
    for (int s = 0; s < 2; s++) d->n_tokens[s] = count[s], d->max_token[s] = largest[s];
    return NGPT_OK;
}

ngpt_status ngpt_data_tokenize(ngpt_data *d, const ngpt_tokenizer *tok, int32_t seq)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_tokenize: NULL argument");
    if (d->tokens)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_data_tokenize: the data is already tokens");
    if (seq < 1) return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_data_tokenize: seq must be >= 1, got %d",
                                  (int)seq);
    return ngpt_prefixed("ngpt_data_tokenize", tokenize(d, tok, seq));
}

/* The byte where a split's conversations start: the first line that starts
 * at or after the byte split (a conversation is in the split its line
 * starts in). */
static size_t line_split(const ngpt_data *d)
{
    size_t at = d->train_size;
    while (at > 0 && at < d->size && d->bytes[at - 1] != '\n') at++;
    return at;
}

static ngpt_status tokenize_chat(ngpt_data *d, const ngpt_tokenizer *tok, const ngpt_template *tpl,
                                 const ngpt_template_options *opt, int32_t seq)
{
    const size_t cut = line_split(d);
    size_t lines = 1;
    for (size_t i = 0; i < cut; i++) lines += d->bytes[i] == '\n';
    int32_t *ids[2] = {NULL, NULL};
    uint8_t *kept[2] = {NULL, NULL};
    size_t count[2] = {0, 0}, trained[2] = {0, 0};
    ngpt_status st = ngpt_chat_encode(tok, tpl, opt, d->bytes, cut, 1, &ids[0], &kept[0],
                                      &count[0], &trained[0]);
    if (!st)
        st = ngpt_chat_encode(tok, tpl, opt, d->bytes + cut, d->size - cut, lines, &ids[1],
                              &kept[1], &count[1], &trained[1]);
    const bool held_out = d->size > d->train_size;
    for (int s = 0; s < 1 + held_out && !st; s++) {
        if (count[s] < (size_t)seq + 1)
            st = ngpt_fail(NGPT_ERR_BAD_ARG, "the %s conversations encode to %zu tokens, fewer "
                           "than one window of seq+1 = %zu; use more data or a shorter seq",
                           s ? "held-out" : "training", count[s], (size_t)seq + 1);
        else if (!trained[s])
            st = ngpt_fail(NGPT_ERR_BAD_ARG, "the %s conversations have no assistant turn: "
                           "nothing to train on", s ? "held-out" : "training");
    }
    const size_t total = count[0] + count[1];
    int32_t *all = st ? NULL : malloc((total ? total : 1) * sizeof *all);
    uint8_t *marks = st ? NULL : malloc(total ? total : 1);
    uint16_t *lens = st ? NULL : malloc((size_t)tok->n_tokens * sizeof *lens);
    if (!st && (!all || !marks || !lens))
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for %zu tokens", total);
    if (st) {
        for (int s = 0; s < 2; s++) free(ids[s]), free(kept[s]);
        free(all), free(marks), free(lens);
        return st;
    }
    for (int s = 0; s < 2; s++) {
        if (count[s]) {     /* (an empty split has no arrays) */
            memcpy(all + (s ? count[0] : 0), ids[s], count[s] * sizeof *all);
            memcpy(marks + (s ? count[0] : 0), kept[s], count[s]);
        }
        d->n_tokens[s] = count[s];
        d->max_token[s] = 0;
        for (size_t i = 0; i < count[s]; i++)
            d->max_token[s] = ids[s][i] > d->max_token[s] ? ids[s][i] : d->max_token[s];
        free(ids[s]), free(kept[s]);
    }
    for (int32_t id = 0; id < tok->n_tokens; id++) {
        size_t len;
        ngpt_tok_bytes(tok, id, &len);
        lens[id] = (uint16_t)len;
    }
    d->tokens = all;
    d->trained = marks;
    d->token_bytes = lens;
    return NGPT_OK;
}

ngpt_status ngpt_data_tokenize_chat(ngpt_data *d, const ngpt_tokenizer *tok, const ngpt_template *tpl,
                                    const ngpt_template_options *opt, int32_t seq)
{
    NGPT_FPMODE_SCOPE;
    if (!d || !tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_data_tokenize_chat: NULL argument");
    if (d->tokens)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_data_tokenize_chat: the data is already tokens");
    if (seq < 1)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_data_tokenize_chat: seq must be >= 1, got %d",
                         (int)seq);
    if (tpl && opt && NGPT_RESERVED_CHECK("template options", opt))
        return ngpt_prefixed("ngpt_data_tokenize_chat", NGPT_ERR_BAD_ARG);
    return ngpt_prefixed("ngpt_data_tokenize_chat", tokenize_chat(d, tok, tpl, opt, seq));
}
