/* fuzz_chat.c — ChatML turns (ngpt_tokenizer_chatml_turn) on a fixed tokenizer with
 * <|im_start|>, <|im_end|> and merges that spell parts of them ("<|", "im",
 * "|>"). The input: a flags byte (bit 0: an open turn), the role's length
 * (mod 32), the role, then the text. Properties: a role that is empty or
 * holds "\n" is refused with a message, anything else is encoded; the ids
 * hold exactly one <|im_start|> (first) and, closed, one <|im_end|> followed
 * by "\n" and nothing else: no text makes a marker; they decode to
 * "<|im_start|>" role "\n" text ("<|im_end|>\n"); counting gives the same
 * number, and a buffer one id short is NGPT_ERR_TOO_LONG with that count.
 * Flags bit 1 instead reads the rest as conversation data, JSON Lines
 * (ngpt_data_tokenize_chat): it is refused with a message, or its batches'
 * targets are each the next token or NGPT_TARGET_IGNORE, with at least one
 * kept; with bit 2 too, ChatML's chat template (ngpt_template_parse) renders
 * the same conversations to the same tokens and targets as the turns, or
 * both refuse them. Seeds: fuzz/corpus/chat. */
#include "fuzz.h"
#include "../tests/gpt2_tokenizer.h"

enum { IM_START = 259, IM_END = 260 };

static ngpt_tokenizer *chatml(void)
{
    static ngpt_tokenizer *tok;
    if (tok) return tok;
    char tokens[200];
    snprintf(tokens, sizeof tokens, "\"<|\": 256, \"im\": 257, \"|>\": 258, \"<|im_start|>\": %d, "
             "\"<|im_end|>\": %d", IM_START, IM_END);
    if (!(tok = gpt2_tokenizer(tokens, "#version: 0.2\n< |\ni m\n| >\n")))
        fuzz_fail("the fixed ChatML tokenizer: %s", ngpt_last_error());
    return tok;
}

static const ngpt_template *chatml_template(void)
{
    static ngpt_template *t;
    static const char text[] =
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    if (!t && ngpt_template_parse(&t, text, sizeof text - 1))
        fuzz_fail("ChatML's template: %s", ngpt_last_error());
    return t;
}

enum { SEQ = 4, B = 3 };

/* The input as conversations, rendered by tpl (NULL: ChatML turns): the
 * data (NULL: refused, or shorter than a window) and *st. */
static ngpt_data *chat_tokens(const ngpt_tokenizer *tok, const ngpt_template *tpl,
                              const uint8_t *data, size_t size, ngpt_status *st)
{
    ngpt_data *d = NULL;
    *st = NGPT_ERR_BAD_ARG;
    if (ngpt_data_open_mem(&d, data, size, 0.0f, SEQ)) return NULL;
    *st = ngpt_data_tokenize_chat(d, tok, tpl, NULL, SEQ);
    fuzz_expect_message(*st, "ngpt_data_tokenize_chat");
    if (*st && *st != NGPT_ERR_BAD_ARG && *st != NGPT_ERR_NO_MEMORY && *st != NGPT_ERR_TOO_LONG &&
        !(tpl && *st == NGPT_ERR_UNSUPPORTED))      /* past the template's limits */
        fuzz_fail("conversations refused with %s: %s", ngpt_status_string(*st), ngpt_last_error());
    if (*st) ngpt_data_free(d);
    return *st ? NULL : d;
}

/* ChatML's template gives the turns' tokens and targets. */
static void same_as_turns(const ngpt_tokenizer *tok, const uint8_t *data, size_t size)
{
    ngpt_status st_turns, st_tpl;
    ngpt_data *a = chat_tokens(tok, NULL, data, size, &st_turns);
    ngpt_data *b = chat_tokens(tok, chatml_template(), data, size, &st_tpl);
    if (!a != !b && st_tpl != NGPT_ERR_UNSUPPORTED && st_turns != NGPT_ERR_NO_MEMORY &&
        st_tpl != NGPT_ERR_NO_MEMORY)
        fuzz_fail("the turns: %s, the template: %s", ngpt_status_string(st_turns),
                  ngpt_status_string(st_tpl));
    size_t na[2] = {0, 0}, nb[2] = {0, 0};
    if (a && b && (ngpt_data_token_counts(a, &na[0], &na[1]) ||
                   ngpt_data_token_counts(b, &nb[0], &nb[1]) || na[0] != nb[0] || na[1] != nb[1]))
        fuzz_fail("the turns make %zu + %zu tokens, the template %zu + %zu", na[0], na[1], nb[0],
                  nb[1]);
    for (uint64_t i = 0; a && b && i < 4; i++) {
        int32_t ta[B * SEQ], ga[B * SEQ], tb[B * SEQ], gb[B * SEQ];
        if (ngpt_data_batch(a, NGPT_SPLIT_TRAIN, 1, i, B, SEQ, ta, ga) ||
            ngpt_data_batch(b, NGPT_SPLIT_TRAIN, 1, i, B, SEQ, tb, gb) ||
            memcmp(ta, tb, sizeof ta) || memcmp(ga, gb, sizeof ga))
            fuzz_fail("batch %llu differs between the turns and the template",
                      (unsigned long long)i);
    }
    ngpt_data_free(a);
    ngpt_data_free(b);
}

/* The input as conversations: refused with a message, or batches whose
 * targets are the next token or ignored, some kept. */
static void chat_data(const ngpt_tokenizer *tok, const uint8_t *data, size_t size)
{
    ngpt_status st;
    ngpt_data *d = chat_tokens(tok, NULL, data, size, &st);
    for (uint64_t i = 0; d && i < 4; i++) {
        int32_t tk[B * SEQ], tg[B * SEQ];
        if (ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, i, B, SEQ, tk, tg))
            fuzz_fail("a batch of tokenized conversations: %s", ngpt_last_error());
        for (int j = 0; j < B * SEQ; j++)
            if (tg[j] != NGPT_TARGET_IGNORE && (tg[j] < 0 || tg[j] > IM_END ||
                                                (j % SEQ < SEQ - 1 && tg[j] != tk[j + 1])))
                fuzz_fail("target %d of batch %llu is %d, token after it %d", j,
                          (unsigned long long)i, (int)tg[j], j % SEQ < SEQ - 1 ? (int)tk[j + 1] : -1);
    }
    ngpt_data_free(d);
}

NGPT_FUZZ_ENTRY(chat)
{
    if (size < 2) return 0;
    const ngpt_tokenizer *tok = chatml();
    if (data[0] & 2) {
        if (data[0] & 4) same_as_turns(tok, data + 1, size - 1);
        else chat_data(tok, data + 1, size - 1);
        return 0;
    }
    const bool open = data[0] & 1;
    size_t skip = data[1] % 32u;                /* the role's bytes */
    if (skip > size - 2) skip = size - 2;
    char role[33];
    memcpy(role, data + 2, skip);
    role[skip] = '\0';
    const size_t role_len = strlen(role);       /* a NUL ends the role, as in C */
    const uint8_t *text = data + 2 + skip;
    const size_t len = size - 2 - skip;

    size_t count = 0;
    ngpt_status st = ngpt_tokenizer_chatml_turn(tok, role, text, len, open, NULL, 0, &count);
    fuzz_expect_message(st, "ngpt_tokenizer_chatml_turn");
    const bool bad_role = role_len == 0 || memchr(role, '\n', role_len);
    if (bad_role != (st == NGPT_ERR_BAD_ARG) || (!bad_role && st))
        fuzz_fail("role \"%s\": %s (%s)", role, ngpt_status_string(st), ngpt_last_error());
    if (st) return 0;

    int32_t *ids = malloc(count * sizeof *ids);
    uint8_t *back = malloc(role_len + len + 32);
    if (!ids || !back) abort();
    size_t n = 0, bytes = 0;
    st = ngpt_tokenizer_chatml_turn(tok, role, text, len, open, ids, count - 1, &n);
    if (st != NGPT_ERR_TOO_LONG || n != count)
        fuzz_fail("one id short: %s, %zu ids (want %zu)", ngpt_status_string(st), n, count);
    if (ngpt_tokenizer_chatml_turn(tok, role, text, len, open, ids, count, &n) || n != count)
        fuzz_fail("encode: %zu ids, counted %zu: %s", n, count, ngpt_last_error());
    int starts = 0, ends = 0;
    for (size_t i = 0; i < n; i++) starts += ids[i] == IM_START, ends += ids[i] == IM_END;
    if (ids[0] != IM_START || starts != 1 || ends != !open ||
        (!open && (n < 3 || ids[n - 2] != IM_END || ids[n - 1] != '\n')))
        fuzz_fail("markers: %d starts, %d ends in %zu ids (open %d)", starts, ends, n, open);
    if (ngpt_tokenizer_decode(tok, ids, n, back, role_len + len + 32, &bytes))
        fuzz_fail("decode: %s", ngpt_last_error());
    const size_t head = 12 + role_len + 1, tail = open ? 0 : 11;
    if (bytes != head + len + tail || memcmp(back, "<|im_start|>", 12) ||
        memcmp(back + 12, role, role_len) || back[12 + role_len] != '\n' ||
        (len && memcmp(back + head, text, len)) ||
        (!open && memcmp(back + head + len, "<|im_end|>\n", 11)))
        fuzz_fail("the turn decodes to %zu bytes, not the template's %zu", bytes, head + len + tail);
    free(ids);
    free(back);
    return 0;
}
