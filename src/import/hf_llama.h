/* hf_llama.h — the Llama family's tensor names (hf_llama.c) for
 * hf_write.h: q|k|v and gate|up stacked by rows, the RoPE tables skipped
 * (docs/IMPORT.md, "Llama"). */
#ifndef NGPT_IMPORT_HF_LLAMA_H
#define NGPT_IMPORT_HF_LLAMA_H

#include "import/hf_write.h"

extern const ngpt_hf_family ngpt_hf_llama;
extern const ngpt_hf_family ngpt_hf_qwen2, ngpt_hf_qwen3;    /* the same names */
extern const ngpt_hf_family ngpt_hf_gemma3;     /* the same, with Gemma's four norms */

#endif
