/* shards.c — one namespace over a model's safetensors files (shards.h). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/shards.h"
#include "tokenizer/tokenizer.h"

const ngpt_st_tensor *ngpt_shards_find(const ngpt_shards *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        const ngpt_st_tensor *t = ngpt_st_find(&s->files[i], name);
        if (t) return t;
    }
    return NULL;
}

void ngpt_shards_close(ngpt_shards *s)
{
    for (size_t i = 0; i < s->n; i++) ngpt_st_close(&s->files[i]);
    free(s->files);
    s->files = NULL, s->n = 0;
}

/* No tensor name in two files. */
static ngpt_status check_unique(const ngpt_shards *s)
{
    for (size_t i = 0; i < s->n; i++)
        for (size_t j = i + 1; j < s->n; j++)
            for (size_t k = 0; k < s->files[j].n; k++)
                if (ngpt_st_find(&s->files[i], s->files[j].t[k].name))
                    return ngpt_fail(NGPT_ERR_BAD_FORMAT, "tensor \"%.80s\" is in both %s and %s",
                                     s->files[j].t[k].name, s->files[i].src, s->files[j].src);
    return NGPT_OK;
}

ngpt_status ngpt_shards_open(ngpt_shards *s, const char *const *paths, size_t n)
{
    s->n = 0;
    if (!(s->files = calloc(n ? n : 1, sizeof *s->files)))
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory");
    ngpt_status st = NGPT_OK;
    for (size_t i = 0; i < n && !st; i++)
        if (!(st = ngpt_st_open(&s->files[i], paths[i]))) s->n = i + 1;
    if (!st) st = check_unique(s);
    if (st) ngpt_shards_close(s);
    return st;
}

/* A shard's name: a file name in the index's folder, nothing more. */
static bool plain_name(const char *f)
{
    return f[0] && !strchr(f, '/') && !strchr(f, '\\') && strcmp(f, ".") && strcmp(f, "..");
}

static ngpt_status open_index(ngpt_shards *s, const cJSON *map, const char *index_path)
{
    /* the distinct shard names, in order of first appearance */
    const int n_map = cJSON_GetArraySize(map);
    const char **names = calloc((size_t)(n_map > 0 ? n_map : 1), sizeof *names);
    char **paths = calloc((size_t)(n_map > 0 ? n_map : 1), sizeof *paths);
    size_t n = 0;
    ngpt_status st = NGPT_OK;
    if (!names || !paths) {
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", index_path);
        goto done;
    }
    if (n_map == 0) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: weight_map names no tensor", index_path);
        goto done;
    }
    const char *slash = strrchr(index_path, '/');
    const int dir_len = slash ? (int)(slash - index_path + 1) : 0;
    for (const cJSON *e = map->child; e && !st; e = e->next) {
        if (!cJSON_IsString(e) || !plain_name(e->valuestring)) {
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: weight_map maps \"%.80s\" to something "
                           "that is not a file name in its folder", index_path, e->string);
            break;
        }
        for (const cJSON *d = e->next; d; d = d->next)
            if (!strcmp(d->string, e->string)) {
                st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: weight_map names tensor \"%.80s\" twice",
                               index_path, e->string);
                goto done;
            }
        size_t k = 0;
        while (k < n && strcmp(names[k], e->valuestring)) k++;
        if (k < n) continue;
        names[n] = e->valuestring;
        const size_t len = (size_t)dir_len + strlen(e->valuestring) + 1;
        if (!(paths[n] = malloc(len))) {
            st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", index_path);
            break;
        }
        snprintf(paths[n], len, "%.*s%s", dir_len, index_path, e->valuestring);
        n++;
    }
    if (st || (st = ngpt_shards_open(s, (const char *const *)paths, n))) goto done;
    for (const cJSON *e = map->child; e && !st; e = e->next) {
        size_t k = 0;
        while (strcmp(names[k], e->valuestring)) k++;
        if (!ngpt_st_find(&s->files[k], e->string))
            st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s maps tensor \"%.80s\" to %s, which does not "
                           "hold it", index_path, e->string, s->files[k].src);
    }
    for (size_t k = 0; k < n && !st; k++)
        for (size_t i = 0; i < s->files[k].n && !st; i++) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(map, s->files[k].t[i].name);
            if (!e || strcmp(e->valuestring, names[k]))
                st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s holds tensor \"%.80s\", which %s does "
                               "not map to it", s->files[k].src, s->files[k].t[i].name, index_path);
        }
    if (st) ngpt_shards_close(s);
done:
    for (size_t k = 0; paths && k < n; k++) free(paths[k]);
    free(paths);
    free(names);
    return st;
}

ngpt_status ngpt_shards_open_index(ngpt_shards *s, const char *index_path)
{
    uint8_t *text = NULL;
    size_t size = 0;
    s->files = NULL, s->n = 0;
    ngpt_status st = ngpt_tok_read_file(index_path, &text, &size);
    if (st) return st;
    cJSON *root = cJSON_ParseWithLength((const char *)text, size);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!root || !cJSON_IsObject(root))
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", index_path);
    else if (!cJSON_IsObject(map))
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no weight_map (an object: tensor -> file); "
                       "is it model.safetensors.index.json?", index_path);
    else
        st = open_index(s, map, index_path);
    cJSON_Delete(root);
    free(text);
    return st;
}
