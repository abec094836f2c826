/* gemma_tokenizer.h — a small tokenizer.json of Gemma 3's shape (a
 * SentencePiece-style BPE with byte_fallback: Replace(" " -> "▁"),
 * Split(" ", MergedWithPrevious), the decoder [Replace, ByteFallback, Fuse],
 * a BOS), for test_hf_tokenizer (which works its ids by hand) and
 * fuzz_tokenizer (one of its fixed tokenizers). Ids: <pad> <eos> <bos>
 * <unk> 0..3, <0x00>..<0xFF> 4..259, then ▁ a b \n é 日 😀 ▁a ab ▁▁ ▁ab
 * <start_of_turn> \n\n 日日 (260..273); added tokens: the four, \n, ▁▁ and
 * \n\n (not special), <start_of_turn>, and <image_soft_token> (274, past
 * the vocabulary). The merges: ▁+a, a+b, ▁+▁, ▁a+b, \n+\n, 日+日. */
#ifndef NGPT_TEST_GEMMA_TOKENIZER_H
#define NGPT_TEST_GEMMA_TOKENIZER_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GEMMA_BYTES = 4 };               /* <0x00> is id 4 */

#define GEMMA_NORM "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\u2581\"}"
#define GEMMA_PRE "{\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": \"MergedWithPrevious\", " \
                  "\"invert\": false}"
#define GEMMA_DEC "{\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": " \
                  "\"\u2581\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}]}"

/* The file with these normalizer, pre_tokenizer and decoder (JSON), with
 * or without byte_fallback, without the token <0xNN> of byte drop_byte (-1:
 * all there); malloc'd, NULL when out of memory. */
static inline char *gemma_tokenizer_json(const char *normalizer, const char *pre, const char *decoder,
                                         bool byte_fallback, int drop_byte)
{
    static const struct { int id; const char *name; bool special; } added[] = {
        {0, "<pad>", true}, {1, "<eos>", true}, {2, "<bos>", true}, {3, "<unk>", true},
        {263, "\\n", false}, {269, "\u2581\u2581", false}, {271, "<start_of_turn>", true},
        {272, "\\n\\n", false}, {274, "<image_soft_token>", true}};
    const size_t cap = 8192 + strlen(normalizer) + strlen(pre) + strlen(decoder);
    char *p = malloc(cap);
    if (!p) return NULL;
    size_t n = (size_t)snprintf(p, cap, "{\"normalizer\": %s, \"pre_tokenizer\": %s, \"decoder\": %s, "
                                "\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": "
                                "[{\"SpecialToken\": {\"id\": \"<bos>\"}}, {\"Sequence\": {\"id\": \"A\"}}]}, "
                                "\"added_tokens\": [", normalizer, pre, decoder);
    for (size_t i = 0; i < sizeof added / sizeof added[0]; i++)
        n += (size_t)snprintf(p + n, cap - n, "%s{\"id\": %d, \"content\": \"%s\", \"special\": %s, "
                              "\"normalized\": false}", i ? ", " : "", added[i].id, added[i].name,
                              added[i].special ? "true" : "false");
    n += (size_t)snprintf(p + n, cap - n, "], \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": "
                          "\"<unk>\", \"fuse_unk\": true, \"byte_fallback\": %s, \"vocab\": {\"<pad>\": 0, "
                          "\"<eos>\": 1, \"<bos>\": 2, \"<unk>\": 3", byte_fallback ? "true" : "false");
    for (int b = 0; b < 256; b++)
        if (b != drop_byte) n += (size_t)snprintf(p + n, cap - n, ", \"<0x%02X>\": %d", b, GEMMA_BYTES + b);
    snprintf(p + n, cap - n, ", \"\u2581\": 260, \"a\": 261, \"b\": 262, \"\\n\": 263, \"\u00e9\": 264, "
             "\"\u65e5\": 265, \"\U0001F600\": 266, \"\u2581a\": 267, \"ab\": 268, \"\u2581\u2581\": 269, "
             "\"\u2581ab\": 270, \"<start_of_turn>\": 271, \"\\n\\n\": 272, \"\u65e5\u65e5\": 273}, "
             "\"merges\": [[\"\u2581\", \"a\"], [\"a\", \"b\"], [\"\u2581\", \"\u2581\"], [\"\u2581a\", \"b\"], "
             "[\"\\n\", \"\\n\"], [\"\u65e5\", \"\u65e5\"]]}}");
    return p;
}

#endif
