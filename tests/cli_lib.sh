# cli_lib.sh — the start of every tests/test_*.sh that runs the CLI (sourced):
# B (the build dir, from BUILD), N (the CLI under RUN_ENV, e.g. qemu), a
# temporary dir removed on exit, check STATUS MESSAGE, and summary NAME,
# which prints run.sh's summary line and sets the exit status.
B=${BUILD:-build}
N="$RUN_ENV $B/ngpt"
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
summary() { echo "$1: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
