#!/bin/sh
# run.sh BUILD SECONDS TARGET... — runs each libFuzzer target for SECONDS on
# its seeds (fuzz/corpus/<t>, read only) plus the inputs it found before
# (BUILD/corpus/<t>, where new ones go), then prints the executions per
# target (and a second: docs/RELIABILITY.md gives each target's rate) and
# in total. Exit status 1 if any target crashed: the input is in
# BUILD/artifacts/<t>/ (fix it, then copy it to fuzz/regressions/<t>/).
build=$(mkdir -p "$1" && cd "$1" && pwd) seconds=$2    # absolute: fuzz_cli changes directory
src=$(pwd)
shift 2
total=0 failed=0
for t in "$@"; do
    bin=$build/bin/fuzz_$t
    mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
    dict=; [ -f "fuzz/$t.dict" ] && dict="-dict=$src/fuzz/$t.dict"
    seeds=; [ -d "fuzz/corpus/$t" ] && seeds="$src/fuzz/corpus/$t"
    regress=; [ -d "fuzz/regressions/$t" ] && regress="$src/fuzz/regressions/$t"
    log=$build/$t.log
    # -close_fd_mask=3: the commands' own output is dropped, crash reports are kept.
    "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=8192 \
        -print_final_stats=1 -close_fd_mask=3 -artifact_prefix="$build/artifacts/$t/" \
        $dict "$build/corpus/$t" $seeds $regress > "$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    runs=${runs:-0}
    total=$((total + runs))
    if [ $rc -ne 0 ]; then
        failed=$((failed + 1))
        echo "fuzz_$t: CRASH after $runs runs (exit $rc); log $log:"
        grep -E 'ERROR|SUMMARY|fuzz property|Test unit written|runtime error' "$log" | head -n 20
    else
        echo "fuzz_$t: $runs runs in ${seconds}s ($((runs / seconds))/s), no crash"
    fi
done
echo "fuzz: $total executions in total, $failed target(s) crashed"
[ $failed -eq 0 ]
