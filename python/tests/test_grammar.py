"""Constrained generation's proof: every output a JSON Schema's grammar lets finish
parses with Python's json and validates against the schema with python3-jsonschema
(and its format checker; dates and times also through datetime), at temperature 1
over many seeds, on random and trained models, byte-level and BPE; plain GBNF
grammars hold too, and unsupported keywords are one clear error."""
import datetime
import json

import pytest

import ngpt

jsonschema = pytest.importorskip("jsonschema")

SCHEMAS = {
    "task": {
        "title": "Task", "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 24},
            "due": {"type": "string", "format": "date"},
            "priority": {"type": "integer", "minimum": 1, "maximum": 3},
            "tags": {"type": "array", "items": {"enum": ["work", "home", "urgent"]},
                     "maxItems": 3},
            "done": {"type": "boolean"},
        },
        "required": ["title", "due", "priority"],
    },
    "nested": {
        "$defs": {"node": {"type": "object",
                           "properties": {"id": {"type": "integer", "minimum": -50,
                                                 "maximum": 50},
                                          "kids": {"type": "array",
                                                   "items": {"$ref": "#/$defs/node"},
                                                   "maxItems": 2}},
                           "required": ["id"]}},
        "$ref": "#/$defs/node",
    },
    "kinds": {
        "type": "object",
        "properties": {
            "event": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "call"},
                                                  "who": {"type": "string", "minLength": 1,
                                                          "maxLength": 8}},
                 "required": ["kind", "who"]},
                {"type": "object", "properties": {"kind": {"const": "at"},
                                                  "when": {"type": "string",
                                                           "format": "date-time"}},
                 "required": ["kind", "when"]}]},
            "id": {"type": "string", "format": "uuid"},
            "code": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"},
            "note": {"anyOf": [{"type": "string", "pattern": "ok|fine"}, {"type": "null"}]},
            "at": {"type": "string", "format": "time"},
        },
        "required": ["event", "code"],
        "additionalProperties": False,
    },
    "tuple": {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": ["string", "null"], "maxLength": 3}],
        "items": {"type": "boolean"}, "minItems": 1, "maxItems": 4,
    },
    "extras": {
        "type": "object", "properties": {"a": {"type": "integer"}},
        "additionalProperties": {"type": "string", "maxLength": 4},
        "required": ["a"],
    },
    "any": {},
}

JSONISH = " ".join(json.dumps(v) for v in [
    {"title": "buy milk", "due": "2024-05-01", "priority": 2, "tags": ["home"]},
    {"id": 3, "kids": [{"id": 4}, {"id": -5, "kids": []}]},
    {"event": {"kind": "call", "who": "ann"}, "code": "AB-123", "note": None},
    [1.5, "abc", True, False], {"a": 1, "x": "y"}, {"k": [1, 2, {"z": None}]},
]) * 40


@pytest.fixture(scope="module")
def trained(models, tmp_path_factory):
    out = tmp_path_factory.mktemp("grammar") / "json.ngpt"
    ngpt.finetune(models[1], out, text=JSONISH, steps=40, batch=4, seq=64)
    return out


def _validate(text, schema):
    value = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls(schema, format_checker=cls.FORMAT_CHECKER).validate(value)
    return value


def _formats_hold(value):
    """Every string that looks like a date or a time reads as one."""
    if isinstance(value, dict):
        return all(_formats_hold(v) for v in value.values())
    if isinstance(value, list):
        return all(_formats_hold(v) for v in value)
    try:
        if isinstance(value, str) and value[4:5] == "-" and value[7:8] == "-":
            if "T" in value:
                datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
            elif len(value) == 10:
                datetime.date.fromisoformat(value)
        elif isinstance(value, str) and value[2:3] == ":" and value[5:6] == ":":
            datetime.time.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("model_key", [1, "bpe", "trained"])
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_outputs_validate(models, trained, model_key, name):
    path = trained if model_key == "trained" else models[model_key]
    schema = SCHEMAS[name]
    finished = 0
    with ngpt.Model(path) as m:
        for seed in range(12):
            text = m.generate_text("JSON: ", 160, json_schema=schema, seed=seed, temperature=1.0)
            reason = m.stop_reason
            if reason in ("grammar complete", "end token"):
                value = _validate(text, schema)
                assert _formats_hold(value), text
                finished += 1
            else:
                assert reason in ("cut before the grammar was complete", "max tokens"), reason
    assert finished >= 3, "%s on %s: only %d of 12 outputs finished" % (name, model_key, finished)


def test_grammar_text_and_sampler_options(models):
    # numbers as JSON writes them (no leading zero): every finished text parses
    gbnf = ('root ::= "[" item ("," item){0,4} "]"\n'
            'item ::= "0" | [1-9] [0-9]{0,2} | "\\"" [a-z]{1,5} "\\""\n')
    with ngpt.Model(models["bpe"], draft_tokens=4) as m:
        for seed in range(10):
            text = m.generate_text("list: ", 80, grammar=gbnf, seed=seed, top_k=40, top_p=0.9,
                                   repeat_penalty=1.2)
            if m.stop_reason == "grammar complete":
                value = json.loads(text)
                assert isinstance(value, list) and 1 <= len(value) <= 5
        greedy = m.generate_text("list: ", 80, grammar=gbnf, temperature=0)
        assert greedy == m.generate_text("list: ", 80, grammar=gbnf, temperature=0,
                                         lookup=3, draft_tokens=4)
        beam = m.generate_text("list: ", 40, grammar=gbnf, beam_width=1)
        assert beam == greedy[:len(beam)]


def test_errors(models):
    with ngpt.Model(models[1]) as m:
        with pytest.raises(ngpt.Error, match='keyword "not" is not supported'):
            m.generate_text("x", 4, json_schema={"not": {"type": "null"}})
        with pytest.raises(ngpt.Error, match="line 1, column 10"):
            m.generate_text("x", 4, grammar="root ::= nothing")
        with pytest.raises(ValueError, match="not both"):
            m.generate_text("x", 4, grammar='root ::= "a"', json_schema={})
