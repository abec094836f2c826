"""examples/python run as a user runs them (with this tree's package)."""
import os
import subprocess
import sys

from conftest import ROOT, cli

EX = os.path.join(ROOT, "examples", "python")


def run(script, *args, stdin=None):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, os.path.join(EX, script)] + [str(a) for a in args],
                       input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode("utf-8", "replace"), r.stderr.decode()


def test_generate_example(models):
    out, err = run("generate.py", models[1], "Hello", "-n", 16, "--seed", 2)
    want = cli("generate", "--model", models[1], "--prompt", "Hello", "-n", 16, "--seed", 2,
               "--temp", "0.8", "--top-k", 40)
    assert out == want.decode("utf-8", "replace") + "\n" and "max tokens" in err


def test_chat_example(models):
    out, _ = run("chat.py", models[1], "-n", 8, stdin=b"hello\nhow are you\n")
    assert out.count("\n") >= 2


def test_finetune_example(models, tmp_path):
    out, _ = run("finetune.py", models[1], os.path.join(ROOT, "README.md"), tmp_path / "ft.ngpt",
                 "--steps", 3, "--batch", 2, "--seq", 32)
    assert "step 3/3" in out and out.count("held-out perplexity") == 2
    assert (tmp_path / "ft.ngpt").exists()


def test_example_reports_errors(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, os.path.join(EX, "generate.py"), tmp_path / "none"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert r.returncode == 1 and r.stderr.decode().startswith("generate.py: ngpt_")
