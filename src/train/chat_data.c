/* chat_data.c — conversations as training tokens (train.h): JSON Lines of
 * {"messages": [{"role": ..., "content": ...}, ...]} (the chat format of
 * Hugging Face datasets and mlx-lm) rendered in ChatML by the tokenizer,
 * each token marked trained or not: an assistant turn's content and its
 * <|im_end|> are trained, everything else (system and user turns, the
 * "<|im_start|>assistant\n" before a reply, the "\n" after it) is context
 * only, as mlx-lm's mask_prompt and TRL's assistant-only loss do. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

typedef struct growing {
    int32_t *ids;
    uint8_t *trained;
    size_t n, cap;
} growing;

static bool grow(growing *g, size_t more)
{
    if (g->n + more <= g->cap) return true;
    size_t cap = g->cap ? g->cap : 4096;
    while (cap < g->n + more) cap *= 2;
    int32_t *ids = realloc(g->ids, cap * sizeof *ids);
    if (ids) g->ids = ids;
    uint8_t *tr = ids ? realloc(g->trained, cap) : NULL;
    if (tr) g->trained = tr;
    if (!ids || !tr) return false;
    g->cap = cap;
    return true;
}

/* One turn appended; an assistant's from its content to its <|im_end|>
 * trained (the tokens after the open prompt's, which head holds). */
static ngpt_status turn(const ngpt_tokenizer *tok, growing *g, const char *role,
                        const char *text, const int32_t *head, size_t n_head, int32_t im_end)
{
    size_t n = 0;
    ngpt_status st = ngpt_tokenizer_chatml_turn(tok, role, text, strlen(text), false, NULL, 0, &n);
    if (st && st != NGPT_ERR_TOO_LONG) return st;
    if (!grow(g, n)) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the conversations");
    int32_t *ids = g->ids + g->n;
    if ((st = ngpt_tokenizer_chatml_turn(tok, role, text, strlen(text), false, ids, n, &n)))
        return st;
    memset(g->trained + g->n, 0, n);
    if (!strcmp(role, "assistant")) {
        size_t from = 0, end = n;
        while (from < n_head && from < n && ids[from] == head[from]) from++;
        while (end > from && ids[end - 1] != im_end) end--;   /* through <|im_end|> */
        memset(g->trained + g->n + from, 1, end - from);
    }
    g->n += n;
    return NGPT_OK;
}

/* The string member `key` of object o, or NULL. */
static const char *string_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static ngpt_status conversation(const ngpt_tokenizer *tok, growing *g, const char *line,
                                size_t len, size_t line_no, const int32_t *head, size_t n_head,
                                int32_t im_end)
{
    cJSON *root = cJSON_ParseWithLength(line, len);
    const cJSON *msgs = root ? cJSON_GetObjectItemCaseSensitive(root, "messages") : NULL;
    ngpt_status st = NGPT_OK;
    if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
        st = ngpt_fail(NGPT_ERR_BAD_ARG, "line %zu of the data is not a JSON object with a "
                       "non-empty \"messages\" array (one conversation per line: {\"messages\": "
                       "[{\"role\": \"user\", \"content\": ...}, ...]})", line_no);
    int i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs)
    {
        if (st) break;
        const char *role = string_of(m, "role"), *content = string_of(m, "content");
        if (!role || !content || !role[0] || strchr(role, '\n')) {
            st = ngpt_fail(NGPT_ERR_BAD_ARG, "line %zu, message %d: a message is {\"role\": a "
                           "one-line string, \"content\": a string}", line_no, i);
            break;
        }
        st = turn(tok, g, role, content, head, n_head, im_end);
        i++;
    }
    cJSON_Delete(root);
    return st;
}

ngpt_status ngpt_chat_encode(const ngpt_tokenizer *tok, const uint8_t *text, size_t size,
                             size_t first_line, int32_t **ids, uint8_t **trained, size_t *count,
                             size_t *n_trained)
{
    int32_t im_end, head[64];
    size_t n_head = 0;
    ngpt_status st = ngpt_tokenizer_chatml_specials(tok, NULL, &im_end);
    if (!st) st = ngpt_tokenizer_chatml_turn(tok, "assistant", NULL, 0, true, head, 64, &n_head);
    if (st) return st;
    growing g = {0};
    size_t line_no = first_line;
    for (size_t at = 0; at < size && !st; line_no++) {
        const uint8_t *nl = memchr(text + at, '\n', size - at);
        const size_t end = nl ? (size_t)(nl - text) : size;
        size_t a = at, b = end;
        while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r')) a++;
        while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r')) b--;
        if (b > a)      /* blank lines separate nothing */
            st = conversation(tok, &g, (const char *)text + a, b - a, line_no, head, n_head, im_end);
        at = end + 1;
    }
    size_t kept = 0;
    for (size_t i = 0; !st && i < g.n; i++) kept += g.trained[i];
    if (st) {
        free(g.ids), free(g.trained);
        return st;
    }
    *ids = g.ids, *trained = g.trained, *count = g.n, *n_trained = kept;
    return NGPT_OK;
}
