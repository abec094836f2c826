#!/bin/sh
# bench_readme.sh — what `make bench-readme` runs: a full `ngpt bench` on this
# machine (threads 1 and 2 unless BENCH_ARGS says otherwise), whose tables
# replace the README's between <!-- bench:begin --> and <!-- bench:end -->
# (the kernel table at the first thread count), with docs/bench-figures.md
# (every row), docs/bench-figures.svg (the chart) and docs/bench-figures.json
# (the figures: a name of their own, apart from the guide docs/BENCH.md on a
# case-insensitive file system); then,
# when PyTorch is installed, tools/compare_torch.py on those same figures
# between <!-- bench-torch:begin --> and <!-- bench-torch:end -->.
# Env: BUILD (build dir), BENCH_ARGS, PYTHON.
set -e
B=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
ARGS=${BENCH_ARGS:---threads 1,2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# replace BEGIN END FILE: the README's lines between the markers become FILE
replace() {
    awk -v b="<!-- $1 -->" -v e="<!-- $2 -->" -v f="$3" '
        $0 == b { print; while ((getline line < f) > 0) print line; skip = 1; next }
        $0 == e { skip = 0 }
        !skip' README.md > "$tmp/README.md"
    grep -q "^<!-- $1 -->\$" README.md || { echo "bench_readme: README.md lacks <!-- $1 -->" >&2; exit 1; }
    cp "$tmp/README.md" README.md
}

# shellcheck disable=SC2086
"$B/ngpt" bench $ARGS --json docs/bench-figures.json --svg docs/bench-figures.svg > docs/bench-figures.md
# The README keeps the kernel rows of the first thread count (docs/bench-figures.md
# has them all).
awk -F'|' '/^- threads:/ { split($0, t, /[:,] */); first = t[2] + 0 }
    /^\| kernel / { kernels = 1 } /^$/ { kernels = 0 }
    !kernels || $4 !~ /^ *[0-9]+ *$/ || $4 + 0 == first' docs/bench-figures.md > "$tmp/bench.md"
{ echo; cat "$tmp/bench.md"; echo; echo "All the rows: docs/bench-figures.md (docs/bench-figures.json)."; echo; } > "$tmp/block.md"
replace bench:begin bench:end "$tmp/block.md"
echo "bench_readme: README.md tables, docs/bench-figures.md, .svg and .json updated"

if "$PYTHON" -c 'import torch' 2> /dev/null; then
    "$PYTHON" tools/compare_torch.py --json docs/bench-figures.json --out "$tmp/torch.md" > /dev/null
    { echo; cat "$tmp/torch.md"; echo; } > "$tmp/block.md"
    replace bench-torch:begin bench-torch:end "$tmp/block.md"
    echo "bench_readme: README.md PyTorch comparison updated"
else
    echo "bench_readme: no PyTorch: the README's comparison is left as it was"
fi
