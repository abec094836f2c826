#!/bin/sh
# run.sh — runs every test program (under $RUN_ENV, e.g. qemu) and adds up
# their "name: N passed, M failed" lines. A program that crashes or prints no
# summary counts as one failure. Prints "$LABEL: N passed, M failed" and
# appends "LABEL N M" to $RESULTS when set.
# TEST_JOBS programs run at once (the Makefile's default: the CPUs online),
# each into its own output file; their reports are printed in the order of
# the arguments, each as soon as it and every one before it have finished.
passed=0 failed=0
label=${LABEL:-tests}
jobs=${TEST_JOBS:-1}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ngpt-run-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# Programs started in the background ignore SIGINT: an interrupt ends them here.
trap 'for f in "$tmp"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; exit 130' INT TERM
# A finished program's number arrives on this pipe (one short line: atomic).
mkfifo "$tmp/done" && exec 3<> "$tmp/done" || exit 1

start() {   # start N TEST: runs TEST into $tmp/N.out, its exit status and seconds into $tmp/N.rc
    (
        t0=$(date +%s)
        case "$2" in    # a *.sh test runs under sh and applies RUN_ENV itself
        *.sh) RUN_ENV="$RUN_ENV" BUILD="$BUILD" sh "$2" > "$tmp/$1.out" 2>&1 3>&- & ;;
        *) $RUN_ENV "$2" > "$tmp/$1.out" 2>&1 3>&- & ;;
        esac
        echo $! > "$tmp/$1.pid"
        wait $! 2>/dev/null     # a crash is reported by its exit status
        {   # (silent: after an interrupt $tmp is gone)
            echo "$? $(($(date +%s) - t0))" > "$tmp/$1.rc.part"
            rm -f "$tmp/$1.pid"
            mv "$tmp/$1.rc.part" "$tmp/$1.rc"
            echo "$1" >&3
        } 2>/dev/null
    ) &
}

report() {  # report N TEST: its summary line (or its whole output), added to the totals
    read -r rc secs < "$tmp/$1.rc"
    out=$tmp/$1.out
    line=$(grep -E '^[A-Za-z0-9_]+: [0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
    if [ -z "$line" ]; then
        cat "$out"
        echo "$(basename "$2"): crashed or printed no summary (exit $rc)"
        failed=$((failed + 1))
        return
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then grep -vxF "$line" "$out"; fi
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    echo "  $line ($secs s)"
    passed=$((passed + p))
    failed=$((failed + f))
}

# Starts the programs, at most $jobs at a time; reports each in order.
n=$#
i=0 running=0 shown=0
while [ $shown -lt $n ]; do
    while [ $running -lt "$jobs" ] && [ $i -lt $n ]; do
        i=$((i + 1))
        eval "start $i \"\${$i}\""
        running=$((running + 1))
    done
    read -r _ <&3
    running=$((running - 1))
    while [ $shown -lt $n ] && [ -f "$tmp/$((shown + 1)).rc" ]; do
        shown=$((shown + 1))
        eval "report $shown \"\${$shown}\""
    done
done
echo "$label: $passed passed, $failed failed"
[ -n "$RESULTS" ] && echo "$label $passed $failed" >> "$RESULTS"
[ "$failed" -eq 0 ]
