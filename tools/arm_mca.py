#!/usr/bin/env python3
"""arm_mca.py — ARM estimates, not measurements: the one-row 8-bit and 4-bit
decode loops (gemm_q8 and gemm_q4 for one input row: what a decode step
runs, arch/neon/q8.c and q4.c) on paper against each board's DRAM
bandwidth. For each board (Raspberry Pi 4, Pi 5, Apple M1) it compiles the
product's own kernel files as that board's build does, finds the per-group
loop of the one-row product in the assembly, runs llvm-mca-19 on it with
the board's core model, and turns the cycles of one iteration (one group
of 32 inputs of 16 outputs: one weight block of src/q8.h or src/q4.h) into
weight bytes per cycle and GB/s at the board's clock, set against the
board's DRAM read bandwidth (docs/BENCH.md, "ARM estimates").

    /usr/bin/python3 tools/arm_mca.py [--markdown] [--all] [--keep DIR]

Method (no marker in the sources, no copy of the loops here): each file is
compiled to assembly (`-g -S`) with the flags `make TOOLCHAIN=<board's
toolchain> mca-flags` prints, by clang-19 --target=aarch64-linux-gnu and,
for the Pi builds, by the toolchain's own gcc too. The compilers inline the
one-row block (panel_1) and the two-row one (panel_2) into
ngpt_f32_gemm_q8__neon (both keep gemm_q4's panel_1, which two walks
share, as a function, gcc as panel_1.constprop.0: it is read there), so a
loop is told by what it does.
Each function is cut into basic blocks (tools/mca.py's parser); a loop is
the natural loop of a branch back to a block that dominates it; its trip
is the longest path from its header to a branch back with no call. A loop
with one loop nested in it is flattened: the nested loop's trip repeated as
many times as one row's products of a group need (the SMULL path's loop
over quads, pairs of them in gemm_q8: 4 trips of 16 products; gcc's loop
over the two halves of gemm_q8's SDOT group: 2 trips of 16), its closing
branch each time. A trip is the one-row group
loop when the bytes it loads (the stack aside) are g weight blocks and
their g x 36 bytes of activations (32 int8 and a scale) exactly, and its
integer products are one row's for g groups (SDOT: 32 a group in either
layout; SMULL/SMLAL and their "2" forms: 64). The 4-bit blocks of 2 to 8
rows (rows_block_R) read unpacked nibbles from the stack and fail the
first test, the two-row loop the second. The cycles per trip are the
difference of a 200- and a 100-iteration llvm-mca run, over 100 (the
steady state, as tools/mca.py); Block RThroughput, llvm-mca's bound from
the resources alone, is printed next to it.

Limits: llvm-mca's models only. Every load hits L1 (no cache, TLB or DRAM
latency, no prefetch), branches are predicted, no frequency drop under
load, no other threads. LLVM 19's `cortex-a76` is its Cortex-A57 model
(the A72's), so the Pi 5 is shown with `neoverse-n1` too (the A76's
server sibling, LLVM's model of that core); `apple-m1` is LLVM's Cyclone
model (3 vector units where Firestorm has 4). Apple's clang is not clang-19
and gcc is the Pi toolchains' compiler: the loops differ by compiler.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mca  # noqa: E402  (tools/mca.py: the assembly parser and the loop finder)

ROOT = os.path.dirname(HERE)
MCA = os.environ.get("LLVM_MCA", "llvm-mca-19")
CLANG = os.environ.get("CLANG", "clang-19")

# A board: its build (the toolchain file whose flags `make mca-flags`
# prints), the llvm-mca models that stand for its core, its clock (GHz),
# its cores, and its DRAM read bandwidth (GB/s): the bus's theoretical
# peak and a measured figure where a public one exists (source, what it is).
Board = collections.namedtuple("Board", "name toolchain models ghz cores peak peak_src measured measured_src")
BOARDS = [
    Board("Raspberry Pi 4", "toolchains/aarch64-linux-gnu.mk", ["cortex-a72"], 1.8, 4,
          12.8, "LPDDR4-3200 (The Official Raspberry Pi Beginner's Guide, appendix F), one 32-bit "
          "channel as on the Pi 5: 3200 MT/s x 4 B",
          5.5, "STREAM's best kernel, one thread (bytes read and written), "
          "https://www.sci-pi.org.uk/bench/stream.html"),
    Board("Raspberry Pi 5", "toolchains/rpi5-aarch64.mk", ["cortex-a76", "neoverse-n1"], 2.4, 4,
          17.1, "LPDDR4X-4267 on a 32-bit bus, 17 GB/s peak: 4267 MT/s x 4 B, "
          "https://threedots.ovh/blog/2023/09/gathering-some-raspberry-pi-5-details/", None, None),
    Board("Apple M1", "toolchains/apple-silicon.mk", ["apple-m1"], 3.2, 4,
          68.3, "LPDDR4X-4266 on a 128-bit bus: 4266 MT/s x 16 B, https://en.wikipedia.org/wiki/Apple_M1; "
          "P-cores at 3.2 GHz: https://www.anandtech.com/show/16252/mac-mini-apple-m1-tested", None, None),
]
KERNELS = [("q8", "ngpt_f32_gemm_q8__neon", "NGPT_Q8_BLOCK", "src/q8.h"),
           ("q4", "ngpt_f32_gemm_q4__neon", "NGPT_Q4_BLOCK", "src/q4.h")]
ACT_BYTES = 36          # a group of one activation row: 32 int8 and a float scale (q8.h)
PRODUCTS = {"sdot": 32, "smull": 64}    # integer product instructions a group takes for one row


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def header_value(name, path, seen=None):
    """An integer #define of src/q8.h or q4.h, its expression evaluated."""
    defs = {}
    for p in (os.path.join(ROOT, "src/q8.h"), os.path.join(ROOT, path)):
        with open(p) as f:
            for line in f:
                m = re.match(r"#define\s+(NGPT_\w+)\s+(.+?)\s*(/\*.*)?$", line)
                if m:
                    defs[m.group(1)] = m.group(2)
    expr = defs[name]
    for _ in range(10):
        expr = re.sub(r"NGPT_\w+", lambda m: "(" + defs[m.group(0)] + ")", expr)
        if "NGPT_" not in expr:
            break
    if not re.fullmatch(r"[\d\s()+*/-]+", expr):
        raise ValueError(f"{name}: {expr}")
    return int(eval(expr.replace("/", "//")))   # integers only: checked above


def make_flags(toolchain):
    env = {k: v for k, v in os.environ.items() if k not in mca.MAKE_VARS}
    p = run(["make", "-s", "--no-print-directory", f"TOOLCHAIN={toolchain}", "mca-flags"], cwd=ROOT, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"make TOOLCHAIN={toolchain} mca-flags: {p.stderr.strip()}")
    cc, flags = p.stdout.strip().splitlines()[:2]
    return cc.strip(), flags.split()


def compilers(board):
    """[(label, argv prefix, flags)]: clang-19 for every board, the Pi
    toolchains' gcc as well (Apple's clang cannot run here)."""
    cc, flags = make_flags(board.toolchain)
    out = []
    if shutil.which(CLANG):
        out.append((f"{CLANG} {cpu_flags(flags)}", [CLANG, "--target=aarch64-linux-gnu"], flags))
    if "gcc" in cc and shutil.which(cc.split()[0]):
        out.append((f"{os.path.basename(cc.split()[0])} {cpu_flags(flags)}", cc.split(), flags))
    return out


def cpu_flags(flags):
    return " ".join(f for f in flags if f.startswith(("-m", "-O")))


def product_kind(ins):
    m = ins.mnem.lower()
    if m == "sdot":
        return "sdot"
    if m in ("smull", "smull2", "smlal", "smlal2") and re.search(r"\.(8|16)b\b", ins.ops):
        return "smull"
    return None


def longest_path(start, ends, allowed, succ, calls, weight):
    """The path start .. a block of ends inside allowed, with no call, of
    the most weight (bounded enumeration); None if there is none."""
    best, stack, n = None, [(start, [start])], 0
    while stack and n < 4096:
        x, path = stack.pop()
        n += 1
        if x in ends and (best is None or sum(map(weight, path)) > sum(map(weight, best))):
            best = path
        for y in succ(x):
            if y in allowed and y != start and y not in path and not calls.get(y, False):
                stack.append((y, path + [y]))
    return best


def loop_trip(h, lp, loops, blocks, succ, calls):
    """One trip of the loop of header h as a list of instructions, a loop
    nested in it flattened: its own trip repeated as many times as one
    row's products of a group need (a compiler that keeps QUADS/2 = 4 trips
    of the SMULL path's inner loop), with its closing branch each time.
    None when more than one loop is nested in it (the two-row product) or
    no repeat count fits."""
    inner = [h2 for h2 in loops if h2 != h and h2 in lp["blocks"]]
    inner = [h2 for h2 in inner if not any(h3 != h2 and h3 in lp["blocks"] and h2 in loops[h3]["blocks"]
                                            and h3 != h for h3 in inner)]     # directly nested
    ins = lambda b: blocks[b]["insns"]
    cmap = dict(enumerate(calls))
    if not inner:
        path = longest_path(h, lp["latches"], lp["blocks"], lambda x: succ[x], cmap, lambda b: len(ins(b)))
        return None if path is None else ([i for b in path for i in ins(b)], 1)
    if len(inner) > 1:
        return None
    n = loops[inner[0]]
    npath = longest_path(inner[0], n["latches"], n["blocks"], lambda x: succ[x], cmap, lambda b: len(ins(b)))
    if npath is None:
        return None
    body = [i for b in npath for i in ins(b)]
    # the outer loop with the nested one as one node (-1), its exits its successors
    exits = sorted({y for b in n["blocks"] for y in succ[b] if y in lp["blocks"] and y not in n["blocks"]})
    node_succ = lambda x: exits if x == -1 else [(-1 if y == inner[0] else y) for y in succ[x]
                                                   if y not in n["blocks"] or y == inner[0]]
    allowed = (lp["blocks"] - n["blocks"]) | {-1}
    path = longest_path(h, lp["latches"] - n["blocks"], allowed, node_succ, cmap,
                        lambda b: len(body) if b == -1 else len(ins(b)))
    if path is None or -1 not in path:
        return None
    outside = [i for b in path if b != -1 for i in ins(b)]
    per = collections.Counter(k for k in map(product_kind, body) if k)
    out = collections.Counter(k for k in map(product_kind, outside) if k)
    if len(per) != 1:
        return None
    kind = next(iter(per))
    rest = PRODUCTS[kind] - out[kind]
    if rest <= 0 or rest % per[kind]:
        return None
    times = rest // per[kind]
    insns = []
    for b in path:
        insns += body * times if b == -1 else ins(b)
    return insns, times


Trip = collections.namedtuple("Trip", "insns loc unrolled")


def one_row_loops(asm_path, func, block, src):
    """The per-group loops of the one-row product in func: [(trip, groups a
    trip, product kind)], and every loop of func with what it does."""
    d = mca.Dialect("a64")
    with open(asm_path, errors="replace") as f:     # .ascii debug strings
        funcs, filemap = mca.parse_asm(f.read(), d)
    # the one-row block, where the compiler did not inline it (gcc: panel_1.constprop.0)
    func = next((f for f in sorted(funcs) if f == "panel_1" or f.startswith("panel_1.")), func)
    if func not in funcs:
        raise RuntimeError(f"{func} not in {asm_path}")
    blocks, succ, targets = mca.control_flow(funcs[func], d)
    calls = [bool(t) for t in targets]
    loops = mca.natural_loops(blocks, succ)
    found, seen = [], []
    for h in sorted(loops):
        t = loop_trip(h, loops[h], loops, blocks, succ, calls)
        if t is None:
            continue
        insns, times = t
        kinds = collections.Counter(k for k in map(product_kind, insns) if k)
        if not kinds:
            continue
        heap = sum(ld for ld, _, st in map(d.mem, insns) if not st)
        groups = heap // (block + ACT_BYTES) if heap % (block + ACT_BYTES) == 0 else 0
        kind = kinds.most_common(1)[0][0]
        rows = kinds[kind] / (groups * PRODUCTS[kind]) if groups else 0
        locs = [i.loc for i in insns if i.loc and os.path.basename(filemap.get(i.loc[0], "")) == src]
        loc = f"{os.path.basename(filemap[locs[-1][0]])}:{locs[-1][1]}" if locs else "?"
        seen.append((loc, len(insns), dict(kinds), heap, groups, rows, times))
        if groups >= 1 and rows == 1 and not any(f[0].insns == insns for f in found):
            found.append((Trip(insns, loc, times), groups, kind, loc))
    return found, seen


def mca_cycles(core, regions):
    """{name: (cycles a trip, block rthroughput, busiest resource)} for
    regions [(name, [insn])]: the 200- less the 100-iteration run, over 100."""
    lines = []
    for name, insns in regions:
        lines.append(f"# LLVM-MCA-BEGIN {name}")
        lines += ["\t" + t for t in insns]
        lines.append("# LLVM-MCA-END")
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    res = {}
    try:
        runs = {}
        for it in (100, 200):
            p = run([MCA, "-mtriple=aarch64-linux-gnu", f"-mcpu={core}", f"-iterations={it}", "--json",
                     "--instruction-info=false", path])
            if p.returncode != 0:
                raise RuntimeError(f"llvm-mca -mcpu={core}: {p.stderr.strip()[:2000]}")
            runs[it] = json.loads(p.stdout)
    finally:
        os.unlink(path)
    names = runs[200]["TargetInfo"]["Resources"]
    for r1, r2 in zip(runs[100]["CodeRegions"], runs[200]["CodeRegions"]):
        cyc = (r2["SummaryView"]["TotalCycles"] - r1["SummaryView"]["TotalCycles"]) / 100.0
        press = collections.defaultdict(float)
        for e in r2["ResourcePressureView"]["ResourcePressureInfo"]:
            press[e["ResourceIndex"]] += e["ResourceUsage"]
        top, use = max(press.items(), key=lambda kv: kv[1]) if press else (None, 0)
        unit = re.sub(r"^(A57|N1|Cy)(Unit)?", "", names[top].split(".")[0]) if top is not None else "-"
        bound = unit if use >= 0.9 * cyc else "latency"     # usage: per iteration
        res[r2["Name"]] = (cyc, r2["SummaryView"]["BlockRThroughput"], bound)
    return res


def analyse(board, outdir, show_all, notes):
    rows = []
    for label, argv, flags in compilers(board):
        tag = re.sub(r"\W+", "_", f"{board.name}_{argv[0]}")
        for kname, func, bname, header in KERNELS:
            block = header_value(bname, header)
            src = f"arch/neon/{kname}.c"
            asm = os.path.join(outdir, f"{tag}_{kname}.s")
            p = run(argv + flags + ["-g", "-S", src, "-o", asm], cwd=ROOT)
            if p.returncode != 0:
                raise RuntimeError(f"{' '.join(argv + flags)} -S {src}:\n{p.stderr.strip()[:2000]}")
            found, seen = one_row_loops(asm, func, block, os.path.basename(src))
            if show_all:
                for loc, n, kinds, heap, groups, r, times in seen:
                    print(f"  {label} {func} {loc}: {n} insns" + (f" (inner loop x{times})" if times > 1 else "")
                          + f", products {kinds}, {heap} B loaded (not stack), {groups} block(s) a trip, "
                          f"rows {r:g}", file=sys.stderr)
            if not found:
                if argv[0] == CLANG:
                    raise RuntimeError(f"{label}: no one-row group loop found in {func} ({src})")
                notes.append(f"{board.name}, {label}, {kname}: no one-row group loop this tool can "
                             f"flatten (several loops nested in the group loop; --all lists the loops)")
            for lp, groups, kind, loc in found:
                rows.append({"compiler": label, "kernel": kname, "block": block, "loop": lp,
                             "groups": groups, "kind": kind, "loc": loc})
    for core in board.models:
        regs = [(f"r{i}", [ins.text for ins in r["loop"].insns]) for i, r in enumerate(rows)]
        res = mca_cycles(core, regs)
        for i, r in enumerate(rows):
            r.setdefault("mca", {})[core] = res[f"r{i}"]
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markdown", action="store_true", help="a markdown table")
    ap.add_argument("--all", action="store_true", help="list every loop of the products (stderr)")
    ap.add_argument("--keep", help="keep the assembly in this directory")
    args = ap.parse_args()
    for tool, pkg in ((MCA, "llvm-19"), (CLANG, "clang-19")):
        if not shutil.which(tool):
            print(f"arm_mca: {tool} not found (Debian: apt-get install {pkg})", file=sys.stderr)
            return 2
    outdir = args.keep or tempfile.mkdtemp(prefix="ngpt-arm-mca-")
    os.makedirs(outdir, exist_ok=True)
    head = ["board", "llvm-mca model", "compiler, flags", "kernel", "loop", "insns", "cycles",
            "RThru", "bound", "B/cycle", "GB/s @ clock", "DRAM GB/s", "one core", "cores to DRAM"]
    table, notes = [head], []
    try:
        for b in BOARDS:
            rows = analyse(b, outdir, args.all, notes)
            dram = b.measured or b.peak
            for core in b.models:
                for r in rows:
                    cyc, rthru, bound = r["mca"][core]
                    bpc = r["block"] * r["groups"] / cyc
                    gbs = bpc * b.ghz
                    bw = f"{b.peak:g}" + (f" ({b.measured:g})" if b.measured else "")
                    need = [f"{-(-x // gbs):.0f}" for x in ([b.peak] + ([b.measured] if b.measured else []))]
                    need = need[0] + (f" ({need[1]})" if len(need) > 1 else "")
                    def verdict_at(bw):
                        return "memory-bound" if gbs >= bw else f"compute-bound ({gbs / bw:.0%})"
                    verdict = verdict_at(b.peak) + \
                        (f"; at {b.measured:g}: {verdict_at(b.measured)}" if b.measured else "")
                    per = "" if r["groups"] == 1 else f" /{r['groups']}"
                    table.append([b.name + f" {b.ghz:g} GHz", core, r["compiler"], r["kernel"] + f" {r['kind']}",
                                  r["loc"], str(len(r["loop"].insns)), f"{cyc:.2f}{per}", f"{rthru:.2f}",
                                  bound, f"{bpc:.1f}", f"{gbs:.1f}", bw, verdict, need])
    finally:
        if not args.keep:
            shutil.rmtree(outdir, ignore_errors=True)
    print("ARM estimates from llvm-mca-19 (not measurements): the one-row decode loops, one weight block a trip")
    print()
    print("\n".join(mca.fmt_table(table, args.markdown)))
    print()
    print("B/cycle: weight bytes a trip (q8 block %d B, q4 block %d B; src/q8.h, src/q4.h) over the cycles a trip."
          % (header_value("NGPT_Q8_BLOCK", "src/q8.h"), header_value("NGPT_Q4_BLOCK", "src/q4.h")))
    for n in notes:
        print("Not analysed: " + n + ".")
    print("DRAM GB/s: the bus's theoretical peak (a measured figure in parentheses); one core: whether the loop")
    print("alone outruns it (memory-bound) or not (compute-bound: the loop's GB/s as a share of it); cores to DRAM:")
    print("how many cores at this rate it takes to read that fast. Sources:")
    for b in BOARDS:
        print(f"  {b.name}: {b.peak:g} GB/s = {b.peak_src}" +
              (f"; {b.measured:g} GB/s measured: {b.measured_src}" if b.measured else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
