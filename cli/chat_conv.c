/* chat_conv.c — `ngpt chat`'s conversation with a chat template: its
 * messages (each turn renders them all again: ngpt_template_render_tokens),
 * read from and written to JSON (--render's input; a session's messages,
 * kept next to its KV file as FILE.json), and the template --template
 * names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chat_conv.h"
#include "cli.h"

/* SmolLM2-Instruct's chat_template (HuggingFaceTB/SmolLM2-*-Instruct,
 * tokenizer_config.json): ChatML, with its system message when the
 * conversation has none. `--template chatml` renders it. */
#define CHATML_TEMPLATE                                                                        \
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"     \
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging " \
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "              \
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"     \
    "{{ '<|im_start|>assistant\n' }}{% endif %}"

void cli_conv_free(cli_conv *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free((char *)c->m[i].role);
        free((char *)c->m[i].content);
    }
    free(c->m);
    *c = (cli_conv){0};
}

int cli_conv_add(const char *cmd, cli_conv *c, const char *role, const void *text, size_t len)
{
    if (c->n == c->cap) {
        const size_t cap = c->cap ? 2 * c->cap : 16;
        ngpt_chat_message *m = realloc(c->m, cap * sizeof *m);
        if (!m) return cli_error(cmd, CLI_FAILED, "out of memory");
        c->m = m, c->cap = cap;
    }
    char *r = strdup(role), *t = malloc(len + 1);
    if (!r || !t) {
        free(r);
        free(t);
        return cli_error(cmd, CLI_FAILED, "out of memory");
    }
    if (len) memcpy(t, text, len);
    t[len] = '\0';
    c->m[c->n++] = (ngpt_chat_message){.role = r, .content = t, .content_len = len};
    return CLI_OK;
}

int cli_conv_read(const char *cmd, const char *path, cli_conv *c)
{
    size_t n = 0, count = 0;
    char *text = cli_read_file(path, &n);
    if (!text) return cli_error(cmd, CLI_FAILED, "cannot read %s: %s", path, strerror(errno));
    ngpt_chat_message *m = NULL;
    int rc = CLI_OK;
    if (ngpt_chat_message_read_json(&m, &count, text, n))
        rc = cli_error(cmd, CLI_FAILED, "%s: %s", path, cli_library_error());
    for (size_t i = 0; i < count && !rc; i++)
        rc = cli_conv_add(cmd, c, m[i].role, m[i].content, m[i].content_len);
    ngpt_chat_message_free(m);
    free(text);
    return rc;
}

int cli_conv_write(const char *cmd, const cli_conv *c, const char *path)
{
    size_t len = 0;
    if (ngpt_chat_message_write_json(c->m, c->n, NULL, 0, &len)) return cli_library_failed(cmd);
    char *json = malloc(len), tmp[4200];
    if (!json) return cli_error(cmd, CLI_FAILED, "out of memory");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = NULL;
    int rc = ngpt_chat_message_write_json(c->m, c->n, json, len, &len) ? cli_library_failed(cmd)
                                                                       : CLI_OK;
    if (!rc && (!(f = fopen(tmp, "wb")) || fwrite(json, 1, len, f) != len || fflush(f) ||
                fsync(fileno(f))))
        rc = cli_error(cmd, CLI_FAILED, "cannot write %s: %s", tmp, strerror(errno));
    if (f && fclose(f) && !rc)
        rc = cli_error(cmd, CLI_FAILED, "cannot write %s: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path))
        rc = cli_error(cmd, CLI_FAILED, "cannot write %s: %s", path, strerror(errno));
    if (rc) unlink(tmp);
    free(json);
    return rc;
}

/* A template file: a tokenizer_config.json (a name ending in .json) or Jinja text. */
static int template_file(const char *cmd, const char *path, ngpt_template **t)
{
    size_t n = 0;
    char *text = cli_read_file(path, &n);
    if (!text)
        return cli_error(cmd, CLI_USAGE, "--template must be chatml, plain, model or a template "
                         "file (a tokenizer_config.json or Jinja text); %s: %s", path, strerror(errno));
    const size_t len = strlen(path);
    const ngpt_status st = len >= 5 && !strcmp(path + len - 5, ".json")
                               ? ngpt_template_parse_config(t, text, n)
                               : ngpt_template_parse(t, text, n);
    free(text);
    return st ? cli_error(cmd, CLI_USAGE, "--template %s: %s", path, cli_library_error()) : CLI_OK;
}

int cli_chat_template(const char *cmd, const char *choice, const ngpt_model *m,
                      const ngpt_tokenizer *tok, ngpt_template **t, int32_t *im_end)
{
    *t = NULL, *im_end = -1;
    const bool chatml = tok && ngpt_tokenizer_chatml_specials(tok, NULL, im_end) == NGPT_OK;
    if (choice && !strcmp(choice, "plain")) return CLI_OK;
    if (!choice || !strcmp(choice, "model")) {
        if (ngpt_model_template(m, t))
            return cli_error(cmd, CLI_USAGE, "the model's chat template: %s (--template chatml "
                             "or plain chats without it)", cli_library_error());
        if (*t || !choice) {
            if (*t) *im_end = -1;       /* the model's end tokens end a reply */
            if (*t || !chatml) return CLI_OK;
        } else {
            return cli_error(cmd, CLI_USAGE, "--template model: the model carries no chat "
                             "template (ngpt import keeps the one its tokenizer_config.json has)");
        }
    } else if (strcmp(choice, "chatml")) {
        *im_end = -1;                   /* the tokenizer's end tokens end a reply */
        return template_file(cmd, choice, t);
    }
    if (!chatml) {
        if (!tok)
            return cli_error(cmd, CLI_USAGE, "--template chatml: the model has no tokenizer "
                             "(a byte-level model), so no special token <|im_start|>");
        ngpt_tokenizer_chatml_specials(tok, NULL, NULL);
        return cli_error(cmd, CLI_USAGE, "--template chatml: %s", cli_library_error());
    }
    if (ngpt_template_parse(t, CHATML_TEMPLATE, strlen(CHATML_TEMPLATE)))
        return cli_library_failed(cmd);
    return CLI_OK;
}

/* YYYY-MM-DD as Unix seconds (its midnight, UTC); false if it is not one. */
static bool parse_date(const char *s, int64_t *out)
{
    int y, m, d;
    char end;
    if (sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &end) != 3 || y < 1970 || m < 1 || m > 12 || d < 1 ||
        d > 31)
        return false;
    y -= m <= 2;                /* days from the civil date (H. Hinnant's algorithm) */
    const int era = y / 400, yoe = y - era * 400;
    const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *out = ((int64_t)era * 146097 + doe - 719468) * 86400;
    return true;
}

int cli_template_option(cli_args *a, ngpt_template_options *o)
{
    const char *v;
    if (cli_opt(a, "--date", &v)) {
        if (v && parse_date(v, &o->now)) return 1;
        if (v) cli_error(a->cmd, CLI_USAGE, "--date wants YYYY-MM-DD (1970 or later), not %s", v);
        return -1;
    }
    if (cli_flag(a, "--think")) return o->thinking = NGPT_THINKING_ON, 1;
    if (cli_flag(a, "--no-think")) return o->thinking = NGPT_THINKING_OFF, 1;
    return 0;
}

int cli_train_template(const char *cmd, const char *choice, const ngpt_model *m, ngpt_template **t)
{
    *t = NULL;
    if (choice && !strcmp(choice, "chatml")) return CLI_OK;
    if (choice && !strcmp(choice, "plain"))
        return cli_error(cmd, CLI_USAGE, "--template plain: conversations to train on need a "
                         "template that marks the turns (chatml, model or a file)");
    if (choice && strcmp(choice, "model")) return template_file(cmd, choice, t);
    if (m && ngpt_model_template(m, t))
        return cli_error(cmd, CLI_USAGE, "the model's chat template: %s (--template chatml "
                         "trains without it)", cli_library_error());
    if (!*t && choice)
        return cli_error(cmd, CLI_USAGE, "--template model: the model carries no chat template "
                         "(ngpt import keeps the one its tokenizer_config.json has)");
    return CLI_OK;
}
