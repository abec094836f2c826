#!/usr/bin/env python3
"""What a C header means to the machine, as JSON: every struct's size,
alignment and fields (offset, size, type), every enum's values, the values
of its #define constants, and every function's prototype. python/tests/test_abi.py
checks the Python binding's ctypes mirrors against it, so a header change the
binding does not follow fails a test instead of corrupting memory.

    python3 tools/header_abi.py [--cc CC] [include/ngpt.h]     # CC: $CC, else cc

How: the header is preprocessed (CC -E) and its declarations parsed here, for
their shape only (which field is a pointer, an array, a function pointer, a
struct or an enum). A C program generated from them prints what only the
compiler knows: sizeof, offsetof and _Alignof, which integer type a typedef
such as size_t is (signedness and size), array lengths, and the values of the
enumerators and macros. Standard library only.

The parser is strict: a declaration it cannot read (a bit-field, a union, an
anonymous member) stops it with an error naming the line, never skipped, so
a struct it describes has every field. Only the header's own lines are read
(not the system headers it includes); #define constants are the object-like
macros it defines whose bodies are constant expressions (others, e.g. an
attribute macro, are listed under "skipped_macros").
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>\.\.\.|<<|>>|<=|>=|==|!=|&&|\|\||->|[^\s\w])
""", re.X)

_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "__restrict__"}
_STORAGE = {"extern", "static", "inline", "__inline", "__inline__", "_Noreturn", "register",
            "_Thread_local", "__extension__"}
_BUILTIN = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
            "_Bool", "__int128"}


class HeaderError(Exception):
    pass


class Tok(str):
    """A token that remembers its line in the header."""

    def __new__(cls, text, line):
        t = super().__new__(cls, text)
        t.line = line
        return t


def _cc(cc, *args):
    """The compiler's output for args; HeaderError with its messages when it fails."""
    try:
        r = subprocess.run(cc.split() + ["-std=c11"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise HeaderError("no C compiler %r: set CC (make test-python passes the build's)" % cc)
    if r.returncode:
        raise HeaderError("%s -std=c11 %s failed:\n%s" % (cc, " ".join(args), r.stderr))
    return r.stdout


def preprocess(header, cc):
    """The header's own lines after the preprocessor, as tokens (system headers and
    #pragma lines left out)."""
    out = _cc(cc, "-E", header)
    mine = os.path.realpath(header)
    tokens, own, line = [], False, 0
    for text in out.splitlines():
        m = re.match(r'#\s*(\d+)\s+"([^"]*)"', text)
        if m:
            line, own = int(m.group(1)), os.path.realpath(m.group(2)) == mine
            continue
        if own and not text.lstrip().startswith("#"):
            for t in _TOKEN.finditer(text):
                if t.lastgroup != "space":
                    tokens.append(Tok(t.group(), line))
        line += 1
    return _drop_attributes(tokens)


def _drop_attributes(tokens):
    """Leaves out __attribute__((...)), __declspec(...) and __asm__(...): they change no layout
    the binding mirrors (a packed or aligned attribute would: the compiler's offsets show it)."""
    out, i = [], 0
    while i < len(tokens):
        if tokens[i] in ("__attribute__", "__declspec", "__asm__", "__asm") and \
                i + 1 < len(tokens) and tokens[i + 1] == "(":
            i = _match(tokens, i + 1) + 1
            continue
        out.append(tokens[i])
        i += 1
    return out


def _match(tokens, i):
    """The index of the bracket closing the one at tokens[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for j in range(i, len(tokens)):
        if tokens[j] in pairs:
            stack.append(pairs[tokens[j]])
        elif stack and tokens[j] == stack[-1]:
            stack.pop()
            if not stack:
                return j
    raise HeaderError("line %d: unbalanced %r" % (tokens[i].line, str(tokens[i])))


def _split(tokens, sep):
    """tokens split at sep outside brackets."""
    parts, cur, i = [], [], 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("(", "[", "{"):
            j = _match(tokens, i)
            cur.extend(tokens[i:j + 1])
            i = j + 1
            continue
        if t == sep:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
        i += 1
    if cur:
        parts.append(cur)
    return parts


def _declarations(tokens):
    """Top-level declarations, an inline function's body left out (its prototype stays)."""
    flat, i = [], 0
    while i < len(tokens):
        if tokens[i] == "{" and flat and flat[-1] == ")":   # a function definition
            flat.append(Tok(";", tokens[i].line))
            i = _match(tokens, i) + 1
        else:
            flat.append(tokens[i])
            i += 1
    return [d for d in _split(flat, ";")
            if d and d[0] not in ("_Static_assert", "static_assert")]


def _spell(tokens):
    """Declaration tokens as a person writes them."""
    s = " ".join("bool" if t == "_Bool" else t for t in tokens)
    s = re.sub(r"\s*([\[\](),])\s*", r"\1", s)
    s = re.sub(r",", ", ", s)
    s = re.sub(r"\*\s+(?=[\w*])", "*", s)
    s = re.sub(r"(?<=\w)\((?=\*)", " (", s)
    return s.strip()


class Parser:
    """The header's declarations, for their shape. Types are tuples: ("base", "unsigned int"),
    ("typedef", name), ("struct", key) and ("enum", key) for a definition, ("struct_tag", tag)
    and ("enum_tag", tag) for a reference, ("ptr", T), ("array", T) and
    ("func", T, params, variadic)."""

    def __init__(self):
        self.structs = {}       # key (its tag, or a made-up one) -> fields, line, tag
        self.struct_tags = {}   # tag -> key
        self.enums = {}         # key -> enumerator names, line, tag
        self.enum_tags = {}
        self.typedefs = {}      # name -> type
        self.functions = {}     # name -> type, line, spelling
        self.anon = 0

    def specifiers(self, toks, i, where):
        """Parses the type specifiers at toks[i]; returns (type, i after them)."""
        words, typ = [], None
        while i < len(toks):
            t = toks[i]
            if t in _QUALIFIERS or t in _STORAGE:
                i += 1
            elif t in ("struct", "union", "enum"):
                if typ or words:
                    break
                typ, i = self.tagged(toks, i, where)
            elif t in _BUILTIN:
                if typ:
                    break
                words.append("bool" if t == "_Bool" else str(t))   # stdbool's spelling
                i += 1
            elif re.match(r"[A-Za-z_]\w*$", t) and not typ and not words:
                typ = ("typedef", str(t))
                i += 1
            else:
                break
        if words:
            typ = ("base", " ".join(words))
        if typ is None:
            raise HeaderError("line %d: %s: no type in %r" % (toks[0].line, where, _spell(toks)))
        return typ, i

    def tagged(self, toks, i, where):
        kind = toks[i]
        if kind == "union":
            raise HeaderError("line %d: %s: a union; tools/header_abi.py does not describe "
                              "unions" % (toks[i].line, where))
        i += 1
        tag = None
        if i < len(toks) and re.match(r"[A-Za-z_]\w*$", toks[i]):
            tag = str(toks[i])
            i += 1
        tags = self.struct_tags if kind == "struct" else self.enum_tags
        if i < len(toks) and toks[i] == "{":
            j = _match(toks, i)
            if where.startswith("field"):
                raise HeaderError("line %d: %s: a %s defined inside a struct; define it on "
                                  "its own (tools/header_abi.py describes named types)"
                                  % (toks[i].line, where, kind))
            key = tag or "<anonymous %s %d>" % (kind, self.anon)
            self.anon += 1
            if tag:
                tags[tag] = key
            if kind == "struct":
                self.structs[key] = {"fields": self.members(toks[i + 1:j], key),
                                     "line": toks[i].line, "tag": tag}
            else:
                self.enums[key] = {"names": self.enumerators(toks[i + 1:j]),
                                   "line": toks[i].line, "tag": tag}
            return (kind, key), j + 1
        if tag is None:
            raise HeaderError("line %d: %s: '%s' without a tag or body" % (toks[i - 1].line, where, kind))
        return (kind + "_tag", tag), i

    def members(self, toks, key):
        fields = []
        for decl in _split(toks, ";"):
            base, i = self.specifiers(decl, 0, "field of %s" % key)
            if i == len(decl):
                raise HeaderError("line %d: %s has a member without a name (an anonymous "
                                  "struct?): %r" % (decl[0].line, key, _spell(decl)))
            for d in _split(decl[i:], ","):
                if ":" in d:
                    raise HeaderError("line %d: %s: bit-field %r; tools/header_abi.py does not "
                                      "describe bit-fields" % (d[0].line, key, _spell(d)))
                name, typ, rest = self.declarator(d, 0, base)
                if rest != len(d) or name is None:
                    raise HeaderError("line %d: %s: cannot read member %r" % (d[0].line, key, _spell(d)))
                fields.append({"name": name, "type": typ, "c": _spell(decl[:i] + d)})
        return fields

    @staticmethod
    def enumerators(toks):
        names = []
        for e in _split(toks, ","):
            if not re.match(r"[A-Za-z_]\w*$", e[0]) or (len(e) > 1 and e[1] != "="):
                raise HeaderError("line %d: cannot read enumerator %r" % (e[0].line, _spell(e)))
            names.append(str(e[0]))
        return names

    def declarator(self, toks, i, base):
        """C's declarator at toks[i] applied to base: (name or None, type, i after it)."""
        ptrs = 0
        while i < len(toks) and (toks[i] == "*" or toks[i] in _QUALIFIERS):
            ptrs += toks[i] == "*"
            i += 1
        name, inner = None, None
        if i < len(toks) and toks[i] == "(" and i + 1 < len(toks) and toks[i + 1] in ("*", "("):
            j = _match(toks, i)
            inner = toks[i + 1:j]
            i = j + 1
        elif i < len(toks) and re.match(r"[A-Za-z_]\w*$", toks[i]):
            name = str(toks[i])
            i += 1
        suffixes = []
        while i < len(toks) and toks[i] in ("[", "("):
            j = _match(toks, i)
            if toks[i] == "[":
                suffixes.append(("array",))
            else:
                suffixes.append(("func",) + self.params(toks[i + 1:j]))
            i = j + 1
        typ = base
        for _ in range(ptrs):
            typ = ("ptr", typ)
        for s in reversed(suffixes):
            typ = ("array", typ) if s[0] == "array" else ("func", typ, s[1], s[2])
        if inner is not None:
            name, typ, k = self.declarator(inner, 0, typ)
            if k != len(inner):
                raise HeaderError("line %d: cannot read declarator %r" % (toks[0].line, _spell(toks)))
        return name, typ, i

    def params(self, toks):
        if not toks or (len(toks) == 1 and toks[0] == "void"):
            return [], False
        params, variadic = [], False
        for p in _split(toks, ","):
            if p == ["..."]:
                variadic = True
                continue
            base, i = self.specifiers(p, 0, "parameter")
            name, typ, rest = self.declarator(p, i, base)
            if rest != len(p):
                raise HeaderError("line %d: cannot read parameter %r" % (p[0].line, _spell(p)))
            if typ[0] == "array":           # parameters decay
                typ = ("ptr", typ[1])
            elif typ[0] == "func":
                typ = ("ptr", typ)
            params.append({"name": name, "type": typ, "c": _spell(p)})
        return params, variadic

    def declaration(self, toks):
        typedef = toks[0] == "typedef"
        base, i = self.specifiers(toks, int(typedef), "declaration")
        for d in _split(toks[i:], ","):
            name, typ, rest = self.declarator(d, 0, base)
            if rest != len(d) or name is None:
                raise HeaderError("line %d: cannot read declaration %r" % (d[0].line, _spell(toks)))
            if typedef:
                self.typedefs[name] = typ
            elif typ[0] == "func":
                self.functions[name] = {"type": typ, "line": d[0].line, "c": _spell(toks)}
            # a variable: not part of what the binding mirrors


def describe(header, cc=None):
    """The header's ABI as a dict (see the module's docstring); cc: the C compiler
    command (default $CC, else cc), the one that built the library."""
    cc = cc or os.environ.get("CC") or "cc"
    header = os.path.abspath(header)
    p = Parser()
    for decl in _declarations(preprocess(header, cc)):
        p.declaration(decl)
    return _Resolver(p, header, cc).run()


class _Resolver:
    """Turns the parsed declarations into JSON types, writes the C program that prints what
    the compiler knows about them, runs it and fills its answers in."""

    def __init__(self, parser, header, cc):
        self.p, self.header, self.cc = parser, header, cc
        self.basic = {}         # spelled basic type (int32_t, size_t, ...) -> its JSON types
        self.lines = []         # the C program's statements

    def name_of(self, kind, key):
        """A struct's or enum's name: its typedef's when it has one, else "struct tag"."""
        tags = self.p.struct_tags if kind == "struct" else self.p.enum_tags
        for name, typ in self.p.typedefs.items():
            if typ == (kind, key) or (typ[0] == kind + "_tag" and tags.get(typ[1]) == key):
                return name
        return "%s %s" % (kind, key)

    def c_spelling(self, kind, key):
        """A spelling of the type that C accepts in sizeof (an untagged struct's typedef)."""
        info = (self.p.structs if kind == "struct" else self.p.enums)[key]
        return "%s %s" % (kind, info["tag"]) if info["tag"] else self.name_of(kind, key)

    def resolve(self, typ, via=None):
        """A parsed type as a JSON type ("c": how the header spells it); via: the typedef
        name it was reached through."""
        k = typ[0]
        if k == "typedef":
            if typ[1] in self.p.typedefs:
                return self.resolve(self.p.typedefs[typ[1]], via=typ[1])
            return self.basic_type(typ[1])
        if k == "base":
            return {"kind": "void", "c": "void"} if typ[1] == "void" else self.basic_type(typ[1])
        if k in ("struct", "struct_tag", "enum", "enum_tag"):
            kind = k.split("_")[0]
            key = typ[1] if k == kind else \
                (self.p.struct_tags if kind == "struct" else self.p.enum_tags).get(typ[1])
            if key is None:
                if kind == "enum":
                    raise HeaderError("enum %s is used but not defined" % typ[1])
                name = via or "struct " + typ[1]
                return {"kind": "opaque", "name": name, "c": name}
            name = self.name_of(kind, key)
            return {"kind": kind, "name": name, "c": name}
        if k == "ptr":
            to = self.resolve(typ[1])
            spelled = to["c"] + ("*" if to["c"].endswith("*") else " *")
            if to["kind"] == "function":        # void (*)(void *)
                spelled = "%s (*)(%s)" % (to["returns"]["c"], ", ".join(q["c"] for q in to["params"]))
            return {"kind": "pointer", "to": to, "c": via or spelled}
        if k == "array":
            return {"kind": "array", "of": self.resolve(typ[1]), "c": via}
        if k == "func":
            return {"kind": "function", "returns": self.resolve(typ[1]),
                    "params": [dict(name=q["name"], c=q["c"], type=self.resolve(q["type"]))
                               for q in typ[2]],
                    "variadic": typ[3], "c": via or "function"}  # named by its pointer
        raise HeaderError("unknown type %r" % (typ,))

    def basic_type(self, spelled):
        t = {"kind": "basic", "c": spelled}
        if spelled not in self.basic:
            self.basic[spelled] = []
            self.lines.append('printf("basic\\t%s\\t%%s\\t%%zu\\n", KIND(*(%s *)0), sizeof(%s));'
                              % (spelled, spelled, spelled))
        self.basic[spelled].append(t)
        return t

    def run(self):
        p = self.p
        out = {"header": self.header, "compiler": self.cc, "structs": {}, "enums": {},
               "constants": {}, "skipped_macros": {}, "functions": {},
               "opaque": sorted(n for n, t in p.typedefs.items()
                                if self.resolve(t, via=n)["kind"] == "opaque")}
        self.structs = out["structs"]
        for key, info in p.structs.items():
            name, cs = self.name_of("struct", key), self.c_spelling("struct", key)
            if "<" in name:         # struct { ... } variable;: no type to name
                continue
            self.structs[name] = {"line": info["line"], "fields": []}
            self.lines.append('printf("struct\\t%s\\t%%zu\\t%%zu\\n", sizeof(%s), _Alignof(%s));'
                              % (name, cs, cs))
            for f in info["fields"]:
                member = "((%s *)0)->%s" % (cs, f["name"])
                self.lines.append('printf("field\\t%s\\t%s\\t%%zu\\t%%zu\\n", offsetof(%s, %s), '
                                  'sizeof(%s));' % (name, f["name"], cs, f["name"], member))
                t = self.resolve(f["type"])
                a, depth = t, 0
                while a["kind"] == "array":         # each dimension's length
                    outer = member + "[0]" * depth
                    self.lines.append('printf("length\\t%s\\t%s\\t%d\\t%%zu\\n", sizeof(%s) / '
                                      'sizeof(%s));' % (name, f["name"], depth, outer, outer + "[0]"))
                    a, depth = a["of"], depth + 1
                self.structs[name]["fields"].append({"name": f["name"], "c": f["c"], "type": t})
        for key, info in p.enums.items():
            name = self.name_of("enum", key)
            out["enums"][name] = {"line": info["line"], "values": {}}
            if info["tag"] or not name.startswith("enum "):
                self.lines.append('printf("enum\\t%s\\t%%zu\\n", sizeof(%s));'
                                  % (name, self.c_spelling("enum", key)))
            for e in info["names"]:
                self.lines.append('printf("value\\t%s\\t%s\\t%%lld\\n", (long long)(%s));'
                                  % (name, e, e))
        for name, fn in p.functions.items():
            t = self.resolve(fn["type"])
            out["functions"][name] = {"returns": t["returns"], "params": t["params"],
                                      "variadic": t["variadic"], "c": fn["c"], "line": fn["line"]}
        enumerators = {e for info in p.enums.values() for e in info["names"]}
        constants, out["skipped_macros"] = self.macros(enumerators, set(p.typedefs) | set(self.basic))
        for name in constants:
            self.lines.append('PUT("%s", (%s));' % (name, name))
        self.fill(out, self.compile_and_run())
        return out

    def macros(self, enumerators, type_names):
        """The header's object-like macros: those whose bodies are constant expressions (of
        numbers, strings, enumerators and each other), and the others (name -> body)."""
        with open(self.header, encoding="utf-8") as f:
            own = set(re.findall(r"^\s*#\s*define\s+([A-Za-z_]\w*)(?!\()", f.read(), re.M))
        defs = _cc(self.cc, "-E", "-dM", self.header)
        bodies = {m.group(1): m.group(2).strip()
                  for m in re.finditer(r"^#define ([A-Za-z_]\w*)(?!\() ?(.*)$", defs, re.M)
                  if m.group(1) in own and m.group(2).strip()}
        allowed = enumerators | type_names | _BUILTIN | _QUALIFIERS | {"sizeof", "_Alignof"}
        ok, changed = set(), True
        while changed:
            changed = False
            for name, body in bodies.items():
                words = {t.group() for t in _TOKEN.finditer(body) if t.lastgroup == "id"}
                if name not in ok and not words - allowed - ok and not re.search(r"[{};=]", body):
                    ok.add(name)
                    changed = True
        return sorted(ok), {n: b for n, b in bodies.items() if n not in ok}

    def compile_and_run(self):
        program = _PROGRAM_HEAD % {"header": json.dumps(self.header)} + \
            "".join("    %s\n" % s for s in self.lines) + "    return 0;\n}\n"
        with tempfile.TemporaryDirectory(prefix="header_abi") as d:
            src, exe = os.path.join(d, "abi.c"), os.path.join(d, "abi")
            with open(src, "w", encoding="utf-8") as f:
                f.write(program)
            try:
                _cc(self.cc, "-o", exe, src)
            except HeaderError as e:
                raise HeaderError("the generated program does not compile (a declaration "
                                  "misread?): %s\n--- the program:\n%s" % (e, program))
            return subprocess.run([exe], check=True, stdout=subprocess.PIPE, text=True).stdout

    def fill(self, out, facts):
        lengths, enum_size = {}, {}
        for line in facts.splitlines():
            f = line.split("\t")
            if f[0] == "basic":
                kind, size = f[2], int(f[3])
                for t in self.basic[f[1]]:
                    t.update(kind="int" if kind == "uint" else kind, size=size)
                    if kind in ("int", "uint"):
                        t["signed"] = kind == "int"
            elif f[0] == "struct":
                self.structs[f[1]].update(size=int(f[2]), align=int(f[3]))
            elif f[0] == "field":
                fld = next(x for x in self.structs[f[1]]["fields"] if x["name"] == f[2])
                fld.update(offset=int(f[3]), size=int(f[4]))
            elif f[0] == "length":
                lengths[(f[1], f[2], int(f[3]))] = int(f[4])
            elif f[0] == "enum":
                out["enums"][f[1]]["size"] = enum_size[f[1]] = int(f[2])
            elif f[0] == "value":
                out["enums"][f[1]]["values"][f[2]] = out["constants"][f[2]] = int(f[3])
            elif f[0] == "const":
                v = f[3]
                out["constants"][f[1]] = (int(v) if f[2] == "int" else float(v) if f[2] == "float"
                                          else bytes.fromhex(v).decode("utf-8", "replace"))

        def finish(t):          # sizes of structs and enums, array lengths and spellings
            if t["kind"] == "struct":
                t["size"] = self.structs[t["name"]]["size"]
            elif t["kind"] == "enum":
                t["size"] = enum_size[t["name"]]
            for sub in ("to", "of", "returns"):
                if sub in t:
                    finish(t[sub])
            for q in t.get("params", ()):
                finish(q["type"])

        for sname, s in self.structs.items():
            for fld in s["fields"]:
                finish(fld["type"])
                arrays, a = [], fld["type"]
                while a["kind"] == "array":
                    a["length"] = lengths[(sname, fld["name"], len(arrays))]
                    arrays.append(a)
                    a = a["of"]
                for i, b in enumerate(arrays):     # int32_t[2][3], int32_t[3]
                    b["c"] = b["c"] or a["c"] + "".join("[%d]" % c["length"] for c in arrays[i:])
        for fn in out["functions"].values():
            finish(fn["returns"])
            for q in fn["params"]:
                finish(q["type"])


_PROGRAM_HEAD = r"""/* Generated by tools/header_abi.py: prints what the compiler knows about the header. */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include %(header)s

#define KIND(x) _Generic((x), _Bool: "bool", char: "char", float: "float", double: "float", \
    long double: "float", signed char: "int", short: "int", int: "int", long: "int", \
    long long: "int", unsigned char: "uint", unsigned short: "uint", unsigned int: "uint", \
    unsigned long: "uint", unsigned long long: "uint", default: "other")

static void put_int(const char *name, long long v) { printf("const\t%%s\tint\t%%lld\n", name, v); }
static void put_uint(const char *name, unsigned long long v) {
    printf("const\t%%s\tint\t%%llu\n", name, v);
}
static void put_float(const char *name, long double v) {
    printf("const\t%%s\tfloat\t%%.21Lg\n", name, v);
}
static void put_str(const char *name, const char *v) {
    printf("const\t%%s\tstr\t", name);
    for (; *v; v++) printf("%%02x", (unsigned char)*v);
    printf("\n");
}
#define PUT(name, x) _Generic((x), char *: put_str, const char *: put_str, float: put_float, \
    double: put_float, long double: put_float, unsigned int: put_uint, unsigned long: put_uint, \
    unsigned long long: put_uint, default: put_int)(name, (x))

int main(void) {
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("header", nargs="?",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                         "include", "ngpt.h"))
    ap.add_argument("--cc", help="the C compiler (default: $CC, else cc)")
    a = ap.parse_args()
    try:
        json.dump(describe(a.header, a.cc), sys.stdout, indent=1)
    except HeaderError as e:
        sys.exit("header_abi: %s" % e)
    print()


if __name__ == "__main__":
    main()
