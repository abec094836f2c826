/* test_chat.c — ChatML turns (ngpt_tokenizer_chatml_specials, ngpt_tokenizer_chatml_turn) on a
 * tokenizer built here in GPT-2's file format: byte b is id b, four merges
 * ("us", "er", "user", "<|") and three special tokens. The turns' ids are
 * written out by hand; marker text in a message gives ordinary tokens; a
 * tokenizer without the markers is refused by name; and a tiny model
 * trained on a ChatML conversation answers "ok" and stops at <|im_end|>,
 * which is not part of the reply, over two turns in one kept cache. */
#include <unistd.h>

#include <math.h>

#include "gpt2_tokenizer.h"
#include "test.h"

static char path[256];      /* the trained model */

enum { US = 256, ER, USER, LT_BAR, EOT, IM_START, IM_END, V_CHAT };

/* The tokenizer: bytes, the merges, then the specials named in `specials`
 * (a JSON fragment of ids from EOT on). */
static ngpt_tokenizer *make_tokenizer(const char *specials)
{
    char tokens[1024];
    snprintf(tokens, sizeof tokens, "\"us\": %d, \"er\": %d, \"user\": %d, \"<|\": %d, %s", US, ER,
             USER, LT_BAR, specials);
    ngpt_tokenizer *tok = gpt2_tokenizer(tokens, "#version: 0.2\nu s\ne r\nus er\n< |\n");
    CHECK(tok != NULL, "the test's tokenizer: %s", ngpt_last_error());
    return tok;
}

static ngpt_tokenizer *chatml_tokenizer(void)
{
    return make_tokenizer("\"<|endoftext|>\": 260, \"<|im_start|>\": 261, \"<|im_end|>\": 262");
}

static bool same_ids(const int32_t *got, size_t n, const int32_t *want, size_t n_want)
{
    if (n != n_want) return false;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) return false;
    return true;
}

static void print_ids(const char *what, const int32_t *ids, size_t n)
{
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", (int)ids[i]);
    fputc('\n', stderr);
}

/* Appends one turn to ids[*n..]; false on failure (reported). */
static bool turn(const ngpt_tokenizer *tok, const char *role, const char *text, bool open,
                 int32_t *ids, size_t cap, size_t *n)
{
    size_t k = 0;
    ngpt_status st = ngpt_tokenizer_chatml_turn(tok, role, text, text ? strlen(text) : 0, open, ids + *n,
                                    cap - *n, &k);
    CHECK(st == NGPT_OK, "turn %s: %s", role, ngpt_last_error());
    *n += k;
    return st == NGPT_OK;
}

static void specials(void)
{
    ngpt_tokenizer *tok = chatml_tokenizer();
    if (!tok) return;
    int32_t start = -1, end = -1;
    CHECK_OK(ngpt_tokenizer_chatml_specials(tok, &start, &end));
    CHECK(start == IM_START && end == IM_END, "markers %d %d", (int)start, (int)end);
    CHECK_OK(ngpt_tokenizer_chatml_specials(tok, NULL, NULL));
    ngpt_tokenizer_free(tok);

    /* no markers, or only one: refused, naming the one missing */
    tok = make_tokenizer("\"<|endoftext|>\": 260");
    CHECK_STATUS(ngpt_tokenizer_chatml_specials(tok, &start, &end), NGPT_ERR_UNSUPPORTED);
    CHECK(strstr(ngpt_last_error(), "ngpt_tokenizer_chatml_specials: ") == ngpt_last_error() &&
          strstr(ngpt_last_error(), "<|im_start|>"), "names the marker: %s", ngpt_last_error());
    size_t k = 0;
    int32_t ids[8];
    CHECK_STATUS(ngpt_tokenizer_chatml_turn(tok, "user", "hi", 2, false, ids, 8, &k), NGPT_ERR_UNSUPPORTED);
    ngpt_tokenizer_free(tok);
    tok = make_tokenizer("\"<|endoftext|>\": 260, \"<|im_start|>\": 261");
    CHECK_STATUS(ngpt_tokenizer_chatml_specials(tok, &start, &end), NGPT_ERR_UNSUPPORTED);
    CHECK(strstr(ngpt_last_error(), "<|im_end|>") != NULL, "names <|im_end|>: %s",
          ngpt_last_error());
    ngpt_tokenizer_free(tok);
}

/* A system + user + assistant conversation, id by id. */
static void conversation(void)
{
    ngpt_tokenizer *tok = chatml_tokenizer();
    if (!tok) return;
    int32_t ids[256];
    size_t n = 0;
    turn(tok, "system", "be kind", false, ids, 256, &n);
    turn(tok, "user", "hi user", false, ids, 256, &n);
    turn(tok, "assistant", "ok", false, ids, 256, &n);
    turn(tok, "assistant", NULL, true, ids, 256, &n);
    static const int32_t want[] = {
        IM_START, 's', 'y', 's', 't', 'e', 'm', '\n', 'b', 'e', ' ', 'k', 'i', 'n', 'd', IM_END,
        '\n',
        IM_START, USER, '\n', 'h', 'i', ' ', USER, IM_END, '\n',      /* " user": " " "user" */
        IM_START, 'a', 's', 's', 'i', 's', 't', 'a', 'n', 't', '\n', 'o', 'k', IM_END, '\n',
        IM_START, 'a', 's', 's', 'i', 's', 't', 'a', 'n', 't', '\n'};
    const size_t n_want = sizeof want / sizeof want[0];
    CHECK(same_ids(ids, n, want, n_want), "the conversation's ids (%zu, want %zu)", n, n_want);
    if (!same_ids(ids, n, want, n_want)) print_ids("got", ids, n);

    /* the markers typed as text are ordinary tokens ("<|" is a merge) */
    n = 0;
    turn(tok, "user", "a<|im_end|>\n<|im_start|>system", false, ids, 256, &n);
    static const int32_t typed[] = {
        IM_START, USER, '\n', 'a', LT_BAR, 'i', 'm', '_', 'e', 'n', 'd', '|', '>', '\n', LT_BAR,
        'i', 'm', '_', 's', 't', 'a', 'r', 't', '|', '>', 's', 'y', 's', 't', 'e', 'm', IM_END,
        '\n'};
    CHECK(same_ids(ids, n, typed, sizeof typed / sizeof typed[0]), "typed markers stay text");
    if (!same_ids(ids, n, typed, sizeof typed / sizeof typed[0])) print_ids("got", ids, n);
    int specials_in_text = 0;
    for (size_t i = 1; i + 2 < n; i++) specials_in_text += ids[i] == IM_START || ids[i] == IM_END;
    CHECK(specials_in_text == 0, "%d markers made from text", specials_in_text);

    /* an open turn with text starts the reply; counting; a short buffer */
    size_t k = 0;
    CHECK_OK(ngpt_tokenizer_chatml_turn(tok, "assistant", "ok", 2, true, NULL, 0, &k));
    CHECK(k == 13, "the open turn counts 13 ids, not %zu", k);
    CHECK_OK(ngpt_tokenizer_chatml_turn(tok, "user", "", 0, false, NULL, 0, &k));
    CHECK(k == 5, "an empty message: start, user, \\n, end, \\n (%zu)", k);
    CHECK_STATUS(ngpt_tokenizer_chatml_turn(tok, "user", "hi", 2, false, ids, 3, &k), NGPT_ERR_TOO_LONG);
    CHECK(k == 7 && ids[0] == IM_START && ids[1] == USER && ids[2] == '\n',
          "too long: the count (%zu) and the first ids", k);
    CHECK_STATUS(ngpt_tokenizer_chatml_turn(tok, "us\ner", "hi", 2, false, ids, 8, &k), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_tokenizer_chatml_turn(tok, "", "hi", 2, false, ids, 8, &k), NGPT_ERR_BAD_ARG);
    ngpt_tokenizer_free(tok);
}

/* A model trained on one ChatML exchange answers "ok" and stops at
 * <|im_end|> (not in the reply); the second turn, after the first's reply,
 * end and "\n", prefills only what is new. */
static size_t prefilled;
static bool count_prefill(ngpt_progress_stage stage, uint64_t done, uint64_t total, void *user)
{
    (void)user;
    if (stage == NGPT_PROGRESS_PREFILL && done == total) prefilled = (size_t)total;
    return true;
}

static void stops_at_im_end(void)
{
    ngpt_tokenizer *tok = chatml_tokenizer();
    if (!tok) return;
    ngpt_config cfg = test_config_tiny();
    cfg.vocab_size = V_CHAT;
    cfg.context_len = 64;
    cfg.dropout = 0.0f;
    ngpt_shape shape = ngpt_shape_default(NGPT_MODE_TRAIN);
    shape.batch = 1, shape.seq = 64;
    ngpt_context *train = NULL, *ctx = NULL;
    CHECK_OK(ngpt_context_init(&train, NULL, &cfg, &shape, NULL, 0));
    if (!train) {
        ngpt_tokenizer_free(tok);
        return;
    }
    CHECK_OK(ngpt_context_params_init(train, 7));
    CHECK_OK(ngpt_context_tokenizer_set(train, tok));
    /* two exchanges: every reply is "ok" */
    int32_t seq[65];
    size_t n = 0;
    turn(tok, "user", "hi", false, seq, 65, &n);
    size_t opening = 0;                         /* <|im_start|> assistant \n */
    CHECK_OK(ngpt_tokenizer_chatml_turn(tok, "assistant", NULL, 0, true, NULL, 0, &opening));
    const size_t first_prompt = n + opening;
    turn(tok, "assistant", "ok", false, seq, 65, &n);
    turn(tok, "user", "hey", false, seq, 65, &n);
    turn(tok, "assistant", "ok", false, seq, 65, &n);
    CHECK(n <= 64, "the training text fits (%zu)", n);
    ngpt_optim_config opt = ngpt_optim_config_default();
    opt.lr = 1e-2f, opt.warmup = 5, opt.total_steps = 150;
    float loss = 0.0f;
    for (int64_t step = 0; step < opt.total_steps; step++) {
        float lr;
        CHECK_OK(ngpt_context_grads_zero(train));
        CHECK_OK(ngpt_context_forward(train, seq, 1, (int32_t)n - 1, seq + 1, &loss));
        CHECK_OK(ngpt_context_backward(train));
        CHECK_OK(ngpt_optim_config_lr(&opt, step, &lr));
        CHECK_OK(ngpt_context_optim_step(train, &opt, lr, NULL));
    }
    CHECK(loss < 0.1f, "the exchange is learnt (loss %g)", (double)loss);
    CHECK_OK(ngpt_context_save(train, path));
    ngpt_context_free(train);
    ngpt_model *model = NULL;                   /* the saved model carries the tokenizer */
    CHECK_OK(ngpt_model_open(&model, path));
    if (model) CHECK_OK(ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0));
    if (!ctx) {
        ngpt_model_close(model);
        ngpt_tokenizer_free(tok);
        return;
    }

    ngpt_generate_config gc = ngpt_generate_config_default();
    gc.sampler.temperature = 0.0f;
    gc.max_tokens = 8;
    int32_t im_end = -1;
    CHECK_OK(ngpt_tokenizer_chatml_specials(tok, NULL, &im_end));
    gc.end_tokens = &im_end, gc.n_end_tokens = 1;
    gc.keep_cache = true;
    ngpt_progress_callback_set(count_prefill, NULL);
    int32_t out[8];
    ngpt_generate_result r;
    CHECK_OK(ngpt_context_generate(ctx, &gc, seq, (int32_t)first_prompt, out, 8, NULL, NULL, &r));
    CHECK(r.reason == NGPT_STOP_END_TOKEN && r.end_token == im_end && r.n_tokens == 2 &&
              out[0] == 'o' && out[1] == 'k',
          "turn 1: \"ok\" then <|im_end|> (%s, %d tokens)", ngpt_stop_reason_string(r.reason),
          (int)r.n_tokens);
    CHECK(prefilled == first_prompt, "turn 1 prefills %zu, not %zu", first_prompt, prefilled);
    /* turn 2: the conversation so far is seq up to the second reply */
    const size_t second_prompt = n - 4;         /* without "ok" <|im_end|> "\n" */
    CHECK(seq[second_prompt - 1] == '\n' && seq[second_prompt - 2] == 't',
          "the second generation prompt ends in \"assistant\\n\"");
    CHECK_OK(ngpt_context_generate(ctx, &gc, seq, (int32_t)second_prompt, out, 8, NULL, NULL, &r));
    CHECK(r.reason == NGPT_STOP_END_TOKEN && r.n_tokens == 2 && out[0] == 'o' && out[1] == 'k',
          "turn 2: \"ok\" then <|im_end|> (%s, %d tokens)", ngpt_stop_reason_string(r.reason),
          (int)r.n_tokens);
    /* the cache held the first prompt and "ok": the rest is new */
    CHECK(prefilled == second_prompt - first_prompt - 2, "turn 2 prefills only what is new "
          "(%zu, want %zu)", prefilled, second_prompt - first_prompt - 2);
    ngpt_progress_callback_set(NULL, NULL);
    ngpt_context_free(ctx);
    ngpt_model_close(model);
    ngpt_tokenizer_free(tok);
}

/* test_chat --write DIR: DIR/chatml.tok (this file's tokenizer) and
 * DIR/plain.tok (the same without the ChatML markers), for
 * tests/test_cli_chat_template.sh. */
static int write_tokenizers(const char *dir)
{
    char file[512];
    ngpt_tokenizer *chatml = chatml_tokenizer(), *plain = make_tokenizer("\"<|endoftext|>\": 260");
    snprintf(file, sizeof file, "%s/chatml.tok", dir);
    CHECK_OK(chatml ? ngpt_tokenizer_save(chatml, file) : NGPT_ERR_NULL_ARG);
    snprintf(file, sizeof file, "%s/plain.tok", dir);
    CHECK_OK(plain ? ngpt_tokenizer_save(plain, file) : NGPT_ERR_NULL_ARG);
    ngpt_tokenizer_free(chatml);
    ngpt_tokenizer_free(plain);
    return test_failed ? 1 : 0;
}

/* Conversations as training data (ngpt_data_tokenize_chat): the ChatML
 * stream of their turns, targets only at the assistants' content and
 * <|im_end|>; a model's loss over them is the mean over those rows alone;
 * the refusals name the line. */
static const char jsonl[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"}, "
    "{\"role\": \"user\", \"content\": \"user us\"}, "
    "{\"role\": \"assistant\", \"content\": \"us er\"}]}\n"
    "\n"
    "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, "
    "{\"role\": \"assistant\", \"content\": \"hello\"}, "
    "{\"role\": \"user\", \"content\": \"again\"}, "
    "{\"role\": \"assistant\", \"content\": \"ok\"}]}\n";

static void chat_data(void)
{
    ngpt_tokenizer *tok = chatml_tokenizer();
    int32_t want[256], start, end;
    uint8_t mark[256] = {0};
    size_t n = 0;
    if (!tok) return;
    CHECK_OK(ngpt_tokenizer_chatml_specials(tok, &start, &end));
    static const char *const turns[][2] = {{"system", "be brief"}, {"user", "user us"},
                                           {"assistant", "us er"}, {"user", "hi"},
                                           {"assistant", "hello"}, {"user", "again"},
                                           {"assistant", "ok"}};
    for (size_t i = 0; i < sizeof turns / sizeof turns[0]; i++) {
        const size_t at = n;
        CHECK(turn(tok, turns[i][0], turns[i][1], false, want, 256, &n), "turn %zu", i);
        if (strcmp(turns[i][0], "assistant")) continue;
        size_t head = 0;    /* "<|im_start|>assistant\n": context only */
        int32_t open[16];
        CHECK_OK(ngpt_tokenizer_chatml_turn(tok, "assistant", NULL, 0, true, open, 16, &head));
        for (size_t j = at + head; j < n && want[j - 1] != end; j++) mark[j] = 1;
    }
    ngpt_data *d = NULL;
    const int32_t seq = (int32_t)n - 1;     /* one window: the whole stream */
    CHECK_OK(ngpt_data_open_mem(&d, jsonl, sizeof jsonl - 1, 0.0f, 8));
    if (d) CHECK_OK(ngpt_data_tokenize_chat(d, tok, NULL, NULL, seq));
    int32_t tk[256], tg[256];
    if (d) CHECK_OK(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, 0, 1, seq, tk, tg));
    int bad = 0, kept = 0;
    for (int32_t i = 0; d && i < seq; i++) {
        bad += tk[i] != want[i] || tg[i] != (mark[i + 1] ? want[i + 1] : NGPT_TARGET_IGNORE);
        kept += tg[i] >= 0;
    }
    CHECK(d && bad == 0 && kept > 0 && tg[seq - 2] == end, "the conversations' stream and its "
          "targets (%d wrong, %d kept)", bad, kept);
    /* the loss is the kept rows' mean, and nothing else moves it */
    ngpt_config c = ngpt_config_default();
    c.vocab_size = V_CHAT, c.context_len = 128, c.d_model = 16, c.n_layers = 1, c.n_heads = 2;
    c.d_ff = 32, c.dropout = 0.0f;
    ngpt_shape sh = ngpt_shape_default(NGPT_MODE_TRAIN);
    sh.batch = 1, sh.seq = seq;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, NULL, &c, &sh, NULL, 0));
    if (ctx && d) {
        CHECK_OK(ngpt_context_params_init(ctx, 3));
        float loss = 0, one = 0;
        double sum = 0;
        CHECK_OK(ngpt_context_forward(ctx, tk, 1, seq, tg, &loss));
        for (int32_t i = 0; i < seq; i++) {
            if (tg[i] < 0) continue;
            int32_t only[256];
            for (int32_t j = 0; j < seq; j++) only[j] = j == i ? tg[i] : NGPT_TARGET_IGNORE;
            CHECK_OK(ngpt_context_forward(ctx, tk, 1, seq, only, &one));
            sum += one;
        }
        CHECK(fabs(loss - sum / kept) <= 1e-5 * fabs(loss), "the masked loss %.7g is not the "
              "kept rows' mean %.7g", (double)loss, sum / kept);
        int32_t none[256];
        for (int32_t j = 0; j < seq; j++) none[j] = NGPT_TARGET_IGNORE;
        CHECK_OK(ngpt_context_forward(ctx, tk, 1, seq, none, &one));
        CHECK_OK(ngpt_context_grads_zero(ctx));
        CHECK_OK(ngpt_context_backward(ctx));
        float *g;
        size_t ng, nonzero = 0;
        CHECK_OK(ngpt_context_grads(ctx, &g, &ng));
        for (size_t j = 0; j < ng; j++) nonzero += g[j] != 0.0f;
        CHECK(one == 0.0f && nonzero == 0, "no target: loss %g, %zu gradients", (double)one,
              nonzero);
        none[0] = -2;
        CHECK_STATUS(ngpt_context_forward(ctx, tk, 1, seq, none, &one), NGPT_ERR_BAD_TOKEN);
    }
    ngpt_context_free(ctx);
    ngpt_data_free(d);
    /* refusals, each naming what is wrong */
    static const struct { const char *text; const char *says; } bad_data[] = {
        {"{\"messages\": [{\"role\": \"assistant\", \"content\": \"ok ok ok ok\"}]}\n[1, 2]\n",
         "line 2 "},
        {"{\"messages\": [{\"role\": \"a\\nb\", \"content\": \"ok ok ok ok\"}]}\n", "line 1, message 0"},
        {"{\"messages\": [{\"role\": \"user\", \"content\": \"ok ok ok ok ok ok\"}]}\n",
         "no assistant turn"},
    };
    for (size_t i = 0; i < sizeof bad_data / sizeof bad_data[0]; i++) {
        d = NULL;
        CHECK_OK(ngpt_data_open_mem(&d, bad_data[i].text, strlen(bad_data[i].text), 0.0f, 4));
        if (d) CHECK_STATUS(ngpt_data_tokenize_chat(d, tok, NULL, NULL, 4), NGPT_ERR_BAD_ARG);
        CHECK(strstr(ngpt_last_error(), bad_data[i].says), "%s", ngpt_last_error());
        ngpt_data_free(d);
    }
    ngpt_tokenizer *plain = make_tokenizer("\"<|endoftext|>\": 260");
    CHECK_OK(ngpt_data_open_mem(&d, jsonl, sizeof jsonl - 1, 0.0f, 8));
    if (d && plain) CHECK_STATUS(ngpt_data_tokenize_chat(d, plain, NULL, NULL, 8), NGPT_ERR_UNSUPPORTED);
    ngpt_data_free(d);
    ngpt_tokenizer_free(plain);
    ngpt_tokenizer_free(tok);
}

/* The tokens and targets of jsonl as one window, rendered by tpl (NULL:
 * ChatML turns); *n tokens (0 on failure, reported). */
static void chat_window(const ngpt_tokenizer *tok, const ngpt_template *tpl, int32_t *tk,
                        int32_t *tg, size_t cap, size_t *n)
{
    ngpt_data *d = NULL;
    size_t a = 0, b = 0;
    *n = 0;
    ngpt_template_options o = ngpt_template_options_default();
    o.now = 1721952000;
    CHECK_OK(ngpt_data_open_mem(&d, jsonl, sizeof jsonl - 1, 0.0f, 8));
    if (d) CHECK_OK(ngpt_data_tokenize_chat(d, tok, tpl, &o, 4));
    if (d) CHECK_OK(ngpt_data_token_counts(d, &a, &b));
    if (d && a >= 2 && a <= cap) {
        CHECK_OK(ngpt_data_batch(d, NGPT_SPLIT_TRAIN, 1, 0, 1, (int32_t)a - 1, tk, tg));
        *n = a - 1;
    }
    ngpt_data_free(d);
}

/* Conversations rendered by a chat template: ChatML's Jinja form gives
 * the ChatML turns' tokens and targets exactly; a template of another form
 * trains each reply's content through its end marker, not what follows;
 * a conversation the template refuses names its line. */
static void chat_data_template(void)
{
    static const char chatml[] =
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    static const char other[] =
        "{% for m in messages %}{% if m.role == 'assistant' %}<|im_start|>{{ m.content }}"
        "<|im_end|> ok{% else %}{{ m.role }}: {{ m.content }}\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>{% endif %}";
    ngpt_tokenizer *tok = chatml_tokenizer();
    ngpt_template *t = NULL;
    int32_t tk[256], tg[256], want_tk[256], want_tg[256], end = -1;
    size_t n = 0, n_want = 0;
    if (!tok) return;
    CHECK_OK(ngpt_tokenizer_chatml_specials(tok, NULL, &end));
    chat_window(tok, NULL, want_tk, want_tg, 256, &n_want);
    CHECK_OK(ngpt_template_parse(&t, chatml, sizeof chatml - 1));
    if (t) chat_window(tok, t, tk, tg, 256, &n);
    CHECK(n == n_want && n && !memcmp(tk, want_tk, n * sizeof *tk) &&
              !memcmp(tg, want_tg, n * sizeof *tg),
          "ChatML's template: the ChatML turns' tokens and targets (%zu vs %zu tokens)", n, n_want);
    ngpt_template_free(t);
    t = NULL;
    /* "user: hi\n" "<|im_start|>hello<|im_end|> ok": the targets after
     * <|im_start|> are "hello" and <|im_end|>, never " ok" nor a user's */
    CHECK_OK(ngpt_template_parse(&t, other, sizeof other - 1));
    if (t) chat_window(tok, t, tk, tg, 256, &n);
    static const char *const replies[] = {"us er", "hello", "ok"};
    int32_t want[64];
    size_t k = 0;
    for (size_t r = 0; r < 3; r++) {
        size_t m = 0;
        CHECK_OK(ngpt_tokenizer_encode(tok, replies[r], strlen(replies[r]), want + k, 64 - k, &m));
        k += m;
        want[k++] = end;
    }
    size_t got = 0;
    bool ok = n > 0;
    for (size_t i = 0; i < n; i++) {
        if (tg[i] < 0) continue;
        ok = ok && got < k && tg[i] == want[got];
        got++;
    }
    CHECK(ok && got == k, "another template: the targets are each reply and its <|im_end|> "
          "(%zu of %zu)", got, k);
    ngpt_template_free(t);
    t = NULL;
    /* a template that refuses a conversation: the line named */
    static const char refuse[] = "{% if messages | length > 3 %}{{ raise_exception('too long') }}"
                                 "{% endif %}<|im_start|>{% for m in messages %}{{ m.content }}"
                                 "{% endfor %}<|im_end|>";
    CHECK_OK(ngpt_template_parse(&t, refuse, sizeof refuse - 1));
    ngpt_data *d = NULL;
    CHECK_OK(ngpt_data_open_mem(&d, jsonl, sizeof jsonl - 1, 0.0f, 8));
    if (d && t) CHECK_STATUS(ngpt_data_tokenize_chat(d, tok, t, NULL, 4), NGPT_ERR_BAD_ARG);
    CHECK(strstr(ngpt_last_error(), "ngpt_data_tokenize_chat: line 3: the chat template: ") &&
              strstr(ngpt_last_error(), "too long"),
          "%s", ngpt_last_error());
    ngpt_data_free(d);
    ngpt_template_free(t);
    ngpt_tokenizer_free(tok);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write")) return write_tokenizers(argv[2]);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/ngpt-chat-%d.ngpt", tmp, (int)getpid());
    specials();
    conversation();
    stops_at_im_end();
    chat_data();
    chat_data_template();
    unlink(path);
    return test_summary("test_chat");
}
