"""ngpt — run, evaluate and fine-tune ngpt models from Python.

A pure-Python binding (ctypes) of libngpt.so, the C library behind the `ngpt`
command: the same bit-identical results on every machine, numpy optional.

Quick start::

    import ngpt
    with ngpt.Model("m.ngpt") as m:                 # a checkpoint from `ngpt train`
        for piece in m.generate("Once upon a time", 100, temperature=0.8, top_k=40,
                                stop=["\\n\\n"], seed=1):
            print(piece, end="", flush=True)        # streams as the model writes
        print(m.stop_reason)                        # "max tokens", "stop sequence", ...

Contents:

  SharedModel(path): a checkpoint opened once, its weights held once;
      context(batch=1, seq=0, threads=1) -> a Model on them (one per thread,
      say), each giving what a Model of its own gives.
  Model(path, batch=1, seq=0, threads=1, adapters=())
      a checkpoint opened for inference (close(), `with`, or garbage collection),
      with LoRA adapters applied (set_adapters([path | Adapter | (either, scale)])).
      tokenize / detokenize / token_bytes: text <-> token ids (the model's
          tokenizer, or bytes for a byte-level model);
      generate(prompt, max_tokens, **sampler) -> iterator of str pieces;
          generate_tokens (ids), generate_text (one str); every sampler option
          of ngpt_context_generate, stop sequences, beam search, sessions;
      logits(tokens) -> (len, V) numpy array (a list of lists without numpy);
      params_checksum(), logits_checksum(): `ngpt checksum`'s XXH3-64 values;
      evaluate(text|path) -> mean loss, perplexity(...) -> exp(loss);
      save_session(path) / load_session(path): the KV cache of a conversation;
      apply_chat_template(messages, add_generation_prompt=False, *, tokenize=False,
      enable_thinking=None, chat_template=None, now=None): the model's chat template
      rendered as Hugging Face's apply_chat_template renders it (text, or token ids).
  Chat(model, system=None, seed=0, template=None, **sampler): conversation
      turns as `ngpt chat` holds them (the model's own chat template when it
      carries one, else ChatML for a tokenizer with <|im_start|> and <|im_end|>,
      else plain); say(line) streams the reply, reply(line) joins it.
  finetune(model_path, out_path, text|path, steps, ...) -> losses, with a
      progress(step, loss) callback; lora=... trains a LoRA adapter of the model
      instead (the model frozen), adapter=... goes on training one.
  Adapter(path): a LoRA adapter file opened once (config, rank, info), shared by
      Models; lora_config(spec) -> LoraConfig from "r=16 targets=q_proj,v_proj" or
      a dict.
  checksum_bytes(data) -> XXH3-64 of bytes.
  Error: every failure of the C library, str(e) = ngpt_last_error()'s sentence,
      e.status / e.status_name its ngpt_status. Wrong Python types raise
      TypeError, a closed Model ValueError.
  build_info(), version: the library this binding loaded.

The library is found through NGPT_LIBRARY (a path to libngpt.so), then beside
this package, then in the source tree's build/, then the system's
(`make install`). The GIL is released during every C call: a UI thread stays
live while a model generates (generation itself runs in a worker thread).
"""
from ._lib import Error, LoraConfig, NGPT_LOGITS_ALL as LOGITS_ALL, lib as _lib
from .chat import Chat
from .lora import Adapter, lora_config
from .model import Model, SharedModel
from .progress import STAGES
from .train import finetune

__all__ = ["Model", "SharedModel", "Chat", "Error", "finetune", "checksum_bytes", "build_info",
           "version", "STAGES", "LOGITS_ALL", "Adapter", "lora_config", "LoraConfig"]


def checksum_bytes(data):
    """XXH3-64 of bytes (int), as the C library computes it everywhere."""
    data = bytes(data)
    return _lib.ngpt_checksum_bytes(data, len(data))


def build_info():
    """"ngpt 0.2.0 kernels=avx2 ...": the loaded library's build, for bug reports."""
    return _lib.ngpt_build_info().decode()


version = build_info().split()[1]
