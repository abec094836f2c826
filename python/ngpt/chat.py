"""ngpt.Chat: conversation turns in the templates `ngpt chat` uses."""
import codecs
from ctypes import byref, c_int32, c_size_t

from ._lib import check, lib
from .model import Model

#: A plain reply ends where the model starts another turn (not part of the reply).
ROLE_STOPS = ("\nuser: ", "\nsystem: ", "\nassistant: ")
#: SmolLM2-Instruct's system message for a conversation that has none (ChatML has no
#: default; like `ngpt chat`, Chat adds it).
SMOLLM2_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def _chatml_end(model):
    """The id of <|im_end|> when the model's tokenizer writes ChatML, else None."""
    end = c_int32()
    if model._tok is None or lib.ngpt_tokenizer_chatml_specials(model._tok, None, byref(end)):
        return None
    return end.value


def _chatml_turn(model, role, text, open_turn):
    """The ids of one ChatML turn (ngpt_tokenizer_chatml_turn)."""
    data = text.encode("utf-8") if text else b""
    r, n = role.encode("utf-8"), c_size_t()
    check(lib.ngpt_tokenizer_chatml_turn(model._tok, r, data, len(data), open_turn, None, 0, byref(n)))
    ids = (c_int32 * n.value)()
    check(lib.ngpt_tokenizer_chatml_turn(model._tok, r, data, len(data), open_turn, ids, n.value, byref(n)))
    return ids[:n.value]


class Chat:
    """A conversation with a Model, as `ngpt chat` holds it, in one of two templates:

    - "chatml" (the default when the model's tokenizer has the special tokens
      <|im_start|> and <|im_end|>, as SmolLM2-Instruct's has): each turn is
      <|im_start|>ROLE\\nTEXT<|im_end|>\\n, the markers being those special tokens
      (what the user types is plain text), a reply ends at <|im_end|>, and without
      a system message the conversation opens with SmolLM2's (SMOLLM2_SYSTEM);
    - "plain" (otherwise): "system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...".

    Chat(model, system=None, seed=0, max_tokens=256, template=None, **options) —
    options are Model.generate's sampler options. say(line) streams the reply as
    text pieces (turn i samples with seed + i, so the same lines give `ngpt chat`'s
    replies); each turn prefills only what the previous turns did not (the KV cache
    keeps the conversation). `text` is the conversation so far (bytes: `data`;
    chatml: `tokens` are its ids, the replies as the model wrote them)."""

    def __init__(self, model, system=None, seed=0, max_tokens=256, template=None, **options):
        if not isinstance(model, Model):
            raise TypeError("ngpt.Chat: model must be an ngpt.Model")
        if template not in (None, "chatml", "plain"):
            raise ValueError("ngpt.Chat: template must be 'chatml' or 'plain'")
        self.model, self.seed, self.max_tokens, self.options = model, seed, max_tokens, options
        self.model._live()
        self._end = _chatml_end(model)
        if template == "chatml" and self._end is None:
            if model._tok is None:
                raise ValueError("ngpt.Chat: template 'chatml': the model has no tokenizer (a "
                                 "byte-level model), so no special token <|im_start|>")
            check(lib.ngpt_tokenizer_chatml_specials(model._tok, None, None))     # raises, naming the token
        self.template = template or ("chatml" if self._end is not None else "plain")
        self.turns = 0
        if self.template == "chatml":
            self.tokens = _chatml_turn(model, "system", SMOLLM2_SYSTEM if system is None
                                       else system, False)
            self.data = b""
        else:
            self.data = b"system: " + system.encode() + b"\n" if system else b""

    @property
    def text(self):
        if self.template == "chatml":
            return self.model.detokenize(self.tokens)
        return self.data.decode("utf-8", "replace")

    def say(self, line):
        """Adds the user's line and yields the assistant's reply in pieces (str)."""
        if not isinstance(line, str):
            raise TypeError("ngpt.Chat.say: line must be a str")
        line = line.split("\n", 1)[0].rstrip("\r")   # one line per turn, as ngpt chat reads
        seed, self.turns = self.seed + self.turns, self.turns + 1
        if self.template == "chatml":
            self.tokens += _chatml_turn(self.model, "user", line, False)
            self.tokens += _chatml_turn(self.model, "assistant", None, True)
            prompt, how = self.tokens, dict(end_tokens=[self._end])
        else:
            self.data += b"user: " + line.encode() + b"\nassistant: "
            prompt, how = self.data, dict(stop=ROLE_STOPS)
        how.update(self.options)            # the caller's end_tokens or stop, if given
        reply, decoder = [], codecs.getincrementaldecoder("utf-8")("replace")
        for token in self.model.generate_tokens(prompt, self.max_tokens, seed=seed,
                                                keep_cache=True, **how):
            reply.append(token)
            piece = decoder.decode(self.model.token_bytes(token))
            if piece:
                yield piece
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail
        if self.template == "chatml":      # the reply as written (the cache holds it), closed
            self.tokens += reply + [self._end] + self.model.tokenize("\n")
        else:
            self.data += self.model.detokenize_bytes(reply) + b"\n"

    def reply(self, line):
        """say(line) joined into one str."""
        return "".join(self.say(line))
