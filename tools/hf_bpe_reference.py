#!/usr/bin/python3
"""An independent reference encoder for byte-level BPE tokenizer.json files
(GPT-2's and SmolLM2's kind), written from Hugging Face's documented
algorithm (https://github.com/huggingface/tokenizers, tokenizers/src/:
models/bpe, pre_tokenizers, added_vocabulary.rs), not from ngpt's C:

  1. pre-tokenizers in order: Digits(individual_digits=true) isolates each
     Unicode N character; ByteLevel(use_regex=true) splits each piece with
     GPT-2's pattern  's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+|
     ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+  and maps bytes to characters
     (bytes_to_unicode);
  2. BPE on each piece: its characters, those missing from the vocabulary
     dropped (no unk token, no byte fallback); then, again and again, the
     adjacent pair with the lowest rank (its index in model.merges) is
     joined, the leftmost of equal ranks, until no pair has a rank;
  3. ids from model.vocab.

Added (special) tokens are not matched in the text: that is ngpt's plain
encode (specials are never produced from text). \\s is JavaScript's set
(ngpt's, docs/TOKENIZER.md); \\p{L} and \\p{N} come from Python's
unicodedata. Text that is not UTF-8 is read with surrogateescape: each
invalid byte is one character of neither class, as in ngpt.

Usage:
  hf_bpe_reference.py TOKENIZER_JSON CORPUS      ids, one line per text
  hf_bpe_reference.py TOKENIZER_JSON CORPUS --c  the same as C initializers
CORPUS holds the texts as u32 little-endian length + bytes, one after
another (what tests/test_hf_tokenizer.c writes with --write DIR; see the
regeneration command there).
"""
import json
import re
import struct
import sys
import unicodedata


def bytes_to_unicode():
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return chars


def char_class(predicate):
    """A regex character class body holding every code point that passes."""
    parts, start = [], None
    for cp in range(0x110000 + 1):
        inside = cp <= 0x10FFFF and not (0xD800 <= cp <= 0xDFFF) and predicate(chr(cp))
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            parts.append(re.escape(chr(start)) + ("-" + re.escape(chr(cp - 1)) if cp - 1 > start else ""))
            start = None
    return "".join(parts)


# JavaScript's \s: WhiteSpace and LineTerminator (ECMAScript), U+FEFF included, U+0085 not.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
L = char_class(lambda c: unicodedata.category(c).startswith("L"))
N = char_class(lambda c: unicodedata.category(c).startswith("N"))
S = JS_SPACE
GPT2 = re.compile(
    "'s|'t|'re|'ve|'m|'ll|'d"
    f"| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+|[{S}]+(?![^{S}])|[{S}]+")
DIGIT = re.compile(f"[{N}]")


def digits_split(text):
    """Digits(individual_digits=true): each N character alone, the rest between."""
    out, last = [], 0
    for m in DIGIT.finditer(text):
        if m.start() > last:
            out.append(text[last:m.start()])
        out.append(m.group())
        last = m.end()
    if last < len(text):
        out.append(text[last:])
    return out


def load(path):
    tj = json.load(open(path, encoding="utf-8"))
    pre = tj["pre_tokenizer"]
    steps = pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]
    digits = False
    for step in steps:
        if step["type"] == "Digits":
            assert step["individual_digits"], "only individual digits"
            digits = True
        else:
            assert step["type"] == "ByteLevel" and not step["add_prefix_space"] and step["use_regex"]
    model = tj["model"]
    assert not model.get("byte_fallback") and not model.get("ignore_merges")
    ranks = {}
    for k, m in enumerate(model["merges"]):
        a, b = m.split(" ") if isinstance(m, str) else m
        ranks.setdefault((a, b), k)
    return model["vocab"], ranks, digits


def bpe(word, vocab, ranks):
    syms = [c for c in word if c in vocab]          # no unk, no byte fallback: dropped
    while len(syms) > 1:
        best, at = None, -1
        for i in range(len(syms) - 1):
            r = ranks.get((syms[i], syms[i + 1]))
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        syms[at:at + 2] = [syms[at] + syms[at + 1]]
    return [vocab[s] for s in syms]


def encode(data, vocab, ranks, digits):
    b2u = bytes_to_unicode()
    text = data.decode("utf-8", "surrogateescape")
    ids = []
    for part in digits_split(text) if digits else [text]:
        for piece in GPT2.findall(part):
            raw = piece.encode("utf-8", "surrogateescape")
            ids += bpe("".join(b2u[x] for x in raw), vocab, ranks)
    return ids


def read_corpus(path):
    data, texts, at = open(path, "rb").read(), [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        texts.append(data[at + 4:at + 4 + n])
        at += 4 + n
    return texts


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    vocab, ranks, digits = load(sys.argv[1])
    texts = read_corpus(sys.argv[2])
    as_c = "--c" in sys.argv[3:]
    all_ids = [encode(t, vocab, ranks, digits) for t in texts]
    if not as_c:
        for ids in all_ids:
            print(" ".join(map(str, ids)))
        return
    print("/* generated by tools/hf_bpe_reference.py (see the regeneration command above) */")
    print("static const int32_t GOLDEN_IDS[] = {")
    flat = [i for ids in all_ids for i in ids]
    for k in range(0, len(flat), 12):
        print("    " + ", ".join(str(i) for i in flat[k:k + 12]) + ",")
    print("};")
    print("static const int GOLDEN_COUNTS[] = {" + ", ".join(str(len(ids)) for ids in all_ids) + "};")


if __name__ == "__main__":
    main()
