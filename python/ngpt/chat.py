"""ngpt.Chat: conversation turns in the format `ngpt chat` uses."""
import codecs

from .model import Model

#: A reply ends where the model starts another turn (not part of the reply).
ROLE_STOPS = ("\nuser: ", "\nsystem: ", "\nassistant: ")


class Chat:
    """A conversation with a Model, as `ngpt chat` holds it:
    "system: TEXT\\nuser: LINE\\nassistant: REPLY\\n...".

    Chat(model, system=None, seed=0, max_tokens=256, **options) — options are
    Model.generate's sampler options. say(line) streams the reply as text pieces
    (turn i samples with seed + i, so the same lines give `ngpt chat`'s replies);
    each turn prefills only what the previous turns did not (the KV cache keeps
    the conversation). `text` is the conversation so far (bytes: `data`)."""

    def __init__(self, model, system=None, seed=0, max_tokens=256, **options):
        if not isinstance(model, Model):
            raise TypeError("ngpt.Chat: model must be an ngpt.Model")
        self.model, self.seed, self.max_tokens, self.options = model, seed, max_tokens, options
        self.data = b"system: " + system.encode() + b"\n" if system else b""
        self.turns = 0
        self.model._live()

    @property
    def text(self):
        return self.data.decode("utf-8", "replace")

    def say(self, line):
        """Adds the user's line and yields the assistant's reply in pieces (str)."""
        if not isinstance(line, str):
            raise TypeError("ngpt.Chat.say: line must be a str")
        line = line.split("\n", 1)[0].rstrip("\r")   # one line per turn, as ngpt chat reads
        self.data += b"user: " + line.encode() + b"\nassistant: "
        seed, self.turns = self.seed + self.turns, self.turns + 1
        reply, decoder = [], codecs.getincrementaldecoder("utf-8")("replace")
        for token in self.model.generate_tokens(self.data, self.max_tokens, seed=seed,
                                                stop=ROLE_STOPS, keep_cache=True,
                                                **self.options):
            reply.append(token)
            piece = decoder.decode(self.model.token_bytes(token))
            if piece:
                yield piece
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail
        self.data += self.model.detokenize_bytes(reply) + b"\n"

    def reply(self, line):
        """say(line) joined into one str."""
        return "".join(self.say(line))
