/* peft.h — PEFT's LoRA adapters (Hugging Face's peft library; docs/IMPORT.md,
 * "PEFT adapters"): a directory of adapter_config.json and
 * adapter_model.safetensors whose tensors are named after the Hugging Face
 * model's modules. peft_config.c reads and writes the config against a
 * model's family (which modules it has, by path, and which of ngpt's LoRA
 * targets each one is); peft.c moves the tensors both ways (the public
 * ngpt_import_peft and ngpt_adapter_export_peft). */
#ifndef NGPT_IMPORT_PEFT_H
#define NGPT_IMPORT_PEFT_H

#include <stddef.h>

#include "runtime/lora.h"

/* A module of a Hugging Face model: its path (a block's relative to the
 * block, "self_attn.q_proj"), and its NGPT_LORA_* bit, or 0 for one ngpt
 * does not adapt (a norm, a container, the embedding, the lm_head). */
typedef struct ngpt_peft_module {
    const char *path;
    uint32_t bit;
} ngpt_peft_module;

/* The Hugging Face family an imported model came from: GPT-2
 * (GPT2LMHeadModel: Conv1D Linears, fan_in_fan_out) or Llama
 * (LlamaForCausalLM). */
typedef struct ngpt_peft_family {
    const char *name;           /* "GPT-2", in messages */
    const char *default_targets;    /* peft's target_modules for the model type (JSON) */
    const char *layers;         /* the blocks' container: "transformer.h", "model.layers" */
    const ngpt_peft_module *block, *top;    /* a block's modules, the others */
    size_t n_block, n_top;
    bool fan_in_fan_out;        /* its Linears store W as (in, out) */
} ngpt_peft_family;

/* The family of a model of cfg (the switches `ngpt import` sets for each),
 * or NULL: a model no Hugging Face family describes (bare message). */
const ngpt_peft_family *ngpt_peft_family_of(const ngpt_config *cfg);

/* The path of the Linear of bit `bit` in block l ("model.layers.3.mlp.up_proj"),
 * into buf; false if the family has no module of that bit. */
bool ngpt_peft_module_path(const ngpt_peft_family *fam, int l, uint32_t bit, char *buf,
                           size_t size);

/* adapter_config.json (size bytes of text, named src in messages) of an
 * adapter for a model of cfg (family fam) as the LoRA config it describes:
 * which modules target_modules selects is decided as PEFT decides it;
 * what ngpt cannot compute exactly is refused by name. Bare messages. */
ngpt_status ngpt_peft_config_read(const void *text, size_t size, const char *src,
                                  const ngpt_config *cfg, const ngpt_peft_family *fam,
                                  ngpt_lora_config *lc);

/* The adapter_config.json of an adapter of lc (layout ll) for a model of
 * fam, which PEFT's LoraConfig loads; malloc'd text, NULL when out of
 * memory. */
char *ngpt_peft_config_write(const ngpt_peft_family *fam, const ngpt_lora_config *lc,
                             const ngpt_lora_layout *ll);

#endif
