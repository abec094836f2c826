"""LoRA adapters through the binding: configs, training one (finetune(lora=...)),
applying it (Model(adapters=...), set_adapters), against the CLI, and refusals."""
import pytest

import ngpt
from conftest import cli

PROMPT = "ngpt_status "
TRAIN = dict(steps=4, batch=2, seq=32, lr=1e-2)
# a text whose held-out tail is like the rest: what the adapter learns shows there
REPEATED = "a frozen model learns a new text through its adapter. " * 300


def test_lora_config():
    assert str(ngpt.lora_config()) == "r=8 alpha=16 targets=q_proj,v_proj"
    lc = ngpt.lora_config("r=16 alpha=32 targets=all-linear layers=0-1,3 rslora=1")
    assert (lc.rank, lc.alpha, lc.rslora, lc.layers) == (16, 32.0, True, 0b1011)
    assert str(ngpt.lora_config(str(lc))) == str(lc)        # its words read back
    d = ngpt.lora_config({"r": 16, "alpha": 32, "targets": ["all-linear"], "layers": "0-1,3",
                          "rslora": True})
    assert str(d) == str(lc) and str(ngpt.lora_config(lc)) == str(lc)
    with pytest.raises(ngpt.Error, match="unknown key"):
        ngpt.lora_config("beta=2")
    with pytest.raises(ngpt.Error, match="lm_head"):
        ngpt.lora_config({"targets": "lm_head"})
    with pytest.raises(TypeError):
        ngpt.lora_config(16)


def test_train_and_apply(models, tmp_path):
    text = REPEATED
    out = tmp_path / "a.lora"
    losses = ngpt.finetune(models[42], out, text=text, lora="r=4 targets=all-linear", **TRAIN)
    assert len(losses) == 4 and losses[-1] < losses[0]
    again = tmp_path / "b.lora"
    assert ngpt.finetune(models[42], again, text=text, lora={"r": 4, "targets": "all-linear"},
                         **TRAIN) == losses
    assert out.read_bytes() == again.read_bytes()       # the same file, every time
    with ngpt.Adapter(out) as ad:
        assert ad.rank == 4 and str(ad.config) == "r=4 alpha=16 targets=all-linear"
        assert ad.info.steps == 0 and ad.info.layers == 4 and ad.info.scale == 4.0
        # L=4 layers x r=4 x (in + out) of c_attn, attn.c_proj, c_fc, mlp.c_proj
        assert ad.info.floats == 4 * 4 * ((256 + 768) + (256 + 256) + (256 + 1024) + (1024 + 256))
        with ngpt.Model(models[42], logits_rows=ngpt.LOGITS_ALL) as base, \
                ngpt.Model(models[42], logits_rows=ngpt.LOGITS_ALL, adapters=[ad]) as m:
            plain, adapted = base.logits(PROMPT), m.logits(PROMPT)
            assert m.adapters == [(ad, 1.0)] and m.adapter_rank == 4
            assert (plain != adapted).any()
            m.set_adapters([(ad, 0.0)])                 # scale 0: the model itself, bit for bit
            assert (m.logits(PROMPT) == plain).all()
            m.set_adapters()
            assert (m.logits(PROMPT) == plain).all() and m.adapters == []
            m.set_adapters([str(out)])                  # a path: opened by the Model
            assert (m.logits(PROMPT) == adapted).all()
            assert m.evaluate(text=text, batches=2, seq=32) < base.evaluate(text=text, batches=2,
                                                                            seq=32)
        with pytest.raises(ngpt.Error):                 # used by a Model: not closed
            with ngpt.Model(models[42], adapters=[ad]):
                ad.close()


def test_equals_cli(models, text, tmp_path):
    out = tmp_path / "a.lora"
    ngpt.finetune(models[42], out, text=text, lora="r=4", **TRAIN)
    want = cli("generate", "--model", models[42], "--prompt", PROMPT, "-n", 40, "--seed", 3,
               "--adapter", "%s:0.5" % out)
    with ngpt.Model(models[42], adapters=[(out, 0.5)]) as m:
        assert m.generate_text(PROMPT, 40, seed=3).encode() == want.decode("utf-8", "replace").encode()


def test_cli_adapter_goes_on(models, text, tmp_path):
    data = tmp_path / "t.txt"
    data.write_text(text)
    cli_file = tmp_path / "c.lora"
    cli("train", "--init", models[42], "--lora", "r=2", "--data", data, "--batch", 2, "--seq", 32,
        "--steps", 2, "--eval-every", 0, "--eval-batches", 1, "--out", cli_file)
    state = tmp_path / "c.lora.train"                   # beside the adapter: moments and steps
    ad = ngpt.Adapter(state)
    assert ad.info.steps == 2 and ad.rank == 2
    bare = tmp_path / "bare.lora"
    ad.save(bare)                                       # the adapter alone: a third of it
    with ngpt.Adapter(bare) as b, ngpt.Adapter(cli_file) as c, \
            ngpt.Model(models[42], logits_rows=ngpt.LOGITS_ALL, adapters=[ad]) as m1, \
            ngpt.Model(models[42], logits_rows=ngpt.LOGITS_ALL, adapters=[b]) as m2:
        assert b.info.steps == 0 and c.info.steps == 0 and bare.stat().st_size < state.stat().st_size / 2
        assert bare.read_bytes() == cli_file.read_bytes()   # what train's --out holds
        assert (m1.logits(PROMPT) == m2.logits(PROMPT)).all()
    out = tmp_path / "d.lora"
    assert len(ngpt.finetune(models[42], out, text=text, adapter=ad, **TRAIN)) == 4
    with ngpt.Adapter(out) as d:
        assert d.info.steps == 0 and str(d.config) == str(ad.config)   # the adapter alone
    ad.close()


def test_refusals(models, text, tmp_path):
    out = tmp_path / "a.lora"
    ngpt.finetune(models[42], out, text=text, lora="r=4", steps=1, batch=2, seq=32)
    with pytest.raises(ngpt.Error, match="another model"):
        ngpt.Model(models[1], adapters=[out])
    with ngpt.Model(models[42]) as m:
        with pytest.raises(ngpt.Error, match="rank"):   # planned for none
            m.set_adapters([out])
    with pytest.raises(ngpt.Error):
        ngpt.Model(models[42], adapters=[tmp_path / "missing.lora"])
    with pytest.raises(ngpt.Error, match="LoRA adapter"):
        ngpt.Adapter(models[42])
    with pytest.raises(ngpt.Error, match="LoRA adapter"):
        ngpt.Model(out)
    with pytest.raises(TypeError):
        ngpt.finetune(models[42], out, text=text, lora="r=4", adapter=out)
    with pytest.raises(ngpt.Error, match="gate_proj"):
        ngpt.finetune(models[42], tmp_path / "x.lora", text=text, lora="targets=gate_proj")
    assert not (tmp_path / "x.lora").exists()
