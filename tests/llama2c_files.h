/* llama2c_files.h — a tiny llama2.c model.bin (version 0: dim 16, hidden
 * 40, 2 layers, 4 heads, 2 KV heads, vocab 260, seq_len 8, shared
 * classifier) and its tokenizer.bin (<unk>, BOS, EOS, the 256 byte tokens,
 * " "), with fixed pseudo-random weights, for tests that need files to
 * import (test_fpmode; test_llama2c writes its own, richer ones). */
#ifndef NGPT_TEST_LLAMA2C_FILES_H
#define NGPT_TEST_LLAMA2C_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline bool llama2c_write_files(const char *model_bin, const char *tokenizer_bin)
{
    static const int32_t hdr[7] = {16, 40, 2, 4, 2, 260, 8};
    const size_t floats = 260 * 16 + 2 * 16 * 2 + 2 * (16 * 16 * 2 + 8 * 16 * 2) +
                          2 * 3 * 40 * 16 + 16 + 8 * 4;
    FILE *f = fopen(model_bin, "wb");
    bool ok = f && fwrite(hdr, 4, 7, f) == 7;
    uint32_t x = 12345;
    for (size_t i = 0; ok && i < floats; i++) {
        x = x * 1664525u + 1013904223u;
        const float v = (float)(int32_t)(x >> 16) / 65536.0f - 0.5f;
        ok = fwrite(&v, 4, 1, f) == 1;
    }
    if (f) ok = fclose(f) == 0 && ok;
    f = fopen(tokenizer_bin, "wb");
    const uint32_t max_len = 6;
    ok = ok && f && fwrite(&max_len, 4, 1, f) == 1;
    for (int i = 0; ok && i < 260; i++) {
        static const char *const first[3] = {"<unk>", "\n<s>\n", "\n</s>\n"};
        char piece[8];
        if (i < 3) snprintf(piece, sizeof piece, "%s", first[i]);
        else if (i < 259) snprintf(piece, sizeof piece, "<0x%02X>", i - 3);
        else snprintf(piece, sizeof piece, " ");
        const float score = 0.0f;
        const int32_t len = (int32_t)strlen(piece);
        ok = fwrite(&score, 4, 1, f) == 1 && fwrite(&len, 4, 1, f) == 1 &&
             fwrite(piece, 1, (size_t)len, f) == (size_t)len;
    }
    if (f) ok = fclose(f) == 0 && ok;
    return ok;
}

#endif
