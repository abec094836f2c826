/* template.h — chat templates (src/template/): a Jinja subset that renders
 * tokenizer_config.json's chat_template as Hugging Face's
 * apply_chat_template does (@huggingface/jinja, which transformers.js
 * uses), byte for byte; docs/GENERATION.md, "Chat templates", lists the
 * subset. The room needs nothing of the model: text in, text out. What the
 * other rooms use besides the public functions (ngpt.h, "chat templates"):
 * the model's template from its file (io/model.c) and a render that says
 * which bytes came from the conversation (template/tokens.c, which recognises
 * special tokens only in the others). Failures leave a bare message. */
#ifndef NGPT_TEMPLATE_TEMPLATE_H
#define NGPT_TEMPLATE_TEMPLATE_H

#include <stdint.h>

#include "ngpt.h"

/* The template of a tokenizer_config.json (json, len bytes; a model file's
 * chat_template tensor holds the same keys): its chat_template, a string or
 * the "default" of a list, and the special tokens apply_chat_template
 * passes (bos_token, eos_token, unk_token, sep_token, pad_token, cls_token,
 * mask_token). src names the text in messages. */
ngpt_status ngpt_tmpl_from_config(ngpt_template **t, const void *json, size_t len,
                                  const char *src);

/* A rendering: n bytes (NUL-terminated), and taint[i] = 1 where byte i came
 * from a message's role or content (taint NULL: none did). malloc'd. */
typedef struct ngpt_tmpl_text {
    char *p;
    uint8_t *taint;
    size_t n;
} ngpt_tmpl_text;

/* Renders the n messages (checked: ngpt_tmpl_check) with opt (NULL: the
 * defaults). */
ngpt_status ngpt_tmpl_render(const ngpt_template *t, const ngpt_chat_message *msgs, size_t n,
                             const ngpt_template_options *opt, ngpt_tmpl_text *out);
void ngpt_tmpl_text_free(ngpt_tmpl_text *text);

/* The arguments every render takes, checked once at the public boundary:
 * msgs (n of them; NULL when n is 0), each with a role and reserved zero,
 * and opt's reserved bytes and values. */
ngpt_status ngpt_tmpl_check(const ngpt_chat_message *msgs, size_t n,
                            const ngpt_template_options *opt);

#endif
