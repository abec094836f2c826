/* hf_gpt2.c — where GPT-2's state_dict goes in a .ngpt checkpoint
 * (hf_gpt2.h; hf_write.c streams it).
 *
 *   tok_emb.weight <- wte.weight         pos_emb.weight <- wpe.weight
 *   blocks.i.ln1.*  <- h.i.ln_1.*        blocks.i.ln2.* <- h.i.ln_2.*
 *   blocks.i.attn.qkv.weight  <- h.i.attn.c_attn.weight^T   (.bias as is)
 *   blocks.i.attn.proj.weight <- h.i.attn.c_proj.weight^T   (.bias as is)
 *   blocks.i.mlp.fc1.weight   <- h.i.mlp.c_fc.weight^T      (.bias as is)
 *   blocks.i.mlp.fc2.weight   <- h.i.mlp.c_proj.weight^T    (.bias as is)
 *   ln_f.*          <- ln_f.*            lm_head.weight <- lm_head.weight (untied)
 * ^T: transformers' Conv1D stores (in, out) for y = x W + b; ngpt stores
 * (out, in) like nn.Linear. The columns of c_attn are q | k | v, head h at
 * h*D..(h+1)*D within each, which is ngpt's qkv order: no permutation.
 * Names may carry "transformer."; the causal-mask buffers are skipped. */
#include <stdio.h>
#include <string.h>

#include "import/hf_gpt2.h"

typedef struct name_map { const char *ngpt, *hf; bool transpose; } name_map;

static const name_map top_names[] = {
    {"tok_emb.weight", "wte.weight", false}, {"pos_emb.weight", "wpe.weight", false},
    {"ln_f.weight", "ln_f.weight", false},   {"ln_f.bias", "ln_f.bias", false},
    {"lm_head.weight", "lm_head.weight", false},
};
static const name_map block_names[] = {
    {"ln1.weight", "ln_1.weight", false},        {"ln1.bias", "ln_1.bias", false},
    {"attn.qkv.weight", "attn.c_attn.weight", true}, {"attn.qkv.bias", "attn.c_attn.bias", false},
    {"attn.proj.weight", "attn.c_proj.weight", true}, {"attn.proj.bias", "attn.c_proj.bias", false},
    {"ln2.weight", "ln_2.weight", false},        {"ln2.bias", "ln_2.bias", false},
    {"mlp.fc1.weight", "mlp.c_fc.weight", true}, {"mlp.fc1.bias", "mlp.c_fc.bias", false},
    {"mlp.fc2.weight", "mlp.c_proj.weight", true}, {"mlp.fc2.bias", "mlp.c_proj.bias", false},
};

static bool sources(const ngpt_config *cfg, const char *name, ngpt_hf_sources *out)
{
    (void)cfg;
    out->n = 1;
    for (size_t i = 0; i < sizeof top_names / sizeof top_names[0]; i++)
        if (!strcmp(name, top_names[i].ngpt)) {
            snprintf(out->hf[0], sizeof out->hf[0], "%s", top_names[i].hf);
            out->transpose = false;
            return true;
        }
    int layer, used = 0;
    if (sscanf(name, "blocks.%d.%n", &layer, &used) != 1 || !used) return false;
    for (size_t i = 0; i < sizeof block_names / sizeof block_names[0]; i++)
        if (!strcmp(name + used, block_names[i].ngpt)) {
            snprintf(out->hf[0], sizeof out->hf[0], "h.%d.%s", layer, block_names[i].hf);
            out->transpose = block_names[i].transpose;
            return true;
        }
    return false;
}

/* transformers' causal-mask buffers, which older saves include. */
static bool mask_buffer(const char *name)
{
    int layer, used = 0;
    if (sscanf(name, "h.%d.attn.%n", &layer, &used) != 1 || !used) return false;
    return !strcmp(name + used, "bias") || !strcmp(name + used, "masked_bias");
}

const ngpt_hf_family ngpt_hf_gpt2 = {
    .name = "GPT-2", .embedding = "wte.weight", .prefix = "transformer.",
    .sources = sources, .skipped = mask_buffer,
};
