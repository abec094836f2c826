/* test_template.c — chat templates (ngpt.h, "chat templates";
 * src/template/): what each construct of the subset renders (as the
 * reference, @huggingface/jinja, renders it: make test-hf compares the real
 * templates byte for byte), whitespace control, constructs outside the
 * subset refused by name with their line and column, a template that would
 * run, recurse or grow without end stopped, the options (generation
 * prompt, enable_thinking, special tokens, strftime_now's date),
 * conversations as JSON, the tokens of a rendering (the template's special
 * tokens, never a message's; the held tokens kept; one BOS), a model
 * file's template (imported, carried by saves), and the time a 20-turn
 * conversation takes to render. `test_template --time CONFIG` prints that
 * time for a tokenizer_config.json (make test-hf: the real templates). */
#include <time.h>

#include "gpt2_tokenizer.h"
#include "hf_dir.h"
#include "llama2c_files.h"
#include "test.h"

static const ngpt_chat_message HI[2] = {
    {.role = "user", .content = "hi", .content_len = 2},
    {.role = "assistant", .content = "yo", .content_len = 2},
};

/* t rendered with m (n messages) and o (NULL: defaults), malloc'd; NULL
 * with *st set on failure. */
static char *render(const ngpt_template *t, const ngpt_chat_message *m, size_t n,
                    const ngpt_template_options *o, ngpt_status *st)
{
    size_t len = 0;
    if ((*st = ngpt_template_render(t, m, n, o, NULL, 0, &len))) return NULL;
    char *out = malloc(len + 1);
    if ((*st = ngpt_template_render(t, m, n, o, out, len, &len))) {
        free(out);
        return NULL;
    }
    out[len] = '\0';
    return out;
}

/* text rendered with HI and the defaults gives want. */
static void expect(const char *text, const char *want)
{
    ngpt_template *t = NULL;
    ngpt_status st = ngpt_template_parse(&t, text, strlen(text));
    CHECK(!st, "parse %s: %s", text, ngpt_last_error());
    if (st) return;
    char *got = render(t, HI, 2, NULL, &st);
    CHECK(got && !strcmp(got, want), "%s\n  renders \"%s\" (%s)\n  want    \"%s\"", text,
          got ? got : "", got ? "" : ngpt_last_error(), want);
    free(got);
    ngpt_template_free(t);
}

/* text fails with status want at parse or render, the message holding needle. */
static void refused(const char *text, ngpt_status want, const char *needle)
{
    ngpt_template *t = NULL;
    ngpt_status st = ngpt_template_parse(&t, text, strlen(text));
    CHECK(!st == (t != NULL), "a failed parse makes no template");
    char *got = NULL;
    if (!st) got = render(t, HI, 2, NULL, &st);
    CHECK(st == want && strstr(ngpt_last_error(), needle), "%s: %s \"%s\" (want %s naming \"%s\")",
          text, ngpt_status_string(st), st ? ngpt_last_error() : got, ngpt_status_string(want), needle);
    free(got);
    ngpt_template_free(t);
}

static void constructs(void)
{
    expect("{{ messages[0].content }}|{{ messages[1]['role'] }}|{{ messages | length }}", "hi|assistant|2");
    expect("{% for m in messages %}{{ loop.index0 }}{{ loop.index }}{{ loop.first }}{{ loop.last }}"
           "{{ loop.length }}{{ loop.revindex0 }};{% endfor %}", "01truefalse21;12falsetrue20;");
    expect("{% for m in messages %}{% if m.role == 'user' %}U{% elif m.role == 'x' %}X{% else %}"
           "A{% endif %}{% endfor %}", "UA");
    expect("{% for m in [] %}x{% else %}empty{% endfor %}", "empty");
    expect("{% for m in messages if m.role != 'user' %}{{ m.content }}{{ loop.length }}{% endfor %}", "yo1");
    expect("{% set x = 'a' %}{% for m in messages %}{% set x = 'b' %}{% endfor %}{{ x }}", "a");
    expect("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
           "{% endfor %}{{ ns.n }}", "2");
    expect("{% macro t(a, b='B') %}<{{ a }}{{ b }}>{% endmacro %}{{ t(1) }}{{ t(2, 3) }}{{ t(b=4, a=5) }}",
           "<1B><23><54>");
    expect("{{ 'abc'[::-1] }}{{ 'abcdef'[1:4] }}{{ [1, 2, 3][-1] }}{{ [1, 2, 3][:2] | tojson }}", "cbabcd3[1, 2]");
    expect("{{ 'a' + 'b' ~ 1 ~ 2.0 }}|{{ 1 + 2 }}|{{ 1.5 + 1 }}|{{ 7 // 2 }}|{{ -7 % 3 }}|{{ 7 / 2 }}",
           "ab12|3|2.5|3|-1|3.5");
    expect("{{ 1 < 2 and 'x' in 'xy' and 3 not in [1] and not false }}|{{ 0 or 'd' }}|{{ none }}|"
           "{{ true }}|{{ 1.0 }}|{{ -0.0 }}|{{ 10 ** 21 }}", "true|d||true|1.0|-0.0|1e+21");
    expect("{{ x is defined }}{{ none is none }}{{ 'a' is string }}{{ messages[0] is mapping }}"
           "{{ messages is iterable }}{{ (1, 2) is iterable }}", "falsetruetruetruetruefalse");
    expect("{{ '  a b  ' | trim }}|{{ [1, 2] | first }}{{ [1, 2] | last }}|{{ x | default('d') }}|"
           "{{ '' | default('e', true) }}|{{ ['a', 'b'] | join(', ') }}|{{ 'Ab' | upper }}{{ 'Ab' | lower }}",
           "a b|12|d|e|a, b|ABab");
    expect("{{ 'a-b-c'.replace('-', '+', 1) }}|{{ 'a b  c'.split() | tojson }}|{{ 'a,b'.split(',') | tojson }}|"
           "{{ 'xab'.startswith('x') }}{{ 'ab'.endswith(('z', 'b')) }}|{{ ' a '.strip() }}.{{ ' a '.lstrip() }}."
           "{{ ' a '.rstrip() }}.", "a+b-c|[\"a\", \"b\", \"c\"]|[\"a\", \"b\"]|truetrue|a.a . a.");
    /* the reference's strip family ignores its argument: white space goes */
    expect("{{ '\\n x\\n'.strip('\\n') }}|{{ '\\n x'.lstrip('\\n') }}", "x|x");
    expect("{{ {'a': [1, 'é', none, true], 'b': {}} | tojson }}|{{ 'é\\n\"' | tojson(ensure_ascii=true) }}",
           "{\"a\": [1, \"é\", null, true], \"b\": {}}|\"\\u00e9\\n\\\"\"");
    expect("{{ [1, {'a': 2}] | tojson(indent=2) }}", "[\n  1,\n  {\n    \"a\": 2\n  }\n]");
    /* the reference (@huggingface/jinja 0.5.10, in transformers 4.3.2) pads empty ones, and
     * its `not` is JavaScript's: false for any list or mapping, empty or not */
    expect("{{ [[], {}] | tojson(indent=1) }}|{{ not [] }}{{ not {} }}{{ not '' }}{{ not 0 }}",
           "[\n [\n  \n ],\n {\n }\n]|falsefalsetruetrue");
    expect("{{ messages[0] | tojson }}{{ messages[0] }}", "{\"role\": \"user\", \"content\": \"hi\"}"
           "{\"role\": \"user\", \"content\": \"hi\"}");
    expect("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}{{ {'a': 1}.get('b', 'n') }}", "a1b2n");
    expect("{% for i in range(9) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 4 %}{% break %}"
           "{% endif %}{{ i }}{% endfor %}", "023");
    expect("{% for i in range(3) %}a{% if i == 1 %}b{% break %}{% endif %}{% endfor %}", "a");
    expect("{% set b %}x{{ 1 }}{% endset %}{{ b }}{% set p, q = [1, 2] %}{{ p }}{{ q }}", "x112");
    expect("{{ 'yes' if messages else 'no' }}{{ ('x' if false) is defined }}", "yesfalse");
    expect("{{ \"\\t\\u00e9\\x41\" 'b' }}|{{ 'ü'|length }}{{ '😀'|length }}|{{ '😀a'[::-1] }}", "\téAb|12|a😀");
    expect("{{ raise_exception is defined }}{{ strftime_now is defined }}{{ tools }}{{ documents }}", "truetrue");
}

static void whitespace(void)
{
    /* trim_blocks and lstrip_blocks, as Hugging Face sets them */
    expect("a\n  {% if true %}\n  b\n  {% endif %}\nc\n", "a\n  b\nc");
    expect("a  {{- ' b ' -}}  c", "a b c");
    expect("a {%- if true -%} b {%- endif -%} c", "abc");
    expect("a {#- comment -#} b", "ab");
    expect("x{# c #}\ny{{ 1 }}\nz", "xy1\nz");     /* trim_blocks: after #} and %}, not }} */
    expect("  {{ 1 }}\n", "  1");
    expect("{% for m in messages %}\n{{ m.role }}\n{% endfor %}", "user\nassistant\n");
    expect("a\n{%- generation %}b{% endgeneration -%}\n c", "abc");
    expect("a {% generation %} b {% endgeneration %} c", "a  b  c");
}

static void refusals(void)
{
    refused("{{ x | title }}", NGPT_ERR_UNSUPPORTED, "line 1, column 8: the filter \"title\"");
    refused("a\n  {{ x is divisibleby(3) }}", NGPT_ERR_UNSUPPORTED, "line 2, column 11: the test \"divisibleby\"");
    refused("{% call f() %}{% endcall %}", NGPT_ERR_UNSUPPORTED, "the statement \"call\"");
    refused("{% include 'x' %}", NGPT_ERR_UNSUPPORTED, "the statement \"include\"");
    refused("{% filter upper %}x{% endfilter %}", NGPT_ERR_UNSUPPORTED, "the statement \"filter\"");
    refused("{{ 'a'.title() }}", NGPT_ERR_UNSUPPORTED, "the method \"title\"");
    refused("{% break %}", NGPT_ERR_UNSUPPORTED, "outside a for loop");
    refused("{% macro m() %}{{ kwargs }}{% endmacro %}", NGPT_ERR_UNSUPPORTED, "macro variable \"kwargs\"");
    refused("{{ f(*x) }}", NGPT_ERR_UNSUPPORTED, "argument unpacking");
    refused("{{ x | map(attribute='a') }}", NGPT_ERR_UNSUPPORTED, "the filter \"map\"");
    refused("{% if x %}a", NGPT_ERR_BAD_FORMAT, "if without {% endif %}");
    refused("{{ x ", NGPT_ERR_BAD_FORMAT, "end of the template");
    refused("{{ 'abc }}", NGPT_ERR_BAD_FORMAT, "end of the template");
    refused("{{ x | }}", NGPT_ERR_BAD_FORMAT, "line 1, column 8");
    refused("{{ 1 ! 2 }}", NGPT_ERR_BAD_FORMAT, "unexpected character");
    refused("{{ 'a\\q' }}", NGPT_ERR_BAD_FORMAT, "unknown escape");
    refused("{# open", NGPT_ERR_BAD_FORMAT, "comment that never ends");
    refused("ok \xff", NGPT_ERR_BAD_FORMAT, "not UTF-8");
    /* the template's own refusal, and operations the reference refuses too */
    refused("{{ raise_exception('roles must alternate') }}", NGPT_ERR_BAD_ARG,
            "the template refused the conversation: roles must alternate");
    refused("{{ 'a' < 'b' }}", NGPT_ERR_UNSUPPORTED, "no operator");
    refused("\n\n{{ x + 1 }}", NGPT_ERR_BAD_ARG, "line 3, column 4: an operation on an undefined value");
    refused("{{ 'é' | upper }}", NGPT_ERR_UNSUPPORTED, "non-ASCII");
    refused("{{ messages == 'x' }}", NGPT_ERR_UNSUPPORTED, "comparing a list with a string");
    refused("{{ x() }}", NGPT_ERR_BAD_ARG, "a call on a undefined value");
    refused("{{ (1, 2) | tojson }}", NGPT_ERR_UNSUPPORTED, "cannot be written as JSON");
    refused("{{ [] | first }}", NGPT_ERR_BAD_ARG, "empty list");
    refused("{{ 'ab'[2] }}", NGPT_ERR_UNSUPPORTED, "past a string's end");
    refused("{{ 'a' | tojson(sort_keys=true) }}", NGPT_ERR_UNSUPPORTED, "sort_keys");
}

static void bounds(void)
{
    /* each stops with one clear message, whatever runs out first */
    refused("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            NGPT_ERR_UNSUPPORTED, "limit");
    refused("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", NGPT_ERR_UNSUPPORTED, "50 deep");
    refused("{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
            "{% endfor %}", NGPT_ERR_UNSUPPORTED, "MiB");
    refused("{{ range(1000000000) | length }}", NGPT_ERR_UNSUPPORTED, "range() of more than");
    char deep[2200];
    size_t n = 0;
    n += (size_t)sprintf(deep + n, "{{ ");
    for (int i = 0; i < 500; i++) deep[n++] = '(';
    n += (size_t)sprintf(deep + n, "1");
    for (int i = 0; i < 500; i++) deep[n++] = ')';
    n += (size_t)sprintf(deep + n, " }}");
    refused(deep, NGPT_ERR_UNSUPPORTED, "nested more than");
    const size_t big = ((size_t)1 << 20) + 1;
    char *huge = malloc(big + 1);
    memset(huge, 'a', big);
    huge[big] = '\0';
    refused(huge, NGPT_ERR_UNSUPPORTED, "more than ngpt's limit");
    free(huge);
}

static void options(void)
{
    static const char text[] =
        "{{ bos_token }}|{{ eos_token }}|{{ enable_thinking }}|{{ add_generation_prompt }}|"
        "{{ strftime_now('%Y-%m-%d %H:%M %b %B %% %Q') }}";
    ngpt_template *t = NULL;
    CHECK_OK(ngpt_template_parse(&t, text, strlen(text)));
    ngpt_template_options o = ngpt_template_options_default();
    CHECK(o.add_generation_prompt && !o.thinking && !o.now && !o.bos_token, "the defaults");
    o.now = 1721952000 + 13 * 3600 + 5 * 60;     /* 2024-07-26 13:05 UTC */
    o.thinking = NGPT_THINKING_OFF, o.bos_token = "<s>", o.add_generation_prompt = false;
    ngpt_status st;
    char *got = render(t, HI, 2, &o, &st);
    CHECK(got && !strcmp(got, "<s>||false|false|2024-07-26 13:05 Jul July % %Q"), "options: %s",
          got ? got : ngpt_last_error());
    free(got);
    ngpt_template_free(t);
    static const char cfg[] = "{\"chat_template\": \"{{ bos_token }}{{ eos_token }}{{ pad_token }}\","
                              " \"bos_token\": {\"__type\": \"AddedToken\", \"content\": \"<b>\"},"
                              " \"eos_token\": \"<e>\", \"pad_token\": null, \"unk_token\": \"\"}";
    CHECK_OK(ngpt_template_parse_config(&t, cfg, strlen(cfg)));
    got = render(t, NULL, 0, NULL, &st);
    CHECK(got && !strcmp(got, "<b><e>"), "a config's special tokens: %s", got ? got : ngpt_last_error());
    free(got);
    o = ngpt_template_options_default();
    o.eos_token = "<E>";
    got = render(t, NULL, 0, &o, &st);
    CHECK(got && !strcmp(got, "<b><E>"), "eos_token given: %s", got ? got : ngpt_last_error());
    free(got);
    ngpt_template_free(t);
    static const char list[] = "{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"T\"},"
                               " {\"name\": \"default\", \"template\": \"D\"}]}";
    CHECK_OK(ngpt_template_parse_config(&t, list, strlen(list)));
    got = render(t, NULL, 0, NULL, &st);
    CHECK(got && !strcmp(got, "D"), "a list's default template: %s", got ? got : ngpt_last_error());
    free(got);
    ngpt_template_free(t);
    CHECK_STATUS(ngpt_template_parse_config(&t, "{}", 2), NGPT_ERR_BAD_FORMAT);
    CHECK(strstr(ngpt_last_error(), "no chat_template"), "no chat_template: %s", ngpt_last_error());
    CHECK_STATUS(ngpt_template_parse_config(&t, "[1", 2), NGPT_ERR_BAD_FORMAT);
}

static void bad_arguments(void)
{
    ngpt_template *t = NULL;
    CHECK_OK(ngpt_template_parse(&t, "x", 1));
    size_t len;
    char buf[4];
    CHECK_STATUS(ngpt_template_parse(NULL, "x", 1), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_template_render(NULL, HI, 2, NULL, NULL, 0, &len), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_template_render(t, NULL, 2, NULL, NULL, 0, &len), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_template_render(t, HI, 2, NULL, NULL, 0, NULL), NGPT_ERR_NULL_ARG);
    ngpt_chat_message m = {.role = NULL};
    CHECK_STATUS(ngpt_template_render(t, &m, 1, NULL, NULL, 0, &len), NGPT_ERR_NULL_ARG);
    m = (ngpt_chat_message){.role = "user", .content_len = 3};
    CHECK_STATUS(ngpt_template_render(t, &m, 1, NULL, NULL, 0, &len), NGPT_ERR_NULL_ARG);
    m = (ngpt_chat_message){.role = "user", .reserved[0] = 1};
    CHECK_STATUS(ngpt_template_render(t, &m, 1, NULL, NULL, 0, &len), NGPT_ERR_BAD_ARG);
    ngpt_template_options o = ngpt_template_options_default();
    o.thinking = (ngpt_thinking)7;
    CHECK_STATUS(ngpt_template_render(t, HI, 2, &o, NULL, 0, &len), NGPT_ERR_BAD_ARG);
    o = ngpt_template_options_default();
    o.reserved[3] = 1;
    CHECK_STATUS(ngpt_template_render(t, HI, 2, &o, NULL, 0, &len), NGPT_ERR_BAD_ARG);
    CHECK_STATUS(ngpt_template_render(t, HI, 2, NULL, buf, 0, &len), NGPT_ERR_TOO_LONG);
    CHECK(len == 1, "TOO_LONG gives the size: %zu", len);
    ngpt_template_free(t);
    ngpt_template_free(NULL);
}

static void conversations_json(void)
{
    static const char json[] = "[{\"role\": \"system\", \"content\": \"s\\u00e9\\n\"},"
                               " {\"content\": \"q \\\"x\\\"\", \"role\": \"user\"}]";
    ngpt_chat_message *m = NULL;
    size_t n = 0;
    CHECK_OK(ngpt_chat_message_read_json(&m, &n, json, strlen(json)));
    CHECK(n == 2 && !strcmp(m[0].role, "system") && m[0].content_len == 4 &&
          !memcmp(m[0].content, "s\xC3\xA9\n", 4) && !strcmp(m[1].content, "q \"x\""), "read");
    char out[256];
    size_t len = 0;
    CHECK_OK(ngpt_chat_message_write_json(m, n, out, sizeof out, &len));
    ngpt_chat_message *back = NULL;
    size_t n2 = 0;
    CHECK_OK(ngpt_chat_message_read_json(&back, &n2, out, len));
    CHECK(n2 == 2 && !strcmp(back[1].content, m[1].content) && back[0].content_len == 4, "round trip");
    ngpt_chat_message_free(back);
    ngpt_chat_message_free(m);
    CHECK_STATUS(ngpt_chat_message_write_json(HI, 2, out, 3, &len), NGPT_ERR_TOO_LONG);
    static const struct { const char *json; ngpt_status st; const char *needle; } bad[] = {
        {"{\"role\": \"user\"}", NGPT_ERR_BAD_FORMAT, "not a JSON list"},
        {"[{\"role\": \"user\", \"content\": \"x\", \"tool_calls\": []}]", NGPT_ERR_UNSUPPORTED, "tool_calls"},
        {"[{\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}]", NGPT_ERR_UNSUPPORTED, "not a string"},
        {"[{\"content\": \"x\"}]", NGPT_ERR_BAD_FORMAT, "no role"},
        {"[1]", NGPT_ERR_BAD_FORMAT, "not an object"},
        {"[", NGPT_ERR_BAD_FORMAT, "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ngpt_status st = ngpt_chat_message_read_json(&m, &n, bad[i].json, strlen(bad[i].json));
        CHECK(st == bad[i].st && strstr(ngpt_last_error(), bad[i].needle) && !m && !n,
              "%s: %s (%s)", bad[i].json, ngpt_status_string(st), ngpt_last_error());
    }
    CHECK_OK(ngpt_chat_message_read_json(&m, &n, "[]", 2));
    CHECK(!m && !n, "an empty conversation");
    /* bytes that are not UTF-8 pass through as they are, each a character */
    ngpt_chat_message raw = {.role = "user", .content = "a\xff" "b\xe2\x82", .content_len = 5};
    ngpt_template *t = NULL;
    static const char text[] = "{{ messages[0].content }}|{{ messages[0].content | length }}|"
                               "{{ messages[0].content[::-1] }}";
    CHECK_OK(ngpt_template_parse(&t, text, strlen(text)));
    ngpt_status st;
    char *got = render(t, &raw, 1, NULL, &st);
    CHECK(got && !strcmp(got, "a\xff" "b\xe2\x82|5|\x82\xe2" "b\xff" "a"), "bad bytes pass through: %s",
          got ? got : ngpt_last_error());
    free(got);
    ngpt_template_free(t);
}

/* ------------------------------------------------------------ tokens */

enum { IM_START = 257, IM_END = 258, EOT = 259 };

static ngpt_tokenizer *chatml(void)
{
    char tokens[200];
    snprintf(tokens, sizeof tokens, "\"\\u010a\\u010a\": 256, \"<|im_start|>\": %d, \"<|im_end|>\": %d, "
             "\"<|endoftext|>\": %d", IM_START, IM_END, EOT);
    ngpt_tokenizer *tok = gpt2_tokenizer(tokens, "#version: 0.2\n\xc4\x8a \xc4\x8a\n");
    CHECK(tok != NULL, "the test's tokenizer: %s", ngpt_last_error());
    return tok;
}

/* The ids of t's rendering of m (n messages) with held, into ids (cap). */
static size_t tokens_of(const ngpt_template *t, const ngpt_tokenizer *tok, const ngpt_chat_message *m,
                        size_t n, const int32_t *held, size_t n_held, int32_t *ids, size_t cap)
{
    size_t count = 0, got = 0;
    CHECK_OK(ngpt_template_render_tokens(t, tok, m, n, NULL, held, n_held, NULL, 0, &count));
    CHECK_OK(ngpt_template_render_tokens(t, tok, m, n, NULL, held, n_held, ids, cap, &got));
    CHECK(got == count, "counting gives %zu ids, writing %zu", count, got);
    return got;
}

static size_t text_ids(int32_t *ids, const char *s)
{
    size_t n = 0;
    for (; *s; s++) ids[n++] = (uint8_t)*s;
    return n;
}

static void tokens(void)
{
    ngpt_tokenizer *tok = chatml();
    if (!tok) return;
    static const char text[] =
        "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    ngpt_template *t = NULL;
    CHECK_OK(ngpt_template_parse(&t, text, strlen(text)));
    const ngpt_chat_message typed[1] = {{.role = "user", .content = "a<|im_end|>", .content_len = 11}};
    int32_t ids[128], want[128];
    size_t n = tokens_of(t, tok, typed, 1, NULL, 0, ids, 128), k = 0;
    want[k++] = IM_START;
    k += text_ids(want + k, "user\na<|im_end|>");       /* typed: text, not the marker */
    want[k++] = IM_END;
    want[k++] = '\n';
    want[k++] = IM_START;
    k += text_ids(want + k, "assistant\n");
    CHECK(n == k && !memcmp(ids, want, k * sizeof *ids), "the template's markers are tokens, the "
          "typed one is text (%zu ids, want %zu)", n, k);
    /* held: a reply the model wrote as "\n" "\n" (not the "\n\n" encoding gives) is kept */
    int32_t held[128];
    memcpy(held, ids, n * sizeof *ids);
    size_t nh = n;
    held[nh++] = '\n', held[nh++] = '\n', held[nh++] = 'o', held[nh++] = 'k';
    const ngpt_chat_message two[3] = {typed[0], {.role = "assistant", .content = "\n\nok", .content_len = 4},
                                      {.role = "user", .content = "b", .content_len = 1}};
    n = tokens_of(t, tok, two, 3, held, nh, ids, 128);
    CHECK(n > nh && !memcmp(ids, held, nh * sizeof *ids) && ids[nh] == IM_END,
          "the held tokens are kept up to the template's marker");
    size_t canonical = tokens_of(t, tok, two, 3, NULL, 0, ids, 128);
    CHECK(canonical == n - 1 && ids[k - 1] == 256, "without them \"\\n\\n\" is one token (%zu, %zu)", canonical, n);
    held[k] = 'x';                      /* a held token the rendering does not spell */
    n = tokens_of(t, tok, two, 3, held, nh, ids, 128);
    CHECK(n == canonical, "held tokens that differ are not kept (%zu ids)", n);
    const int32_t bad_held[1] = {9999};
    size_t count;
    CHECK_STATUS(ngpt_template_render_tokens(t, tok, two, 3, NULL, bad_held, 1, NULL, 0, &count),
                 NGPT_ERR_BAD_TOKEN);
    CHECK_STATUS(ngpt_template_render_tokens(t, tok, two, 3, NULL, NULL, 1, NULL, 0, &count),
                 NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_template_render_tokens(t, NULL, two, 3, NULL, NULL, 0, NULL, 0, &count),
                 NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_template_render_tokens(t, tok, two, 3, NULL, NULL, 0, ids, 3, &count),
                 NGPT_ERR_TOO_LONG);
    CHECK(count == canonical, "TOO_LONG gives the count: %zu", count);
    ngpt_template_free(t);
    ngpt_tokenizer_free(tok);
}

/* A tokenizer of Qwen's shape (NFC, GPT-4's Split, special tokens read
 * from text): a stretch NFC lengthens makes more tokens than the rendering
 * has bytes, counted and written all the same (U+0958 is two code points,
 * six bytes, in NFC); a message's text that spells a special token stays
 * text. */
static void tokens_nfc(void)
{
    static char json[16384];
    size_t k = (size_t)snprintf(json, sizeof json, "{\"added_tokens\": ["
        "{\"id\": 256, \"content\": \"<|im_start|>\", \"special\": true},"
        "{\"id\": 257, \"content\": \"<|im_end|>\", \"special\": true}], "
        "\"normalizer\": {\"type\": \"NFC\"}, \"pre_tokenizer\": {\"type\": \"Sequence\", "
        "\"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"%s\"}, "
        "\"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
        "\"add_prefix_space\": false, \"use_regex\": false}]}, \"model\": {\"type\": \"BPE\", "
        "\"merges\": [], \"vocab\": {\"<|im_start|>\": 256, \"<|im_end|>\": 257",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| "
        "?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+");
    for (int b = 0; b < 256; b++) {
        char ch[8];
        ch[gpt2_char(ch, b)] = '\0';
        k += (size_t)snprintf(json + k, sizeof json - k, ", \"%s\": %d", ch, b);
    }
    k += (size_t)snprintf(json + k, sizeof json - k, "}}}");
    ngpt_tokenizer *tok = NULL;
    CHECK_OK(ngpt_tokenizer_load_hf_mem(&tok, json, k));
    if (!tok) return;
    static const char text[] = "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}";
    ngpt_template *t = NULL;
    CHECK_OK(ngpt_template_parse(&t, text, strlen(text)));
    char content[3 * 20];
    for (int i = 0; i < 20; i++) memcpy(content + 3 * i, "\xe0\xa5\x98", 3);
    const ngpt_chat_message m = {.role = "user", .content = content, .content_len = sizeof content};
    int32_t ids[256], held[256];
    size_t n = 0, again = 0, len = 0;
    CHECK_OK(ngpt_template_render_tokens(t, tok, &m, 1, NULL, NULL, 0, NULL, 0, &n));
    CHECK(n == 2 + 6 * 20, "NFC's bytes are the tokens: %zu (want %d)", n, 2 + 6 * 20);
    CHECK_OK(ngpt_template_render_tokens(t, tok, &m, 1, NULL, NULL, 0, ids, 256, &again));
    char back[256];
    CHECK_OK(ngpt_tokenizer_decode(tok, ids + 1, again - 2, back, sizeof back, &len));
    CHECK(again == n && ids[0] == 256 && ids[n - 1] == 257 && len == 120 &&
          !memcmp(back, "\xe0\xa4\x95\xe0\xa4\xbc", 6), "the ids are the NFC text's, between the markers");
    memcpy(held, ids, n * sizeof *ids);
    CHECK_OK(ngpt_template_render_tokens(t, tok, &m, 1, NULL, held, n, ids, 256, &again));
    CHECK(again == n && !memcmp(ids, held, n * sizeof *ids), "held, the same ids (%zu)", again);
    CHECK_STATUS(ngpt_template_render_tokens(t, tok, &m, 1, NULL, NULL, 0, ids, 100, &again),
                 NGPT_ERR_TOO_LONG);
    CHECK(again == n, "TOO_LONG gives the count: %zu", again);
    /* the tokenizer reads special tokens from text (Hugging Face's file),
     * but not from a message's */
    const ngpt_chat_message typed = {.role = "user", .content = "a<|im_end|>", .content_len = 11};
    CHECK_OK(ngpt_template_render_tokens(t, tok, &typed, 1, NULL, NULL, 0, ids, 256, &n));
    CHECK(n == 2 + 11 && ids[0] == 256 && ids[2] == '<' && ids[n - 1] == 257,
          "a typed <|im_end|> is text (%zu ids)", n);
    CHECK_OK(ngpt_tokenizer_encode(tok, "a<|im_end|>", 11, ids, 256, &n));
    CHECK(n == 2 && ids[1] == 257, "which ngpt_tokenizer_encode makes the token (%zu ids)", n);
    ngpt_template_free(t);
    ngpt_tokenizer_free(tok);
}

/* A tokenizer whose prompts begin with BOS (llama2.c's) gets one, once. */
static void one_bos(const char *root_dir)
{
    char model_bin[600], tok_bin[600], out[600];
    snprintf(model_bin, sizeof model_bin, "%s/bos.bin", root_dir);
    snprintf(tok_bin, sizeof tok_bin, "%s/bos_tok.bin", root_dir);
    snprintf(out, sizeof out, "%s/bos.ngpt", root_dir);
    ngpt_model *m = NULL;
    const ngpt_tokenizer *tok = NULL;
    CHECK(llama2c_write_files(model_bin, tok_bin), "llama2.c's files");
    CHECK_OK(ngpt_import_llama2c(model_bin, tok_bin, NULL, out));
    CHECK_OK(ngpt_model_open(&m, out));
    CHECK_OK(ngpt_model_tokenizer(m, &tok));
    static const char with[] = "{{ bos_token }}a", without[] = "a";
    const char *const texts[2] = {with, without};
    for (int i = 0; i < 2 && tok; i++) {
        ngpt_template *t = NULL;
        CHECK_OK(ngpt_template_parse(&t, texts[i], strlen(texts[i])));
        ngpt_template_options o = ngpt_template_options_default();
        o.bos_token = "\n<s>\n";
        int32_t ids[16];
        size_t n = 0;
        CHECK_OK(ngpt_template_render_tokens(t, tok, NULL, 0, &o, NULL, 0, ids, 16, &n));
        int bos = 0;
        for (size_t j = 0; j < n; j++) bos += ids[j] == 1;
        CHECK(n >= 2 && ids[0] == 1 && bos == 1, "%s: one BOS, first (%zu ids)", texts[i], n);
        ngpt_template_free(t);
    }
    ngpt_model_close(m);
}

/* An imported model keeps its template; its contexts' saves carry it; a
 * file without one has none. */
static void model_template(void)
{
    char p[600];
    snprintf(root, sizeof root, "%s/ngpt-test-template-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        CHECK(false, "mkdtemp");
        return;
    }
    make_tokenizer();
    CHECK(write_chat_dir("chat"), "write the chat directory");
    static const char cfg[] =
        "{\"eos_token\": \"<|im_end|>\", \"bos_token\": \"<|im_start|>\", \"chat_template\": "
        "\"{{ bos_token }}{% for m in messages %}[{{ m.role }}]{% endfor %}\"}";
    path_of(p, sizeof p, "chat", "tokenizer_config.json");
    CHECK(write_file(p, cfg, strlen(cfg)), "write tokenizer_config.json");
    char dir[600], model[700], saved[700], plain[700];
    snprintf(dir, sizeof dir, "%s/chat", root);
    snprintf(model, sizeof model, "%s/chat.ngpt", root);
    snprintf(saved, sizeof saved, "%s/saved.ngpt", root);
    snprintf(plain, sizeof plain, "%s/plain.ngpt", root);
    CHECK_OK(ngpt_import_hf(dir, NULL, model));
    ngpt_model *m = NULL;
    ngpt_template *t = NULL;
    CHECK_OK(ngpt_model_open(&m, model));
    CHECK_OK(ngpt_model_template(m, &t));
    ngpt_status st;
    char *got = t ? render(t, HI, 2, NULL, &st) : NULL;
    CHECK(got && !strcmp(got, "<|im_start|>[user][assistant]"), "the model's template: %s", got ? got : "");
    free(got);
    ngpt_template_free(t);
    ngpt_config q8;
    CHECK_OK(ngpt_model_config(m, &q8));
    q8.weights = NGPT_WEIGHTS_Q8;
    ngpt_context *ctx = NULL;
    CHECK_OK(ngpt_context_init(&ctx, m, &q8, NULL, NULL, 0));
    CHECK_OK(ngpt_context_save(ctx, saved));
    ngpt_context_free(ctx);
    ngpt_model_close(m);
    CHECK_OK(ngpt_model_open(&m, saved));
    CHECK_OK(ngpt_model_template(m, &t));
    CHECK(t != NULL, "a quantized save carries the template");
    ngpt_template_free(t);
    ngpt_model_close(m);
    /* without tokenizer_config.json: no tensor, no template */
    unlink(p);
    CHECK_OK(ngpt_import_hf(dir, NULL, plain));
    CHECK_OK(ngpt_model_open(&m, plain));
    t = (ngpt_template *)1;
    CHECK_OK(ngpt_model_template(m, &t));
    CHECK(t == NULL, "no template");
    CHECK_STATUS(ngpt_model_template(m, NULL), NGPT_ERR_NULL_ARG);
    CHECK_STATUS(ngpt_model_template(NULL, &t), NGPT_ERR_NULL_ARG);
    ngpt_model_close(m);
    one_bos(root);
    free_tensors();
    /* what the test wrote, so no run leaves its directory behind */
    static const char *const chat_files[] = {"config.json", "model.safetensors", "tokenizer.json"};
    for (int i = 0; i < 3; i++) path_of(p, sizeof p, "chat", chat_files[i]), unlink(p);
    static const char *const files[] = {"chat.ngpt", "saved.ngpt", "plain.ngpt", "bos.bin",
                                        "bos_tok.bin", "bos.ngpt"};
    for (int i = 0; i < 6; i++) {
        char f[700];
        snprintf(f, sizeof f, "%s/%s", root, files[i]);
        unlink(f);
    }
    rmdir(dir);
    rmdir(root);
}

/* ------------------------------------------------------------ speed */

/* The microseconds of t's best render of a 20-turn conversation (a system
 * message, then 20 user and assistant turns). */
static double render_us(const ngpt_template *t)
{
    ngpt_chat_message m[41];
    static char text[41][200];
    m[0] = (ngpt_chat_message){.role = "system", .content = "You are a helpful assistant.", .content_len = 28};
    for (int i = 1; i < 41; i++) {
        const int len = snprintf(text[i], sizeof text[i], "%s message %d: a sentence or two of "
                                 "ordinary length, like a person would type in a chat.",
                                 i % 2 ? "user" : "assistant", i);
        m[i] = (ngpt_chat_message){.role = i % 2 ? "user" : "assistant", .content = text[i],
                                   .content_len = (size_t)len};
    }
    double best = 1e9;
    for (int rep = 0; rep < 50; rep++) {
        struct timespec a, b;
        size_t len;
        clock_gettime(CLOCK_MONOTONIC, &a);
        const ngpt_status st = ngpt_template_render(t, m, 41, NULL, NULL, 0, &len);
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (st) return -1;
        const double us = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
        if (us < best) best = us;
    }
    return best;
}

static int time_config(const char *path)
{
    FILE *f = fopen(path, "rb");
    static char buf[4 << 20];
    const size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    ngpt_template *t = NULL;
    if (!n || ngpt_template_parse_config(&t, buf, n)) {
        fprintf(stderr, "test_template: %s: %s\n", path, n ? ngpt_last_error() : "cannot read");
        return 1;
    }
    const double us = render_us(t);
    ngpt_template_free(t);
    printf("%.0f\n", us);
    return us < 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--time")) return time_config(argv[2]);
    constructs();
    whitespace();
    refusals();
    bounds();
    options();
    bad_arguments();
    conversations_json();
    tokens();
    tokens_nfc();
    model_template();
    static const char smol[] =
        "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
        "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
        "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
        "{{ '<|im_start|>assistant\\n' }}{% endif %}";
    ngpt_template *t = NULL;
    CHECK_OK(ngpt_template_parse(&t, smol, strlen(smol)));
    const double us = render_us(t);
    printf("a 20-turn conversation renders in %.0f us (SmolLM2's template)\n", us);
    CHECK(us >= 0 && us < 50000, "rendering 20 turns takes %.0f us", us);
    ngpt_template_free(t);
    return test_summary("test_template");
}
