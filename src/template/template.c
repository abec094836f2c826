/* template.c — chat templates' public face (ngpt.h, "chat templates";
 * template.h): parsing Jinja text or a tokenizer_config.json, rendering a
 * conversation with the variables apply_chat_template passes (messages,
 * add_generation_prompt, tools and documents none, the special tokens,
 * enable_thinking when asked), and conversations as JSON. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/fpmode.h"
#include "template/names.h"
#include "template/tmpl.h"

ngpt_template_options ngpt_template_options_default(void)
{
    NGPT_FPMODE_SCOPE;
    return (ngpt_template_options){.add_generation_prompt = true};
}

/* Parses len bytes of text into *out with the special tokens specials
 * (strings of tokens; NULL: none). Bare message. */
static ngpt_status parse(ngpt_template **out, const char *text, size_t len, const char *const *specials)
{
    *out = NULL;
    if (len > TMPL_SOURCE_MAX)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "the template has %zu bytes, more than ngpt's "
                         "limit of %zu", len, TMPL_SOURCE_MAX);
    ngpt_template *t = calloc(1, sizeof *t);
    if (!t) return ngpt_fail(NGPT_ERR_NO_MEMORY, "no memory for a template");
    t->arena.limit = TMPL_PARSE_ARENA;
    t->arena.fail = &t->fail;
    if (setjmp(t->fail)) {
        const ngpt_status st = t->arena.status;
        ngpt_tmpl_free_all(&t->arena);
        free(t);
        return st;
    }
    char *copy = ngpt_tmpl_alloc(&t->arena, len + 1);
    if (len) memcpy(copy, text, len);
    t->text = copy, t->len = len;
    const size_t bad = ngpt_tmpl_utf8_valid(copy, len);
    if (bad < len) {
        char where[64];
        ngpt_tmpl_where(copy, len, (uint32_t)bad, where, sizeof where);
        ngpt_tmpl_throw(&t->arena, NGPT_ERR_BAD_FORMAT, "%s: the template is not UTF-8 text", where);
    }
    for (int i = 0; specials && i < TMPL_SPECIALS; i++)
        if (specials[i] && specials[i][0])
            t->special[i] = ngpt_tmpl_str_copy(&t->arena, specials[i], strlen(specials[i]), false);
    ngpt_tmpl_parse_tree(t, copy, len);
    *out = t;
    return NGPT_OK;
}

ngpt_status ngpt_template_parse(ngpt_template **t, const char *text, size_t len)
{
    NGPT_FPMODE_SCOPE;
    if (!t || (!text && len)) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_template_parse: NULL argument");
    *t = NULL;
    return ngpt_prefixed("ngpt_template_parse", parse(t, text ? text : "", len, NULL));
}

/* A special token's name: a string, or an AddedToken {"content": ...}. */
static ngpt_status token_of(const cJSON *root, const char *key, const char **out, const char *src)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return NGPT_OK;
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItemCaseSensitive(v, "content");
    if (!cJSON_IsString(v))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s is neither a string nor an object with a "
                         "\"content\" string", src, key);
    *out = v->valuestring;
    return NGPT_OK;
}

ngpt_status ngpt_tmpl_from_config(ngpt_template **t, const void *json, size_t len, const char *src)
{
    *t = NULL;
    cJSON *root = cJSON_ParseWithLength(json, len);
    ngpt_status st = NGPT_OK;
    const char *specials[TMPL_SPECIALS];
    const cJSON *tpl = cJSON_GetObjectItemCaseSensitive(root, "chat_template");
    if (!cJSON_IsObject(root)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
        goto done;
    }
    if (cJSON_IsArray(tpl)) {           /* named templates: the "default" one */
        const cJSON *named = NULL;
        for (const cJSON *e = tpl->child; e; e = e->next)
            if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name")) &&
                !strcmp(cJSON_GetObjectItemCaseSensitive(e, "name")->valuestring, "default"))
                named = cJSON_GetObjectItemCaseSensitive(e, "template");
        tpl = named;
    }
    if (!cJSON_IsString(tpl)) {
        st = ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no chat_template (a string, or a list with "
                       "a \"default\" template)", src);
        goto done;
    }
    for (int i = 0; i < TMPL_SPECIALS && !st; i++)
        st = token_of(root, ngpt_tmpl_special_names[i], &specials[i], src);
    if (!st) st = parse(t, tpl->valuestring, strlen(tpl->valuestring), specials);
done:
    cJSON_Delete(root);
    return st;
}

ngpt_status ngpt_template_parse_config(ngpt_template **t, const void *json, size_t len)
{
    NGPT_FPMODE_SCOPE;
    if (!t || !json) return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_template_parse_config: NULL argument");
    return ngpt_prefixed("ngpt_template_parse_config",
                         ngpt_tmpl_from_config(t, json, len, "the tokenizer_config.json"));
}

void ngpt_template_free(ngpt_template *t)
{
    NGPT_FPMODE_SCOPE;
    if (!t) return;
    ngpt_tmpl_free_all(&t->arena);
    free(t);
}

/* ------------------------------------------------------------ rendering */

ngpt_status ngpt_tmpl_check(const ngpt_chat_message *msgs, size_t n, const ngpt_template_options *opt)
{
    if (n && !msgs) return ngpt_fail(NGPT_ERR_NULL_ARG, "NULL messages (%zu of them)", n);
    for (size_t i = 0; i < n; i++) {
        if (!msgs[i].role || (!msgs[i].content && msgs[i].content_len))
            return ngpt_fail(NGPT_ERR_NULL_ARG, "message %zu has a NULL %s", i,
                             msgs[i].role ? "content" : "role");
        ngpt_status st = NGPT_RESERVED_CHECK("chat_message", &msgs[i]);
        if (st) return st;
    }
    if (!opt) return NGPT_OK;
    ngpt_status st = NGPT_RESERVED_CHECK("template_options", opt);
    if (st) return st;
    if ((unsigned)opt->thinking > NGPT_THINKING_OFF)
        return ngpt_fail(NGPT_ERR_BAD_ARG, "thinking is %d; use an ngpt_thinking", (int)opt->thinking);
    return NGPT_OK;
}

static void set(tstate *s, tenv *g, tstr name, tval v)
{
    ngpt_tmpl_env_set(s, g, name, ngpt_tmpl_str_hash(name), v);
}

static tval messages(tstate *s, const ngpt_chat_message *msgs, size_t n)
{
    tval list = ngpt_tmpl_val_list(&s->a, TV_LIST, n);
    for (size_t i = 0; i < n; i++) {
        tval m = ngpt_tmpl_val_map(&s->a, TV_MAP);
        ngpt_tmpl_map_set(
            &s->a, m.u.m, TSTR("role"),
            ngpt_tmpl_val_str(ngpt_tmpl_str_copy(&s->a, msgs[i].role, strlen(msgs[i].role), true)));
        ngpt_tmpl_map_set(
            &s->a, m.u.m, TSTR("content"),
            ngpt_tmpl_val_str(ngpt_tmpl_str_copy(&s->a, msgs[i].content ? msgs[i].content : "",
                                                 msgs[i].content_len, true)));
        list.u.l->v[i] = m;
    }
    return list;
}

ngpt_status ngpt_tmpl_render(const ngpt_template *t, const ngpt_chat_message *msgs, size_t n,
                             const ngpt_template_options *opt, ngpt_tmpl_text *out)
{
    const ngpt_template_options o = opt ? *opt : ngpt_template_options_default();
    *out = (ngpt_tmpl_text){0};
    tstate *s = calloc(1, sizeof *s);
    if (!s) return ngpt_fail(NGPT_ERR_NO_MEMORY, "no memory to render a template");
    s->a.limit = TMPL_RENDER_ARENA;
    s->a.fail = &s->fail;
    s->t = t;
    s->now = o.now;
    if (setjmp(s->fail)) {
        const ngpt_status st = s->a.status;
        free(out->p);
        *out = (ngpt_tmpl_text){0};
        ngpt_tmpl_free_all(&s->a);
        free(s);
        return st;
    }
    tenv *g = ngpt_tmpl_env(s, NULL);
    ngpt_tmpl_globals(s, g);
    set(s, g, TSTR("messages"), messages(s, msgs, n));
    set(s, g, TSTR("add_generation_prompt"), ngpt_tmpl_val_bool(o.add_generation_prompt));
    set(s, g, TSTR("tools"), (tval){.kind = TV_NULL});
    set(s, g, TSTR("documents"), (tval){.kind = TV_NULL});
    for (int i = 0; i < TMPL_SPECIALS; i++) {
        const char *given = i == TMPL_BOS ? o.bos_token : i == TMPL_EOS ? o.eos_token : NULL;
        const tstr v = given ? ngpt_tmpl_str_copy(&s->a, given, strlen(given), false) : t->special[i];
        if (v.n)
            set(s, g, (tstr){ngpt_tmpl_special_names[i], NULL, strlen(ngpt_tmpl_special_names[i])},
                ngpt_tmpl_val_str(v));
    }
    if (o.thinking)
        set(s, g, TSTR("enable_thinking"), ngpt_tmpl_val_bool(o.thinking == NGPT_THINKING_ON));
    tbuf text = {.a = &s->a, .limit = TMPL_OUTPUT_MAX};
    s->out = &text;
    ngpt_tmpl_exec(s, g, &t->body);
    out->p = malloc(text.n + 1);
    out->taint = text.taint ? malloc(text.n + 1) : NULL;
    if (!out->p || (text.taint && !out->taint)) {
        free(out->taint);
        out->taint = NULL;
        ngpt_tmpl_throw(&s->a, NGPT_ERR_NO_MEMORY, "no memory for a rendering of %zu bytes", text.n);
    }
    if (text.n) memcpy(out->p, text.p, text.n);
    out->p[text.n] = '\0';
    if (out->taint && text.n) memcpy(out->taint, text.taint, text.n);
    out->n = text.n;
    ngpt_tmpl_free_all(&s->a);
    free(s);
    return NGPT_OK;
}

void ngpt_tmpl_text_free(ngpt_tmpl_text *text)
{
    free(text->p);
    free(text->taint);
    *text = (ngpt_tmpl_text){0};
}

ngpt_status ngpt_template_render(const ngpt_template *t, const ngpt_chat_message *msgs, size_t n,
                                 const ngpt_template_options *opt, char *out, size_t cap, size_t *len)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_template_render";
    if (!t || !len) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL argument", fn);
    ngpt_status st = ngpt_tmpl_check(msgs, n, opt);
    ngpt_tmpl_text text;
    if (st || (st = ngpt_tmpl_render(t, msgs, n, opt, &text))) return ngpt_prefixed(fn, st);
    *len = text.n;
    if (out && text.n > cap)
        st = ngpt_fail(NGPT_ERR_TOO_LONG, "%s: the rendering has %zu bytes but the buffer holds "
                       "%zu", fn, text.n, cap);
    else if (out && text.n)
        memcpy(out, text.p, text.n);
    ngpt_tmpl_text_free(&text);
    return st;
}

/* ------------------------------------------------------------ conversations as JSON */

static ngpt_status read_messages(const cJSON *root, ngpt_chat_message **msgs, size_t *count)
{
    if (!cJSON_IsArray(root))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "the conversation is not a JSON list of messages");
    size_t n = 0, bytes = 0;
    for (const cJSON *m = root->child; m; m = m->next, n++) {
        if (!cJSON_IsObject(m))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "message %zu is not an object", n);
        for (const cJSON *k = m->child; k; k = k->next) {
            const bool known = !strcmp(k->string, "role") || !strcmp(k->string, "content");
            if (!known)
                return ngpt_fail(NGPT_ERR_UNSUPPORTED, "message %zu has \"%.60s\": a message is "
                                 "a role and its text (tools and content lists are outside "
                                 "ngpt's templates)", n, k->string);
            if (!cJSON_IsString(k))
                return ngpt_fail(k->type == cJSON_Array ? NGPT_ERR_UNSUPPORTED : NGPT_ERR_BAD_FORMAT,
                                 "message %zu's %s is not a string", n, k->string);
            bytes += strlen(k->valuestring) + 1;
        }
        if (!cJSON_GetObjectItemCaseSensitive(m, "role"))
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "message %zu has no role", n);
    }
    size_t total;
    if (!ngpt_mul_ok(n, sizeof(ngpt_chat_message), &total) || !ngpt_add_ok(total, bytes + 1, &total))
        return ngpt_fail(NGPT_ERR_OVERFLOW, "the conversation is too large");
    ngpt_chat_message *v = calloc(1, total);
    if (!v) return ngpt_fail(NGPT_ERR_NO_MEMORY, "no memory for a conversation of %zu bytes", total);
    char *text = (char *)(v + n);
    size_t i = 0;
    for (const cJSON *m = root->child; m; m = m->next, i++) {
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
        const size_t rl = strlen(role->valuestring), cl = content ? strlen(content->valuestring) : 0;
        v[i].role = memcpy(text, role->valuestring, rl + 1);
        text += rl + 1;
        v[i].content = content ? memcpy(text, content->valuestring, cl + 1) : "";
        v[i].content_len = cl;
        if (content) text += cl + 1;
    }
    *msgs = n ? v : NULL;
    if (!n) free(v);
    *count = n;
    return NGPT_OK;
}

ngpt_status ngpt_chat_message_read_json(ngpt_chat_message **msgs, size_t *n, const void *json,
                                        size_t len)
{
    NGPT_FPMODE_SCOPE;
    if (!json || !msgs || !n)
        return ngpt_fail(NGPT_ERR_NULL_ARG, "ngpt_chat_message_read_json: NULL argument");
    *msgs = NULL, *n = 0;
    cJSON *root = cJSON_ParseWithLength(json, len);
    ngpt_status st = root ? read_messages(root, msgs, n)
                          : ngpt_fail(NGPT_ERR_BAD_FORMAT, "the conversation is not JSON");
    cJSON_Delete(root);
    return ngpt_prefixed("ngpt_chat_message_read_json", st);
}

void ngpt_chat_message_free(ngpt_chat_message *msgs)
{
    NGPT_FPMODE_SCOPE;
    free(msgs);
}

/* Bytes into out at *at (those past cap counted, not written). */
static void put(char *out, size_t cap, size_t *at, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++, ++*at)
        if (out && *at < cap) out[*at] = p[i];
}

/* A JSON string of p[0..n): quotes, backslashes and control bytes escaped,
 * every other byte as it is. */
static void put_json(char *out, size_t cap, size_t *at, const char *p, size_t n)
{
    put(out, cap, at, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        const uint8_t c = (uint8_t)p[i];
        char esc[8];
        if (c == '"' || c == '\\') put(out, cap, at, esc, (size_t)snprintf(esc, sizeof esc, "\\%c", c));
        else if (c < 0x20) put(out, cap, at, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
        else put(out, cap, at, p + i, 1);
    }
    put(out, cap, at, "\"", 1);
}

ngpt_status ngpt_chat_message_write_json(const ngpt_chat_message *msgs, size_t n, char *out,
                                         size_t cap, size_t *len)
{
    NGPT_FPMODE_SCOPE;
    const char *fn = "ngpt_chat_message_write_json";
    if (!len) return ngpt_fail(NGPT_ERR_NULL_ARG, "%s: NULL len", fn);
    ngpt_status st = ngpt_tmpl_check(msgs, n, NULL);
    if (st) return ngpt_prefixed(fn, st);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {        /* one message a line */
        const char *head = i ? ",\n {\"role\": " : "[{\"role\": ";
        put(out, cap, &at, head, strlen(head));
        put_json(out, cap, &at, msgs[i].role, strlen(msgs[i].role));
        put(out, cap, &at, ", \"content\": ", 13);
        put_json(out, cap, &at, msgs[i].content ? msgs[i].content : "", msgs[i].content_len);
        put(out, cap, &at, "}", 1);
    }
    put(out, cap, &at, n ? "]\n" : "[]\n", n ? 2 : 3);
    *len = at;
    if (out && at > cap)
        return ngpt_fail(NGPT_ERR_TOO_LONG, "%s: the JSON has %zu bytes but the buffer holds %zu",
                         fn, at, cap);
    return NGPT_OK;
}
