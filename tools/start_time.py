#!/usr/bin/python3
"""start_time.py — process start to first token of `ngpt generate`, for two
or more ngpt binaries on one model, interleaved so that a shared machine's
load falls on all of them alike (docs/BENCH.md, "Start-up").

    /usr/bin/python3 tools/start_time.py --model FILE [--runs 40] [--warmup 5]
        [--prompt TEXT] [--threads 1] BINARY [BINARY ...]

Each round runs every binary once (`generate --model FILE --prompt TEXT -n 1
--temp 0 --threads N`, output discarded); the first --warmup rounds are not
counted. Prints per binary the median, first quartile and minimum wall time
in ms, and each binary's median against the first's. The model file should
be in the page cache (the warm-up rounds put it there).
"""
import argparse
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--prompt", default="Hello")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("binaries", nargs="+")
    a = ap.parse_args()
    if a.runs < 1 or a.warmup < 0:
        sys.exit("start_time.py: --runs must be at least 1 and --warmup at least 0")
    times = {b: [] for b in a.binaries}
    for r in range(a.warmup + a.runs):
        for b in a.binaries:
            cmd = [b, "generate", "--model", a.model, "--prompt", a.prompt, "-n", "1",
                   "--temp", "0", "--threads", str(a.threads)]
            t0 = time.perf_counter()
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            t1 = time.perf_counter()
            if p.returncode != 0:
                sys.exit("start_time.py: %s failed (exit %d): %s" %
                         (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace").strip()))
            if r >= a.warmup:
                times[b].append((t1 - t0) * 1e3)
    first = statistics.median(times[a.binaries[0]])
    for b in a.binaries:
        t = sorted(times[b])
        med = statistics.median(t)
        print("%-40s median %7.1f ms  q1 %7.1f  min %7.1f  (%.2fx the first)" %
              (b, med, t[len(t) // 4], t[0], med / first))


if __name__ == "__main__":
    main()
