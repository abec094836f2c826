/* fuzz_template.c — chat templates (ngpt_template_parse, _render,
 * _render_tokens, ngpt_chat_message_read_json) on any template text and
 * conversation. The input: a flags byte (bit 0: the generation prompt,
 * bits 1-2: enable_thinking), the template's text up to a NUL, then the
 * conversation's JSON (none: one user message). Properties: a parse
 * either makes a template or fails with a message and makes none; so does
 * a render, and within the limits (docs/GENERATION.md, "Chat templates"),
 * so no input runs, recurses or grows without end; counting gives the
 * rendering's size, a buffer one byte short is NGPT_ERR_TOO_LONG with that
 * size, two renders agree; the rendering's tokens (a fixed ChatML
 * tokenizer) decode to exactly its text, and held as the cache's tokens
 * they are kept whole. Seeds: fuzz/corpus/template. */
#include "fuzz.h"
#include "../tests/gpt2_tokenizer.h"

static ngpt_tokenizer *chatml(void)
{
    static ngpt_tokenizer *tok;
    if (tok) return tok;
    if (!(tok = gpt2_tokenizer("\"<|\": 256, \"im\": 257, \"<|im_start|>\": 258, \"<|im_end|>\": 259",
                               "#version: 0.2\n< |\ni m\n")))
        fuzz_fail("the fixed ChatML tokenizer: %s", ngpt_last_error());
    return tok;
}

/* The rendering's tokens, checked against its text. */
static void tokens(const ngpt_template *t, const ngpt_chat_message *m, size_t n,
                   const ngpt_template_options *o, const char *text, size_t len)
{
    const ngpt_tokenizer *tok = chatml();
    size_t count = 0, again = 0, bytes = 0;
    ngpt_status st = ngpt_template_render_tokens(t, tok, m, n, o, NULL, 0, NULL, 0, &count);
    if (st) fuzz_fail("tokens of a rendering that renders: %s", ngpt_last_error());
    if (count > len + 1) fuzz_fail("%zu tokens for %zu bytes", count, len);
    int32_t *ids = malloc((count + 1) * sizeof *ids), *kept = malloc((count + 1) * sizeof *ids);
    char *back = malloc(len + 1);
    if (!ids || !kept || !back) abort();
    if (ngpt_template_render_tokens(t, tok, m, n, o, NULL, 0, ids, count, &again) || again != count)
        fuzz_fail("tokens: %zu, counted %zu: %s", again, count, ngpt_last_error());
    if (ngpt_tokenizer_decode(tok, ids, count, back, len, &bytes) || bytes != len ||
        (len && memcmp(back, text, len)))
        fuzz_fail("the %zu tokens decode to %zu bytes, not the rendering's %zu", count, bytes, len);
    if (ngpt_template_render_tokens(t, tok, m, n, o, ids, count, kept, count, &again) ||
        again != count || (count && memcmp(kept, ids, count * sizeof *ids)))
        fuzz_fail("held, the rendering's own tokens are not kept: %zu of %zu", again, count);
    free(ids), free(kept), free(back);
}

NGPT_FUZZ_ENTRY(template)
{
    if (size < 1) return 0;
    ngpt_template_options o = ngpt_template_options_default();
    o.add_generation_prompt = data[0] & 1;
    o.thinking = (ngpt_thinking)((data[0] >> 1) % 3);
    o.now = 1721952000;
    const uint8_t *text = data + 1, *nul = memchr(text, 0, size - 1);
    const size_t text_len = nul ? (size_t)(nul - text) : size - 1;
    ngpt_template *t = (ngpt_template *)1;
    ngpt_status st = ngpt_template_parse(&t, (const char *)text, text_len);
    fuzz_expect_message(st, "ngpt_template_parse");
    if (st ? t != NULL : t == NULL) fuzz_fail("parse: %s and a template %p", ngpt_status_string(st), (void *)t);
    if (st) return 0;
    ngpt_chat_message one = {.role = "user", .content = "Hi <|im_end|> there", .content_len = 19};
    ngpt_chat_message *m = &one, *read = NULL;
    size_t n = 1;
    if (nul) {
        const size_t json_len = size - 1 - text_len - 1;
        st = ngpt_chat_message_read_json(&read, &n, nul + 1, json_len);
        fuzz_expect_message(st, "ngpt_chat_message_read_json");
        if (st && (read || n)) fuzz_fail("a refused conversation gives %zu messages", n);
        m = read;
    }
    size_t len = 0, again = 0;
    const bool conversation = !st;
    if (conversation) st = ngpt_template_render(t, m, n, &o, NULL, 0, &len);
    if (conversation && st) {
        fuzz_expect_message(st, "ngpt_template_render");
    } else if (conversation) {
        char *a = malloc(len + 1), *b = malloc(len + 1);
        if (!a || !b) abort();
        if (len && (ngpt_template_render(t, m, n, &o, a, len - 1, &again) != NGPT_ERR_TOO_LONG || again != len))
            fuzz_fail("one byte short: %zu (want %zu)", again, len);
        if (ngpt_template_render(t, m, n, &o, a, len, &again) || again != len ||
            ngpt_template_render(t, m, n, &o, b, len, &again) || again != len || memcmp(a, b, len))
            fuzz_fail("two renders of %zu bytes differ: %s", len, ngpt_last_error());
        tokens(t, m, n, &o, a, len);
        free(a), free(b);
    }
    ngpt_chat_message_free(read);
    ngpt_template_free(t);
    return 0;
}
