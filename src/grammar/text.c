/* text.c — GBNF string literals for what writes GBNF (text.h). */
#include "grammar/text.h"

void ngpt_text_literal(ngpt_text *t, const char *s, size_t n)
{
    ngpt_text_put(t, "\"", 1);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp = u[i];
        size_t k = 1;
        if (cp >= 0xF0) cp &= 0x07, k = 4;
        else if (cp >= 0xE0) cp &= 0x0F, k = 3;
        else if (cp >= 0xC0) cp &= 0x1F, k = 2;
        for (size_t j = 1; j < k && i + j < n; j++) cp = cp << 6 | (u[i + j] & 0x3F);
        i += k;
        if (cp >= 0x20 && cp < 0x7F && cp != '"' && cp != '\\') {
            char ch = (char)cp;
            ngpt_text_put(t, &ch, 1);
        } else {
            ngpt_text_cp(t, cp);
        }
    }
    ngpt_text_put(t, "\"", 1);
}
