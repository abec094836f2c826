"""ngpt.Chat: conversation turns in the templates `ngpt chat` uses."""
import codecs
from ctypes import byref, c_int32, c_size_t, c_void_p

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


def _carries_template(model):
    t = c_void_p()
    check(lib.ngpt_model_template(model._shared._live(), byref(t)))
    if not t.value:
        return False
    lib.ngpt_template_free(t)
    return True


class Chat:
    """A conversation with a Model, as `ngpt chat` holds it, in one of its templates:

    - "model" (the default when the model carries a chat template: `ngpt import`
      keeps tokenizer_config.json's) the model's own Jinja template, rendered as
      Model.apply_chat_template renders it (Llama 3's headers, Qwen's ChatML with
      its thinking switch, Gemma's turns); a reply ends at the model's end tokens,
      and each turn re-renders the conversation keeping the tokens the cache holds
      (the replies as the model wrote them) where the rendering spells them;
      chat_template=TEXT renders that Jinja text instead;
    - "chatml" (the default otherwise when the model's tokenizer has the special tokens
      <|im_start|> and <|im_end|>, as SmolLM2-Instruct's has): each turn is
      <|im_start|>ROLE\\nTEXT<|im_end|>\\n, the markers being those special tokens
      (what the user types is plain text), a reply ends at <|im_end|>, and without
      a system message the conversation opens with SmolLM2's (SMOLLM2_SYSTEM);
    - "plain" (otherwise): "system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...".

    Chat(model, system=None, seed=0, max_tokens=256, template=None, enable_thinking=None,
    now=None, chat_template=None, **options) — options are Model.generate's sampler
    options; enable_thinking and now are the template's (Model.apply_chat_template). say(line) streams the reply as
    text pieces (turn i samples with seed + i, so the same lines give `ngpt chat`'s
    replies); each turn prefills only what the previous turns did not (the KV cache
    keeps the conversation). `text` is the conversation so far (bytes: `data`;
    chatml and model: `tokens` are its ids, the replies as the model wrote them;
    model: `messages` are its messages)."""

    def __init__(self, model, system=None, seed=0, max_tokens=256, template=None,
                 enable_thinking=None, now=None, chat_template=None, **options):
        if not isinstance(model, Model):
            raise TypeError("ngpt.Chat: model must be an ngpt.Model")
        if template not in (None, "model", "chatml", "plain"):
            raise ValueError("ngpt.Chat: template must be 'model', 'chatml' or 'plain'")
        if chat_template is not None and template not in (None, "model"):
            raise ValueError("ngpt.Chat: chat_template is a Jinja text for template 'model'")
        self.model, self.seed, self.max_tokens, self.options = model, seed, max_tokens, options
        self.model._live()
        self._jinja = dict(enable_thinking=enable_thinking, now=now, chat_template=chat_template)
        if template is None and (chat_template is not None or _carries_template(model)):
            template = "model"
        if template == "model":
            if chat_template is None and not _carries_template(model):
                raise ValueError("ngpt.Chat: template 'model': the model carries no chat template "
                                 "(ngpt import keeps the one its tokenizer_config.json has)")
            if model._tok is None:
                raise ValueError("ngpt.Chat: template 'model': a byte-level model has no special "
                                 "tokens to write the template's markers with")
            self.template, self.turns, self.tokens = "model", 0, []
            self.messages = [{"role": "system", "content": system}] if system is not None else []
            return
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
        if self.template == "model":
            return self.model._render_chat(self.messages, False, self._jinja["enable_thinking"],
                                           False, self._jinja["chat_template"], self._jinja["now"],
                                           (), "ngpt.Chat")
        if self.template == "chatml":
            return self.model.detokenize(self.tokens)
        return self.data.decode("utf-8", "replace")

    def say(self, line):
        """Adds the user's line and yields the assistant's reply in pieces (str)."""
        if not isinstance(line, str):
            raise TypeError("ngpt.Chat.say: line must be a str")
        line = line.split("\n", 1)[0].rstrip("\r")   # one line per turn, as ngpt chat reads
        seed, self.turns = self.seed + self.turns, self.turns + 1
        if self.template == "model":
            self.messages.append({"role": "user", "content": line})
            prompt = self.model._render_chat(self.messages, True, self._jinja["enable_thinking"],
                                             True, self._jinja["chat_template"],
                                             self._jinja["now"], self.tokens, "ngpt.Chat")
            how = {}                        # the model's end tokens end a reply
        elif self.template == "chatml":
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
        if self.template == "model":       # the cache holds the prompt and the reply
            self.messages.append({"role": "assistant",
                                  "content": self.model.detokenize_bytes(reply).decode(
                                      "utf-8", "surrogateescape")})
            self.tokens = list(prompt) + reply
        elif self.template == "chatml":    # the reply as written (the cache holds it), closed
            self.tokens += reply + [self._end] + self.model.tokenize("\n")
        else:
            self.data += self.model.detokenize_bytes(reply) + b"\n"

    def reply(self, line):
        """say(line) joined into one str."""
        return "".join(self.say(line))
