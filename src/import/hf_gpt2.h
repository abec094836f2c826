/* hf_gpt2.h — GPT-2's tensor names (hf_gpt2.c) for hf_write.h: names
 * with or without "transformer.", Conv1D weights transposed, the attention
 * mask buffers skipped (docs/IMPORT.md, "The weights"). */
#ifndef NGPT_IMPORT_HF_GPT2_H
#define NGPT_IMPORT_HF_GPT2_H

#include "import/hf_write.h"

extern const ngpt_hf_family ngpt_hf_gpt2;

#endif
