/* hf_llama.c — where a Llama state_dict (LlamaForCausalLM) goes in a .ngpt
 * checkpoint (hf_llama.h; hf_write.c streams it).
 *
 *   tok_emb.weight            <- model.embed_tokens.weight
 *   blocks.i.ln1.weight       <- model.layers.i.input_layernorm.weight
 *   blocks.i.attn.qkv.*       <- model.layers.i.self_attn.{q,k,v}_proj.* stacked
 *   blocks.i.attn.q_norm.weight, k_norm.weight <- ...self_attn.{q,k}_norm.weight (Qwen3)
 *   blocks.i.attn.proj.*      <- model.layers.i.self_attn.o_proj.*
 *   blocks.i.ln2.weight       <- model.layers.i.post_attention_layernorm.weight
 *   blocks.i.mlp.fc1.*        <- model.layers.i.mlp.{gate,up}_proj.* stacked
 *   blocks.i.mlp.fc2.*        <- model.layers.i.mlp.down_proj.*
 *   ln_f.weight               <- model.norm.weight
 *   lm_head.weight            <- lm_head.weight (untied)
 * Every Linear is nn.Linear's (out, in), as ngpt's: no transpose. q has
 * H*D rows, k and v n_kv_heads*D each, head h at h*D within each, which is
 * ngpt's qkv order. The rows are not permuted for RoPE: the config has
 * rope_pairs=halves, Hugging Face's rotate_half pairing (i, i + D/2). The
 * rotary inv_freq buffers some saves hold are skipped (ngpt computes its
 * own from rope_theta).
 *
 * Gemma 3 (Gemma3ForCausalLM) has the same names but for its four norms a
 * block (norm=sandwich), whose "post_attention_layernorm" is the norm of
 * the attention's branch, not Llama's second pre-norm:
 *   blocks.i.ln1.weight            <- model.layers.i.input_layernorm.weight
 *   blocks.i.post_attn_norm.weight <- model.layers.i.post_attention_layernorm.weight
 *   blocks.i.ln2.weight            <- model.layers.i.pre_feedforward_layernorm.weight
 *   blocks.i.post_mlp_norm.weight  <- model.layers.i.post_feedforward_layernorm.weight
 * Its norms' weights are w of (1 + w), as ngpt's norm_offset reads them. */
#include <stdio.h>
#include <string.h>

#include "import/hf_llama.h"

typedef struct stack { const char *ngpt, *hf[2]; } stack;

/* Within a block: one source each (hf[1] NULL). */
static const stack block_names[] = {
    {"ln1.weight", {"input_layernorm.weight"}},
    {"attn.proj.weight", {"self_attn.o_proj.weight"}},
    {"attn.proj.bias", {"self_attn.o_proj.bias"}},
    {"attn.q_norm.weight", {"self_attn.q_norm.weight"}},
    {"attn.k_norm.weight", {"self_attn.k_norm.weight"}},
    {"ln2.weight", {"post_attention_layernorm.weight"}},
    {"mlp.fc1.weight", {"mlp.gate_proj.weight", "mlp.up_proj.weight"}},
    {"mlp.fc1.bias", {"mlp.gate_proj.bias", "mlp.up_proj.bias"}},
    {"mlp.fc2.weight", {"mlp.down_proj.weight"}},
    {"mlp.fc2.bias", {"mlp.down_proj.bias"}},
};

/* Gemma 3's (above) in place of Llama's "ln2.weight". */
static const stack gemma_norms[] = {
    {"ln2.weight", {"pre_feedforward_layernorm.weight"}},
    {"post_attn_norm.weight", {"post_attention_layernorm.weight"}},
    {"post_mlp_norm.weight", {"post_feedforward_layernorm.weight"}},
};

/* Block tensor `part` of layer from one of the n names of table b. */
static bool block_source(const stack *b, size_t n, const ngpt_config *cfg, int layer,
                         const char *part, ngpt_hf_sources *out)
{
    for (size_t i = 0; i < n; i++, b++) {
        if (strcmp(part, b->ngpt)) continue;
        out->n = b->hf[1] ? 2 : 1;
        for (int s = 0; s < out->n; s++) {
            snprintf(out->hf[s], sizeof out->hf[s], "model.layers.%d.%s", layer, b->hf[s]);
            if (out->n == 2) out->rows[s] = cfg->d_ff;
        }
        return true;
    }
    return false;
}

static bool sources(const ngpt_config *cfg, const char *name, ngpt_hf_sources *out)
{
    out->n = 1, out->transpose = false;
    const char *top = !strcmp(name, "tok_emb.weight")   ? "model.embed_tokens.weight"
                      : !strcmp(name, "ln_f.weight")    ? "model.norm.weight"
                      : !strcmp(name, "lm_head.weight") ? "lm_head.weight"
                                                        : NULL;
    if (top) {
        snprintf(out->hf[0], sizeof out->hf[0], "%s", top);
        return true;
    }
    int layer, used = 0;
    if (sscanf(name, "blocks.%d.%n", &layer, &used) != 1 || !used) return false;
    const char *part = name + used;
    if (!strcmp(part, "attn.qkv.weight") || !strcmp(part, "attn.qkv.bias")) {
        const int64_t D = cfg->head_dim ? cfg->head_dim : cfg->d_model / cfg->n_heads;
        const int64_t kv = cfg->n_kv_heads ? cfg->n_kv_heads : cfg->n_heads;
        const char *what = strrchr(part, '.') + 1;
        out->n = 3;
        for (int s = 0; s < 3; s++) {
            snprintf(out->hf[s], sizeof out->hf[s], "model.layers.%d.self_attn.%c_proj.%s",
                     layer, "qkv"[s], what);
            out->rows[s] = (s ? kv : cfg->n_heads) * D;
        }
        return true;
    }
    if (cfg->norm == NGPT_NORM_SANDWICH &&
        block_source(gemma_norms, sizeof gemma_norms / sizeof gemma_norms[0], cfg, layer, part,
                     out))
        return true;
    return block_source(block_names, sizeof block_names / sizeof block_names[0], cfg, layer,
                        part, out);
}

/* RoPE's inverse frequencies: per layer in older saves, once in newer. */
static bool rope_buffer(const char *name)
{
    int layer, used = 0;
    if (!strcmp(name, "model.rotary_emb.inv_freq")) return true;
    if (sscanf(name, "model.layers.%d.%n", &layer, &used) != 1 || !used) return false;
    return !strcmp(name + used, "self_attn.rotary_emb.inv_freq");
}

const ngpt_hf_family ngpt_hf_llama = {
    .name = "Llama", .embedding = "model.embed_tokens.weight", .prefix = NULL,
    .sources = sources, .skipped = rope_buffer,
};

/* Qwen2ForCausalLM and Qwen3ForCausalLM: Llama's names, with q, k and v
 * biased (Qwen2) and the per-head norms of q and k (Qwen3:
 * model.layers.i.self_attn.{q,k}_norm.weight, D each). */
const ngpt_hf_family ngpt_hf_qwen2 = {
    .name = "Qwen2", .embedding = "model.embed_tokens.weight", .prefix = NULL,
    .sources = sources, .skipped = rope_buffer,
};
const ngpt_hf_family ngpt_hf_qwen3 = {
    .name = "Qwen3", .embedding = "model.embed_tokens.weight", .prefix = NULL,
    .sources = sources, .skipped = rope_buffer,
};

/* Gemma3ForCausalLM: Llama's names with Gemma's four norms (above). */
const ngpt_hf_family ngpt_hf_gemma3 = {
    .name = "Gemma 3", .embedding = "model.embed_tokens.weight", .prefix = NULL,
    .sources = sources, .skipped = rope_buffer,
};
