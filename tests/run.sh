#!/bin/sh
# run.sh — runs every test program (under $RUN_ENV, e.g. qemu) and adds up
# their "name: N passed, M failed" lines. A program that crashes or prints no
# summary counts as one failure. Prints "$LABEL: N passed, M failed" and
# appends "LABEL N M" to $RESULTS when set.
passed=0 failed=0
label=${LABEL:-tests}
for t in "$@"; do
    case "$t" in    # a *.sh test runs under sh and applies RUN_ENV itself
    *.sh) out=$(RUN_ENV="$RUN_ENV" BUILD="$BUILD" sh "$t" 2>&1) ;;
    *) out=$($RUN_ENV "$t" 2>&1) ;;
    esac
    rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        printf '%s\n' "$out"
        echo "$(basename "$t"): crashed or printed no summary (exit $rc)"
        failed=$((failed + 1))
        continue
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then printf '%s\n' "$out" | grep -v "$line"; fi
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    echo "  $line"
    passed=$((passed + p))
    failed=$((failed + f))
done
echo "$label: $passed passed, $failed failed"
[ -n "$RESULTS" ] && echo "$label $passed $failed" >> "$RESULTS"
[ "$failed" -eq 0 ]
