# cli_lib.sh — the start of every tests/test_*.sh that runs the CLI (sourced):
# B (the build dir, from BUILD), N (the CLI under RUN_ENV, e.g. qemu), a
# temporary dir removed on exit, check STATUS MESSAGE, and summary NAME,
# which prints run.sh's summary line and sets the exit status; and helpers
# more than one test uses: readme_shows, train_ok_model.
B=${BUILD:-build}
N="$RUN_ENV $B/ngpt"
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
summary() { echo "$1: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
# readme_shows FILE: README.md shows FILE's lines one under the other
# (indented, as a code block)
readme_shows() {
    awk -v want="$(tr '\n' ' ' < "$1")" -v n="$(wc -l < "$1")" '
        { sub(/^ +/, ""); line[NR] = $0 }
        END { for (i = 1; i + n - 1 <= NR; i++) {
                  s = ""; for (j = 0; j < n; j++) s = s line[i + j] " "
                  if (s == want) found = 1
              }
              exit !found }' README.md
}
# train_ok_model OUT: a tiny model trained (60 steps, the same on every
# build) on a dialogue where the assistant always answers "ok" ($dir/d.txt)
train_ok_model() {
    : > "$dir/d.txt"
    i=0
    while [ $i -lt 200 ]; do printf 'user: hi\nassistant: ok\n' >> "$dir/d.txt"; i=$((i + 1)); done
    $N train --data "$dir/d.txt" --config T=16 --config C=32 --config L=2 --config H=4 --config d_ff=64 \
        --config dropout=0 --batch 8 --seq 16 --steps 60 --warmup 5 --lr 1e-2 --min-lr 1e-3 \
        --eval-every 0 --eval-batches 1 --out "$1" > "$dir/train.log" 2>&1
}
