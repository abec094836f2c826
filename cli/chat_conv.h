/* chat_conv.h — `ngpt chat`'s conversation with a chat template, and the
 * template --template names for chat and train --chat (cli/chat_conv.c). */
#ifndef NGPT_CLI_CHAT_CONV_H
#define NGPT_CLI_CHAT_CONV_H

#include "cli.h"

/* A chat's conversation with a template: its messages, owned. */
typedef struct cli_conv {
    ngpt_chat_message *m;
    size_t n, cap;
} cli_conv;
void cli_conv_free(cli_conv *c);
int cli_conv_add(const char *cmd, cli_conv *c, const char *role, const void *text, size_t len);
/* The JSON list of {role, content} at path ("-": stdin) appended to c. */
int cli_conv_read(const char *cmd, const char *path, cli_conv *c);
/* c as that JSON, written to path atomically. */
int cli_conv_write(const char *cmd, const cli_conv *c, const char *path);
/* --template's choice (NULL: the model's, else ChatML when the tokenizer
 * has its markers, else plain): *t the template, NULL for plain; chatml is
 * SmolLM2-Instruct's template, and *im_end its end (-1: the tokenizer's end
 * tokens end a reply). A usage error, printed, when it cannot be had. */
int cli_chat_template(const char *cmd, const char *choice, const ngpt_model *m,
                      const ngpt_tokenizer *tok, ngpt_template **t, int32_t *im_end);
/* --date YYYY-MM-DD, --think and --no-think, the template's options: 1
 * taken, -1 a usage error (printed), 0 none of them. */
int cli_template_option(cli_args *a, ngpt_template_options *o);
/* train --chat's --template (NULL: the model's when it carries one, else
 * ChatML): *t, NULL for the tokenizer's ChatML turns. A usage error,
 * printed, when it cannot be had. */
int cli_train_template(const char *cmd, const char *choice, const ngpt_model *m, ngpt_template **t);

#endif
