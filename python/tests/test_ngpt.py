"""The binding against the C library: golden values, the CLI's output, bad input."""
import gc
import json
import math
import os
import shutil
import subprocess
import threading

import pytest

import ngpt
from conftest import ROOT, cli

# README: `ngpt checksum` of `ngpt init --seed 1` and of seed 42 (the default).
GOLDEN = {1: ("e6069bdecc9e97d5", "f3ee05f5589e3f37", "2bb3a5c73965e90b"),
          42: ("8f5c4f8cd417858a", "3f28d41ee780a60c", "6fbcc92d7787bf07")}


@pytest.mark.parametrize("seed", [1, 42])
def test_golden_checksums(models, seed):
    with ngpt.Model(models[seed], logits_rows=ngpt.LOGITS_ALL) as m:
        got = ["%016x" % m.params_checksum()]
        m.logits("Hello, ngpt!")            # ngpt checksum's default prompt
        got.append("%016x" % m.logits_checksum())
        m.dropout(True, seed=42, step=0)
        m.logits("Hello, ngpt!")
        got.append("%016x" % m.logits_checksum())
    assert tuple(got) == GOLDEN[seed]


def test_logits_numpy_and_list(models, monkeypatch):
    with ngpt.Model(models[1], logits_rows=ngpt.LOGITS_ALL) as m:
        a = m.logits([72, 105])
        if ngpt.model.numpy is not None:
            assert a.shape == (2, 256) and str(a.dtype) == "float32"
            a = a.tolist()
        monkeypatch.setattr(ngpt.model, "numpy", None)
        b = m.logits([72, 105])
        assert isinstance(b, list) and len(b) == 2 and len(b[0]) == 256
        assert b == a



def test_logits_rows(models):
    # a context keeping the last 2 positions' logits: those rows of a full one, same
    # text; the default keeps the last one
    with ngpt.Model(models[1], logits_rows=ngpt.LOGITS_ALL) as full, \
            ngpt.Model(models[1], logits_rows=2) as small, ngpt.Model(models[1]) as default:
        a, b, c = (m.logits("Hello, ngpt!") for m in (full, small, default))
        if ngpt.model.numpy is not None:
            a, b, c = a.tolist(), b.tolist(), c.tolist()
        assert len(b) == 2 and b == a[-2:] and c == a[-1:]
        assert default.logits_rows == 1 and full.logits_rows == ngpt.LOGITS_ALL
        assert (list(small.generate_tokens("Hello", 24, seed=3)) ==
                list(full.generate_tokens("Hello", 24, seed=3)))
        # evaluation plans a context of its own: every row, whatever the Model keeps
        readme = os.path.join(ROOT, "README.md")
        assert small.evaluate(path=readme, batches=1) == full.evaluate(path=readme, batches=1)


def test_prefill_passes(models):
    # a context planned for passes of 16 positions prefills a longer prompt
    # pass by pass: the same tokens as a context planned for T
    prompt = "Hello, ngpt! " * 8
    with ngpt.Model(models[1]) as full, ngpt.Model(models[1], seq=16, logits_rows=1) as small:
        assert (list(small.generate_tokens(prompt, 24, seed=3)) ==
                list(full.generate_tokens(prompt, 24, seed=3)))


OPTION_SETS = [
    ({"seed": 3}, ["--seed", "3"]),
    ({"temperature": 0.8, "top_k": 40, "top_p": 0.9, "min_p": 0.05, "seed": 7},
     ["--temp", "0.8", "--top-k", "40", "--top-p", "0.9", "--min-p", "0.05", "--seed", "7"]),
    ({"temperature": 0, "repeat_penalty": 1.3, "repeat_window": 8, "banned": [101, 32]},
     ["--temp", "0", "--repeat-penalty", "1.3", "--repeat-window", "8", "--ban", "101,32"]),
    ({"seed": 5, "stop": ["e", "a"]}, ["--seed", "5", "--stop", "e", "--stop", "a"]),
    ({"beam_width": 1, "length_penalty": 0.5}, ["--beam", "1", "--length-penalty", "0.5"]),
    ({"seed": 2, "no_cache": True}, ["--seed", "2", "--no-cache"]),
]


@pytest.mark.parametrize("options,flags", OPTION_SETS)
def test_generate_equals_cli(models, options, flags):
    want = cli("generate", "--model", models[1], "--prompt", "Hello", "-n", 24, *flags)
    with ngpt.Model(models[1]) as m:
        got = m.generate_tokens("Hello", 24, **options)
        assert bytes(list(got)) == want
        assert m.generate_text("Hello", 24, **options) == want.decode("utf-8", "replace")
        assert m.stop_reason in ("max tokens", "stop sequence")


def test_generate_bpe_model_and_stop(models):
    with ngpt.Model(models["bpe"]) as m:
        ids = m.tokenize("Hello, the tokenizer")
        assert len(ids) < len("Hello, the tokenizer") and m.detokenize(ids) == "Hello, the tokenizer"
        want = cli("generate", "--model", models["bpe"], "--prompt", "The", "-n", 30,
                   "--seed", 4, "--stop", "e")
        got = list(m.generate_tokens("The", 30, seed=4, stop="e"))
        assert m.detokenize_bytes(got) == want and b"e" not in want


def test_llama2c_model(tmp_path):
    """A llama2.c model.bin + tokenizer.bin (tiny, random, written here) through
    `ngpt import --llama2c`: a text prompt starts with BOS as on the CLI."""
    import random
    import struct
    rnd = random.Random(5)
    dim, hidden, layers, heads, kv, vocab, seq = 8, 16, 1, 2, 1, 262, 16
    floats = (vocab * dim + 2 * layers * dim + layers * (2 * dim * dim + 2 * dim // heads * kv * dim)
              + 3 * layers * hidden * dim + dim + seq * dim // heads)
    (tmp_path / "model.bin").write_bytes(
        struct.pack("<7i", dim, hidden, layers, heads, kv, vocab, seq)
        + struct.pack("<%df" % floats, *(rnd.uniform(-0.5, 0.5) for _ in range(floats))))
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)] + [b" ", b"a", b" a"]
    tok = struct.pack("<I", 6) + b"".join(struct.pack("<fi", -1.0 if p == b" a" else 0.0, len(p)) + p
                                          for p in pieces)
    (tmp_path / "tokenizer.bin").write_bytes(tok)
    out = tmp_path / "l.ngpt"
    cli("import", "--llama2c", tmp_path / "model.bin", "--tokenizer", tmp_path / "tokenizer.bin",
        "--out", out)
    want = cli("generate", "--model", out, "--prompt", "a", "-n", 8, "--temp", 0)
    with ngpt.Model(str(out)) as m:
        assert m.tokenize("a") == [261] and m.tokenize(b"\xff") == [259, 0xFF + 3]
        got = list(m.generate_tokens("a", 8, temperature=0))
        assert m.detokenize_bytes(got) == want


def test_tokenize_bytes_model(models):
    with ngpt.Model(models[1]) as m:
        assert m.tokenize("hé") == [104, 0xC3, 0xA9]
        assert m.detokenize([104, 0xC3, 0xA9]) == "hé"
        with pytest.raises(ValueError):
            m.detokenize([300])


def test_generate_streams_and_stops_early(models):
    with ngpt.Model(models[1]) as m:
        it = m.generate("Hello", 200, seed=1)
        first = next(it)
        assert isinstance(first, str)
        it.close()                          # stops the worker; the model stays usable
        assert m.generate_text("Hello", 5, seed=1)
        assert threading.active_count() == 1


def test_evaluate_equals_cli(models):
    out = cli("eval", "--model", models[1], "--data", os.path.join(ROOT, "README.md"),
              "--batches", 2, "--batch", 1, "--seq", 64, "--seed", 0).decode()
    want = float(out.split()[1])
    with ngpt.Model(models[1]) as m:
        loss = m.evaluate(path=os.path.join(ROOT, "README.md"), batches=2, seq=64)
        assert round(loss, 4) == want
        assert m.perplexity(path=os.path.join(ROOT, "README.md"), batches=2, seq=64) == \
            pytest.approx(math.exp(loss))


def test_progress_callback_and_cancel(models, text):
    seen = []
    with ngpt.Model(models[1]) as m:
        m.evaluate(text=text, batches=3, seq=32, progress=lambda s, d, t: seen.append((s, d, t)))
        assert seen[-1] == ("evaluate", 3, 3)
        with pytest.raises(ngpt.Error) as e:
            m.evaluate(text=text, batches=3, seq=32, progress=lambda s, d, t: False)
        assert e.value.status_name == "stopped" and "ngpt_context_evaluate" in str(e.value)


def test_sessions(models, tmp_path):
    path = tmp_path / "s.session"
    with ngpt.Model(models[1]) as m:
        whole = m.generate_tokens("Hello", 20, seed=9)
        whole = list(whole)
        m.generate_text("Hello", 8, seed=9)
        part1 = m.last_tokens
        m.save_session(path)
        n = m.cache_len()
    with ngpt.Model(models[1]) as m:
        m.load_session(path)
        assert m.cache_len() == n
        rest = list(m.generate_tokens([*b"Hello", *part1], 12, seed=9, keep_cache=True,
                                      first_draw=8))
    assert part1 + rest == whole
    with ngpt.Model(models[42]) as other, pytest.raises(ngpt.Error) as e:
        other.load_session(path)            # another model's session
    assert str(e.value).startswith("ngpt_context_cache_load:")


def test_finetune(models, text, tmp_path):
    steps = []
    out = tmp_path / "ft.ngpt"
    losses = ngpt.finetune(models[1], out, text=text, steps=3, batch=2, seq=32,
                           progress=lambda s, l: steps.append(s))
    assert steps == [1, 2, 3] and len(losses) == 3 and all(math.isfinite(x) for x in losses)
    again = tmp_path / "ft2.ngpt"
    assert ngpt.finetune(models[1], again, text=text, steps=3, batch=2, seq=32) == losses
    with ngpt.Model(out) as a, ngpt.Model(again) as b, ngpt.Model(models[1]) as base:
        assert a.params_checksum() == b.params_checksum() != base.params_checksum()
        assert a.evaluate(text=text, batches=2, seq=32) < base.evaluate(text=text, batches=2,
                                                                        seq=32)


def test_bad_input(models, tmp_path):
    with pytest.raises(ngpt.Error) as e:
        ngpt.Model(tmp_path / "missing.ngpt")
    assert e.value.status_name and str(e.value).startswith("ngpt_")
    with pytest.raises(ngpt.Error):
        ngpt.Model(os.path.join(ROOT, "README.md"))          # a foreign file
    damaged = tmp_path / "damaged.ngpt"
    data = bytearray(open(models[1], "rb").read())
    data[len(data) // 2] ^= 0x40
    damaged.write_bytes(bytes(data))
    with pytest.raises(ngpt.Error) as e:
        ngpt.Model(damaged)
    assert e.value.status_name == "checksum mismatch" or "checksum" in str(e.value)
    with pytest.raises(TypeError):
        ngpt.Model(12.5)
    m = ngpt.Model(models[1])
    with pytest.raises(TypeError):
        m.logits(["a", "b"])
    with pytest.raises(TypeError):
        m.generate_text("x", 4, temprature=0.5)           # a misspelt option
    with pytest.raises(ngpt.Error) as e:
        m.generate_text("x", 4, temperature=-1)
    assert "temperature" in str(e.value)
    with pytest.raises(ngpt.Error):
        m.logits([999])                                   # not a token of V=256
    with pytest.raises(ngpt.Error):
        m.logits(list(range(100)) * 3)                    # longer than T
    with pytest.raises(ValueError):
        m.generate_text("x", 4, logit_bias=[0.0])
    m.close()
    m.close()
    for call in (m.params_checksum, lambda: m.logits([1]), lambda: m.tokenize("a"),
                 lambda: m.generate_text("a", 2), lambda: m.generate([1, 2]),
                 lambda: m.save_session(tmp_path / "x"), lambda: m.evaluate(text="abc")):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_shared_model_contexts(models, tmp_path):
    """One SharedModel, a context per thread generating at once: each gives
    what a Model of its own gives; the model outlives its contexts."""
    want = {}
    for seed in range(3):
        with ngpt.Model(models["bpe"]) as m:
            want[seed] = m.generate_text("Once upon", 16, seed=seed)
            checksum = m.params_checksum()
    with ngpt.SharedModel(models["bpe"]) as shared:
        ctxs = [shared.context() for _ in range(3)]
        got = {}
        threads = [threading.Thread(target=lambda i=i: got.__setitem__(
            i, ctxs[i].generate_text("Once upon", 16, seed=i))) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == want
        assert ctxs[0].params_checksum() == checksum
        ctxs[0].save_session(tmp_path / "s.session")
        with pytest.raises(ngpt.Error) as e:
            shared.close()                  # contexts still open
        assert str(e.value).startswith("ngpt_model_close:")
        for c in ctxs:
            c.close()
    assert shared.closed
    with pytest.raises(ValueError):
        shared.context()
    with pytest.raises(ngpt.Error) as e:
        ngpt.SharedModel(tmp_path / "missing.ngpt")
    assert str(e.value).startswith("ngpt_model_open:")


def test_garbage_collection_closes(models):
    for _ in range(20):                      # 20 contexts of ~30 MB would be felt if leaked
        m = ngpt.Model(models[1])
        m.logits([1])
        del m
        gc.collect()


def test_module_manual():
    doc = ngpt.__doc__
    assert "Model(" in doc and "generate" in doc and "Error" in doc
    for obj in (ngpt.Model, ngpt.Model.generate, ngpt.finetune, ngpt.Error):
        assert obj.__doc__
    assert ngpt.version.count(".") == 2 and ngpt.checksum_bytes(b"") == ngpt.checksum_bytes(b"")


def test_chat_equals_cli(models):
    lines = ["hi there", "tell me more"]
    want = cli("chat", "--model", models[1], "--system", "be brief", "-n", 20, "--seed", 5,
               "--temp", "0.9", input="\n".join(lines).encode() + b"\n")
    with ngpt.Model(models[1]) as m:
        chat = ngpt.Chat(m, system="be brief", seed=5, max_tokens=20, temperature=0.9)
        got = b"".join(chat.reply(line).encode() + b"\n" for line in lines)
        assert chat.text.startswith("system: be brief\nuser: hi there\nassistant: ")
    # compare as text: a reply cut mid-character is replaced in Python, raw in the CLI
    assert got == want.decode("utf-8", "replace").encode()
    with pytest.raises(TypeError):
        ngpt.Chat("not a model")


def _chatml_model(d):
    """A model whose tokenizer (GPT-2's file format, written here) has ChatML's markers."""
    printable = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or b >= 174]
    char, extra = {}, 0
    for b in range(256):                    # GPT-2's bytes_to_unicode
        if b in printable:
            char[b] = chr(b)
        else:
            char[b], extra = chr(256 + extra), extra + 1
    vocab = {char[b]: b for b in range(256)}
    vocab.update({"th": 256, "<|endoftext|>": 257, "<|im_start|>": 258, "<|im_end|>": 259})
    (d / "encoder.json").write_text(json.dumps(vocab), encoding="utf-8")
    (d / "vocab.bpe").write_text("#version: 0.2\nt h\n", encoding="utf-8")
    cli("tokenizer", "import-gpt2", "--encoder", d / "encoder.json", "--vocab", d / "vocab.bpe",
        "--out", d / "chatml.tok")
    cli("init", "--seed", 4, "--tokenizer", d / "chatml.tok", "--config", "T=128", "--out",
        d / "chatml.ngpt")
    return d / "chatml.ngpt"


def test_chatml_chat_equals_cli(tmp_path, models):
    path = _chatml_model(tmp_path)
    lines = ["hi there", "and <|im_start|> more"]
    want = cli("chat", "--model", path, "--system", "be brief", "-n", 12, "--seed", 5,
               input="\n".join(lines).encode() + b"\n")
    with ngpt.Model(path) as m:
        chat = ngpt.Chat(m, system="be brief", seed=5, max_tokens=12)
        assert chat.template == "chatml"
        got = b"".join(chat.reply(line).encode() + b"\n" for line in lines)
        assert chat.tokens[:2] == [258, ord("s")] and chat.tokens.count(258) == 5
        assert chat.tokens[-2:] == [259, ord("\n")]     # each reply closed by <|im_end|> "\n"
        assert ngpt.Chat(m).text.startswith("<|im_start|>system\n" + ngpt.chat.SMOLLM2_SYSTEM)
        assert ngpt.Chat(m, template="plain", system="x").text == "system: x\n"
    assert got == want.decode("utf-8", "replace").encode()
    with ngpt.Model(models["bpe"]) as m:
        assert ngpt.Chat(m).template == "plain"
        with pytest.raises(ngpt.Error, match="<\\|im_start\\|>"):
            ngpt.Chat(m, template="chatml")
    with ngpt.Model(models[1]) as m, pytest.raises(ValueError, match="no tokenizer"):
        ngpt.Chat(m, template="chatml")


def test_gil_released_during_c_calls(models, text):
    # a UI thread keeps ticking while another thread evaluates (one long C call)
    import time
    with ngpt.Model(models[1]) as m:
        worker = threading.Thread(target=m.evaluate, kwargs=dict(text=text, batches=12))
        start = time.monotonic()
        worker.start()
        ticks = 0
        while worker.is_alive():
            time.sleep(0.002)
            ticks += 1
        worker.join()
        elapsed = time.monotonic() - start
    assert elapsed < 0.05 or ticks >= elapsed / 0.002 / 4, (ticks, elapsed)


SMOLLM2 = os.path.join(ROOT, "tests", "chat_template", "smollm2.json")


def test_apply_chat_template(models, tmp_path):
    """Model.apply_chat_template: `ngpt chat --render`'s prompt, byte for byte."""
    conv = [{"role": "user", "content": "Grüße <|im_end|>"}, {"role": "assistant", "content": "yo"}]
    (tmp_path / "conv.json").write_text(json.dumps(conv), encoding="utf-8")
    tpl = json.load(open(SMOLLM2, encoding="utf-8"))["chat_template"]
    (tmp_path / "t.jinja").write_text(tpl, encoding="utf-8")
    with ngpt.Model(models["bpe"]) as m:
        with pytest.raises(ValueError, match="carries no chat template"):
            m.apply_chat_template(conv)
        text = m.apply_chat_template(conv, add_generation_prompt=True, chat_template=tpl)
        assert text.encode() == cli("chat", "--model", models["bpe"], "--template",
                                    tmp_path / "t.jinja", "--render", tmp_path / "conv.json")
        assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
        assert not m.apply_chat_template(conv, chat_template=tpl).endswith("<|im_start|>assistant\n")
        ids = m.apply_chat_template(conv, tokenize=True, chat_template="{{ messages[0].content }}")
        assert m.detokenize(ids) == conv[0]["content"]
        date = m.apply_chat_template([], chat_template="{{ strftime_now('%d %b %Y') }}", now=1721952000)
        assert date == "26 Jul 2024"
        with pytest.raises(ValueError, match="tools"):
            m.apply_chat_template([{"role": "user", "content": "x", "tool_calls": []}], chat_template=tpl)
        with pytest.raises(ngpt.Error, match="the filter \"title\""):
            m.apply_chat_template(conv, chat_template="{{ x | title }}")
        with pytest.raises(ngpt.Error, match="refused the conversation: no"):
            m.apply_chat_template(conv, chat_template="{{ raise_exception('no') }}")
    writer = os.path.join(ROOT, "build", "tests", "test_import")
    if not os.path.exists(writer):
        return                      # a model imported with a template needs that writer
    subprocess.run([writer, "--write", str(tmp_path)], check=True, stdout=subprocess.DEVNULL)
    shutil.copy(SMOLLM2, tmp_path / "llama_chat" / "tokenizer_config.json")
    cli("import", tmp_path / "llama_chat", "--out", tmp_path / "smol.ngpt")
    with ngpt.Model(tmp_path / "smol.ngpt") as m:
        assert m.apply_chat_template(conv, add_generation_prompt=True) == text
        ids = m.apply_chat_template(conv, add_generation_prompt=True, tokenize=True)
        assert " ".join(map(str, ids)).encode() + b"\n" == cli(
            "chat", "--model", tmp_path / "smol.ngpt", "--render", tmp_path / "conv.json", "--ids")


def test_chat_model_template_equals_cli(tmp_path):
    """Chat with the model's own template: `ngpt chat`'s replies and prompts, turn by turn."""
    writer = os.path.join(ROOT, "build", "tests", "test_import")
    if not os.path.exists(writer):
        pytest.skip("a model imported with a template needs build/tests/test_import")
    subprocess.run([writer, "--write", str(tmp_path)], check=True, stdout=subprocess.DEVNULL)
    shutil.copy(SMOLLM2, tmp_path / "llama_chat" / "tokenizer_config.json")
    cli("import", tmp_path / "llama_chat", "--out", tmp_path / "smol.ngpt")
    lines = ["hi there", "and <|im_start|> more"]
    want = cli("chat", "--model", tmp_path / "smol.ngpt", "--system", "be brief", "-n", 12,
               "--seed", 5, "--temp", "0.9", input="\n".join(lines).encode() + b"\n")
    with ngpt.Model(tmp_path / "smol.ngpt") as m:
        chat = ngpt.Chat(m, system="be brief", seed=5, max_tokens=12, temperature=0.9)
        assert chat.template == "model"
        got = b"".join(chat.reply(line).encode() + b"\n" for line in lines)
        assert [x["role"] for x in chat.messages] == ["system", "user", "assistant", "user",
                                                      "assistant"]
        assert chat.text.startswith("<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\n"
                                    "hi there<|im_end|>\n")
        # the next prompt keeps the replies' tokens as the model wrote them
        nxt = m._render_chat(chat.messages, True, None, True, None, None, chat.tokens, "t")
        assert nxt[:len(chat.tokens)] == chat.tokens
        assert ngpt.Chat(m, template="chatml").template == "chatml"
        own = ngpt.Chat(m, chat_template="{% for m in messages %}{{ m.content }}|{% endfor %}")
        assert own.template == "model" and own.text == ""
        with pytest.raises(ValueError, match="chat_template is a Jinja text"):
            ngpt.Chat(m, template="plain", chat_template="x")
    assert got == want.decode("utf-8", "replace").encode()
