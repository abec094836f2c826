#!/bin/sh
# total.sh — the closing line of `make test`: the sum of every run recorded
# in the results file (native, qemu AArch64, qemu ARMv7, ...).
results=$1
if [ ! -s "$results" ]; then
    echo "no test run was recorded: the build failed"
    echo "total: 0 passed, 1 failed"
    exit 1
fi
grep '^skipped:' "$results"
awk '!/^skipped:/ { p += $2; f += $3; runs = runs " " $1 }
     END { printf "runs:%s\n", runs; printf "total: %d passed, %d failed\n", p, f; exit (f > 0) }' "$results"
