/* chat.c — chat with an instruct model using only the installed library:
 * one user line from stdin per turn, the reply streamed to stdout, in the
 * model's own chat template (Llama 3's headers, Qwen's ChatML, Gemma's
 * turns; ChatML when the model carries none), the conversation kept in one
 * KV cache.
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

enum { CAP = 1 << 16, REPLY_MAX = 128, TURNS = 256 };

/* ChatML, for a model that carries no template of its own */
static const char CHATML[] =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

static ngpt_chat_message msgs[TURNS];
static size_t n_msgs;
static int32_t held[CAP], prompt[CAP];   /* what the cache holds; this turn's prompt */
static size_t n_held;

static int fail(void)
{
    fprintf(stderr, "chat: %s\n", ngpt_last_error());
    return 1;
}

static int print_token(int32_t token, void *user)
{
    const uint8_t *bytes;
    size_t len;
    if (!ngpt_tokenizer_token(user, token, &bytes, &len)) fwrite(bytes, 1, len, stdout);
    fflush(stdout);
    return 0;
}

/* Adds a message (its text copied). */
static void add(const char *role, const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy || n_msgs == TURNS) {
        fprintf(stderr, "chat: the conversation is full\n");
        exit(1);
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    msgs[n_msgs++] = (ngpt_chat_message){.role = role, .content = copy, .content_len = len};
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: chat MODEL.ngpt SYSTEM_MESSAGE < lines\n");
        return 2;
    }
    ngpt_model *model = NULL;
    ngpt_context *ctx = NULL;
    ngpt_template *tpl = NULL;
    const ngpt_tokenizer *tok = NULL;   /* the model's, borrowed: lives as long as it */
    int32_t im_end = -1, reply[REPLY_MAX];
    int rc = 0;
    if (ngpt_model_open(&model, argv[1]) || ngpt_model_tokenizer(model, &tok) ||
        ngpt_model_template(model, &tpl)) {
        rc = fail();
    } else if (!tok) {
        fprintf(stderr, "chat: %s carries no tokenizer: not an instruct model\n", argv[1]);
        rc = 1;
    } else if ((!tpl && (ngpt_tokenizer_special_id(tok, "<|im_end|>", &im_end) ||
                         ngpt_template_parse(&tpl, CHATML, sizeof CHATML - 1))) ||
               ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0)) {
        rc = fail();
    }
    add("system", argv[2], strlen(argv[2]));
    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.max_tokens = REPLY_MAX;
    gc.sampler.temperature = 0.0f;
    if (im_end >= 0) gc.end_tokens = &im_end, gc.n_end_tokens = 1;  /* else the model's */
    gc.keep_cache = true;           /* each turn prefills only what the cache lacks */
    const ngpt_template_options opt = ngpt_template_options_default();  /* + the open turn */
    static char line[4096], text[REPLY_MAX * 256];     /* a reply's bytes */
    while (!rc && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        add("user", line, strlen(line));
        /* the whole conversation rendered; where it spells what the cache
         * holds, those tokens are kept (the replies as the model wrote them) */
        size_t n = 0, len = 0;
        ngpt_generate_result r;
        if (ngpt_template_render_tokens(tpl, tok, msgs, n_msgs, &opt, held, n_held, prompt, CAP,
                                        &n) ||
            ngpt_context_generate(ctx, &gc, prompt, (int32_t)n, reply, REPLY_MAX, print_token,
                                  (void *)tok, &r) ||
            ngpt_tokenizer_decode(tok, reply, (size_t)r.n_tokens, text, sizeof text, &len)) {
            rc = fail();
            break;
        }
        putchar('\n');
        if (n + (size_t)r.n_tokens > CAP) {
            fprintf(stderr, "chat: the conversation is full\n");
            rc = 1;
            break;
        }
        add("assistant", text, len);            /* the next rendering closes the turn */
        memcpy(held, prompt, n * sizeof *prompt);
        memcpy(held + n, reply, (size_t)r.n_tokens * sizeof *reply);
        n_held = n + (size_t)r.n_tokens;
    }
    ngpt_template_free(tpl);
    ngpt_context_free(ctx);         /* contexts first, then their model */
    ngpt_model_close(model);
    for (size_t i = 0; i < n_msgs; i++) free((void *)msgs[i].content);
    return rc;
}
