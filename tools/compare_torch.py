#!/usr/bin/python3
"""compare_torch.py — ngpt against PyTorch eager: the same model (the
reference in tools/ngpt_torch.py), the same workloads and thread counts as
`ngpt bench`, timed the same way, and a table of ratios ngpt / PyTorch.

    /usr/bin/python3 tools/compare_torch.py [--ngpt build/ngpt] [--quick]
        [--threads 1,2] [--preset default|gpt2-small] [--config k=v ...]
        [--runs N] [--json FILE] [--out FILE] [--blas]

It runs `ngpt bench --json -` with the same options (or reads --json FILE, a
saved run: its config, thread counts and runs are then used), then measures
PyTorch in one child process per thread count and prints a markdown table.
Without PyTorch it says so and exits 0: nothing else needs it.

What is measured on each side (docs/BENCH.md):
  prefill  a T/2-token prompt, batch 1: ngpt_context_cache_prefill vs model(prompt)
           under torch.inference_mode() (logits at every position on both);
  decode   min(256, T) tokens from an empty cache, batch 1 and 4, fixed
           tokens, no sampling: ngpt_context_cache_decode vs model(token, cache=...)
           with the reference model's preallocated KV cache (ngpt_torch.KVCache);
  train    one optimizer step on a random batch: ngpt_context_train_step vs
           zero_grad, forward with targets, backward, clip_grad_norm_(1.0),
           AdamW(betas 0.9/0.95, eps 1e-8, weight decay 0.1); dropout as the
           config's (model.train()).
With --blas, a GEMM yardstick too: OpenBLAS's cblas_sgemm (libopenblas.so.0,
OPENBLAS_NUM_THREADS = the thread count, no PyTorch needed) at the m, n, k of
ngpt bench's gemm rows, row-major without transposes or bias, against
ngpt's GFLOP/s there.
Timing as ngpt bench: warm-up calls, then the median of up to --runs timed
runs with min-max (a slow figure gets fewer runs, at least 3; a fast call is
repeated to a run of at least 20/50 ms).

A fair PyTorch (measured on a 2-CPU AMD EPYC Zen 5 VM, Debian 12, torch 1.13):
  - BLAS: Debian's torch calls libblas.so.3; point it at OpenBLAS's pthread
    build (apt-get install libopenblas0-pthread; update-alternatives
    --display libblas.so.3-x86_64-linux-gnu shows the choice), not the
    OpenMP build, whose threads would share torch's OpenMP runtime (not
    measured here: this machine has the pthread build).
  - threads: for N threads the child runs with OPENBLAS_NUM_THREADS=N (the
    products) and OMP_NUM_THREADS=1 with torch.set_num_threads(1) (torch's
    element-wise ops), the best setting measured for 2 threads here: with
    torch's OpenMP at 2 threads too (--torch-omp) every workload ran 5-20x
    slower on this shared machine (prefill 152 against 3692 tok/s, a B=8
    T=128 training step 197 against 1031 tok/s), its threads spinning
    against the BLAS threads and the machine's other load.
  - allocator: MALLOC_ARENA_MAX=2, MALLOC_TRIM_THRESHOLD_ and
    MALLOC_MMAP_THRESHOLD_ at 1 GiB, MALLOC_TOP_PAD_ 256 MiB, so that big
    tensors are reused from the heap instead of fresh (page-faulting) mmaps
    every step. With one thread a B=32 T=256 training step took 17.8 s
    without them and 8.4 s with them (B=8 T=128: 1.10 s and 0.67 s).
  - inference under torch.inference_mode() and model.eval(); RoPE tables
    computed once (ngpt_torch.rope_tables keeps them).
  - BLAS kernels: on a CPU with AVX-512 (F, BW, VL, DQ in /proc/cpuinfo)
    the children run with OPENBLAS_CORETYPE=SkylakeX, OpenBLAS's AVX-512
    kernels, unless the caller's environment sets OPENBLAS_CORETYPE (then
    that is used, with a note when it names an AVX2-only core on such a
    CPU): an environment that pins OpenBLAS to Haswell (AVX2) halves its
    products on a core that runs 512-bit FMAs at full width (Zen 5, Xeon),
    and a PyTorch with an AVX-512 BLAS is what a user of that CPU gets. The
    table's header says which was used (docs/BENCH.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# the allocator settings of the docstring, applied to every child
ALLOC_ENV = {
    "MALLOC_ARENA_MAX": "2",
    "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TOP_PAD_": str(256 << 20),
}


# OpenBLAS core types that run its AVX2 kernels at most
AVX2_CORES = {"haswell", "zen", "sandybridge", "nehalem", "core2", "prescott", "atom", "barcelona",
              "bulldozer", "piledriver", "steamroller", "excavator"}


def cpu_has_avx512():
    """Whether /proc/cpuinfo lists AVX-512 F, BW, VL and DQ (False elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags
    except OSError:
        pass
    return False


def blas_coretype():
    """(OPENBLAS_CORETYPE for the children or None, a sentence saying why)."""
    user = os.environ.get("OPENBLAS_CORETYPE")
    if user:
        why = "from the environment"
        if user.lower() in AVX2_CORES and cpu_has_avx512():
            why += (" (note: it pins OpenBLAS to its AVX2 kernels on this AVX-512 CPU; "
                    "unset it for OpenBLAS's AVX-512 kernels)")
        return user, why
    if cpu_has_avx512():
        return "SkylakeX", "OpenBLAS's AVX-512 kernels: this CPU has AVX-512"
    return None, "OpenBLAS's own choice for this CPU"


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


# ---------------------------------------------------------------- timing

def measure(fn, runs, warmup, budget_s, min_run_s):
    """ngpt bench's method (bench/measure.c): warm-up calls that also set
    the repetitions per run and cut the runs to the budget; the median, min
    and max seconds per call."""
    reps, max_runs = 1, runs
    for _ in range(warmup):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        call = (time.perf_counter() - t0) / reps
        if call > 0 and call * reps < min_run_s:
            reps = int(min_run_s / call) + 1
        fit = int(budget_s / (call * reps)) if call > 0 else runs
        if fit < runs:
            runs = (3 if max_runs >= 3 else max_runs) if fit < 3 else fit
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t.append((time.perf_counter() - t0) / reps)
    return {"median": statistics.median(t), "min": min(t), "max": max(t), "runs": runs}


# ---------------------------------------------------------- the PyTorch side

def torch_child(spec):
    """Runs in a child process whose environment sets the thread counts."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import ngpt_torch as nt

    torch.set_num_threads(spec["torch_threads"])
    c = spec["config"]
    cfg = nt.ModelConfig(V=c["V"], T=c["T"], C=c["C"], L=c["L"], H=c["H"], d_ff=c["d_ff"],
                         dropout=c["dropout"], rope_theta=c["rope_theta"]).validate()
    torch.manual_seed(42)
    model = nt.NGPT(cfg)
    gen = torch.Generator().manual_seed(7)
    timing = dict(runs=spec["runs"], warmup=spec["warmup"], budget_s=spec["budget_s"],
                  min_run_s=spec["min_run_s"])
    out = []
    for w in spec["workloads"]:
        test, B, n = w["test"], w["batch"], w["n"]
        if test == "prefill":
            model.eval()
            idx = torch.randint(0, cfg.V, (B, n), generator=gen)

            def fn():
                with torch.inference_mode():
                    model(idx)
        elif test == "decode":
            model.eval()
            idx = torch.randint(0, cfg.V, (B, n), generator=gen)
            cache = nt.KVCache(cfg, B)

            def fn():
                cache.clear()
                with torch.inference_mode():
                    for i in range(n):
                        model(idx[:, i:i + 1], cache=cache)
        elif test == "train":
            model.train()
            opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), eps=1e-8,
                                    weight_decay=0.1)
            x = torch.randint(0, cfg.V, (B, n), generator=gen)
            y = torch.randint(0, cfg.V, (B, n), generator=gen)

            def fn():
                opt.zero_grad(set_to_none=True)
                _, loss = model(x, y)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
        else:
            continue
        sec = measure(fn, **timing)
        out.append(dict(w, seconds=sec))
        print(f"compare_torch: torch {test} B={B} n={n}, {spec['threads']} thread(s): "
              f"{w['tokens'] / sec['median']:.1f} tok/s", file=sys.stderr, flush=True)
    return out


def blas_child(spec):
    """cblas_sgemm at each (m, n, k), in a child whose environment sets
    OPENBLAS_NUM_THREADS: OpenBLAS splits one product over the threads, as
    it is used (ngpt's t-thread kernel rows run t copies at once)."""
    import ctypes
    import ctypes.util
    import numpy as np
    lib = ctypes.CDLL(ctypes.util.find_library("openblas") or "libopenblas.so.0")
    f32p = ctypes.POINTER(ctypes.c_float)
    lib.cblas_sgemm.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, f32p, ctypes.c_int, f32p,
                                                     ctypes.c_int, ctypes.c_float, f32p, ctypes.c_int]
    out = []
    rng = np.random.default_rng(1)
    for m, n, k in spec["shapes"]:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        c = np.zeros((m, n), dtype=np.float32)
        pa, pb, pc = (x.ctypes.data_as(f32p) for x in (a, b, c))

        def fn():   # CblasRowMajor = 101, CblasNoTrans = 111
            lib.cblas_sgemm(101, 111, 111, m, n, k, 1.0, pa, k, pb, n, 0.0, pc, n)
        sec = measure(fn, spec["runs"], spec["warmup"], spec["budget_s"], spec["min_run_s"])
        out.append({"m": m, "n": n, "k": k, "gflops": 2.0 * m * n * k / sec["median"] * 1e-9})
    return out


def gemm_shapes(ng):
    """(m, n, k) of ngpt bench's gemm rows, in order, once each."""
    shapes = []
    for r in ng.get("kernels", []):
        if r["name"] != "gemm" or "gflops" not in r:
            continue
        d = dict(kv.split("=") for kv in r["shape"].split() if "=" in kv)
        mnk = (int(d["m"]), int(d["n"]), int(d["k"]))
        if mnk not in shapes:
            shapes.append(mnk)
    return shapes


def blas_table(ng, budget_s, min_run_s):
    shapes = gemm_shapes(ng)
    if not shapes:
        return "(no gemm rows in the ngpt run: nothing to compare OpenBLAS with)"
    rows = []
    for t in ng["threads"]:
        env = dict(os.environ, **ALLOC_ENV, OPENBLAS_NUM_THREADS=str(t), OMP_NUM_THREADS="1")
        core, _ = blas_coretype()
        if core:
            env["OPENBLAS_CORETYPE"] = core
        spec = dict(shapes=shapes, runs=ng["runs"], warmup=ng["warmup"], budget_s=budget_s,
                    min_run_s=min_run_s)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--blas-child"],
                           input=json.dumps(spec), capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            return "(OpenBLAS could not be loaded: apt-get install libopenblas0-pthread)"
        for b in json.loads(p.stdout):
            ours = [r for r in ng["kernels"] if r["name"] == "gemm" and r["threads"] == t and
                    r["shape"].startswith(f"m={b['m']} n={b['n']} k={b['k']} ")]
            for r in ours:
                g = r["gflops"]["median"]
                rows.append([r["shape"], str(t), fmt(g), fmt(b["gflops"]), f"{g / b['gflops']:.2f}"])
    return table(rows, ["gemm", "threads", "ngpt GFLOP/s", "OpenBLAS GFLOP/s", "ngpt / OpenBLAS"],
                 [False, True, True, True, True])


def run_torch(spec, torch_omp):
    """One child per thread count, with the environment of the docstring."""
    t = spec["threads"]
    env = dict(os.environ, **ALLOC_ENV)
    omp = t if torch_omp else 1
    env.update(OPENBLAS_NUM_THREADS=str(t), OMP_NUM_THREADS=str(omp), MKL_NUM_THREADS=str(t))
    core, _ = blas_coretype()
    if core:
        env["OPENBLAS_CORETYPE"] = core
    spec = dict(spec, torch_threads=omp)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"],
                       input=json.dumps(spec), capture_output=True, text=True, env=env)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        raise SystemExit(f"compare_torch: the PyTorch child for {t} thread(s) failed")
    return json.loads(p.stdout), env


# -------------------------------------------------------------- the ngpt side

def ngpt_run(args):
    cmd = [args.ngpt, "bench", "--json", "-", "--weights", "f32"]
    if args.quick:
        cmd.append("--quick")
    if args.threads:
        cmd += ["--threads", args.threads]
    if args.preset:
        cmd += ["--preset", args.preset]
    for c in args.config or []:
        cmd += ["--config", c]
    if args.runs:
        cmd += ["--runs", str(args.runs)]
    print("compare_torch: " + " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"compare_torch: {' '.join(cmd)} failed (exit {p.returncode})")
    return json.loads(p.stdout)


# ----------------------------------------------------------------- the table

def fmt(v):
    a = abs(v)
    return f"{v:.0f}" if a >= 1000 else f"{v:.1f}" if a >= 100 else f"{v:.2f}" if a >= 10 else f"{v:.3f}"


def shape(w):
    n = {"prefill": "prompt", "decode": "new"}.get(w["test"], "T")
    return f"B={w['batch']} {n}={w['n']}"


def table(rows, head, right):
    widths = [max(len(h), 3, *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["| " + " | ".join(h.ljust(wd) for h, wd in zip(head, widths)) + " |",
             "| " + " | ".join("-" * (wd - 1) + (":" if rt else "-") for wd, rt in zip(widths, right)) + " |"]
    for r in rows:
        lines.append("| " + " | ".join(c.rjust(wd) if rt else c.ljust(wd)
                                       for c, wd, rt in zip(r, widths, right)) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--blas-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--blas", action="store_true",
                    help="also cblas_sgemm at ngpt bench's gemm shapes (a GEMM yardstick)")
    ap.add_argument("--ngpt", default=os.path.join(ROOT, "build", "ngpt"))
    ap.add_argument("--json", help="a saved `ngpt bench --json` run instead of running ngpt")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", help="N[,N...] (default: ngpt bench's)")
    ap.add_argument("--preset")
    ap.add_argument("--config", action="append", metavar="k=v")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--torch-omp", action="store_true",
                    help="give torch's own (OpenMP) ops the thread count too")
    ap.add_argument("--out", help="also write the table here")
    args = ap.parse_args()

    if args.child:
        json.dump(torch_child(json.load(sys.stdin)), sys.stdout)
        return 0
    if args.blas_child:
        json.dump(blas_child(json.load(sys.stdin)), sys.stdout)
        return 0
    if not have_torch():
        print("compare_torch: skipped: PyTorch is not installed "
              "(Debian: apt-get install python3-torch libopenblas0-pthread)")
        return 0

    core, why = blas_coretype()
    blas_line = f"- BLAS: OPENBLAS_CORETYPE={core or '(unset)'}: {why}"
    print("compare_torch: " + blas_line[2:], file=sys.stderr, flush=True)
    ng = json.load(open(args.json)) if args.json else ngpt_run(args)
    quick = ng.get("quick", False)
    budget_s, min_run_s = (6.0, 0.02) if quick else (30.0, 0.05)
    rows, envs = [], {}
    for t in ng["threads"]:
        # PyTorch runs the float32 model: ngpt's 8-bit rows have no counterpart
        work = [w for w in ng["workloads"]
                if w["threads"] == t and w.get("weights", "f32") == "f32"]
        spec = dict(config=ng["config"], threads=t, workloads=work, runs=ng["runs"],
                    warmup=ng["warmup"], budget_s=budget_s, min_run_s=min_run_s)
        res, env = run_torch(spec, args.torch_omp)
        envs[t] = " ".join(f"{k}={env[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"))
        for w, r in zip(work, res):
            ngs, ts = w["tokens_per_s"], w["tokens"] / r["seconds"]["median"]
            tlo, thi = w["tokens"] / r["seconds"]["max"], w["tokens"] / r["seconds"]["min"]
            rows.append([w["test"], shape(w), str(t), fmt(ngs["median"]), fmt(ts),
                         f"{fmt(tlo)} – {fmt(thi)}", f"{ngs['median'] / ts:.2f}"])

    import torch
    c = ng["config"]
    alloc = " ".join(f"{k}={v}" for k, v in ALLOC_ENV.items())
    out = [f"- ngpt: {ng['build_info']}",
           f"- PyTorch {torch.__version__} eager, float32; per thread count: "
           + "; ".join(f"{t}: {e}" for t, e in envs.items())
           + (", torch.set_num_threads = the count" if args.torch_omp else ", torch.set_num_threads(1)"),
           f"- allocator: {alloc}",
           blas_line,
           f"- cpu: {ng['cpu']}; config: V={c['V']} T={c['T']} C={c['C']} L={c['L']} H={c['H']} "
           f"d_ff={c['d_ff']} dropout={c['dropout']:g}; {ng['date']}",
           f"- tok/s: median of up to {ng['runs']} runs after {ng['warmup']} warm-up; "
           "ratio > 1: ngpt is faster",
           "",
           table(rows, ["test", "shape", "threads", "ngpt tok/s", "PyTorch tok/s",
                        "PyTorch min – max", "ngpt / PyTorch"],
                 [False, False, True, True, True, True, True])]
    if args.blas:
        out += ["", "GEMM yardstick: OpenBLAS cblas_sgemm (row-major, no transposes, "
                "OPENBLAS_NUM_THREADS = threads) at ngpt bench's gemm shapes:", "",
                blas_table(ng, budget_s, min_run_s)]
    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
