/* gpt2_tokenizer.h — a small tokenizer in GPT-2's file format, made in
 * memory for the chat tests and fuzz targets (tests/test_chat.c,
 * tests/test_template.c, fuzz/fuzz_chat.c, fuzz/fuzz_template.c): byte b
 * is id b, then the tokens and merges the caller names. */
#ifndef NGPT_TEST_GPT2_TOKENIZER_H
#define NGPT_TEST_GPT2_TOKENIZER_H

#include <stdio.h>
#include <string.h>

#include "ngpt.h"

/* GPT-2's printable form of byte b (its bytes_to_unicode), JSON-escaped. */
static inline size_t gpt2_char(char *out, int b)
{
#define PRINTABLE(x) (((x) >= '!' && (x) <= '~') || ((x) >= 0xA1 && (x) <= 0xAC) || (x) >= 0xAE)
    int c = b;
    if (!PRINTABLE(b)) {
        c = 256;
        for (int x = 0; x < b; x++) c += !PRINTABLE(x);
    }
#undef PRINTABLE
    if (c == '"' || c == '\\') return (size_t)sprintf(out, "\\%c", c);
    if (c < 0x80) return (size_t)sprintf(out, "%c", c);
    return (size_t)sprintf(out, "%c%c", 0xC0 | c >> 6, 0x80 | (c & 0x3F));
}

/* The 256 bytes, then tokens (JSON members: "name": id, ...), merged by
 * bpe (vocab.bpe's text, "#version: 0.2\n" then "a b" lines); a name
 * absent from bpe's results is a special token. NULL on failure
 * (ngpt_last_error says why). */
static inline ngpt_tokenizer *gpt2_tokenizer(const char *tokens, const char *bpe)
{
    static char json[16384];
    size_t n = 0;
    char ch[8];
    n += (size_t)snprintf(json + n, sizeof json - n, "{");
    for (int b = 0; b < 256; b++) {
        ch[gpt2_char(ch, b)] = '\0';
        n += (size_t)snprintf(json + n, sizeof json - n, "\"%s\": %d, ", ch, b);
    }
    n += (size_t)snprintf(json + n, sizeof json - n, "%s}", tokens);
    ngpt_tokenizer *tok = NULL;
    if (ngpt_tokenizer_load_gpt2_mem(&tok, json, n, bpe, strlen(bpe))) return NULL;
    return tok;
}

#endif
