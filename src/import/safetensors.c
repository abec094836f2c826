/* safetensors.c — the safetensors reader (safetensors.h). The checks, in
 * order (docs/IMPORT.md, after the reference reader): the file holds the
 * 8-byte length N; N <= 100,000,000 before anything is allocated; 8 + N
 * fits in the file; the header is valid UTF-8 and one JSON object (spaces
 * may pad it), whose optional __metadata__ maps strings to strings and
 * whose other members are tensors {dtype, shape, data_offsets}; names are
 * unique; shapes and offsets are non-negative integers; sorted by begin,
 * the tensors tile the data exactly (the first begins at 0, each begins
 * where the previous ended, the last ends at the file's end) and each
 * spans shape's product times its dtype's size, with checked multiplies. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/checked.h"
#include "import/safetensors.h"
#include "tokenizer/unicode.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors are little-endian; big-endian hosts are not supported"
#endif

/* Every dtype of the format, with its size in bytes. */
static const struct { const char *name; int bytes; ngpt_st_dtype dtype; } dtypes[] = {
    {"F32", 4, NGPT_ST_F32},    {"F16", 2, NGPT_ST_F16},    {"BF16", 2, NGPT_ST_BF16},
    {"BOOL", 1, NGPT_ST_OTHER}, {"U8", 1, NGPT_ST_OTHER},   {"I8", 1, NGPT_ST_OTHER},
    {"F8_E5M2", 1, NGPT_ST_OTHER}, {"F8_E4M3", 1, NGPT_ST_OTHER},
    {"I16", 2, NGPT_ST_OTHER},  {"U16", 2, NGPT_ST_OTHER},  {"I32", 4, NGPT_ST_OTHER},
    {"U32", 4, NGPT_ST_OTHER},  {"I64", 8, NGPT_ST_OTHER},  {"U64", 8, NGPT_ST_OTHER},
    {"F64", 8, NGPT_ST_OTHER},
};

static ngpt_status bad(const char *src, const char *what, const char *name)
{
    if (name)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a valid safetensors file: tensor "
                         "\"%.80s\" %s", src, name, what);
    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a valid safetensors file: %s", src, what);
}

/* A JSON number that is a non-negative integer below 2^53 (exact in a double). */
static bool whole(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v)) return false;
    const double d = v->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d) return false;
    *out = (uint64_t)d;
    return true;
}

static bool valid_utf8(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = ngpt_utf8_decode(p + i, n - i, &cp);
        if (!k) return false;
        i += k;
    }
    return true;
}

typedef struct span { size_t begin, end, index; } span;

static int by_begin(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->begin != b->begin) return a->begin < b->begin ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

static int by_name(const void *x, const void *y)
{
    return strcmp(((const ngpt_st_tensor *)x)->name, ((const ngpt_st_tensor *)y)->name);
}

/* One tensor member: its dtype, shape and offsets into t and s. */
static ngpt_status tensor_entry(const cJSON *m, const char *src, ngpt_st_tensor *t, span *s)
{
    const char *name = m->string;
    if (!cJSON_IsObject(m)) return bad(src, "is not an object", name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(m, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(m, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(m, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(off))
        return bad(src, "lacks its dtype, shape or data_offsets", name);
    int elem = 0;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(dt->valuestring, dtypes[i].name)) {
            elem = dtypes[i].bytes, t->dtype = dtypes[i].dtype;
            snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dtypes[i].name);
        }
    if (!elem) {
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: tensor \"%.80s\" has dtype \"%.20s\", which "
                         "is not a safetensors dtype this reader knows (F32 F16 BF16 F64 I8..U64 "
                         "BOOL F8_E5M2 F8_E4M3)", src, name, dt->valuestring);
    }
    const int ndim = cJSON_GetArraySize(shape);
    if (ndim > NGPT_ST_MAX_DIMS) return bad(src, "has more than 8 dimensions", name);
    size_t count = 1;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        uint64_t v;
        if (!whole(cJSON_GetArrayItem(shape, d), &v))
            return bad(src, "has a shape that is not a list of non-negative integers", name);
        t->shape[d] = (int64_t)v;
        if (v > SIZE_MAX || !ngpt_mul_ok(count, (size_t)v, &count))
            return bad(src, "has a shape too large for this machine", name);
    }
    uint64_t begin, end;
    if (cJSON_GetArraySize(off) != 2 || !whole(cJSON_GetArrayItem(off, 0), &begin) ||
        !whole(cJSON_GetArrayItem(off, 1), &end) || end < begin)
        return bad(src, "has data_offsets that are not [begin, end] with 0 <= begin <= end", name);
    size_t bytes;
    if (!ngpt_mul_ok(count, (size_t)elem, &bytes) || end - begin != bytes) {
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a valid safetensors file: tensor "
                         "\"%.80s\" spans %llu bytes but its shape and dtype %s make %s", src,
                         name, (unsigned long long)(end - begin), t->dtype_name,
                         ngpt_mul_ok(count, (size_t)elem, &bytes) ? "another size" : "too many");
    }
    t->count = count, t->bytes = bytes;
    s->begin = (size_t)begin, s->end = (size_t)end;
    return NGPT_OK;
}

static ngpt_status metadata(const cJSON *m, const char *src)
{
    if (!cJSON_IsObject(m)) return bad(src, "__metadata__ is not an object", NULL);
    for (const cJSON *e = m->child; e; e = e->next)
        if (!cJSON_IsString(e))
            return bad(src, "__metadata__ holds a value that is not a string", NULL);
    return NGPT_OK;
}

static ngpt_status index_header(ngpt_st_file *f, const cJSON *root, const unsigned char *data,
                                size_t data_size, const char *src)
{
    size_t n = 0, name_bytes = 0;
    int n_meta = 0;
    for (const cJSON *m = root->child; m; m = m->next) {
        if (!strcmp(m->string, "__metadata__")) {
            if (++n_meta > 1) return bad(src, "__metadata__ is given twice", NULL);
            ngpt_status st = metadata(m, src);
            if (st) return st;
            continue;
        }
        n++;
        name_bytes += strlen(m->string) + 1;
    }
    ngpt_st_tensor *t = calloc(n ? n : 1, sizeof *t);
    span *s = calloc(n ? n : 1, sizeof *s);
    char *names = malloc(name_bytes ? name_bytes : 1);
    ngpt_status st = NGPT_OK;
    if (!t || !s || !names) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
        goto done;
    }
    size_t i = 0, at = 0;
    for (const cJSON *m = root->child; m && !st; m = m->next) {
        if (!strcmp(m->string, "__metadata__")) continue;
        const size_t len = strlen(m->string) + 1;
        memcpy(names + at, m->string, len);
        t[i].name = names + at, t[i].src = src;
        at += len;
        s[i].index = i;
        st = tensor_entry(m, src, &t[i], &s[i]);
        i++;
    }
    if (st) goto done;
    qsort(s, n, sizeof *s, by_begin);
    size_t pos = 0;
    for (i = 0; i < n; i++) {
        if (s[i].begin != pos) {
            st = bad(src, s[i].begin < pos ? "overlaps the tensor before it"
                                           : "leaves a hole before it (bytes no tensor holds)",
                     t[s[i].index].name);
            goto done;
        }
        pos = s[i].end;
        t[s[i].index].data = data + s[i].begin;
    }
    if (pos != data_size) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a valid safetensors file: its tensors "
                       "end at data byte %zu but the file holds %zu data bytes (%s)", src, pos,
                       data_size, pos > data_size ? "truncated, or offsets past the end"
                                                  : "trailing bytes");
        goto done;
    }
    qsort(t, n, sizeof *t, by_name);
    for (i = 1; i < n; i++)
        if (!strcmp(t[i - 1].name, t[i].name)) {
            st = bad(src, "is named twice", t[i].name);
            goto done;
        }
    f->t = t, f->n = n, f->names = names;
    t = NULL, names = NULL;
done:
    free(t);
    free(s);
    free(names);
    return st;
}

ngpt_status ngpt_st_parse(ngpt_st_file *f, const void *data, size_t size, const char *src)
{
    const unsigned char *p = data;
    if (!f->src && !(f->src = strdup(src)))
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
    src = f->src;
    if (size < 8)
        return bad(src, size ? "it is shorter than the 8-byte header length (truncated)"
                             : "it is empty", NULL);
    uint64_t hn;
    memcpy(&hn, p, 8);
    if (hn > NGPT_ST_MAX_HEADER)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a valid safetensors file: its header "
                         "length %llu is above the format's limit of 100,000,000 bytes", src,
                         (unsigned long long)hn);
    if (hn > size - 8)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a valid safetensors file: its header "
                         "of %llu bytes does not fit in its %zu bytes (truncated)", src,
                         (unsigned long long)hn, size);
    const unsigned char *h = p + 8;
    if (!valid_utf8(h, (size_t)hn)) return bad(src, "its header is not valid UTF-8", NULL);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)h, (size_t)hn, &end, 0);
    if (!root) return bad(src, "its header is not valid JSON", NULL);
    ngpt_status st = NGPT_OK;
    for (const char *q = end; q < (const char *)h + hn && !st; q++)
        if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r')
            st = bad(src, "its header holds more than one JSON value", NULL);
    if (!st && !cJSON_IsObject(root)) st = bad(src, "its header is not a JSON object", NULL);
    if (!st) st = index_header(f, root, h + hn, size - 8 - (size_t)hn, src);
    cJSON_Delete(root);
    return st;
}

ngpt_status ngpt_st_open(ngpt_st_file *f, const char *path)
{
    memset(f, 0, sizeof *f);
    if (!(f->src = strdup(path))) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        ngpt_status st = ngpt_fail(NGPT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        ngpt_st_close(f);
        return st;
    }
    struct stat sb;
    ngpt_status st = NGPT_OK;
    if (fstat(fd, &sb) != 0)    /* e.g. EOVERFLOW: a file above 2 GiB on a 32-bit build */
        st = ngpt_fail(NGPT_ERR_IO, "cannot read the size of %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = ngpt_fail(NGPT_ERR_IO, "%s is not a regular file", path);
    else if ((uint64_t)sb.st_size > SIZE_MAX)
        st = ngpt_fail(NGPT_ERR_IO, "%s is too large for this machine's address space", path);
    size_t size = st ? 0 : (size_t)sb.st_size;
    if (!st && size > 0) {
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED)
            st = ngpt_fail(NGPT_ERR_IO, "cannot map %s: %s", path, strerror(errno));
        else
            f->map = m, f->map_size = size;
    }
    close(fd);
    if (!st) st = ngpt_st_parse(f, f->map ? f->map : "", size, path);
    if (st) ngpt_st_close(f);
    return st;
}

void ngpt_st_close(ngpt_st_file *f)
{
    if (f->map) munmap(f->map, f->map_size);
    free(f->t);
    free(f->names);
    free(f->src);
    memset(f, 0, sizeof *f);
}

const ngpt_st_tensor *ngpt_st_find(const ngpt_st_file *f, const char *name)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int r = strcmp(f->t[mid].name, name);
        if (!r) return &f->t[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

float ngpt_st_half_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023;
    uint32_t bits;
    if (e == 0) {                   /* zero or subnormal: m * 2^-24, exact in float */
        float v = (float)m * 0x1p-24f;
        memcpy(&bits, &v, 4);
        bits |= sign;
    } else if (e == 31) {           /* Inf, or NaN with its payload */
        bits = sign | 0x7f800000u | m << 13;
    } else {
        bits = sign | (e + 112) << 23 | m << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

void ngpt_st_to_f32(const ngpt_st_tensor *t, size_t first, size_t n, float *dst)
{
    switch (t->dtype) {
    case NGPT_ST_F32:
        memcpy(dst, t->data + first * 4, n * 4);
        return;
    case NGPT_ST_BF16:
        for (size_t i = 0; i < n; i++) {
            uint16_t b;
            memcpy(&b, t->data + (first + i) * 2, 2);
            const uint32_t bits = (uint32_t)b << 16;
            memcpy(&dst[i], &bits, 4);
        }
        return;
    case NGPT_ST_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t b;
            memcpy(&b, t->data + (first + i) * 2, 2);
            dst[i] = ngpt_st_half_to_f32(b);
        }
        return;
    default:
        memset(dst, 0, n * sizeof *dst);    /* never asked: the mapping refuses other dtypes */
        return;
    }
}

/* ------------------------------------------------------------ writing */

ngpt_status ngpt_st_write(const char *path, const ngpt_st_out *t, size_t n)
{
    cJSON *h = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(h, "__metadata__");
    bool ok = meta && cJSON_AddStringToObject(meta, "format", "pt");
    size_t data = 0;
    for (size_t i = 0; ok && i < n; i++) {
        size_t bytes;
        cJSON *e = cJSON_AddObjectToObject(h, t[i].name), *shape = NULL, *span = NULL;
        ok = e && cJSON_AddStringToObject(e, "dtype", "F32") &&
             (shape = cJSON_AddArrayToObject(e, "shape")) &&
             (span = cJSON_AddArrayToObject(e, "data_offsets")) &&
             ngpt_mul_ok((size_t)t[i].rows * (size_t)t[i].cols, 4, &bytes);
        if (!ok) break;
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t[i].rows));
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t[i].cols));
        cJSON_AddItemToArray(span, cJSON_CreateNumber((double)data));
        cJSON_AddItemToArray(span, cJSON_CreateNumber((double)(data + bytes)));
        data += bytes;
    }
    char *json = ok ? cJSON_PrintUnformatted(h) : NULL;
    cJSON_Delete(h);
    const size_t hn = json ? (strlen(json) + 7) & ~(size_t)7 : 0;
    unsigned char *image = json ? malloc(8 + hn + data) : NULL;
    if (!image) {
        free(json);
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "cannot make the safetensors file %s in memory", path);
    }
    const uint64_t n64 = hn;
    memcpy(image, &n64, 8);
    memset(image + 8, ' ', hn);
    memcpy(image + 8, json, strlen(json));
    size_t at = 8 + hn;
    for (size_t i = 0; i < n; i++) {
        const size_t bytes = (size_t)t[i].rows * (size_t)t[i].cols * 4;
        memcpy(image + at, t[i].data, bytes);
        at += bytes;
    }
    free(json);
    ngpt_status st = ngpt_atomic_file_write(path, image, at);
    free(image);
    return st;
}
