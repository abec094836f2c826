#!/usr/bin/env python3
"""mca.py — the kernels' inner loops on paper: each ISA's kernels (arch/<isa>/)
compiled as the build compiles them, every innermost loop that does vector
work found in the assembly, and LLVM's static throughput analyser
(llvm-mca-19) run on it for the cores it has models of. Prints, per build
and core, the cycles per iteration of each loop, the fraction of that
core's FMA peak it reaches and the bytes it moves per cycle (docs/BENCH.md,
"On paper: make mca").

    python3 tools/mca.py [--isa neon,avx2] [--files gemm,attention] [--markdown]
                         [--check 'gemm-tile:cortex-a72>=95' ...]

How a loop is found (no marker in the sources: the code measured is the code
that ships): each function of the assembly is cut into basic blocks; a branch
to a block at or before it closes a loop, whose blocks are those that reach
the branch without passing the loop's first block; a loop containing no
other loop is innermost. Its instructions for llvm-mca are one path through
it, from its first block to a closing branch: the path with no call to a
reference kernel (the ARMv7 flush fallback) and the most instructions (the
full-work path of a tile with ragged edges). Each loop is a region of one
llvm-mca input per build and core; the cycles per iteration are the
difference of two runs (200 and 100 iterations) over 100: the steady state,
without the ramp.

Limits: llvm-mca assumes every load hits L1 and every branch is predicted;
a call (SLEEF's vector exp and erf) is a branch to it, not its body; a loop
with several paths is shown on one. The fraction of peak is against the
model's own peak (measured here: independent FMAs of the widest vector the
build uses), so it says how much of what the model can do the loop does,
not what the hardware can do where the model differs from it (apple-m1:
docs/BENCH.md).
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCA = os.environ.get("LLVM_MCA", "llvm-mca-19")

# One build of an ISA's kernels: how the Makefile compiles it (make_args:
# the compiler and CPU flags come from `make mca-flags` with them), the
# assembly dialect, llvm-mca's triple and the cores to model. `cc` replaces
# the Makefile's compiler where it cannot run here (Apple's target needs the
# macOS SDK: the same clang code generator for AArch64 ELF instead).
Build = collections.namedtuple("Build", "isa name make_args cc_override kind triple cores")
BUILDS = [
    Build("neon", "AArch64 (gcc, -march=armv8-a)", ["TOOLCHAIN=toolchains/aarch64-linux-gnu.mk"],
          None, "a64", "aarch64-linux-gnu", ["cortex-a72", "neoverse-n1"]),
    Build("neon", "AArch64 (clang, -mcpu=apple-m1)", ["TOOLCHAIN=toolchains/apple-silicon.mk"],
          "clang --target=aarch64-linux-gnu", "a64", "aarch64-linux-gnu", ["apple-m1"]),
    Build("neon", "ARMv7 (gcc, -mfpu=neon-vfpv4)", ["TOOLCHAIN=toolchains/armv7-linux-gnueabihf.mk"],
          None, "a32", "armv7-linux-gnueabihf", ["cortex-a57"]),
    Build("avx2", "x86-64 AVX2 (gcc)", ["ARCH=avx2"], None, "x86", "x86_64-linux-gnu",
          ["haswell", "skylake", "znver3"]),
    Build("avx512", "x86-64 AVX-512 with VNNI (gcc)", ["ARCH=avx512", "VNNI=1"], None, "x86",
          "x86_64-linux-gnu", ["skylake-avx512", "znver4"]),
]
# Each core's FMA peak in fp32 lanes per cycle, from its vendor's
# optimisation guide: the hardware's, which is the yardstick (a model can
# allow more or less: its own is measured and printed next to it).
HW_PEAK = {
    "cortex-a72": 4,        # one 128-bit fma a cycle (two 64-bit pipes)
    "neoverse-n1": 8,       # two 128-bit pipes (Cortex-A76)
    "apple-m1": 16,         # four 128-bit pipes (Firestorm)
    "cortex-a57": 4,        # as the A72 (the 32-bit build's stand-in for it)
    "haswell": 16, "skylake": 16, "znver3": 16,             # two 256-bit pipes
    "skylake-avx512": 32,   # two 512-bit pipes (Xeon Gold and Platinum)
    "znver4": 16,           # 512-bit fmas on two 256-bit pipes
}


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


# ---------------------------------------------------------------- assembly

Insn = collections.namedtuple("Insn", "text mnem ops loc")
COND = re.compile(r"b\.?(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)")


class Dialect:
    """What differs between the three assembly dialects."""

    def __init__(self, kind):
        self.kind = kind
        self.comment = {"a64": "//", "a32": "@", "x86": "#"}[kind]
        self.marker = "@" if kind == "a32" else "#"     # what llvm-mca reads region markers after

    def strip(self, line):
        if self.kind == "x86":
            i = line.find("#")
        else:
            i = line.find(self.comment)
        return line if i < 0 else line[:i]

    # -> "call", "ret", "jump" (unconditional), "cond", or None
    def branch(self, mnem, ops):
        m = mnem.lower()
        if self.kind == "x86":
            if m.startswith("call"):
                return "call"
            if m.startswith("ret"):
                return "ret"
            if m.startswith("jmp"):
                return "jump"
            if m.startswith("j"):
                return "cond"
            return None
        if self.kind == "a64":
            if m in ("bl", "blr"):
                return "call"
            if m == "ret":
                return "ret"
            if m in ("b", "br"):
                return "jump"
            if COND.fullmatch(m) or m in ("cbz", "cbnz", "tbz", "tbnz"):
                return "cond"
            return None
        m = re.sub(r"\.[nw]$", "", m)
        if m in ("bl", "blx"):
            return "call"
        if m == "bx" or (m.startswith("pop") and "pc" in ops) or m in ("tbb", "tbh"):
            return "ret"
        if m == "b":
            return "jump"
        if COND.fullmatch(m) or m in ("cbz", "cbnz"):
            return "cond"
        return None

    def target(self, ops):
        """The label or function a branch goes to (its last operand)."""
        t = ops.split(",")[-1].strip().lstrip("*")
        return re.sub(r"(\(PLT\)|@PLT|@plt)$", "", t)

    # ---- what an instruction does to the vector unit and memory
    def fma_lanes(self, ins):
        m, ops = ins.mnem.lower(), ins.ops
        if self.kind == "a64":
            if m in ("fmla", "fmls"):
                return 4 if ".4s" in ops.split(",")[0] else 2 if ".2s" in ops.split(",")[0] else 1
            if m in ("fmadd", "fmsub", "fnmadd", "fnmsub"):
                return 1
            return 0
        if self.kind == "a32":
            if re.fullmatch(r"vf[mn]+[as]\.f32", m):
                d = ops.split(",")[0].strip()
                return 4 if d.startswith("q") else 2 if d.startswith("d") else 1
            return 0
        if re.match(r"vf(n)?m(add|sub)(sub|add)?(132|213|231)(ps|ss)", m):
            if m.endswith("ss"):
                return 1
            return 16 if "%zmm" in ops else 8 if "%ymm" in ops else 4
        return 0

    def is_vector(self, ins):
        m, ops = ins.mnem.lower(), ins.ops
        if self.kind == "a64":
            return bool(re.search(r"\bv\d+\.\d*[bhsd]\b|\bq\d+\b", ops))
        if self.kind == "a32":
            return m.startswith("v") and bool(re.search(r"\b[qd]\d+\b|\{d\d+", ops))
        return bool(re.search(r"%[yz]mm", ops)) or (m.endswith("ps") and "%xmm" in ops)

    def mem(self, ins):
        """(bytes loaded, bytes stored, stack access?) of one instruction."""
        m, ops = ins.mnem.lower(), ins.ops
        if self.kind == "a64":
            addr = re.search(r"\[(x\d+|sp)\b", ops)
            if not addr or m.startswith("prfm"):
                return 0, 0, False
            regs = ops[: addr.start()]
            stack = bool(re.search(r"\[(sp|x29)\b", ops)) and \
                ("v" if re.search(r"\b[qdshbv]\d+", regs) else "g")
            if m.startswith("ld1r") or re.match(r"ld[1-4]r?$", m) and "}[" in regs:
                size = {"b": 1, "h": 2, "s": 4, "d": 8}[re.search(r"\.\d*([bhsd])", regs).group(1)]
                n = regs.count("v") if m.startswith("ld1r") else 1
                nbytes = size * n
            elif re.match(r"(ld|st)[1-4]$", m):
                lst = re.findall(r"v\d+\.(\d+)([bhsd])", regs)
                nbytes = sum(int(c) * {"b": 1, "h": 2, "s": 4, "d": 8}[t] for c, t in lst)
                if "-" in regs:   # {v0.4s-v3.4s}
                    a, b = map(int, re.findall(r"v(\d+)\.", regs)[:2])
                    nbytes = (b - a + 1) * nbytes // 2
            else:
                r = [x.strip() for x in regs.split(",") if x.strip()]
                width = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "x": 8, "w": 4}
                nbytes = sum(width.get(x[0], 8) for x in r)
                if m.endswith("b") and m not in ("ldrsb",):
                    nbytes = len(r)
                elif m.endswith("h") and not m.startswith("ld1"):
                    nbytes = 2 * len(r)
            store = m.startswith("st")
            return (0, nbytes, stack) if store else (nbytes, 0, stack)
        if self.kind == "a32":
            if not re.search(r"\[(r\d+|sp|ip|lr|fp|sl|sb)\b", ops) and \
                    not re.match(r"v?(ldm|stm|push|pop|vpush|vpop)", m):
                return 0, 0, False
            if m.startswith("pld"):
                return 0, 0, False
            stack = (bool(re.search(r"\[sp\b", ops)) or m.startswith(("push", "pop", "vpush", "vpop"))) \
                and ("v" if m.startswith("v") else "g")
            if m.startswith(("vld", "vst")) and "{" in ops:
                lst = ops[ops.index("{") + 1: ops.index("}")]
                esize = int(re.search(r"\.(\d+)", m).group(1)) // 8 if re.search(r"\.(\d+)", m) else 4
                if "[" in lst:      # lanes or all lanes: one element per register group
                    n = 1 if "[]" in lst or re.search(r"\[\d\]", lst) else 1
                    nbytes = esize * n * (int(m[3]) if m[3].isdigit() else 1)
                else:
                    nbytes = 0
                    for part in lst.split(","):
                        part = part.strip()
                        if "-" in part:
                            a, b = part.split("-")
                            nbytes += (int(b.strip()[1:]) - int(a.strip()[1:]) + 1) * 8
                        elif part:
                            nbytes += 16 if part[0] == "q" else 8 if part[0] == "d" else 4
            elif m.startswith(("vldr", "vstr")):
                nbytes = 8 if ops.strip().startswith("d") else 4
            elif m.startswith(("vldm", "vstm", "vpush", "vpop", "ldm", "stm", "push", "pop")):
                lst = ops[ops.index("{") + 1: ops.index("}")]
                nbytes = 0
                for part in lst.split(","):
                    part = part.strip()
                    if "-" in part:
                        a, b = part.split("-")
                        nbytes += (int(b.strip()[1:]) - int(a.strip()[1:]) + 1) * (8 if a.strip()[0] == "d" else 4)
                    elif part:
                        nbytes += 8 if part[0] == "d" else 4
            elif m.startswith(("ldrd", "strd")):
                nbytes = 8
            elif m.startswith(("ldrb", "strb", "ldrsb")):
                nbytes = 1
            elif m.startswith(("ldrh", "strh", "ldrsh")):
                nbytes = 2
            elif m.startswith(("ldr", "str")):
                nbytes = 4
            else:
                return 0, 0, False
            store = m.startswith(("vst", "st", "push", "vpush"))
            return (0, nbytes, stack) if store else (nbytes, 0, stack)
        # x86 (AT&T): a memory operand has parentheses or is a bare symbol
        if "(" not in ops or m.startswith(("lea", "prefetch", "nop")):
            return 0, 0, False
        stack = ("(%rsp" in ops or "(%rbp" in ops) and ("v" if re.search(r"%[xyz]mm", ops) else "g")
        if m.startswith(("vbroadcastss", "vmovss", "movss", "vmaskmov")) and "ss" in m:
            nbytes = 4
        elif m.endswith("ss"):
            nbytes = 4
        elif "%zmm" in ops:
            nbytes = 64
        elif "%ymm" in ops:
            nbytes = 32
        elif "%xmm" in ops:
            nbytes = 16
        else:
            nbytes = 8 if m.endswith("q") else 4
        if m.startswith("vbroadcastss"):
            nbytes = 4
        last = ops.rsplit(",", 1)[-1]
        store = "(" in last and (m.startswith(("vmov", "mov", "vmaskmov")) or m.startswith("vextract"))
        return (0, nbytes, stack) if store else (nbytes, 0, stack)


def parse_asm(text, d):
    """{function: [("label", name) | Insn]} and {file number: path}."""
    funcs, files, cur, body, loc = {}, {}, None, None, None
    ftypes = set()
    for raw in text.splitlines():
        line = raw.rstrip()
        s = line.strip()
        if s.startswith(".file"):
            m = re.match(r'\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?', s)
            if m:
                files[int(m.group(1))] = os.path.normpath(os.path.join(m.group(2), m.group(3))) if m.group(3) else m.group(2)
            continue
        if s.startswith(".loc"):
            m = re.match(r"\.loc\s+(\d+)\s+(\d+)", s)
            if m:
                loc = (int(m.group(1)), int(m.group(2)))
            continue
        if s.startswith(".type"):
            m = re.match(r"\.type\s+([\w.$]+),\s*[%@]function", s)
            if m:
                ftypes.add(m.group(1))
            continue
        if s.startswith(".size") and cur:
            m = re.match(r"\.size\s+([\w.$]+),", s)
            if m and m.group(1) == cur:
                funcs[cur], cur = body, None
            continue
        m = re.match(r"^([\w.$]+):", line)
        if m:
            name = m.group(1)
            if name in ftypes and cur is None:
                cur, body, loc = name, [], None
            elif cur:
                body.append(("label", name))
            rest = line[m.end():].strip()
            if not rest:
                continue
            s = rest
        if cur is None or not s or s.startswith("."):
            continue
        s = d.strip(s).strip()
        if not s or s.endswith(":"):
            continue
        parts = s.split(None, 1)
        body.append(Insn(s, parts[0], parts[1] if len(parts) > 1 else "", loc))
    return funcs, files


# ---------------------------------------------------------------- loops

Loop = collections.namedtuple("Loop", "insns loc paths calls vspills gspills fma lanes load store")


# A source line that does vector work by hand: an intrinsic, SLEEF, an ISA
# helper or a macro of them (clang's line info stays on the caller's line,
# gcc's goes into the intrinsics header).
SIMD_LINE = re.compile(r"\b(v[a-z0-9]+_[a-z0-9_]+|_mm\d*_\w+|Sleef_\w+|neon_\w+|avx\w*_\w+|[A-Z][A-Z0-9_]{2,})\s*\(")
SIMD_HEADER = re.compile(r"(arm_neon|\w*intrin)\.h$")


class Sources:
    """Whether an instruction's source line (.loc) is hand-written SIMD."""

    def __init__(self, filemap):
        self.filemap, self.lines = filemap, {}

    def own(self, loc):
        """Whether the line is in the project (not a system or compiler header)."""
        path = self.filemap.get(loc[0], "")
        return bool(path) and not os.path.isabs(path) or path.startswith(ROOT)

    def simd(self, loc):
        if not loc or loc[0] not in self.filemap:
            return False
        path = self.filemap[loc[0]]
        if SIMD_HEADER.search(os.path.basename(path)):
            return True
        if path not in self.lines:
            full = path if os.path.isabs(path) else os.path.join(ROOT, path)
            try:
                with open(full, errors="replace") as f:
                    self.lines[path] = f.read().splitlines()
            except OSError:
                self.lines[path] = []
        text = self.lines[path]
        return 0 < loc[1] <= len(text) and bool(SIMD_LINE.search(text[loc[1] - 1]))


def control_flow(body, d):
    """A function's basic blocks ([{"labels", "insns"}]), each one's
    successors and the targets it calls."""
    blocks, cur, labels = [], None, {}
    for item in body:
        if not isinstance(item, Insn):
            if cur is not None and (cur["insns"] or cur["labels"]):
                if cur["insns"]:
                    blocks.append(cur)
                    cur = None
            if cur is None:
                cur = {"labels": [], "insns": []}
            cur["labels"].append(item[1])
            continue
        if cur is None:
            cur = {"labels": [], "insns": []}
        cur["insns"].append(item)
        if d.branch(item.mnem, item.ops):
            blocks.append(cur)
            cur = None
    if cur is not None and cur["insns"]:
        blocks.append(cur)
    for i, b in enumerate(blocks):
        for lab in b["labels"]:
            labels[lab] = i
    succ = [[] for _ in blocks]
    calls = [[] for _ in blocks]
    for i, b in enumerate(blocks):
        last = b["insns"][-1]
        kind = d.branch(last.mnem, last.ops)
        for ins in b["insns"]:
            if d.branch(ins.mnem, ins.ops) == "call":
                calls[i].append(d.target(ins.ops))
        if kind in ("jump", "cond"):
            t = d.target(last.ops)
            if t in labels:
                succ[i].append(labels[t])
        if kind not in ("jump", "ret") and i + 1 < len(blocks):
            succ[i].append(i + 1)
    return blocks, succ, calls


def natural_loops(blocks, succ):
    """{header: {"blocks", "latches"}}: the natural loops of the branches
    back to a block that dominates them, merged by header."""
    pred = [[] for _ in blocks]
    for i, ss in enumerate(succ):
        for j in ss:
            pred[j].append(i)
    # dominators (iterative, over the blocks reachable from the entry)
    n = len(blocks)
    reach, stack = set(), [0] if n else []
    while stack:
        x = stack.pop()
        if x not in reach:
            reach.add(x)
            stack.extend(succ[x])
    dom = {x: set(reach) for x in reach}
    if n:
        dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for x in sorted(reach):
            if x == 0:
                continue
            ps = [dom[p] for p in pred[x] if p in reach]
            new = set.intersection(*ps) | {x} if ps else {x}
            if new != dom[x]:
                dom[x], changed = new, True
    loops = {}
    for u in sorted(reach):
        for h in succ[u]:
            if h in dom[u]:
                lp = loops.setdefault(h, {"blocks": {h}, "latches": set()})
                lp["latches"].add(u)
                stack = [u]
                while stack:
                    x = stack.pop()
                    if x not in lp["blocks"]:
                        lp["blocks"].add(x)
                        stack.extend(pred[x])
    return loops


def find_loops(body, d, src):
    """The innermost loops of one function written with vector intrinsics
    (not the compiler's vectorisation of scalar code), each as its chosen
    path."""
    blocks, succ, calls = control_flow(body, d)
    loops = natural_loops(blocks, succ)
    def vector(blks):
        return any(d.is_vector(i) for b in blks for i in blocks[b]["insns"])

    out = []
    for h, lp in loops.items():
        nested = [loops[h2]["blocks"] for h2 in loops if h2 != h and h2 in lp["blocks"]]
        if any(vector(m) for m in nested):
            continue                        # an outer loop
        # a scalar loop inside (a flush fallback, a tail) is not on the path
        avoid = set().union(*nested) if nested else set()
        # paths from h to a latch inside the loop (bounded enumeration)
        paths, stack = [], [(h, [h])]
        while stack and len(paths) < 256:
            x, path = stack.pop()
            if x in lp["latches"]:
                paths.append(path)
            for y in succ[x]:
                if y in lp["blocks"] and y != h and y not in path and y not in avoid:
                    stack.append((y, path + [y]))
        if not paths:
            continue

        def cold(path):     # a call other than to SLEEF's vector functions: a fallback
            return any(not c.startswith("Sleef_") for b in path for c in calls[b])

        best = max(paths, key=lambda p: (not cold(p), sum(len(blocks[b]["insns"]) for b in p)))
        insns = [ins for b in best for ins in blocks[b]["insns"]]
        # a latch that falls through to the header needs no branch; one
        # that does not is a conditional branch back, kept as it is
        if not any(d.is_vector(i) for i in insns) or not any(src.simd(i.loc) for i in insns):
            continue
        load = store = vspills = gspills = 0
        fma = lanes = 0
        for ins in insns:
            ld, st, stack_acc = d.mem(ins)
            load += ld
            store += st
            vspills += stack_acc == "v"
            gspills += stack_acc == "g"
            fl = d.fma_lanes(ins)
            if fl:
                fma += 1
                lanes += fl
        # the loop's line: its closing branch's, or the last one's in the
        # project's sources (gcc gives inlined intrinsics the header's)
        locs = [i.loc for i in insns if i.loc and src.own(i.loc)] or [i.loc for i in insns if i.loc]
        loc = locs[-1] if locs else None
        out.append(Loop(insns, loc, len(paths), sorted({c for b in best for c in calls[b]}),
                        vspills, gspills, fma, lanes, load, store))
    return out


# ---------------------------------------------------------------- llvm-mca

def mca_regions(build, d, core, regions, iterations):
    """Total cycles of each region under llvm-mca; regions: [(name, [insn text])]."""
    c = d.marker
    lines = []
    if d.kind == "a32":
        lines += [".syntax unified", ".fpu neon-vfpv4"]
    for name, (mode, insns) in regions:
        if d.kind == "a32":
            lines.append(".thumb" if mode == "thumb" else ".arm")
        lines.append(f"{c} LLVM-MCA-BEGIN {name}")
        lines += ["\t" + t for t in insns]
        lines.append(f"{c} LLVM-MCA-END")
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    if os.environ.get("MCA_DEBUG"):
        shutil.copy(path, f"/tmp/mca-{core}.s")
    try:
        triple = build.triple
        cmd = [MCA, f"-mtriple={triple}", f"-mcpu={core}", f"-iterations={iterations}", "--json",
               "--instruction-info=false"]
        if d.kind == "a32":
            cmd.append("-mattr=+neon,+vfp4")
        p = run(cmd + [path])
        if p.returncode != 0:
            raise RuntimeError(f"llvm-mca -mcpu={core}: {p.stderr.strip()[:2000]}")
        js = json.loads(p.stdout)
    finally:
        os.unlink(path)
    res = {}
    names = js["TargetInfo"]["Resources"]
    for r in js["CodeRegions"]:
        sv = r["SummaryView"]
        press = collections.defaultdict(float)
        for e in r["ResourcePressureView"]["ResourcePressureInfo"]:
            press[e["ResourceIndex"]] += e["ResourceUsage"]
        top = max(press.items(), key=lambda kv: kv[1]) if press else (None, 0)
        res[r["Name"]] = (sv["TotalCycles"], (names[top[0]].split(".")[0] if top[0] is not None else "-", top[1]))
    return res


def fma_peak(build, d, core):
    """FMA lanes per cycle the model allows: independent FMAs of the widest
    vector, best of the forms the ISA has."""
    if d.kind == "a64":
        forms = {"vec": [f"fmla v{i}.4s, v30.4s, v31.4s" for i in range(28)],
                 "lane": [f"fmla v{i}.4s, v30.4s, v31.s[1]" for i in range(28)]}
        lanes = 4
    elif d.kind == "a32":
        forms = {"vec": [f"vfma.f32 q{i}, q14, q15" for i in range(14)]}
        lanes = 4
    elif build.isa == "avx512":
        forms = {"vec": [f"vfmadd231ps %zmm30, %zmm31, %zmm{i}" for i in range(28)]}
        lanes = 16
    else:
        forms = {"vec": [f"vfmadd231ps %ymm14, %ymm15, %ymm{i}" for i in range(14)]}
        lanes = 8
    best = 0.0
    for name, insns in forms.items():
        r1 = mca_regions(build, d, core, [(name, ("arm", insns))], 100)
        r2 = mca_regions(build, d, core, [(name, ("arm", insns))], 200)
        cyc = (r2[name][0] - r1[name][0]) / 100.0
        best = max(best, len(insns) * lanes / cyc)
    return best


# ---------------------------------------------------------------- builds

MAKE_VARS = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CC", "AR", "ARCH", "TOOLCHAIN", "BUILD", "OPT",
             "CFLAGS", "CPPFLAGS", "CPUFLAGS", "SANITIZE", "LDFLAGS")


def make_flags(build):
    """The compiler and flags `make` uses for this build's kernels."""
    # not the calling make's variables (make CC=clang test-native puts CC in
    # the environment too): the builds analysed are the default ones
    env = {k: v for k, v in os.environ.items() if k not in MAKE_VARS}
    p = run(["make", "-s", "--no-print-directory", *build.make_args, "mca-flags"], cwd=ROOT, env=env)
    if p.returncode != 0:
        return None, p.stderr.strip()
    lines = p.stdout.strip().splitlines()
    cc, flags = lines[0].strip(), lines[1].strip()
    if build.cc_override:
        cc = build.cc_override
    return cc, flags


def compile_isa(build, cc, flags, files, outdir):
    srcs = sorted(f for f in os.listdir(os.path.join(ROOT, "arch", build.isa))
                  if f.endswith(".c") and f != "table.c")
    if files:
        srcs = [s for s in srcs if s[:-2] in files]
    asms = []
    for s in srcs:
        out = os.path.join(outdir, build.isa + "_" + s[:-2] + ".s")
        cmd = cc.split() + flags.split() + ["-g", "-S", os.path.join("arch", build.isa, s), "-o", out]
        p = run(cmd, cwd=ROOT)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}\n{p.stderr.strip()[:2000]}")
        asms.append((s, out))
    return asms


def short(func, isa):
    return re.sub(r"^ngpt_f32_|__" + isa + r"$", "", func)


def analyse(build, files, outdir):
    """[(row, {core: (cycles, bound)}), ...] and {core: peak} for one build."""
    cc, flags = make_flags(build)
    if cc is None:
        raise RuntimeError(f"make {' '.join(build.make_args)} mca-flags: {flags}")
    tool = cc.split()[0]
    if not shutil.which(tool):
        raise FileNotFoundError(f"{tool} not found")
    d = Dialect(build.kind)
    rows = []
    for src, asm in compile_isa(build, cc, flags, files, outdir):
        with open(asm) as f:
            text = f.read()
        funcs, filemap = parse_asm(text, d)
        mode = "thumb" if ".thumb" in text else "arm"
        for fn, body in funcs.items():
            for lp in find_loops(body, d, Sources(filemap)):
                floc = ""
                if lp.loc:
                    fpath = filemap.get(lp.loc[0], "?")
                    floc = f"{os.path.basename(fpath)}:{lp.loc[1]}"
                rows.append({"op": src[:-2], "func": short(fn, build.isa), "loc": floc, "loop": lp,
                             "mode": mode})
    rows.sort(key=lambda r: (r["op"], r["func"], r["loc"]))
    # region names must be unique
    for i, r in enumerate(rows):
        r["name"] = f"r{i}"
    result = {}
    peaks = {}
    for core in build.cores:
        peaks[core] = fma_peak(build, d, core)
        regs = [(r["name"], (r["mode"], [i.text for i in r["loop"].insns])) for r in rows]
        a = mca_regions(build, d, core, regs, 100)
        b = mca_regions(build, d, core, regs, 200)
        for r in rows:
            cyc = (b[r["name"]][0] - a[r["name"]][0]) / 100.0
            result.setdefault(r["name"], {})[core] = (cyc, b[r["name"]][1])
    return cc, flags, rows, result, peaks


def cell_pct(lp, cyc, peak):
    """% of the hardware's FMA peak; the model's cycles are capped below by
    what the hardware's FMA pipes allow (second value: whether they were)."""
    if not lp.lanes or cyc <= 0:
        return None, False
    floor = lp.lanes / peak
    return 100.0 * lp.lanes / max(cyc, floor) / peak, cyc < floor


def summary(rows):
    """Each function's main loops: those with at least a quarter of the
    function's most FMA lanes (or, without fmas, bytes) a trip (a loop
    unrolled four times carries four times the work of one that is not),
    the one with the most lanes of each source line (the variants of an
    inlined block)."""
    best = {}
    for r in rows:
        lp = r["loop"]
        key = (lp.lanes, lp.load + lp.store)
        best[r["func"]] = max(best.get(r["func"], key), key)
    keep, seen = [], {}
    for r in rows:
        lp, top = r["loop"], best[r["func"]]
        if (top[0] and lp.lanes * 4 < top[0]) or (not top[0] and (lp.load + lp.store) * 4 < top[1]):
            continue
        k = (r["func"], r["loc"])
        if k in seen and seen[k]["loop"].lanes >= lp.lanes:
            continue
        if k in seen:
            keep.remove(seen[k])
        seen[k] = r
        keep.append(r)
    return keep


def render(build, cc, flags, rows, result, peaks, markdown):
    out = [f"### {build.name}: {cc} {flags_cpu(flags)}", ""]
    head = ["kernel", "loop", "FMA lanes", "bytes", "stack"]
    for core in build.cores:
        head += [f"{core} cyc", "rate", "bound"]
    table = [head]
    capped = False
    for r in rows:
        lp = r["loop"]
        loc = r["loc"] + (" +call" if lp.calls else "")
        line = [r["func"], loc, str(lp.lanes), str(lp.load + lp.store),
                f"{lp.vspills}+{lp.gspills}" if lp.gspills else str(lp.vspills)]
        for core in build.cores:
            cyc, (res, pr) = result[r["name"]][core]
            pct, cap = cell_pct(lp, cyc, HW_PEAK[core])
            capped |= cap
            rate = (f"{pct:.0f}%" + ("*" if cap else "")) if pct is not None else \
                f"{(lp.load + lp.store) / cyc:.1f} B/c"
            line += [f"{cyc:.2f}", rate, re.sub(r"^(A57|N1|Cy|HW|SKL|SKX|Zn3|Zn4)(Unit)?", "", res)
                     if pr >= 0.9 * cyc else "latency"]
        table.append(line)
    out.extend(fmt_table(table, markdown))
    out.append("")
    out.append("FMA peak, lanes per cycle (hardware; the model's own): " + ", ".join(
        f"{c} {HW_PEAK[c]:g} ({peaks[c]:g})" for c in build.cores) + ".")
    if capped:
        out.append("* the model's cycles are below what the hardware's FMA pipes allow; the rate "
                   "is taken at the FMA bound.")
    calls = sorted({c for r in rows for c in r["loop"].calls})
    if calls:
        out.append("+call: the loop calls " + ", ".join(calls) + " (the callee is not in the "
                   "cycles; what lives across the call is on the stack).")
    out.append("")
    return "\n".join(out)


def flags_cpu(flags):
    return " ".join(f for f in flags.split() if f.startswith(("-m", "-O")))


def fmt_table(table, markdown):
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = []
    for k, r in enumerate(table):
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("| " + " | ".join(cells) + " |" if markdown else "  ".join(cells))
        if k == 0 and markdown:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


# ---------------------------------------------------------------- checks

def tile_rows(rows):
    """The GEMM register tile's k loops: the loops of gemm.c's tile functions
    with at least 12 fmas a trip (a 6x8 step or more)."""
    return [r for r in rows if r["op"] == "gemm" and "tile" in r["func"] and r["loop"].fma >= 12]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isa", help="comma-separated ISAs (arch/<isa>/), default all")
    ap.add_argument("--files", help="comma-separated op files (gemm,attention,...), default all")
    ap.add_argument("--markdown", action="store_true", help="markdown tables")
    ap.add_argument("--check", action="append", default=[],
                    help="gemm-tile:CORE>=PCT: fail unless every k loop of the GEMM tile reaches "
                         "PCT %% of CORE's FMA peak with no spill")
    ap.add_argument("--all", action="store_true",
                    help="every inner loop (default: each function's main ones)")
    ap.add_argument("--keep", help="keep the assembly in this directory")
    args = ap.parse_args()
    if not shutil.which(MCA):
        print(f"mca: {MCA} not found (Debian: apt-get install llvm-19)", file=sys.stderr)
        return 2
    isas = sorted(d for d in os.listdir(os.path.join(ROOT, "arch"))
                  if os.path.exists(os.path.join(ROOT, "arch", d, "table.c")))
    if args.isa:
        isas = [i for i in isas if i in args.isa.split(",")]
    files = args.files.split(",") if args.files else None
    checks = []
    for c in args.check:
        m = re.fullmatch(r"gemm-tile:([\w-]+)>=(\d+(?:\.\d+)?)", c)
        if not m:
            ap.error(f"--check {c}: expected gemm-tile:CORE>=PCT")
        checks.append((m.group(1), float(m.group(2))))
    known = {b.isa for b in BUILDS}
    for isa in isas:
        if isa not in known:
            print(f"arch/{isa}: no llvm-mca build known (add one to BUILDS in tools/mca.py)\n")
    outdir = args.keep or tempfile.mkdtemp(prefix="ngpt-mca-")
    os.makedirs(outdir, exist_ok=True)
    failures, checked = [], set()
    for build in BUILDS:
        if build.isa not in isas:
            continue
        if checks and not any(c in build.cores for c, _ in checks):
            continue
        try:
            cc, flags, rows, result, peaks = analyse(build, files, outdir)
        except (RuntimeError, FileNotFoundError) as e:
            print(f"### {build.name}: skipped: {e}\n")
            continue
        if not checks:
            print(render(build, cc, flags, rows if args.all else summary(rows), result, peaks,
                         args.markdown))
        for core, floor in checks:
            if core not in build.cores:
                continue
            checked.add(core)
            tiles = tile_rows(rows)
            if not tiles:
                failures.append(f"{build.name} {core}: no GEMM tile loop found in gemm.c")
            for r in tiles:
                cyc = result[r["name"]][core][0]
                pct = cell_pct(r["loop"], cyc, HW_PEAK[core])[0]
                ok = pct >= floor and r["loop"].vspills == 0
                print(f"check {build.isa} {core} gemm tile {r['func']} {r['loc']}: {cyc:.2f} cycles, "
                      f"{pct:.1f}% of peak (floor {floor:g}%), {r['loop'].vspills} spills: "
                      f"{'ok' if ok else 'FAILED'}")
                if not ok:
                    failures.append(f"{build.isa} {core} {r['func']} {r['loc']}")
    if not args.keep:
        shutil.rmtree(outdir, ignore_errors=True)
    for core, _ in checks:
        if core not in checked:
            print(f"check {core}: skipped (its build could not be analysed here)")
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
