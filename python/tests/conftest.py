"""Fixtures: models made by the freshly built `ngpt` CLI (NGPT_CLI, default
build/ngpt beside the library the binding loads)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))      # the package as it is in the tree
CLI = os.environ.get("NGPT_CLI", os.path.join(ROOT, "build", "ngpt"))


def cli(*args, **kw):
    """Runs `ngpt ARGS`, returns stdout as bytes (stderr ignored)."""
    return subprocess.run([CLI] + [str(a) for a in args], check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, **kw).stdout


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    out = {}
    for seed in (1, 42):
        out[seed] = d / ("m%d.ngpt" % seed)
        cli("init", "--seed", seed, "--out", out[seed])
    tok = d / "tok.bin"
    cli("tokenizer", "train", "--data", os.path.join(ROOT, "README.md"), "--out", tok,
        "--vocab", 320)
    out["bpe"] = d / "bpe.ngpt"
    cli("init", "--seed", 3, "--tokenizer", tok, "--out", out["bpe"])
    return out


@pytest.fixture(scope="session")
def text():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()
