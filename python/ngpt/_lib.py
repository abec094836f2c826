"""Finding libngpt.so and declaring its C API for ctypes (include/ngpt.h).

python/tests/test_abi.py checks these declarations against the header as the C
compiler lays it out, so keep them in the forms it reads: a Structure class
mirrors the struct its name gives (GenerateConfig: ngpt_generate_config; a
`_c_struct_ = "ngpt_..."` attribute names another), with every field in order;
_PROTOS holds every function's prototype; a value copied from the header is a
module-level NGPT_* constant of the header's name."""
import ctypes
import ctypes.util
import os
import sys
from ctypes import (POINTER, Structure, c_bool, c_char_p, c_float, c_int, c_int32,
                    c_size_t, c_uint32, c_uint64, c_void_p, CFUNCTYPE)

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAMES = ("libngpt.dylib",) if sys.platform == "darwin" else ("libngpt.so",)


def _candidates():
    env = os.environ.get("NGPT_LIBRARY")
    if env:
        yield env
        return                      # an explicit choice: never fall back silently
    for name in _NAMES:
        yield os.path.join(_HERE, name)                       # shipped beside the package
        yield os.path.join(_HERE, "..", "..", "build", name)  # the source tree's build
    found = ctypes.util.find_library("ngpt")                  # the system's (make install)
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("ngpt: cannot find libngpt; build it with `make` and set NGPT_LIBRARY="
                      "/path/to/build/libngpt.so (tried: %s)" % ", ".join(tried or ["nothing"]))


lib = _load()

# The header's values this binding uses.
NGPT_OK = 0
NGPT_MODE_INFER, NGPT_MODE_TRAIN = 0, 1
NGPT_CONTEXT_EXACT, NGPT_CONTEXT_SHIFT = 0, 1
NGPT_LOGITS_ALL = -1
NGPT_END_TOKENS_MAX = 8
NGPT_ADAPTERS_MAX = 8


class Config(Structure):
    _fields_ = [("vocab_size", c_int32), ("context_len", c_int32), ("d_model", c_int32),
                ("n_layers", c_int32), ("n_heads", c_int32), ("d_ff", c_int32),
                ("dropout", c_float), ("rope_theta", c_float),
                ("qkv_bias", c_bool), ("proj_bias", c_bool), ("tie_lm_head", c_bool),
                ("final_norm", c_bool), ("norm", c_int), ("pos", c_int), ("gelu", c_int),
                ("norm_type", c_int), ("norm_eps", c_float), ("mlp", c_int),
                ("mlp_bias", c_bool), ("n_kv_heads", c_int32), ("head_dim", c_int32),
                ("rope_pairs", c_int), ("weights", c_int), ("qk_norm", c_bool),
                ("rope_scaling", c_int), ("rope_factor", c_float),
                ("rope_low_freq_factor", c_float), ("rope_high_freq_factor", c_float),
                ("rope_original_context", c_int32), ("norm_offset", c_bool),
                ("sliding_window", c_int32), ("sliding_pattern", c_int32),
                ("rope_local_theta", c_float), ("attn_scalar", c_float),
                ("logit_softcap", c_float), ("emb_scale", c_float),
                ("lm_head_q4", c_bool), ("reserved", c_uint32 * 30)]


class Shape(Structure):
    _fields_ = [("mode", c_int), ("batch", c_int32), ("seq", c_int32), ("trace", c_int),
                ("threads", c_int32), ("logits_rows", c_int32), ("draft_tokens", c_int32),
                ("adapter_rank", c_int32), ("adapter", c_void_p), ("recompute", c_int32),
                ("loss_chunk", c_int32), ("grammar_depth", c_int32),
                ("kv_k", ctypes.c_int16), ("kv_v", ctypes.c_int16),
                ("reserved", c_uint32 * (4 - ctypes.sizeof(c_void_p) // 4))]


class Sampler(Structure):
    _fields_ = [("temperature", c_float), ("top_k", c_int32), ("top_p", c_float),
                ("min_p", c_float), ("repeat_penalty", c_float), ("repeat_window", c_int32),
                ("banned", POINTER(c_int32)), ("n_banned", c_int32),
                ("logit_bias", POINTER(c_float)), ("seed", c_uint64),
                ("reserved", c_uint32 * 18)]


PREFILLED_FN = CFUNCTYPE(None, c_void_p)
TOKEN_FN = CFUNCTYPE(c_int, c_int32, c_void_p)
PROGRESS_FN = CFUNCTYPE(c_bool, c_int, c_uint64, c_uint64, c_void_p)


class GenerateConfig(Structure):
    _fields_ = [("sampler", Sampler), ("max_tokens", c_int32),
                ("end_tokens", POINTER(c_int32)), ("n_end_tokens", c_int32),
                ("ignore_end", c_bool), ("stop", POINTER(c_char_p)), ("n_stop", c_int32), ("context_mode", c_int),
                ("stop_at_context_full", c_bool), ("no_cache", c_bool),
                ("beam_width", c_int32), ("length_penalty", c_float),
                ("on_prefilled", PREFILLED_FN), ("keep_cache", c_bool),
                ("first_draw", c_uint64), ("draft", c_void_p), ("lookup", c_int32),
                ("draft_tokens", c_int32), ("grammar", c_void_p),
                ("reserved", c_uint32 * (24 - ctypes.sizeof(c_void_p) // 4))]


class GenerateResult(Structure):
    _fields_ = [("n_tokens", c_int32), ("n_generated", c_int32), ("reason", c_int),
                ("prompt_tokens", c_int32), ("prompt_dropped", c_int32),
                ("n_proposed", c_int32), ("n_accepted", c_int32), ("end_token", c_int32),
                ("reserved", c_uint32 * 8)]


class OptimConfig(Structure):
    _fields_ = [("lr", c_float), ("min_lr", c_float), ("warmup", ctypes.c_int64),
                ("total_steps", ctypes.c_int64), ("beta1", c_float), ("beta2", c_float),
                ("eps", c_float), ("weight_decay", c_float), ("decay_all", c_bool),
                ("clip", c_float), ("accum", c_int32), ("reserved", c_uint32 * 19)]


class TokenizerInfo(Structure):
    _fields_ = [("n_tokens", c_int32), ("n_merges", c_int32), ("n_special", c_int32),
                ("end_id", c_int32), ("pad_id", c_int32), ("max_token_bytes", c_int32),
                ("pretok", c_int), ("rule", c_int), ("checksum", c_uint64), ("bos_id", c_int32),
                ("n_end_tokens", c_int32), ("normalizer", c_int), ("ignore_merges", c_bool),
                ("split_special", c_bool), ("reserved", c_uint32 * 17)]


class LoraConfig(Structure):
    _fields_ = [("rank", c_int32), ("alpha", c_float), ("rslora", c_bool), ("targets", c_uint32),
                ("layers", c_uint64), ("dropout", c_float), ("reserved", c_uint32 * 17)]

    def __str__(self):
        """ngpt_lora_config_format's words: "r=8 alpha=16 targets=q_proj,v_proj"."""
        buf = ctypes.create_string_buffer(256)
        lib.ngpt_lora_config_format(ctypes.byref(self), buf, 256)
        return buf.value.decode()

    def __repr__(self):
        return "<ngpt.LoraConfig %s>" % self


class AdapterInfo(Structure):
    _fields_ = [("config", Config), ("base", c_uint64), ("floats", c_uint64), ("steps", c_uint64),
                ("modules", c_uint32), ("layers", c_int32), ("scale", c_float),
                ("reserved", c_uint32 * 7)]


_PTR_WORDS = ctypes.sizeof(c_void_p) // 4


class ChatMessage(Structure):
    _c_struct_ = "ngpt_chat_message"
    _fields_ = [("role", c_char_p), ("content", c_char_p), ("content_len", c_size_t),
                ("reserved", c_uint32 * (16 - 3 * _PTR_WORDS))]


class TemplateOptions(Structure):
    _c_struct_ = "ngpt_template_options"
    _fields_ = [("add_generation_prompt", c_bool), ("thinking", c_int),
                ("now", ctypes.c_int64), ("bos_token", c_char_p), ("eos_token", c_char_p),
                ("reserved", c_uint32 * (24 - 2 * _PTR_WORDS))]


NGPT_THINKING_DEFAULT, NGPT_THINKING_ON, NGPT_THINKING_OFF = 0, 1, 2

P = POINTER
_S = c_int  # ngpt_status
_PROTOS = {
    "ngpt_status_string": (c_char_p, [c_int]),
    "ngpt_last_error": (c_char_p, []),
    "ngpt_build_info": (c_char_p, []),
    "ngpt_progress_callback_set": (None, [PROGRESS_FN, c_void_p]),
    "ngpt_config_format": (None, [P(Config), c_char_p, c_size_t]),
    "ngpt_shape_default": (Shape, [c_int]),
    "ngpt_context_init": (_S, [P(c_void_p), c_void_p, P(Config), P(Shape), c_void_p, c_size_t]),
    "ngpt_context_free": (None, [c_void_p]),
    "ngpt_model_open": (_S, [P(c_void_p), c_char_p]),
    "ngpt_model_close": (_S, [c_void_p]),
    "ngpt_model_config": (_S, [c_void_p, P(Config)]),
    "ngpt_model_tokenizer": (_S, [c_void_p, P(c_void_p)]),
    "ngpt_context_prepare": (_S, [c_void_p]),
    "ngpt_context_shape": (_S, [c_void_p, P(Shape)]),
    "ngpt_context_params_init": (_S, [c_void_p, c_uint64]),
    "ngpt_context_dropout_set": (_S, [c_void_p, c_bool, c_uint64, c_uint64]),
    "ngpt_context_forward": (_S, [c_void_p, P(c_int32), c_int32, c_int32, P(c_int32), P(c_float)]),
    "ngpt_context_logits": (_S, [c_void_p, P(P(c_float))]),
    "ngpt_checksum_bytes": (c_uint64, [c_void_p, c_size_t]),
    "ngpt_context_params_checksum": (_S, [c_void_p, P(c_uint64)]),
    "ngpt_context_logits_checksum": (_S, [c_void_p, P(c_uint64)]),
    "ngpt_context_save": (_S, [c_void_p, c_char_p]),
    "ngpt_context_tokenizer_set": (_S, [c_void_p, c_void_p]),
    "ngpt_tokenizer_free": (None, [c_void_p]),
    "ngpt_tokenizer_describe": (_S, [c_void_p, P(TokenizerInfo)]),
    "ngpt_tokenizer_token": (_S, [c_void_p, c_int32, P(P(ctypes.c_uint8)), P(c_size_t)]),
    "ngpt_tokenizer_encode": (_S, [c_void_p, c_char_p, c_size_t, P(c_int32), c_size_t,
                                   P(c_size_t)]),
    "ngpt_tokenizer_decode": (_S, [c_void_p, P(c_int32), c_size_t, c_char_p, c_size_t,
                                   P(c_size_t)]),
    "ngpt_tokenizer_chatml_specials": (_S, [c_void_p, P(c_int32), P(c_int32)]),
    "ngpt_tokenizer_end_tokens": (_S, [c_void_p, P(P(c_int32)), P(c_int32)]),
    "ngpt_tokenizer_chatml_turn": (_S, [c_void_p, c_char_p, c_char_p, c_size_t, c_bool,
                                        P(c_int32), c_size_t, P(c_size_t)]),
    "ngpt_template_parse": (_S, [P(c_void_p), c_char_p, c_size_t]),
    "ngpt_model_template": (_S, [c_void_p, P(c_void_p)]),
    "ngpt_template_free": (None, [c_void_p]),
    "ngpt_template_options_default": (TemplateOptions, []),
    "ngpt_template_render": (_S, [c_void_p, P(ChatMessage), c_size_t, P(TemplateOptions),
                                  c_char_p, c_size_t, P(c_size_t)]),
    "ngpt_template_render_tokens": (_S, [c_void_p, c_void_p, P(ChatMessage), c_size_t,
                                         P(TemplateOptions), P(c_int32), c_size_t, P(c_int32),
                                         c_size_t, P(c_size_t)]),
    "ngpt_generate_config_default": (GenerateConfig, []),
    "ngpt_sampler_validate": (_S, [P(Sampler), c_int32]),
    "ngpt_context_generate": (_S, [c_void_p, P(GenerateConfig), P(c_int32), c_int32, P(c_int32),
                                 c_int32, TOKEN_FN, c_void_p, P(GenerateResult)]),
    "ngpt_stop_reason_string": (c_char_p, [c_int]),
    "ngpt_grammar_parse": (_S, [P(c_void_p), c_void_p, c_char_p, c_size_t]),
    "ngpt_grammar_from_json_schema": (_S, [P(c_void_p), c_void_p, c_char_p, c_size_t]),
    "ngpt_grammar_text": (_S, [c_void_p, P(c_char_p), P(c_size_t)]),
    "ngpt_grammar_free": (None, [c_void_p]),
    "ngpt_context_cache_clear": (_S, [c_void_p, c_int32]),
    "ngpt_context_cache_len": (_S, [c_void_p, c_int32, P(c_int32)]),
    "ngpt_context_cache_save": (_S, [c_void_p, c_int32, c_char_p]),
    "ngpt_context_cache_load": (_S, [c_void_p, c_int32, c_char_p]),
    "ngpt_data_open_mem": (_S, [P(c_void_p), c_char_p, c_size_t, c_float, c_int32]),
    "ngpt_data_open": (_S, [P(c_void_p), P(c_char_p), c_int32, c_float, c_int32]),
    "ngpt_data_free": (None, [c_void_p]),
    "ngpt_data_tokenize": (_S, [c_void_p, c_void_p, c_int32]),
    "ngpt_context_evaluate": (_S, [c_void_p, c_void_p, c_uint64, c_int32, c_int32, c_int32,
                                 P(c_float)]),
    "ngpt_optim_config_default": (OptimConfig, []),
    "ngpt_optim_config_validate": (_S, [P(OptimConfig)]),
    "ngpt_context_optim_reset": (_S, [c_void_p]),
    "ngpt_context_train_step": (_S, [c_void_p, P(OptimConfig), c_void_p, c_uint64, c_int32,
                                     c_int32, P(c_float), P(c_float), P(c_float)]),
    "ngpt_lora_config_default": (LoraConfig, []),
    "ngpt_lora_config_set": (_S, [P(LoraConfig), c_char_p]),
    "ngpt_lora_config_format": (None, [P(LoraConfig), c_char_p, c_size_t]),
    "ngpt_adapter_create": (_S, [P(c_void_p), c_void_p, P(LoraConfig), c_uint64]),
    "ngpt_adapter_open": (_S, [P(c_void_p), c_char_p]),
    "ngpt_adapter_close": (_S, [c_void_p]),
    "ngpt_adapter_lora_config": (_S, [c_void_p, P(LoraConfig)]),
    "ngpt_adapter_describe": (_S, [c_void_p, P(AdapterInfo)]),
    "ngpt_adapter_save": (_S, [c_void_p, c_char_p]),
    "ngpt_context_adapters_set": (_S, [c_void_p, P(c_void_p), P(c_float), c_int32]),
}
for _name, (_res, _args) in _PROTOS.items():
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


class Error(Exception):
    """A failed ngpt call: str(e) is ngpt_last_error()'s sentence ("ngpt_<function>:
    what is wrong"); e.status is the ngpt_status number, e.status_name its name."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.status_name = lib.ngpt_status_string(status).decode()
        self.message = message


def check(status):
    """Raises Error for a non-zero ngpt_status (call it on the thread that made the call:
    the message is per thread)."""
    if status != NGPT_OK:
        raise Error(status, lib.ngpt_last_error().decode("utf-8", "replace"))


class Handle:
    """A C object the binding opened (a model, an adapter): _h, freed by close()
    (idempotent; an Error when the library refuses, e.g. while contexts use it),
    a `with` block or garbage collection. Subclasses name _free (the library's
    function) and _what (for messages)."""
    _h = None
    _what = "object"

    @staticmethod
    def _free(handle):
        raise NotImplementedError

    def _open(self, opener, path):
        """self._h from opener(&handle, path) (ngpt_model_open, ngpt_adapter_open)."""
        h = c_void_p()
        check(opener(ctypes.byref(h), fspath(path)))
        self._h = h
        return h

    def close(self):
        if self._h is not None:
            check(type(self)._free(self._h))
            self._h = None

    @property
    def closed(self):
        return self._h is None

    def _live(self):
        if self._h is None:
            raise ValueError("ngpt.%s: the %s is closed" % (type(self).__name__, self._what))
        return self._h

    def __enter__(self):
        self._live()
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if self._h is not None:
            type(self)._free(self._h)   # what used it held references: nothing is left
            self._h = None


def fspath(path):
    """A str/bytes/PathLike path as the bytes the C API takes."""
    p = os.fsencode(os.fspath(path))
    if b"\0" in p:
        raise ValueError("ngpt: a path may not contain NUL bytes")
    return p
