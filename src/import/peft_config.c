/* peft_config.c — PEFT's adapter_config.json against a model's family
 * (peft.h). The families' modules are those transformers' models have
 * (src/transformers/models/gpt2/modeling_gpt2.py, llama/modeling_llama.py);
 * which of them an adapter adapts is decided as peft decides it
 * (https://github.com/huggingface/peft: check_target_module_exists and
 * _maybe_include_all_linear_layers in src/peft/tuners/tuners_utils.py,
 * LoraConfig's checks in src/peft/tuners/lora/config.py, the defaults in
 * src/peft/utils/constants.py):
 *  - target_modules a list: a module whose path is an entry, or ends in
 *    "." + an entry; a regex string: re.fullmatch of the path; "all-linear":
 *    every Linear but the output layer; null: the model type's default
 *    (gpt2: c_attn; llama: q_proj, v_proj);
 *  - layers_to_transform (an index or a list; with a list target_modules
 *    only, and not for a path listed whole): the module's layer, the number
 *    after the first ".<name>." (name: any, or layers_pattern's);
 *  - exclude_modules (list or regex) removes modules first.
 * Every selected module must be a Linear ngpt adapts, the same ones in
 * each adapted layer. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/peft.h"
#include "runtime/config.h"

static const ngpt_peft_module gpt2_block[] = {
    {"", 0}, {"ln_1", 0}, {"attn", 0}, {"attn.c_attn", NGPT_LORA_QKV},
    {"attn.c_proj", NGPT_LORA_O}, {"attn.attn_dropout", 0}, {"attn.resid_dropout", 0},
    {"ln_2", 0}, {"mlp", 0}, {"mlp.c_fc", NGPT_LORA_FC1}, {"mlp.c_proj", NGPT_LORA_DOWN},
    {"mlp.act", 0}, {"mlp.dropout", 0},
};
static const ngpt_peft_module gpt2_top[] = {
    {"transformer", 0}, {"transformer.wte", 0}, {"transformer.wpe", 0}, {"transformer.drop", 0},
    {"transformer.h", 0}, {"transformer.ln_f", 0}, {"lm_head", 0},
};
static const ngpt_peft_module llama_block[] = {
    {"", 0}, {"input_layernorm", 0}, {"self_attn", 0}, {"self_attn.q_proj", NGPT_LORA_Q},
    {"self_attn.k_proj", NGPT_LORA_K}, {"self_attn.v_proj", NGPT_LORA_V},
    {"self_attn.o_proj", NGPT_LORA_O}, {"post_attention_layernorm", 0}, {"mlp", 0},
    {"mlp.gate_proj", NGPT_LORA_GATE}, {"mlp.up_proj", NGPT_LORA_UP},
    {"mlp.down_proj", NGPT_LORA_DOWN}, {"mlp.act_fn", 0},
};
static const ngpt_peft_module llama_top[] = {
    {"model", 0}, {"model.embed_tokens", 0}, {"model.layers", 0}, {"model.norm", 0},
    {"model.rotary_emb", 0}, {"lm_head", 0},
};
#define N_OF(a) (sizeof a / sizeof a[0])

static const ngpt_peft_family gpt2 = {"GPT-2", "[\"c_attn\"]", "transformer.h", gpt2_block,
                                      gpt2_top, N_OF(gpt2_block), N_OF(gpt2_top), true};
static const ngpt_peft_family llama = {"Llama", "[\"q_proj\", \"v_proj\"]", "model.layers",
                                       llama_block, llama_top, N_OF(llama_block), N_OF(llama_top),
                                       false};

const ngpt_peft_family *ngpt_peft_family_of(const ngpt_config *c)
{
    if (c->norm == NGPT_NORM_PRE && c->final_norm) {
        if (c->mlp == NGPT_MLP_SWIGLU && c->norm_type == NGPT_NORM_RMS && c->pos == NGPT_POS_ROPE)
            return &llama;
        if (c->mlp == NGPT_MLP_GELU && c->norm_type == NGPT_NORM_LAYER &&
            c->pos == NGPT_POS_LEARNED && c->qkv_bias && c->proj_bias && c->mlp_bias)
            return &gpt2;
    }
    ngpt_fail(NGPT_ERR_UNSUPPORTED, "the model is neither GPT-2's nor the Llama family's as "
              "ngpt import makes them (GPT-2: pos=learned qkv_bias=1 proj_bias=1; Llama: "
              "norm_type=rms mlp=swiglu), and PEFT adapters name the modules of a Hugging Face "
              "model of one of those");
    return NULL;
}

/* The family's Linears ngpt adapts, for messages: "q_proj, k_proj, ...". */
static void linear_names(const ngpt_peft_family *fam, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < fam->n_block; i++)
        if (fam->block[i].bit && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", fam->block[i].path);
}

static void block_path(const ngpt_peft_family *fam, int l, const char *path, char *buf,
                       size_t size)
{
    snprintf(buf, size, "%s.%d%s%s", fam->layers, l, path[0] ? "." : "", path);
}

bool ngpt_peft_module_path(const ngpt_peft_family *fam, int l, uint32_t bit, char *buf,
                           size_t size)
{
    for (size_t i = 0; i < fam->n_block; i++)
        if (fam->block[i].bit == bit) {
            block_path(fam, l, fam->block[i].path, buf, size);
            return true;
        }
    return false;
}

/* ------------------------------------------------------------ patterns */

enum { PATTERN_MAX = 1024, BOUND_MAX = 64 };

/* A bound at p ("{m}", "{m,}", "{,n}", "{m,n}": *used bytes, m and n;
 * an open end is BOUND_MAX); false if p is not one. */
static bool bound(const char *p, size_t *used, unsigned long *lo, unsigned long *hi)
{
    const char *q = p + 1;
    int digits = 0;
    *lo = 0;
    for (; isdigit((unsigned char)*q) && digits < 6; q++, digits++) *lo = *lo * 10 + (unsigned long)(*q - '0');
    *hi = *lo;
    if (*q == ',') {
        int more = 0;
        *hi = 0;
        for (q++; isdigit((unsigned char)*q) && more < 6; q++, more++) *hi = *hi * 10 + (unsigned long)(*q - '0');
        if (!more) *hi = BOUND_MAX;
        digits += more;
    }
    *used = (size_t)(q - p) + 1;
    return digits > 0 && *q == '}';
}

/* A Python regular expression for re.fullmatch as a POSIX extended one
 * anchored at both ends, into out (cap bytes): \d \w \s and escaped
 * punctuation, (?:...) groups, bounds {m,n} up to BOUND_MAX, classes with
 * \d \w \. \_ inside; a lazy quantifier drops its "?" (whether a full
 * match exists does not change). Anything else is refused (false): the
 * other escapes, lookarounds, named groups, backreferences. */
static bool posix_of(const char *py, char *out, size_t cap)
{
    size_t n = 0;
#define EMIT(s)                                                        \
    do {                                                               \
        const char *s_ = (s);                                          \
        const size_t k_ = strlen(s_);                                  \
        if (n + k_ + 3 > cap) return false;                            \
        memcpy(out + n, s_, k_), n += k_;                              \
    } while (0)
    EMIT("^(");
    for (size_t i = 0; py[i];) {
        const char c = py[i];
        char one[3] = {c, 0, 0};
        if (c == '\\') {
            const char d = py[i + 1];
            if (d == 'd') EMIT("[0-9]");
            else if (d == 'w') EMIT("[A-Za-z0-9_]");
            else if (d == 's') EMIT("[[:space:]]");
            else if (d && ispunct((unsigned char)d)) {
                one[0] = '\\', one[1] = d;
                EMIT(strchr(".[]()*+?{}|^$\\", d) ? one : one + 1);
            } else {
                return false;
            }
            i += 2;
        } else if (c == '[') {
            EMIT("[");
            i++;
            if (py[i] == '^') {
                EMIT("^");
                i++;
            }
            if (py[i] == ']') {
                EMIT("]");
                i++;
            }
            for (; py[i] != ']'; i++) {
                if (!py[i] || py[i] == '[') return false;
                if (py[i] != '\\') {
                    one[0] = py[i];
                    EMIT(one);
                    continue;
                }
                const char d = py[++i];
                if (d == 'd') EMIT("0-9");
                else if (d == 'w') EMIT("A-Za-z0-9_");
                else if (d == '.' || d == '_') {
                    one[0] = d;
                    EMIT(one);
                } else {
                    return false;
                }
            }
            EMIT("]");
            i++;
        } else if (c == '(') {
            if (py[i + 1] == '?' && py[i + 2] != ':') return false;
            EMIT("(");
            i += py[i + 1] == '?' ? 3 : 1;
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (c == '{') {
                size_t used;
                unsigned long lo, hi;
                if (!bound(py + i, &used, &lo, &hi)) {  /* Python reads this "{" literally */
                    EMIT("\\{");
                    i++;
                    continue;
                }
                if (hi > BOUND_MAX || lo > hi) return false;
                char b[32];
                snprintf(b, sizeof b, "{%lu,%lu}", lo, hi);
                EMIT(b);
                i += used;
            } else {
                EMIT(one);
                i++;
            }
            if (py[i] == '?') i++;              /* lazy */
            if (py[i] == '*' || py[i] == '+' || py[i] == '{') return false;
        } else if (c == '}') {
            EMIT("\\}");
            i++;
        } else {
            EMIT(one);
            i++;
        }
    }
    EMIT(")$");
    out[n] = '\0';
    return true;
#undef EMIT
}

/* Compiles key's regex into *re (REG_NOSUB); a bare message naming src. */
static ngpt_status compile(const char *src, const char *key, const char *py, regex_t *re)
{
    char posix[4 * PATTERN_MAX + 16];
    if (strlen(py) > PATTERN_MAX || !posix_of(py, posix, sizeof posix) ||
        regcomp(re, posix, REG_EXTENDED | REG_NOSUB) != 0)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: %s \"%.80s\" is not a regular expression "
                         "ngpt reads (literals, . * + ? | ( ) [ ], bounds up to %d, \\d \\w \\s "
                         "and escaped punctuation, under %d bytes): list the modules instead",
                         src, key, py, BOUND_MAX, PATTERN_MAX);
    return NGPT_OK;
}

/* ------------------------------------------------------------ matching */

/* What selects modules: a list (targets), a regex, or every Linear; and
 * what excludes them, and the layers a list keeps. */
typedef struct selector {
    const cJSON *targets;       /* array of strings, unless regex or all_linear */
    bool all_linear, regex;
    regex_t re;
    const cJSON *exclude;       /* array of strings, unless exclude_regex; may be NULL */
    bool exclude_regex;
    regex_t exclude_re;
    const cJSON *layers;        /* layers_to_transform: NULL, a number or an array */
    const cJSON *pattern;       /* layers_pattern: NULL, a string or an array */
} selector;

/* path is an entry of list, or ends in "." + one; *whole: it is one. */
static bool listed(const cJSON *list, const char *path, bool *whole)
{
    const size_t n = strlen(path);
    bool found = false;
    *whole = false;
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next) {
        const char *s = e->valuestring;
        const size_t k = strlen(s);
        if (!strcmp(s, path)) *whole = found = true;
        else if (k < n && path[n - k - 1] == '.' && !strcmp(path + n - k, s)) found = true;
    }
    return found;
}

/* peft's layer index of path: the number after the first ".<name>."
 * (name: any segment, or pattern), followed by "."; -1 if none. */
static long layer_index(const char *path, const char *pattern)
{
    for (const char *dot = strchr(path, '.'); dot; dot = strchr(dot + 1, '.')) {
        const char *seg = dot + 1, *end = strchr(seg, '.');
        if (!end) return -1;
        if (pattern && ((size_t)(end - seg) != strlen(pattern) || strncmp(seg, pattern, (size_t)(end - seg))))
            continue;
        const char *d = end + 1;
        long v = 0;
        size_t digits = 0;
        while (isdigit((unsigned char)d[digits]) && digits < 9) v = v * 10 + (d[digits] - '0'), digits++;
        if (digits && d[digits] == '.') return v;
    }
    return -1;
}

static bool layer_kept(const selector *s, const char *path)
{
    long l = -1;
    if (!s->pattern) l = layer_index(path, NULL);
    for (const cJSON *p = cJSON_IsArray(s->pattern) ? s->pattern->child : s->pattern; p && l < 0;
         p = cJSON_IsArray(s->pattern) ? p->next : NULL)
        l = layer_index(path, p->valuestring);
    if (l < 0) return false;
    if (cJSON_IsNumber(s->layers)) return s->layers->valuedouble == (double)l;
    for (const cJSON *e = s->layers->child; e; e = e->next)
        if (e->valuedouble == (double)l) return true;
    return false;
}

/* Whether s selects the module at path (bit: its NGPT_LORA_* bit, 0 for
 * one ngpt does not adapt: not a Linear, or the output layer). */
static bool selects(const selector *s, const char *path, uint32_t bit)
{
    bool whole;
    if (s->exclude_regex ? regexec(&s->exclude_re, path, 0, NULL, 0) == 0 : listed(s->exclude, path, &whole))
        return false;
    if (s->all_linear) return bit != 0;
    if (s->regex) return regexec(&s->re, path, 0, NULL, 0) == 0;
    if (!listed(s->targets, path, &whole)) return false;
    return whole || !s->layers || layer_kept(s, path);
}

/* The modules s selects in a model of cfg: the same bits *targets in
 * each layer of *layers (bit l; 0: every layer). Bare messages. */
static ngpt_status select_modules(const selector *s, const char *src, const ngpt_config *cfg,
                                  const ngpt_peft_family *fam, uint32_t *targets, uint64_t *layers)
{
    char path[160], names[160];
    linear_names(fam, names, sizeof names);
    for (size_t i = 0; i < fam->n_top; i++)
        if (selects(s, fam->top[i].path, 0))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: target_modules selects %s, which ngpt "
                             "does not adapt (%s's adapters are on the blocks' %s)", src,
                             fam->top[i].path, fam->name, names);
    uint32_t first = 0;
    int first_l = -1, count = 0;
    bool beyond = false;        /* a layer past the 64 that layer bits can choose */
    *layers = 0;
    for (int l = 0; l < cfg->n_layers; l++) {
        uint32_t bits = 0;
        for (size_t i = 0; i < fam->n_block; i++) {
            block_path(fam, l, fam->block[i].path, path, sizeof path);
            if (!selects(s, path, fam->block[i].bit)) continue;
            if (!fam->block[i].bit)
                return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: target_modules selects %s, which "
                                 "is not a Linear layer ngpt adapts (%s: %s)", src, path,
                                 fam->name, names);
            bits |= fam->block[i].bit;
        }
        if (!bits) continue;
        if (first_l >= 0 && bits != first)
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: target_modules selects other modules "
                             "in layer %d than in layer %d; ngpt's adapters adapt the same "
                             "modules in each layer they adapt", src, l, first_l);
        if (first_l < 0) first = bits, first_l = l;
        count++;
        if (l < 64) *layers |= (uint64_t)1 << l;
        else beyond = true;
    }
    if (beyond && count != cfg->n_layers)
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: the adapter adapts layers past the 64th but "
                         "not every layer; ngpt chooses layers among the first 64", src);
    if (!count)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: target_modules selects none of the model's "
                         "Linear layers (%s: %s)", src, fam->name, names);
    if (count == cfg->n_layers) *layers = 0;
    *targets = first;
    return NGPT_OK;
}

/* ------------------------------------------------------------ the keys */

/* A value that leaves an option off: null, false, 0, "", [] or {}. */
static bool off(const cJSON *v)
{
    return !v || cJSON_IsNull(v) || cJSON_IsFalse(v) || (cJSON_IsNumber(v) && v->valuedouble == 0) ||
           (cJSON_IsString(v) && !v->valuestring[0]) ||
           ((cJSON_IsArray(v) || cJSON_IsObject(v)) && !v->child);
}

/* Keys that do not change the adapted model: the base model's name, the
 * task, versions, runtime settings, other inits' settings (unused unless
 * init_lora_weights names them, and those are refused). */
static const char *const IGNORED[] = {
    "task_type", "base_model_name_or_path", "revision", "inference_mode", "auto_mapping",
    "peft_version", "megatron_core", "qalora_group_size", "runtime_config",
    "ensure_weight_tying", "loftq_config", "eva_config", "corda_config", "lora_ga_config",
};
/* Keys read below. */
static const char *const READ[] = {
    "peft_type", "r", "lora_alpha", "lora_dropout", "use_rslora", "fan_in_fan_out", "bias",
    "init_lora_weights", "target_modules", "exclude_modules", "layers_to_transform",
    "layers_pattern",
};
/* Options that change what the adapter computes, refused when set; any
 * other key set is refused too. */
static const char *const REFUSED[][2] = {
    {"use_dora", "DoRA rescales each weight column by a trained magnitude"},
    {"modules_to_save", "it trains whole modules (a head, an embedding) beside the adapter"},
    {"rank_pattern", "it gives some modules another rank"},
    {"alpha_pattern", "it gives some modules another alpha"},
    {"lora_bias", "it trains a bias on lora_B"},
    {"use_qalora", "QALoRA pools the adapted inputs"},
    {"layer_replication", "it repeats layers of the base model"},
    {"trainable_token_indices", "it trains rows of the embedding"},
    {"target_parameters", "it adapts parameters, not modules"},
    {"alora_invocation_tokens", "aLoRA applies the adapter after its invocation tokens only"},
    {"megatron_config", "it makes Megatron's parallel Linears"},
};

static bool in(const char *const *list, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], key)) return true;
    return false;
}

static ngpt_status check_keys(const cJSON *root, const char *src)
{
    for (const cJSON *k = root->child; k; k = k->next) {
        for (const cJSON *j = k->next; j; j = j->next)
            if (!strcmp(k->string, j->string))
                return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s gives key \"%.40s\" twice", src,
                                 k->string);
        if (in(IGNORED, N_OF(IGNORED), k->string) || in(READ, N_OF(READ), k->string) || off(k))
            continue;
        const char *why = "ngpt reads plain LoRA and does not know this option";
        for (size_t i = 0; i < N_OF(REFUSED); i++)
            if (!strcmp(REFUSED[i][0], k->string)) why = REFUSED[i][1];
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: \"%.40s\" is set, which ngpt does not "
                         "support (%s)", src, k->string, why);
    }
    return NGPT_OK;
}

/* A list of strings, or a string. */
static bool strings(const cJSON *v)
{
    if (cJSON_IsString(v)) return true;
    if (!cJSON_IsArray(v)) return false;
    for (const cJSON *e = v->child; e; e = e->next)
        if (!cJSON_IsString(e)) return false;
    return true;
}

static bool plain_name(const char *s)
{
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_') return false;
    return s[0] != '\0';
}

/* target_modules, exclude_modules, layers_to_transform, layers_pattern
 * into s (its regexes compiled: s->regex, s->exclude_regex). *all_linear:
 * target_modules is "all-linear". */
static ngpt_status read_selector(const cJSON *root, const char *src, const ngpt_peft_family *fam,
                                 cJSON **defaults, selector *s)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "target_modules");
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, "exclude_modules");
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(root, "layers_to_transform");
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(root, "layers_pattern");
    if (t && !cJSON_IsNull(t) && !strings(t))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: target_modules must be a list of module names "
                         "or a string", src);
    if (x && !cJSON_IsNull(x) && !strings(x))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: exclude_modules must be a list of module "
                         "names or a string", src);
    if (lp && !cJSON_IsNull(lp) && !strings(lp))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layers_pattern must be a name or a list of "
                         "names", src);
    if (!t || cJSON_IsNull(t)) {    /* peft's default for the model type */
        *defaults = cJSON_Parse(fam->default_targets);
        if (!*defaults) return ngpt_fail(NGPT_ERR_NO_MEMORY, "out of memory reading %s", src);
        t = *defaults;
    }
    const bool str = cJSON_IsString(t);
    s->targets = t;
    s->all_linear = str && !strcasecmp(t->valuestring, "all-linear");
    if (str && lt && !cJSON_IsNull(lt))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layers_to_transform cannot be used when "
                         "target_modules is a string (peft refuses it too)", src);
    if (str && lp && !cJSON_IsNull(lp))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layers_pattern cannot be used when "
                         "target_modules is a string (peft refuses it too)", src);
    if (!off(lp) && (!lt || cJSON_IsNull(lt)))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layers_pattern needs layers_to_transform "
                         "(peft refuses it too)", src);
    if (lt && !cJSON_IsNull(lt)) {
        bool ok = cJSON_IsNumber(lt) || cJSON_IsArray(lt);
        for (const cJSON *e = cJSON_IsArray(lt) ? lt->child : lt; ok && e;
             e = cJSON_IsArray(lt) ? e->next : NULL)
            ok = cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < 1e9 &&
                 e->valuedouble == floor(e->valuedouble);
        if (!ok)
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: layers_to_transform must be a layer "
                             "index or a list of them", src);
        s->layers = lt;
    }
    if (!off(lp)) {
        for (const cJSON *e = cJSON_IsArray(lp) ? lp->child : lp; e;
             e = cJSON_IsArray(lp) ? e->next : NULL)
            if (!plain_name(e->valuestring))
                return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: layers_pattern \"%.40s\" is not a "
                                 "plain name; ngpt reads the name of the layers' container "
                                 "(%s's is \"%s\")", src, e->valuestring, fam->name,
                                 strrchr(fam->layers, '.') + 1);
        s->pattern = lp;
    }
    ngpt_status st = NGPT_OK;
    if (str && !s->all_linear) {
        st = compile(src, "target_modules", t->valuestring, &s->re);
        s->regex = !st;
    }
    if (!st && cJSON_IsString(x)) {
        st = compile(src, "exclude_modules", x->valuestring, &s->exclude_re);
        s->exclude_regex = !st;
    } else if (!st && x && !cJSON_IsNull(x)) {
        s->exclude = x;
    }
    return st;
}

static ngpt_status number(const cJSON *root, const char *key, double dflt, const char *src,
                          double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = dflt;
    if (!v) return NGPT_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s must be a number", src, key);
    *out = v->valuedouble;
    return NGPT_OK;
}

static ngpt_status flag(const cJSON *root, const char *key, const char *src, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = cJSON_IsTrue(v);
    if (v && !cJSON_IsBool(v) && !cJSON_IsNull(v))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: %s must be true or false", src, key);
    return NGPT_OK;
}

/* peft_type, bias and init_lora_weights: plain LoRA on an unchanged base. */
static ngpt_status check_kind(const cJSON *root, const char *src)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "peft_type");
    if (!cJSON_IsString(type))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s has no peft_type; a PEFT LoRA adapter's says "
                         "\"LORA\"", src);
    if (strcmp(type->valuestring, "LORA"))
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: peft_type \"%.40s\" is not supported; ngpt "
                         "reads LoRA adapters (\"LORA\")", src, type->valuestring);
    const cJSON *bias = cJSON_GetObjectItemCaseSensitive(root, "bias");
    if (bias && !cJSON_IsNull(bias) && (!cJSON_IsString(bias) || strcmp(bias->valuestring, "none")))
        return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: bias %s%.20s%s is not supported: it trains "
                         "the base model's biases, which ngpt's adapters do not hold (bias "
                         "\"none\" only)", src, cJSON_IsString(bias) ? "\"" : "",
                         cJSON_IsString(bias) ? bias->valuestring : "(not a string)",
                         cJSON_IsString(bias) ? "\"" : "");
    const cJSON *init = cJSON_GetObjectItemCaseSensitive(root, "init_lora_weights");
    if (!init || cJSON_IsBool(init) || cJSON_IsNull(init)) return NGPT_OK;
    static const char *const plain[] = {"gaussian", "eva", "orthogonal"};
    if (cJSON_IsString(init) && in(plain, N_OF(plain), init->valuestring)) return NGPT_OK;
    static const char *const moved[] = {"pissa", "olora", "corda", "loftq", "lora_ga"};
    for (size_t i = 0; cJSON_IsString(init) && i < N_OF(moved); i++)
        if (!strncmp(init->valuestring, moved[i], strlen(moved[i])))
            return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: init_lora_weights \"%.40s\" changes "
                             "the base model's weights too, which the adapter does not hold; "
                             "convert it to a plain LoRA adapter first (peft's "
                             "path_initial_model_for_weight_conversion)", src, init->valuestring);
    return ngpt_fail(NGPT_ERR_UNSUPPORTED, "%s: init_lora_weights is not one ngpt knows (true, "
                     "false, \"gaussian\", \"eva\", \"orthogonal\")", src);
}

/* r, lora_alpha, use_rslora, lora_dropout into lc. */
static ngpt_status read_scalars(const cJSON *root, const char *src, ngpt_lora_config *lc)
{
    double r, alpha, dropout;
    bool rslora, fan_in_fan_out;    /* either way: lora_A and lora_B are stored the same */
    ngpt_status st;
    if ((st = number(root, "r", 8, src, &r)) || (st = number(root, "lora_alpha", 8, src, &alpha)) ||
        (st = number(root, "lora_dropout", 0, src, &dropout)) ||
        (st = flag(root, "use_rslora", src, &rslora)) ||
        (st = flag(root, "fan_in_fan_out", src, &fan_in_fan_out)))
        return st;
    if (!(r >= 1 && r <= NGPT_LORA_RANK_MAX) || r != floor(r))
        return ngpt_fail(r > NGPT_LORA_RANK_MAX && r == floor(r) ? NGPT_ERR_UNSUPPORTED
                                                                  : NGPT_ERR_BAD_FORMAT,
                         "%s: r %g is not a rank ngpt reads (an integer in 1..%d)", src, r,
                         NGPT_LORA_RANK_MAX);
    if (!(alpha > 0) || !isfinite((float)alpha) || (float)alpha == 0.0f)
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: lora_alpha %g must be positive (and a "
                         "float32 value)", src, alpha);
    if (!(dropout >= 0 && dropout < 1))
        return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s: lora_dropout %g is not in [0, 1)", src, dropout);
    lc->rank = (int32_t)r;
    lc->alpha = (float)alpha;
    lc->rslora = rslora;
    lc->dropout = (float)dropout;
    if (lc->dropout >= 1.0f) lc->dropout = nextafterf(1.0f, 0.0f);
    return NGPT_OK;
}

static ngpt_status read_root(const cJSON *root, const char *src, const ngpt_config *cfg,
                             const ngpt_peft_family *fam, ngpt_lora_config *lc)
{
    if (!cJSON_IsObject(root)) return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not a JSON object", src);
    ngpt_lora_config c = ngpt_lora_config_default();
    ngpt_status st;
    if ((st = check_keys(root, src)) || (st = check_kind(root, src)) ||
        (st = read_scalars(root, src, &c)))
        return st;
    selector s = {0};
    cJSON *defaults = NULL;
    st = read_selector(root, src, fam, &defaults, &s);
    if (!st) st = select_modules(&s, src, cfg, fam, &c.targets, &c.layers);
    if (s.regex) regfree(&s.re);
    if (s.exclude_regex) regfree(&s.exclude_re);
    cJSON_Delete(defaults);
    if (st) return st;
    uint32_t every = 0;
    for (size_t i = 0; i < fam->n_block; i++) every |= fam->block[i].bit;
    if (s.all_linear && c.targets == every) c.targets = NGPT_LORA_ALL_LINEAR;
    *lc = c;
    return NGPT_OK;
}

ngpt_status ngpt_peft_config_read(const void *text, size_t size, const char *src,
                                  const ngpt_config *cfg, const ngpt_peft_family *fam,
                                  ngpt_lora_config *lc)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, size, &end, 0);
    if (!root) return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not valid JSON", src);
    for (const char *q = end; q && q < (const char *)text + size; q++)
        if (!isspace((unsigned char)*q)) {
            cJSON_Delete(root);
            return ngpt_fail(NGPT_ERR_BAD_FORMAT, "%s is not valid JSON: text after the object",
                             src);
        }
    ngpt_status st = read_root(root, src, cfg, fam, lc);
    cJSON_Delete(root);
    return st;
}

/* ------------------------------------------------------------ writing */

char *ngpt_peft_config_write(const ngpt_peft_family *fam, const ngpt_lora_config *lc,
                             const ngpt_lora_layout *ll)
{
    cJSON *root = cJSON_CreateObject(), *targets = NULL, *layers = NULL;
    if (!root) return NULL;
    /* "all-linear" cannot go with layers_to_transform: then the list */
    if (lc->targets == NGPT_LORA_ALL_LINEAR && !lc->layers) {
        targets = cJSON_CreateString("all-linear");
    } else if ((targets = cJSON_CreateArray())) {
        for (int i = 0; i < ll->n_modules; i++)
            for (size_t j = 0; j < fam->n_block; j++)
                if (fam->block[j].bit == ll->mod[i].target)
                    cJSON_AddItemToArray(targets, cJSON_CreateString(fam->block[j].path));
    }
    if (lc->layers && (layers = cJSON_CreateArray()))
        for (int l = 0; l < 64; l++)
            if (lc->layers >> l & 1) cJSON_AddItemToArray(layers, cJSON_CreateNumber(l));
    cJSON_AddNullToObject(root, "base_model_name_or_path");
    cJSON_AddStringToObject(root, "peft_type", "LORA");
    cJSON_AddStringToObject(root, "task_type", "CAUSAL_LM");
    cJSON_AddBoolToObject(root, "inference_mode", true);
    cJSON_AddNumberToObject(root, "r", lc->rank);
    char alpha[32], dropout[32];     /* the shortest decimals of the floats */
    ngpt_format_float(alpha, lc->alpha);
    ngpt_format_float(dropout, lc->dropout);
    cJSON_AddRawToObject(root, "lora_alpha", alpha);
    cJSON_AddRawToObject(root, "lora_dropout", dropout);
    cJSON_AddBoolToObject(root, "use_rslora", lc->rslora);
    cJSON_AddItemToObject(root, "target_modules", targets ? targets : cJSON_CreateNull());
    cJSON_AddItemToObject(root, "layers_to_transform", layers ? layers : cJSON_CreateNull());
    if (layers) cJSON_AddStringToObject(root, "layers_pattern", strrchr(fam->layers, '.') + 1);
    else cJSON_AddNullToObject(root, "layers_pattern");
    cJSON_AddBoolToObject(root, "fan_in_fan_out", fam->fan_in_fan_out);
    cJSON_AddStringToObject(root, "bias", "none");
    cJSON_AddBoolToObject(root, "use_dora", false);
    cJSON_AddNullToObject(root, "modules_to_save");
    cJSON_AddBoolToObject(root, "init_lora_weights", true);
    cJSON_AddItemToObject(root, "rank_pattern", cJSON_CreateObject());
    cJSON_AddItemToObject(root, "alpha_pattern", cJSON_CreateObject());
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}
