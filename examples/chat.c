/* chat.c — chat with an instruct model (SmolLM2-Instruct's ChatML) using
 * only the installed library: one user line from stdin per turn, the reply
 * streamed to stdout, the conversation kept as tokens in one KV cache.
 *
 *   cc chat.c -o chat $(pkg-config --cflags --libs ngpt)
 *   ./chat model.ngpt "You are a helpful assistant." < questions.txt
 *
 * Greedy (temperature 0): the replies are `ngpt chat --temp 0 --system ...`'s.
 */
#include <ngpt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAP = 1 << 16, REPLY_MAX = 128 };

static int32_t conv[CAP];       /* the conversation's tokens */
static size_t n_conv;

static int fail(void)
{
    fprintf(stderr, "chat: %s\n", ngpt_last_error());
    return 1;
}

/* Appends one ChatML turn (open: the generation prompt) to the conversation. */
static ngpt_status turn(const ngpt_tokenizer *tok, const char *role, const char *text, bool open)
{
    size_t n = 0;
    ngpt_status st = ngpt_tokenizer_chatml_turn(tok, role, text, text ? strlen(text) : 0, open,
                                                conv + n_conv, CAP - n_conv, &n);
    if (!st) n_conv += n;
    return st;
}

static int print_token(int32_t token, void *user)
{
    const uint8_t *bytes;
    size_t len;
    if (!ngpt_tokenizer_token(user, token, &bytes, &len)) fwrite(bytes, 1, len, stdout);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: chat MODEL.ngpt SYSTEM_MESSAGE < lines\n");
        return 2;
    }
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    const ngpt_tokenizer *tok = NULL;   /* the model's, borrowed: lives as long as it */
    int32_t end, nl[4], reply[REPLY_MAX];
    size_t n_nl = 0;
    int rc = 0;
    /* the markers <|im_start|> and <|im_end|> are the tokenizer's special tokens */
    if (ngpt_model_open(&model, argv[1]) || ngpt_model_tokenizer(model, &tok)) {
        rc = fail();
    } else if (!tok) {
        fprintf(stderr, "chat: %s carries no tokenizer: not an instruct model\n", argv[1]);
        rc = 1;
    } else if (ngpt_tokenizer_chatml_specials(tok, NULL, &end) ||
               ngpt_tokenizer_encode(tok, "\n", 1, nl, 4, &n_nl) ||
               ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0) ||
               turn(tok, "system", argv[2], false)) {
        rc = fail();
    }
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = REPLY_MAX;
    gc.sampler.temperature = 0.0f;
    gc.end_tokens = &end;           /* a reply ends at <|im_end|> */
    gc.n_end_tokens = 1;
    gc.keep_cache = true;           /* each turn prefills only what the cache lacks */
    char line[4096];
    while (!rc && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        ngpt_generate_result r;
        if (turn(tok, "user", line, false) || turn(tok, "assistant", NULL, true) ||
            ngpt_context_generate(ctx, &gc, conv, (int32_t)n_conv, reply, REPLY_MAX, print_token,
                                  (void *)tok, &r)) {
            rc = fail();
            break;
        }
        putchar('\n');
        /* the reply as the model wrote it, then <|im_end|> "\n": the next turn goes on */
        if (n_conv + (size_t)r.n_tokens + 1 + n_nl > CAP) {
            fprintf(stderr, "chat: the conversation is full\n");
            rc = 1;
            break;
        }
        memcpy(conv + n_conv, reply, (size_t)r.n_tokens * sizeof *reply);
        n_conv += (size_t)r.n_tokens;
        conv[n_conv++] = end;
        memcpy(conv + n_conv, nl, n_nl * sizeof *nl);
        n_conv += n_nl;
    }
    ngpt_context_free(ctx);         /* contexts first, then their model */
    ngpt_model_close(model);
    return rc;
}
