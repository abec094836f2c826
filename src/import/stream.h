/* stream.h — a model's tensors streamed into a .ngpt checkpoint from
 * floats an importer reads on demand (stream.c): float32 as they come, or
 * quantized panel by panel with the kernels `ngpt quantize` runs, so an
 * 8-bit or 4-bit import is the file quantize makes of the float32 one.
 * The importers (hf_write.c for Hugging Face state_dicts, llama2c.c for
 * llama2.c's model.bin) plan the tensors and say where each float is. */
#ifndef NGPT_IMPORT_STREAM_H
#define NGPT_IMPORT_STREAM_H

#include "runtime/layout.h"
#include "tokenizer/tokenizer.h"

/* Floats first..first+n-1 of a tensor, in ngpt's (out, in) layout, into dst;
 * src is the importer's entry for it. */
typedef void (*ngpt_stream_floats_fn)(const void *src, size_t first, size_t n, float *dst);

typedef struct ngpt_stream ngpt_stream;

/* One output tensor: info as ngpt_layout_tensor gives it (name, shape,
 * dtype F32, Q8 or Q4), src for floats; stream: set by ngpt_stream_write. */
typedef struct ngpt_stream_tensor {
    ngpt_tensor_info info;
    const void *src;
    ngpt_stream *stream;
} ngpt_stream_tensor;

/* What a model file carries besides its tensors: its tokenizer and its chat
 * template's bytes (io/tmpl_tensor.h; NULL: none). */
typedef struct ngpt_stream_extras {
    const ngpt_tokenizer *tok;
    const void *chat_template;
    size_t template_size;
} ngpt_stream_extras;

/* Writes the model of cfg (its weights' type: cfg->weights), tensors t[0..n)
 * in the layout's order and the extras after them, to path atomically; the
 * floats of each tensor come from floats(t[i].src, ...). A bare message on
 * error. */
ngpt_status ngpt_stream_write(const char *path, const ngpt_config *cfg, const ngpt_stream_extras *x,
                              ngpt_stream_tensor *t, int32_t n, ngpt_stream_floats_fn floats);

#endif
