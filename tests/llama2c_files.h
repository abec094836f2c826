/* llama2c_files.h — a tiny llama2.c model.bin (version 0: dim 4, hidden 8,
 * 1 layer, 2 heads, 1 KV head, vocab 260, seq_len 8, shared classifier;
 * 4876 bytes, under the fuzzers' input limit) and its tokenizer.bin (<unk>, BOS, EOS, the 256 byte tokens,
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
    static const int32_t hdr[7] = {4, 8, 1, 2, 1, 260, 8};
    /* tok_emb, rms_att + rms_ffn, wq + wo, wk + wv, w1 + w2 + w3, rms_final, freq_cis */
    const size_t floats = 260 * 4 + 2 * 4 + 2 * 4 * 4 + 2 * 2 * 4 + 3 * 8 * 4 + 4 + 8 * 2;
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
