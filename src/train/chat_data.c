/* chat_data.c — conversations as training tokens (train.h): JSON Lines of
 * {"messages": [{"role": ..., "content": ...}, ...]} (the chat format of
 * Hugging Face datasets and mlx-lm) rendered in ChatML by the tokenizer,
 * or by a chat template (the model's own), each token marked trained or
 * not: an assistant turn's content and its end marker (<|im_end|>,
 * <|eot_id|>, <end_of_turn>) are trained, everything else (system and user
 * turns, the "<|im_start|>assistant\n" before a reply, the "\n" after it)
 * is context only, as mlx-lm's mask_prompt and TRL's assistant-only loss
 * do. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tokenizer.h"
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

/* How conversations become tokens: ChatML turns (tpl NULL: head is the
 * open assistant turn's ids, im_end its end) or a template's rendering
 * (special[id]: the tokenizer's special tokens, the markers a template
 * writes). */
typedef struct chat_form {
    const ngpt_tokenizer *tok;
    const ngpt_template *tpl;
    ngpt_template_options opt;
    uint8_t *special;
    int32_t head[64], im_end;
    size_t n_head;
} chat_form;

/* The rendering of msgs[0..n) (*ids malloc'd, *count of them); with the
 * assistant's open turn when prompt. A bare message naming the line. */
static ngpt_status render(const chat_form *f, const ngpt_chat_message *msgs, size_t n, bool prompt,
                          size_t line_no, int32_t **ids, size_t *count)
{
    static const char fn[] = "ngpt_template_render_tokens: ";
    ngpt_template_options opt = f->opt;
    opt.add_generation_prompt = prompt;
    *ids = NULL;
    ngpt_status st = ngpt_template_render_tokens(f->tpl, f->tok, msgs, n, &opt, NULL, 0, NULL, 0, count);
    if (!st && !(*ids = malloc((*count ? *count : 1) * sizeof **ids)))
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the conversations");
    if (!st) st = ngpt_template_render_tokens(f->tpl, f->tok, msgs, n, &opt, NULL, 0, *ids, *count, count);
    if (!st) return NGPT_OK;
    free(*ids);
    *ids = NULL;
    const char *why = ngpt_last_error();
    if (!strncmp(why, fn, sizeof fn - 1)) why += sizeof fn - 1;   /* the bare sentence */
    return ngpt_fail(st, "line %zu: the chat template: %s", line_no, why);
}

static size_t common_start(const int32_t *a, size_t na, const int32_t *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i]) i++;
    return i;
}

/* A conversation by the template: rendered whole; reply i's tokens are
 * where the whole departs from the rendering of the messages before it with
 * the open assistant turn, up to where it departs from the rendering
 * through reply i, cut after the last special token in between (the
 * reply's end marker; what the template writes after it is context). */
static ngpt_status templated(const chat_form *f, growing *g, const ngpt_chat_message *msgs,
                             size_t n, size_t line_no)
{
    int32_t *all = NULL, *part = NULL;
    size_t n_all = 0, n_part = 0;
    ngpt_status st = render(f, msgs, n, false, line_no, &all, &n_all);
    if (!st && !grow(g, n_all))
        st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the conversations");
    if (!st) {
        memcpy(g->ids + g->n, all, n_all * sizeof *all);
        memset(g->trained + g->n, 0, n_all);
    }
    for (size_t i = 0; i < n && !st; i++) {
        if (strcmp(msgs[i].role, "assistant")) continue;
        size_t from = 0, to = 0;
        st = render(f, msgs, i, true, line_no, &part, &n_part);
        if (!st) from = common_start(part, n_part, all, n_all);
        free(part);
        part = NULL;
        if (!st) st = render(f, msgs, i + 1, false, line_no, &part, &n_part);
        if (!st) to = common_start(part, n_part, all, n_all);
        free(part);
        part = NULL;
        size_t end = to;
        while (end > from && !f->special[all[end - 1]]) end--;
        if (end > from) to = end;               /* through the end marker */
        if (!st && to > from) memset(g->trained + g->n + from, 1, to - from);
    }
    if (!st) g->n += n_all;
    free(all);
    return st;
}

static ngpt_status conversation(const chat_form *f, growing *g, const char *line, size_t len,
                                size_t line_no)
{
    cJSON *root = cJSON_ParseWithLength(line, len);
    const cJSON *msgs = root ? cJSON_GetObjectItemCaseSensitive(root, "messages") : NULL;
    ngpt_status st = NGPT_OK;
    if (!cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) == 0)
        st = ngpt_fail(NGPT_ERR_BAD_ARG, "line %zu of the data is not a JSON object with a "
                       "non-empty \"messages\" array (one conversation per line: {\"messages\": "
                       "[{\"role\": \"user\", \"content\": ...}, ...]})", line_no);
    const size_t n = st ? 0 : (size_t)cJSON_GetArraySize(msgs);
    ngpt_chat_message *all = f->tpl && n ? calloc(n, sizeof *all) : NULL;
    if (f->tpl && n && !all) st = ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the conversations");
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
        if (all) all[i] = (ngpt_chat_message){.role = role, .content = content,
                                              .content_len = strlen(content)};
        else st = turn(f->tok, g, role, content, f->head, f->n_head, f->im_end);
        i++;
    }
    if (!st && all) st = templated(f, g, all, n, line_no);
    free(all);
    cJSON_Delete(root);
    return st;
}

/* The form's parts: ChatML's markers, or the special tokens. */
static ngpt_status form_of(chat_form *f)
{
    if (!f->tpl) {
        ngpt_status st = ngpt_tokenizer_chatml_specials(f->tok, NULL, &f->im_end);
        return st ? st : ngpt_tokenizer_chatml_turn(f->tok, "assistant", NULL, 0, true, f->head, 64,
                                                     &f->n_head);
    }
    if (!(f->special = calloc((size_t)f->tok->n_tokens, 1)))
        return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory for the conversations");
    for (int32_t i = 0, id; i < f->tok->n_special; i++)
        if (!ngpt_tokenizer_special(f->tok, i, &id)) f->special[id] = 1;
    return NGPT_OK;
}

ngpt_status ngpt_chat_encode(const ngpt_tokenizer *tok, const ngpt_template *tpl,
                             const ngpt_template_options *opt, const uint8_t *text, size_t size,
                             size_t first_line, int32_t **ids, uint8_t **trained, size_t *count,
                             size_t *n_trained)
{
    chat_form f = {.tok = tok, .tpl = tpl, .opt = opt ? *opt : ngpt_template_options_default()};
    ngpt_status st = form_of(&f);
    if (st) {
        free(f.special);
        return st;
    }
    growing g = {0};
    size_t line_no = first_line;
    for (size_t at = 0; at < size && !st; line_no++) {
        const uint8_t *nl = memchr(text + at, '\n', size - at);
        const size_t end = nl ? (size_t)(nl - text) : size;
        size_t a = at, b = end;
        while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r')) a++;
        while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r')) b--;
        if (b > a)      /* blank lines separate nothing */
            st = conversation(&f, &g, (const char *)text + a, b - a, line_no);
        at = end + 1;
    }
    free(f.special);
    size_t kept = 0;
    for (size_t i = 0; !st && i < g.n; i++) kept += g.trained[i];
    if (st) {
        free(g.ids), free(g.trained);
        return st;
    }
    *ids = g.ids, *trained = g.trained, *count = g.n, *n_trained = kept;
    return NGPT_OK;
}
