"""ngpt.SharedModel: a checkpoint opened once; ngpt.Model: an inference context on it."""
import codecs
import json
import ctypes
import math
import queue
import threading
from ctypes import POINTER, byref, c_char_p, c_float, c_int32, c_size_t, c_uint64, c_void_p

from ._lib import (ChatMessage, GenerateConfig, GenerateResult, Config, Handle, NGPT_CONTEXT_EXACT,
                   NGPT_THINKING_DEFAULT, NGPT_THINKING_OFF, NGPT_THINKING_ON,
                   NGPT_CONTEXT_SHIFT, NGPT_LOGITS_ALL, NGPT_MODE_INFER, PREFILLED_FN, Shape,
                   TOKEN_FN, TokenizerInfo, check, fspath, lib)
from .lora import adapter_list
from .progress import progress_callback

try:
    import numpy
except ImportError:         # numpy is optional: logits are then lists
    numpy = None

_SAMPLER_KEYS = ("temperature", "top_k", "top_p", "min_p", "repeat_penalty",
                 "repeat_window", "seed")


def _set_adapters(ctx, applied):
    """ngpt_context_adapters_set of [(Adapter, scale)] on ctx."""
    n = len(applied)
    ads = (c_void_p * max(n, 1))(*[a._live().value for a, _ in applied])
    scales = (c_float * max(n, 1))(*[s for _, s in applied])
    check(lib.ngpt_context_adapters_set(ctx, ads, scales, n))


def _ints(values, what):
    values = list(values)
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError("ngpt: %s must be ints, got %r" % (what, type(v).__name__))
    return (c_int32 * max(len(values), 1))(*values), len(values)


class SharedModel(Handle):
    """A checkpoint opened once (ngpt_model_open): read, verified and mapped a
    single time, its weights held once for every context made from it.

    SharedModel(path) opens it; context(batch=1, seq=0, threads=1,
    logits_rows=0, draft_tokens=0, adapters=(), adapter_rank=0) makes a Model on its
    weights (activations, KV cache and scratch only), as many as
    wanted, each usable from its own thread. The weights are read only and
    shared, so contexts give exactly what a Model(path) of their own gives.
    close() (or `with`, or garbage collection once no context refers to it)
    frees it; closing while a context is open raises Error (close the
    contexts first).
    """

    _what = "model"
    _free = lib.ngpt_model_close

    def __init__(self, path):
        m = self._open(lib.ngpt_model_open, path)
        cfg = Config()
        check(lib.ngpt_model_config(m, byref(cfg)))
        self.config = cfg
        self.path = path

    def context(self, batch=1, seq=0, threads=1, logits_rows=0, draft_tokens=0, adapters=(),
                adapter_rank=0):
        """An inference context (a Model) on these weights."""
        return Model(self, batch=batch, seq=seq, threads=threads, logits_rows=logits_rows,
                     draft_tokens=draft_tokens, adapters=adapters, adapter_rank=adapter_rank)



class Model(Handle):
    """A model loaded from a .ngpt checkpoint, ready to generate.

    Model(path, batch=1, seq=0, threads=1, logits_rows=0, draft_tokens=0,
    adapters=(), adapter_rank=0)
    opens the model file (one read) and plans an inference context on its
    weights, by default what generation needs (the C library's default
    plan): passes of at most 512 positions (seq 0; a longer prompt is
    prefilled pass by pass) and the logits of the last position (logits_rows
    0: 1 + draft_tokens, the rows a speculative check of draft_tokens reads).
    seq=T and logits_rows=ngpt.LOGITS_ALL plan the full forward that
    logits() over a whole text needs; logits_rows=n >= 1 keeps the last n.
    It has the tokenizer the file carries (None: a
    byte-level model, tokens are bytes). adapters are LoRA adapters of the
    model to apply (set_adapters: Adapters, paths, or (either, scale)); the
    context is planned for ranks up to the largest of theirs and adapter_rank
    (set a larger adapter_rank to apply larger ones later). Model(shared, ...), with a
    SharedModel, or shared.context(...), makes another context on weights
    already open. Close it with close() or a `with` block; garbage
    collection closes it too. Any use after close raises ValueError. Calls
    on one Model are serialized by a lock; separate Models (of one
    SharedModel or not) may run in parallel threads (the GIL is released
    while the C library works).
    """

    _what = "model"

    def __init__(self, path, batch=1, seq=0, threads=1, logits_rows=0, draft_tokens=0,
                 adapters=(), adapter_rank=0):
        self._tok = None
        self._adapters, self._own_adapters = [], []
        self._lock = threading.RLock()
        self._owns = not isinstance(path, SharedModel)
        self._shared = SharedModel(path) if self._owns else path
        try:
            m = self._shared._live()
            applied, self._own_adapters = adapter_list(adapters)
            shape = lib.ngpt_shape_default(NGPT_MODE_INFER)
            shape.batch, shape.seq, shape.threads = batch, seq, threads
            shape.logits_rows, shape.draft_tokens = logits_rows, draft_tokens
            shape.adapter_rank = max([adapter_rank] + [a.rank for a, _ in applied])
            ctx = c_void_p()
            check(lib.ngpt_context_init(byref(ctx), m, None, byref(shape), None, 0))
            self._h = ctx
            planned = Shape()
            check(lib.ngpt_context_shape(ctx, byref(planned)))     # the defaults resolved
            self.seq, self.logits_rows = planned.seq, planned.logits_rows
            self.adapter_rank = planned.adapter_rank
            if applied:
                _set_adapters(ctx, applied)
                self._adapters = applied
            tok = c_void_p()
            check(lib.ngpt_model_tokenizer(m, byref(tok)))   # borrowed from the model
            self._tok = tok if tok.value else None
        except BaseException:
            self.close()
            raise
        cfg = self._shared.config
        self.config = cfg
        self.vocab_size = cfg.vocab_size
        self.context_len = cfg.context_len
        self.path = self._shared.path

    # -- life
    def close(self):
        """Frees the context (and the model, when this Model opened it). Idempotent."""
        with self._lock:
            if self._h is not None:
                lib.ngpt_context_free(self._h)
                self._h = None
            self._tok = None
            self._adapters = []
            for ad in self._own_adapters:   # after the context that applied them
                ad.close()
            self._own_adapters = []
            if self._owns and self._shared is not None:
                self._shared.close()
            self._shared = None

    def __del__(self):
        if self._h is not None:
            self.close()

    def __repr__(self):
        if self.closed:
            return "<ngpt.Model closed>"
        buf = ctypes.create_string_buffer(768)
        lib.ngpt_config_format(byref(self.config), buf, 768)
        return "<ngpt.Model %s %s>" % (self.path, buf.value.decode())

    # -- LoRA adapters
    def set_adapters(self, adapters=()):
        """Applies LoRA adapters from the next pass on, in place of the ones before:
        each an ngpt.Adapter, a path (opened here; closed with the Model or at the next
        set_adapters), or (either, scale), scale 1 being the adapter as trained and 0
        leaving it out; at most 8, of this model (another raises Error) and of rank
        <= adapter_rank. () applies none. The KV cache is emptied (it was made under
        the adapters before): a session's generate(keep_cache=True) prefills again."""
        applied, opened = adapter_list(adapters)
        try:
            with self._lock:
                _set_adapters(self._live(), applied)
        except BaseException:
            for ad in opened:
                ad.close()
            raise
        kept = [ad for ad in self._own_adapters if any(ad is a for a, _ in applied)]
        for ad in self._own_adapters:
            if not any(ad is k for k in kept):
                ad.close()
        self._adapters, self._own_adapters = applied, kept + opened

    @property
    def adapters(self):
        """The applied adapters: a list of (ngpt.Adapter, scale)."""
        return list(self._adapters)

    # -- text
    def tokenize(self, text):
        """The token ids of text (str, encoded as UTF-8, or bytes)."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        with self._lock:
            self._live()
            if self._tok is None:
                return list(data)
            n = c_size_t()                          # counted first: NFC may lengthen text
            check(lib.ngpt_tokenizer_encode(self._tok, data, len(data), None, 0, byref(n)))
            ids = (c_int32 * max(n.value, 1))()
            check(lib.ngpt_tokenizer_encode(self._tok, data, len(data), ids, n.value, byref(n)))
            return ids[:n.value]

    def token_bytes(self, token):
        """The bytes token id stands for (a special token: its name)."""
        self._live()
        return self._bytes_of(token)

    def _bytes_of(self, token):
        # no lock: the tokenizer is read-only, and a streaming generation holds the lock
        if self._tok is None:
            return bytes([token]) if 0 <= token < 256 else b""
        ptr, n = POINTER(ctypes.c_uint8)(), c_size_t()
        check(lib.ngpt_tokenizer_token(self._tok, token, byref(ptr), byref(n)))
        return ctypes.string_at(ptr, n.value)

    def detokenize(self, tokens, errors="replace"):
        """The text of token ids (str; invalid UTF-8 is replaced unless errors says
        otherwise). detokenize_bytes() gives the raw bytes."""
        return self.detokenize_bytes(tokens).decode("utf-8", errors)

    def detokenize_bytes(self, tokens):
        ids, n = _ints(tokens, "tokens")
        with self._lock:
            self._live()
            if self._tok is None:
                for i in range(n):
                    if not 0 <= ids[i] < 256:
                        raise ValueError("ngpt.Model.detokenize: token %d (index %d) is not a "
                                         "byte of this byte-level model" % (ids[i], i))
                return bytes(ids[:n])
            need = c_size_t()
            check(lib.ngpt_tokenizer_decode(self._tok, ids, n, None, 0, byref(need)))
            out = ctypes.create_string_buffer(max(need.value, 1))
            check(lib.ngpt_tokenizer_decode(self._tok, ids, n, out, need.value, byref(need)))
            return out.raw[:need.value]

    # -- chat templates
    def apply_chat_template(self, messages, add_generation_prompt=False, *, enable_thinking=None,
                            tokenize=False, chat_template=None, now=None):
        """The prompt a conversation renders to with the model's chat template (the one
        `ngpt import` kept from tokenizer_config.json), as Hugging Face's
        apply_chat_template renders it, byte for byte (docs/GENERATION.md, "Chat
        templates"): messages is a list of {"role": ..., "content": ...} (str) dicts;
        add_generation_prompt ends it with the assistant's open turn; enable_thinking
        (True, False; None: not passed) is Qwen3's; now is strftime_now's time in Unix
        seconds, read in UTC (None: the clock, local time). tokenize=True gives its token
        ids instead of its text: the special tokens the template wrote are tokens, the
        same names inside a message stay text. chat_template: Jinja text to render
        instead of the model's. Raises ValueError when there is no template, a message
        has another key (tools are not part of the subset), and ngpt.Error when the
        template refuses the conversation or uses what ngpt does not render."""
        return self._render_chat(messages, add_generation_prompt, enable_thinking, tokenize,
                                 chat_template, now, (), "ngpt.Model.apply_chat_template")

    def _render_chat(self, messages, add_generation_prompt, enable_thinking, tokenize,
                     chat_template, now, held, who):
        """apply_chat_template's rendering; held: with tokenize, the ids the KV cache
        holds (a conversation's last prompt and reply), kept where the rendering spells
        them (ngpt_template_render_tokens), as `ngpt chat` keeps them."""
        msgs = (ChatMessage * max(len(messages), 1))()
        keep = []
        for i, m in enumerate(messages):
            extra = set(m) - {"role", "content"}
            if extra or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
                raise ValueError("%s: message %d must be {'role': str, 'content': str}%s"
                                 % (who, i, " (tools are outside ngpt's templates: %s)"
                                    % ", ".join(sorted(extra)) if extra else ""))
            # surrogateescape: a reply cut mid-character (Chat) keeps its bytes
            role, content = m["role"].encode("utf-8"), m["content"].encode("utf-8", "surrogateescape")
            keep += [role, content]
            msgs[i].role, msgs[i].content, msgs[i].content_len = role, content, len(content)
        opt = lib.ngpt_template_options_default()
        opt.add_generation_prompt = bool(add_generation_prompt)
        opt.thinking = {None: NGPT_THINKING_DEFAULT, True: NGPT_THINKING_ON,
                        False: NGPT_THINKING_OFF}[enable_thinking]
        opt.now = int(now or 0)
        h, nh = _ints(held, "held")
        with self._lock:
            self._live()
            t = c_void_p()
            if chat_template is None:
                check(lib.ngpt_model_template(self._shared._live(), byref(t)))
                if not t.value:
                    raise ValueError("%s: %s carries no chat template (pass chat_template)"
                                     % (who, self.path))
            else:
                text = chat_template.encode("utf-8")
                check(lib.ngpt_template_parse(byref(t), text, len(text)))
            try:
                n = c_size_t()
                if tokenize:
                    if self._tok is None:
                        raise ValueError("%s: a byte-level model has no special tokens to "
                                         "tokenize with" % who)
                    check(lib.ngpt_template_render_tokens(t, self._tok, msgs, len(messages),
                                                          byref(opt), h, nh, None, 0, byref(n)))
                    ids = (c_int32 * max(n.value, 1))()
                    check(lib.ngpt_template_render_tokens(t, self._tok, msgs, len(messages),
                                                          byref(opt), h, nh, ids, n.value,
                                                          byref(n)))
                    return ids[:n.value]
                check(lib.ngpt_template_render(t, msgs, len(messages), byref(opt), None, 0, byref(n)))
                out = ctypes.create_string_buffer(max(n.value, 1))
                check(lib.ngpt_template_render(t, msgs, len(messages), byref(opt), out, n.value,
                                               byref(n)))
                return out.raw[:n.value].decode("utf-8", "replace")
            finally:
                lib.ngpt_template_free(t)

    # -- forward, logits, checksums
    def logits(self, tokens):
        """Runs the model over tokens (a list of ids, or text; at most seq of them) and
        returns the logits, shape (len, V), or the last logits_rows positions'
        (logits_rows, V) when the Model keeps fewer (by default the last one; plan
        logits_rows=ngpt.LOGITS_ALL for every position): a numpy float32 array when
        numpy is installed, else a list of lists. Also sets what logits_checksum()
        sums."""
        if isinstance(tokens, (str, bytes)):
            tokens = self.tokenize(tokens)
        ids, n = _ints(tokens, "tokens")
        if n == 0:
            raise ValueError("ngpt.Model.logits: no tokens")
        with self._lock:
            ctx = self._live()
            check(lib.ngpt_context_forward(ctx, ids, 1, n, None, None))
            ptr = POINTER(c_float)()
            check(lib.ngpt_context_logits(ctx, byref(ptr)))
            v = self.vocab_size
            if self.logits_rows != NGPT_LOGITS_ALL and self.logits_rows < n:
                n = self.logits_rows
            if numpy is not None:
                return numpy.ctypeslib.as_array(ptr, shape=(n, v)).copy()
            flat = ptr[:n * v]
            return [flat[i * v:(i + 1) * v] for i in range(n)]

    def params_checksum(self):
        """XXH3-64 of the parameters (int): `ngpt checksum`'s params= line."""
        h = c_uint64()
        with self._lock:
            check(lib.ngpt_context_params_checksum(self._live(), byref(h)))
        return h.value

    def logits_checksum(self):
        """XXH3-64 of the last forward's logits (int)."""
        h = c_uint64()
        with self._lock:
            check(lib.ngpt_context_logits_checksum(self._live(), byref(h)))
        return h.value

    def dropout(self, enabled, seed=0, step=0):
        """Dropout on or off for later forwards (off by default)."""
        with self._lock:
            check(lib.ngpt_context_dropout_set(self._live(), bool(enabled), seed, step))

    def save(self, path):
        """Writes the model to path (atomically), with its tokenizer."""
        with self._lock:
            check(lib.ngpt_context_save(self._live(), fspath(path)))

    # -- generation
    def generate(self, prompt, max_tokens=256, *, temperature=1.0, top_k=0, top_p=1.0,
                 min_p=0.0, repeat_penalty=1.0, repeat_window=0, banned=(), logit_bias=None,
                 seed=0, stop=(), end_tokens=None, beam_width=0, length_penalty=1.0,
                 context="exact", stop_at_context_full=False, no_cache=False,
                 keep_cache=False, first_draw=0, lookup=0, draft_tokens=0, grammar=None,
                 json_schema=None, progress=None):
        """Yields the continuation of prompt (text or token ids) as text pieces, as the
        model produces them: the same text as `ngpt generate` with the same options.

        Every sampler option of the C API: temperature (0: argmax), top_k, top_p,
        min_p, repeat_penalty, repeat_window, banned (ids), logit_bias (V floats),
        seed; stop (strings: generation ends before any of them, which is never
        yielded), end_tokens (ids that end it; None: the tokenizer's end tokens, if
        any, as `ngpt generate` does; (): none), beam_width / length_penalty (beam
        search),
        context ("exact" or "shift"), stop_at_context_full, no_cache, keep_cache
        and first_draw (resume a session), lookup / draft_tokens (prompt-lookup
        speculative decoding), progress(stage, done, total) for the prefill;
        grammar (GBNF text) or json_schema (a schema as a dict or JSON text; {} is
        any JSON value) holds the output to it (docs/GENERATION.md, "Grammars"):
        json.loads(generate_text(prompt, json_schema=schema)) then validates
        unless self.stop_reason says it was cut.
        The generation runs in a thread of its own; closing the iterator early
        stops it. After the loop, self.last_result holds the C result (reason,
        token counts) and self.last_tokens the output ids."""
        return self._stream(self._generate_args(locals()), raw=False)

    def generate_tokens(self, prompt, max_tokens=256, **options):
        """As generate(), but yields token ids."""
        return self._stream(self._generate_args(dict(options, prompt=prompt,
                                                     max_tokens=max_tokens)), raw=True)

    def generate_text(self, prompt, max_tokens=256, **options):
        """The whole continuation as one str (generate() joined)."""
        return "".join(self.generate(prompt, max_tokens, **options))

    def _generate_args(self, a):
        self._live()                # raise now, not at the first next()
        unknown = set(a) - {"self", "prompt", "max_tokens", "banned", "logit_bias", "stop",
                            "end_tokens", "beam_width", "length_penalty", "context",
                            "stop_at_context_full", "no_cache", "keep_cache", "first_draw",
                            "lookup", "draft_tokens", "grammar", "json_schema",
                            "progress"} - set(_SAMPLER_KEYS)
        if unknown:
            raise TypeError("ngpt.Model.generate: unknown option(s) %s" % ", ".join(sorted(unknown)))
        prompt = a["prompt"]
        if isinstance(prompt, (str, bytes)):
            prompt = self.tokenize(prompt)
            bos = self._tokenizer_info().bos_id if self._tok else -1
            if bos >= 0:            # llama2.c's prompts start with BOS, as `ngpt generate`'s
                prompt = [bos] + prompt
        gc = lib.ngpt_generate_config_default()
        keep = {}
        for k in _SAMPLER_KEYS:
            if k in a:
                setattr(gc.sampler, k, a[k])
        banned, n_banned = _ints(a.get("banned", ()), "banned")
        gc.sampler.banned, gc.sampler.n_banned = (banned if n_banned else None), n_banned
        bias = a.get("logit_bias")
        if bias is not None:
            bias = list(bias)
            if len(bias) != self.vocab_size:
                raise ValueError("ngpt.Model.generate: logit_bias holds %d values, the model "
                                 "has V=%d" % (len(bias), self.vocab_size))
            keep["bias"] = (c_float * len(bias))(*bias)
            gc.sampler.logit_bias = keep["bias"]
        stops = a.get("stop", ())
        if isinstance(stops, (str, bytes)):
            stops = [stops]
        stops = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in stops]
        if stops:
            keep["stop"] = (c_char_p * len(stops))(*stops)
            gc.stop, gc.n_stop = keep["stop"], len(stops)
        modes = {"exact": NGPT_CONTEXT_EXACT, "shift": NGPT_CONTEXT_SHIFT}
        if a.get("context", "exact") not in modes:
            raise ValueError("ngpt.Model.generate: context must be 'exact' or 'shift'")
        gc.context_mode = modes[a.get("context", "exact")]
        ends = a.get("end_tokens")
        if ends is not None:        # None: the library's default, the tokenizer's
            keep["ends"], n_ends = _ints(ends, "end_tokens")
            if n_ends:
                gc.end_tokens, gc.n_end_tokens = keep["ends"], n_ends
            else:
                gc.ignore_end = True
        for k in ("max_tokens", "beam_width", "length_penalty",
                  "stop_at_context_full", "no_cache", "keep_cache", "first_draw", "lookup",
                  "draft_tokens"):
            if k in a:
                setattr(gc, k, a[k])
        ids, n = _ints(prompt, "prompt")
        if n == 0:
            raise ValueError("ngpt.Model.generate: the prompt is empty")
        gc.grammar = keep["grammar"] = self._grammar(a.get("grammar"), a.get("json_schema"))
        cap = max(gc.max_tokens, 1) + (
            self._tokenizer_info().max_token_bytes if stops and self._tok else 0)
        return gc, ids, n, cap, keep, a.get("progress")

    def _grammar(self, grammar, json_schema):
        """The compiled grammar of generate()'s grammar / json_schema, or None; the
        caller frees it (lib.ngpt_grammar_free) once the generation is over."""
        if grammar is None and json_schema is None:
            return None
        if grammar is not None and json_schema is not None:
            raise ValueError("ngpt.Model.generate: pass grammar or json_schema, not both")
        text = grammar if grammar is not None else json_schema
        if not isinstance(text, (str, bytes)):
            text = json.dumps(text)
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        g = c_void_p()
        parse = lib.ngpt_grammar_parse if grammar is not None else lib.ngpt_grammar_from_json_schema
        check(parse(byref(g), self._tok, data, len(data)))
        return g

    def _tokenizer_info(self):
        info = TokenizerInfo()
        check(lib.ngpt_tokenizer_describe(self._tok, byref(info)))
        return info

    def _stream(self, args, raw):
        gc, ids, n, cap, keep, progress = args
        self._live()
        q = queue.Queue()
        cancel = threading.Event()
        done = object()

        def on_token(token, _user):
            q.put(token)
            return 1 if cancel.is_set() else 0

        def run():
            out = (c_int32 * cap)()
            res = GenerateResult()
            fn = TOKEN_FN(on_token)
            try:
                with self._lock, progress_callback(progress):
                    check(lib.ngpt_context_generate(self._live(), byref(gc), ids, n, out, cap, fn,
                                                  None, byref(res)))
                self.last_result = res
                self.last_tokens = out[:res.n_tokens]
                q.put(done)
            except BaseException as e:  # handed to the consumer's thread
                q.put(e)

        worker = threading.Thread(target=run, name="ngpt-generate", daemon=True)
        worker.start()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while True:
                item = q.get()
                if item is done:
                    break
                if isinstance(item, BaseException):
                    raise item
                if raw:
                    yield item
                else:
                    piece = decoder.decode(self._bytes_of(item))
                    if piece:
                        yield piece
            if not raw:
                tail = decoder.decode(b"", final=True)
                if tail:
                    yield tail
        finally:
            cancel.set()
            worker.join()
            if keep.get("grammar"):
                lib.ngpt_grammar_free(keep["grammar"])

    @property
    def stop_reason(self):
        """Why the last generation ended: "max tokens", "end token", ..."""
        r = getattr(self, "last_result", None)
        return None if r is None else lib.ngpt_stop_reason_string(r.reason).decode()

    # -- sessions (KV cache)
    def save_session(self, path, slot=0):
        """Writes KV slot `slot` (what the last generation left) to a session file."""
        with self._lock:
            check(lib.ngpt_context_cache_save(self._live(), slot, fspath(path)))

    def load_session(self, path, slot=0):
        """Restores a session file into slot `slot`; generate(..., keep_cache=True) then
        prefills only what the slot does not already hold. A file of another model
        raises Error."""
        with self._lock:
            check(lib.ngpt_context_cache_load(self._live(), slot, fspath(path)))

    def cache_len(self, slot=0):
        """Tokens KV slot `slot` holds."""
        n = c_int32()
        with self._lock:
            check(lib.ngpt_context_cache_len(self._live(), slot, byref(n)))
        return n.value

    # -- evaluation
    def evaluate(self, text=None, path=None, batches=8, batch=1, seq=None, seed=0,
                 holdout=0.1, progress=None):
        """Mean loss (nats per token) on the held-out `holdout` fraction of text (str or
        bytes) or of the file at path: `batches` windows of seq tokens (default: T)
        drawn from seed, as `ngpt eval` does, in a context of its own on the same
        weights (and adapters) planned for them (every position's logits).
        perplexity() is exp of it."""
        self._live()
        seq = self.context_len if seq is None else seq
        data = c_void_p()
        if (text is None) == (path is None):
            raise TypeError("ngpt.Model.evaluate: give text or path, not both or neither")
        if text is not None:
            buf = text.encode("utf-8") if isinstance(text, str) else bytes(text)
            check(lib.ngpt_data_open_mem(byref(data), buf, len(buf), holdout, seq))
        else:
            paths = (c_char_p * 1)(fspath(path))
            check(lib.ngpt_data_open(byref(data), paths, 1, holdout, seq))
        ctx = c_void_p()
        try:
            loss = c_float()
            shape = lib.ngpt_shape_default(NGPT_MODE_INFER)
            shape.batch, shape.seq, shape.logits_rows = batch, seq, NGPT_LOGITS_ALL
            shape.adapter_rank = self.adapter_rank
            with self._lock, progress_callback(progress):
                check(lib.ngpt_context_init(byref(ctx), self._shared._live(), None, byref(shape),
                                            None, 0))
                if self._adapters:      # the model as this Model runs it
                    _set_adapters(ctx, self._adapters)
                if self._tok is not None:
                    check(lib.ngpt_data_tokenize(data, self._tok, seq))
                check(lib.ngpt_context_evaluate(ctx, data, seed, batches, batch, seq, byref(loss)))
            return loss.value
        finally:
            lib.ngpt_context_free(ctx)
            lib.ngpt_data_free(data)

    def perplexity(self, *args, **kwargs):
        """exp(evaluate(...))."""
        return math.exp(self.evaluate(*args, **kwargs))
