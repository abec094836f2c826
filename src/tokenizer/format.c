/* format.c — tokenizer files (docs/FORMAT.md, "Tokenizer files"): reading
 * one from a file or from memory, checked whole before it is used, and
 * writing one atomically. build.c writes the image and checks what the
 * file says. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/fpmode.h"
#include "tokenizer/scored.h"
#include "tokenizer/tokenizer.h"

static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

ngpt_status ngpt_tok_image_check(const uint8_t *p, size_t size, const char *src,
                                 int32_t *n_tokens_out, uint64_t *checksum)
{
    if (size < 8 || memcmp(p, NGPT_TOK_MAGIC, 8) != 0)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not an ngpt tokenizer (its first bytes are "
                         "not NGPTTOKN)", src);
    const size_t fixed = NGPT_TOK_HEADER + 256 + 8;
    if (size < fixed)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: %zu bytes, shorter than the "
                         "header", src, size);
    uint32_t version = get_u32(p + 8);
    if (version == NGPT_TOK_VERSION_SCORED)
        return ngpt_tok_scored_image_check(p, size, src, n_tokens_out, checksum);
    if (version != NGPT_TOK_VERSION && version != NGPT_TOK_VERSION_IDS)
        return ngpt_fail(NGPT_ERR_VERSION, "%s has tokenizer format version %u but this build "
                         "reads versions %d and %d; use a matching ngpt", src, version,
                         NGPT_TOK_VERSION, NGPT_TOK_VERSION_IDS);
    uint64_t file_bytes = get_u64(p + 40);
    if (file_bytes != size)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated or padded: its header says %llu "
                         "bytes but there are %zu", src, (unsigned long long)file_bytes, size);
    if ((uint64_t)XXH3_64bits(p, size - 8) != get_u64(p + size - 8))
        return ngpt_fail(NGPT_ERR_CHECKSUM, "%s is corrupted: its checksum does not match its "
                         "contents", src);
    if (p[34] > NGPT_END_TOKENS_MAX - 1)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s lists %u more end tokens (header byte 34), "
                         "over the %d it may", src, p[34], NGPT_END_TOKENS_MAX - 1);
    for (int i = 36; i < NGPT_TOK_HEADER; i++)
        if (p[i] && (i < 40 || i >= 56))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s sets reserved header byte %d; it was "
                             "written by a newer or broken writer", src, i);
    uint32_t n_tokens = get_u32(p + 12), n_merges = get_u32(p + 16), n_special = get_u32(p + 20);
    uint64_t n_internal = 256 + (uint64_t)n_merges + n_special, absent = get_u32(p + 48);
    if (absent && version != NGPT_TOK_VERSION_IDS)      /* aliases need model ids */
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s counts %llu merges that repeat a token "
                         "(header bytes 48..51) but has no model ids", src,
                         (unsigned long long)absent);
    if (version == NGPT_TOK_VERSION_IDS && n_merges <= NGPT_TOK_MAX_TOKENS &&
        n_special <= NGPT_TOK_MAX_SPECIAL) {
        /* the model ids close the file: the bytes without one are not tokens of the model */
        if ((size - fixed) / 4 < n_internal)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: the model ids of %llu "
                             "tokens do not fit", src, (unsigned long long)n_internal);
        const uint8_t *ids = p + size - 8 - 4 * n_internal;
        for (int i = 0; i < 256; i++) absent += get_u32(ids + 4 * i) == UINT32_MAX;
    }
    if (n_merges > NGPT_TOK_MAX_TOKENS || n_special > NGPT_TOK_MAX_SPECIAL ||
        n_internal > NGPT_TOK_MAX_TOKENS || (uint64_t)n_tokens != n_internal - absent)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: %u tokens are not 256 bytes "
                         "(%llu without a model id or repeating one), %u merges and %u special "
                         "tokens (limits: %d tokens, %d special)", src, n_tokens,
                         (unsigned long long)absent, n_merges, n_special, NGPT_TOK_MAX_TOKENS,
                         NGPT_TOK_MAX_SPECIAL);
    *n_tokens_out = (int32_t)n_tokens;
    *checksum = get_u64(p + size - 8);
    return NGPT_OK;
}

/* tokenizer.h: an image checked whole, then built. */
ngpt_status ngpt_tok_parse(ngpt_tokenizer **tok, const uint8_t *p, size_t size, const char *src)
{
    int32_t n_tokens;
    uint64_t checksum;
    ngpt_status st = ngpt_tok_image_check(p, size, src, &n_tokens, &checksum);
    if (st) return st;
    if (get_u32(p + 8) == NGPT_TOK_VERSION_SCORED) return ngpt_tok_scored_parse(tok, p, size, src);
    const size_t fixed = NGPT_TOK_HEADER + 256 + 8;
    const uint32_t n_merges = get_u32(p + 16), n_special = get_u32(p + 20);
    size_t at = NGPT_TOK_HEADER + 256;
    /* version 2: the model ids (checked to fit) end the file; before them
     * the special tokens' flags (NGPT_TOK_SPLIT_ADDED), before those the
     * extra end ids (byte 34) */
    const size_t ids_at = get_u32(p + 8) == NGPT_TOK_VERSION_IDS ?
        size - 8 - 4 * (256 + (size_t)n_merges + n_special) : size - 8;
    const uint32_t n_extra = p[34];
    const size_t n_flags = p[35] & NGPT_TOK_SPLIT_ADDED ? n_special : 0;
    if (ids_at < fixed - 8 + 4 * (size_t)n_extra + n_flags)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: its %u more end tokens and the "
                         "flags of its special tokens do not fit", src, n_extra);
    const size_t flags_at = ids_at - n_flags;
    const size_t end = flags_at - 4 * (size_t)n_extra;     /* where the specials end */
    if ((end - (fixed - 8)) / 8 < n_merges)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: %u merges do not fit in %zu "
                         "bytes", src, n_merges, size);
    ngpt_tok_spec *spec = calloc(1, sizeof *spec);  /* room for 8192 specials: not the stack */
    if (!spec) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    memcpy(spec->id_byte, p + NGPT_TOK_HEADER, 256);
    spec->n_merges = (int32_t)n_merges;
    spec->n_special = (int32_t)n_special;
    spec->end_id = (int32_t)get_u32(p + 24);
    spec->pad_id = (int32_t)get_u32(p + 28);
    spec->pretok = p[32];
    spec->rule = p[33];
    spec->flags = p[35];
    spec->bos_id = (int32_t)get_u32(p + 52);
    if (spec->bos_id && !(spec->flags & NGPT_TOK_HAS_BOS)) {
        free(spec);
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s names a BOS token (header bytes 52..55) without "
                         "its flag", src);
    }
    memcpy(spec->added_flags, p + flags_at, n_flags);
    spec->n_end_extra = (int32_t)n_extra;
    for (uint32_t k = 0; k < n_extra; k++) spec->end_extra[k] = (int32_t)get_u32(p + end + 4 * k);
    uint32_t *merges = malloc(n_merges ? (size_t)n_merges * 8 : 1);
    int32_t *model_id = NULL;
    if (ids_at != size - 8 && (model_id = malloc(size - 8 - ids_at)))
        memcpy(model_id, p + ids_at, size - 8 - ids_at);     /* little-endian hosts only */
    if (!merges || (ids_at != size - 8 && !model_id)) {
        free(merges);
        free(spec);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    }
    memcpy(merges, p + at, (size_t)n_merges * 8);
    spec->merges = merges;
    spec->model_id = model_id;
    at += (size_t)n_merges * 8;
    for (uint32_t i = 0; i < n_special && !st; i++) {
        uint32_t len = at + 4 <= end ? get_u32(p + at) : 0;
        if (at + 4 > end || len > end - at - 4)
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is truncated: special token %u does not fit",
                           src, i);
        spec->special[i] = p + at + 4;
        spec->special_len[i] = len;
        at += 4 + (size_t)len;
    }
    if (!st && at != end)
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: %zu bytes follow its last "
                       "special token", src, end - at);
    if (!st) st = ngpt_tok_build(tok, spec, src);
    if (!st && (uint32_t)(*tok)->n_alias != get_u32(p + 48)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is inconsistent: it counts %u merges that repeat "
                       "a token, but %d do", src, get_u32(p + 48), (int)(*tok)->n_alias);
        ngpt_tokenizer_free(*tok);
        *tok = NULL;
    }
    free(merges);
    free(model_id);
    free(spec);
    return st;
}

ngpt_status ngpt_tokenizer_load_mem(ngpt_tokenizer **tok, const void *data, size_t size)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_mem: NULL argument");
    *tok = NULL;
    if (!data) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load_mem: NULL argument");
    return ngpt_prefixed("ngpt_tokenizer_load_mem", ngpt_tok_parse(tok, data, size, "the buffer"));
}

ngpt_status ngpt_tok_read_file(const char *path, uint8_t **buf, size_t *size)
{
    *buf = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return ngpt_fail(NGPT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {      /* e.g. EOVERFLOW: over 2 GiB on a 32-bit build */
        int e = errno;
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size >= SIZE_MAX) {
        close(fd);
        return ngpt_fail(NGPT_ERR_IO, "%s is %s", path, S_ISREG(sb.st_mode) ?
                         "too large for this machine" : "not a regular file");
    }
    size_t n = (size_t)sb.st_size, got = 0;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) {
        close(fd);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s (%zu bytes)", path, n);
    }
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            int e = errno;
            close(fd);
            free(b);
            return ngpt_fail(NGPT_ERR_IO, "reading %s failed: %s", path,
                             r < 0 ? strerror(e) : "the file shrank while being read");
        }
        got += (size_t)r;
    }
    close(fd);
    *buf = b;
    *size = n;
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_load(ngpt_tokenizer **tok, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!tok) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load: NULL argument");
    *tok = NULL;
    if (!path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_load: NULL argument");
    uint8_t *buf;
    size_t size;
    ngpt_status st = ngpt_tok_read_file(path, &buf, &size);
    if (!st) {
        st = ngpt_tok_parse(tok, buf, size, path);
        free(buf);
    }
    return ngpt_prefixed("ngpt_tokenizer_load", st);
}

ngpt_status ngpt_tokenizer_save_mem(const ngpt_tokenizer *tok, void *buf, size_t cap, size_t *size)
{
    NGPT_FPMODE_SCOPE;
    if (!tok || !size) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_save_mem: NULL argument");
    *size = tok->image_size;
    if (!buf) return NGPT_OK;
    if (cap < tok->image_size)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "ngpt_tokenizer_save_mem: the tokenizer takes %zu "
                         "bytes but the buffer holds %zu", tok->image_size, cap);
    memcpy(buf, tok->image, tok->image_size);
    return NGPT_OK;
}

ngpt_status ngpt_tokenizer_save(const ngpt_tokenizer *tok, const char *path)
{
    NGPT_FPMODE_SCOPE;
    if (!tok || !path) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_tokenizer_save: NULL argument");
    return ngpt_prefixed("ngpt_tokenizer_save",
                         ngpt_atomic_file_write(path, tok->image, tok->image_size));
}

/* *tok replaced by the tokenizer of image (size bytes, freed here), its
 * size and checksum sealed: how the two below change a tokenizer (here,
 * beside the reader: build.c makes tokenizers, format.c reads images, and
 * calling each other would make a cycle). */
static ngpt_status reparse(ngpt_tokenizer **tok, uint8_t *image, size_t size, const char *src)
{
    put_u64(image + 40, size);
    put_u64(image + size - 8, (uint64_t)XXH3_64bits(image, size - 8));
    ngpt_tokenizer *with = NULL;
    ngpt_status st = ngpt_tok_parse(&with, image, size, src);
    free(image);
    if (st) return st;
    ngpt_tokenizer_free(*tok);
    *tok = with;
    return NGPT_OK;
}

/* tokenizer.h: the image with other end ids, read back. */
ngpt_status ngpt_tok_with_ends(ngpt_tokenizer **tok, const int32_t *ids, int32_t n,
                               const char *src)
{
    const ngpt_tokenizer *t = *tok;
    if (t->scored)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: a scored tokenizer's end token is fixed", src);
    if (n > NGPT_END_TOKENS_MAX)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s lists %d end tokens, over the %d a tokenizer "
                         "keeps", src, (int)n, NGPT_END_TOKENS_MAX);
    if (n == t->n_end && (n == 0 || !memcmp(ids, t->end_ids, (size_t)n * sizeof *ids)))
        return NGPT_OK;
    /* the specials end where the old extras begin: the new ones go there */
    const size_t old_extra = t->n_end > 1 ? (size_t)t->n_end - 1 : 0;
    const size_t new_extra = n > 1 ? (size_t)n - 1 : 0;
    const size_t tail = (t->added_flags ? (size_t)t->n_special : 0) +
                        (t->remapped ? (size_t)t->n_internal * 4 : 0) + 8;
    const size_t at = t->image_size - tail - 4 * old_extra;
    const size_t size = at + 4 * new_extra + tail;
    uint8_t *image = malloc(size);
    if (!image) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    memcpy(image, t->image, at);
    for (size_t k = 0; k < new_extra; k++) put_u32(image + at + 4 * k, (uint32_t)ids[k + 1]);
    memcpy(image + at + 4 * new_extra, t->image + t->image_size - tail, tail);
    put_u32(image + 24, (uint32_t)(n > 0 ? ids[0] : -1));
    image[34] = (uint8_t)new_extra;
    return reparse(tok, image, size, src);
}

ngpt_status ngpt_tok_within(ngpt_tokenizer **tok, int32_t V, const char *src)
{
    const ngpt_tokenizer *t = *tok;
    int32_t k = 0;                  /* the last specials: past V, never found in text */
    while (!t->scored && t->remapped && t->added_flags && k < t->n_special &&
           t->model_id[t->n_internal - 1 - k] >= V &&
           (t->added_flags[t->n_special - 1 - k] & NGPT_ADDED_UNMATCHED))
        k++;
    if (k == 0 || t->n_tokens - k > V) return NGPT_OK;     /* ngpt_tok_fits says what is wrong */
    /* their names end the specials, their flags the flags, their model ids the ids */
    const size_t names_at = NGPT_TOK_HEADER + 256 + 8 * (size_t)t->n_merges;
    size_t cut = names_at, names = 0;
    for (int32_t i = 0; i < t->n_special; i++) {
        const size_t len = 4 + ngpt_tok_len(t, 256 + t->n_merges + i);
        if (i < t->n_special - k) cut += len;
        names += len;
    }
    const size_t extras = t->n_end > 1 ? 4 * ((size_t)t->n_end - 1) : 0;
    const size_t flags_at = names_at + names + extras, ids_at = flags_at + (size_t)t->n_special;
    const size_t size = t->image_size - (names_at + names - cut) - 5 * (size_t)k;
    uint8_t *image = malloc(size), *p = image;
    if (!image) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    memcpy(p, t->image, cut), p += cut;
    memcpy(p, t->image + names_at + names, extras), p += extras;
    memcpy(p, t->image + flags_at, (size_t)(t->n_special - k)), p += t->n_special - k;
    memcpy(p, t->image + ids_at, 4 * ((size_t)t->n_internal - (size_t)k));
    put_u32(image + 12, (uint32_t)(t->n_tokens - k));
    put_u32(image + 20, (uint32_t)(t->n_special - k));
    return reparse(tok, image, size, src);
}

ngpt_status ngpt_tok_with_bos(ngpt_tokenizer **tok, int32_t id, const char *src)
{
    const ngpt_tokenizer *t = *tok;
    if (t->scored)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: a scored tokenizer's BOS is fixed", src);
    if (t->bos_id == id) return NGPT_OK;
    uint8_t *image = malloc(t->image_size);
    if (!image) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory making the tokenizer of %s", src);
    memcpy(image, t->image, t->image_size);
    image[35] = (uint8_t)(id >= 0 ? image[35] | NGPT_TOK_HAS_BOS : image[35] & ~NGPT_TOK_HAS_BOS);
    put_u32(image + 52, id >= 0 ? (uint32_t)id : 0);
    return reparse(tok, image, t->image_size, src);
}
