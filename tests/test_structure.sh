#!/bin/sh
# test_structure.sh — the layering docs/ARCHITECTURE.md draws, checked on the
# objects of this build (so the kernels of its ISA are included) and on the
# sources:
#  - no cycles between object files: a file that calls another is never
#    called back by it, directly or through others (nm: who defines and who
#    uses each symbol);
#  - kernels (src/ref/, arch/) call only kernels and the random number
#    generator (src/philox), never the model;
#  - the library never calls the command-line tool, and the tool calls only
#    functions of the public header include/ngpt.h — except that `ngpt
#    bench` (cli/cmd_bench.c, cli/bench_*.c) uses the bench layer (bench/:
#    clock, FMA probe, the kernel table), which calls only the kernel cases
#    (tests/kernels/), kernels and the RNG, never the model;
#  - no cycles between the project's headers, kernels include no model
#    header, and the tool includes only its own headers and ngpt.h (ngpt
#    bench's files also the bench layer's);
#  - make TOOLCHAIN=<missing file> stops with an error naming the file.
# Env: BUILD (build dir). Prints the run.sh summary line.
B=${BUILD:-build}
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
# none FILE MESSAGE: FILE lists violations; passes when it is empty
none() { [ ! -s "$1" ]; check $? "$2: $(tr '\n' ';' < "$1")"; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

# Prints the nodes of edge list $1 ("from to" lines) that lie on a cycle:
# removes nodes without outgoing edges, then nodes without incoming edges,
# while there are any (Kahn's algorithm both ways); what is left is cycles
# (and nodes between cycles).
cyclic() {
    awk '{ node[$1]; node[$2]; from[NR] = $1; to[NR] = $2; out[$1]++; in_[$2]++ }
         END {
             do {
                 removed = 0
                 for (n in node) if (!out[n] || !in_[n]) {
                     delete node[n]; removed = 1
                     for (i = 1; i <= NR; i++)
                         if (from[i] != "" && (to[i] == n || from[i] == n)) {
                             out[from[i]]--; in_[to[i]]--; from[i] = ""
                         }
                 }
             } while (removed)
             for (n in node) print n
         }' "$1"
}

# ---- the symbol graph: "module symbol" for definitions and for uses
objs=$(find "$B/obj/src" "$B/obj/arch" "$B/obj/cli" "$B/obj/bench" -name '*.o' 2>/dev/null | sort)
[ -n "$objs" ]
check $? "objects under $B/obj (build first)"
# one nm for all (nm -A prefixes each line with "file: "); macOS adds a "_"
nm -A -P $objs 2>/dev/null | awk -v b="$B/obj/" -v d="$dir" '{
        m = $1; sub(/:$/, "", m); sub(/\.o$/, "", m); m = substr(m, length(b) + 1)
        sub(/^_/, "", $2)
        if ($3 == "U") print m, $2 > (d "/uses")
        else if ($3 ~ /^[TDBRC]$/) print m, $2 > (d "/defs")
    }'
touch "$dir/uses" "$dir/defs"
[ -s "$dir/defs" ]
check $? "nm reads the objects"
awk 'NR == FNR { def[$2] = $1; next } ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' \
    "$dir/defs" "$dir/uses" | sort -u > "$dir/calls"        # user definer symbol
awk '{ print $1, $2 }' "$dir/calls" | sort -u > "$dir/edges"

cyclic "$dir/edges" > "$dir/cycle"
[ ! -s "$dir/cycle" ]
check $? "object files call each other in a cycle: $(grep -F -f "$dir/cycle" "$dir/calls" | \
    awk 'NR == FNR { c[$1]; next } ($1 in c) && ($2 in c)' "$dir/cycle" - | tr '\n' ';')"

awk '($1 ~ /^(src\/ref|arch)\//) && !($2 ~ /^(src\/ref|arch)\// || $2 == "src/philox")' \
    "$dir/calls" > "$dir/bad"
none "$dir/bad" "kernels call the model"

awk '$1 !~ /^cli\// && $2 ~ /^cli\//' "$dir/calls" > "$dir/bad"
none "$dir/bad" "the library calls the tool"

grep -o 'ngpt_[a-z0-9_]*(' include/ngpt.h | tr -d '(' | sort -u > "$dir/public"
awk 'NR == FNR { pub[$1]; next } $1 ~ /^cli\// && $2 !~ /^cli\// && !($3 in pub) &&
     !($1 ~ /^cli\/(cmd_bench|bench_[a-z_]+)$/ && $2 ~ /^bench\//)' \
    "$dir/public" "$dir/calls" > "$dir/bad"
none "$dir/bad" "the tool calls internal functions"
awk '$1 ~ /^bench\// && $2 !~ /^(bench|src\/ref|arch)\// && $2 != "src/philox"' "$dir/calls" > "$dir/bad"
none "$dir/bad" "the kernel bench calls the model"

# ---- the include graph of the project's own headers ("file included")
awk '/^#include "/ { inc = $2; gsub(/"/, "", inc); sub(/.*\//, "", inc); print FILENAME, inc }' \
    $(ls src/*.c src/*.h src/ref/*.c arch/*/*.c arch/*/*.h cli/*.c cli/*.h 2>/dev/null) > "$dir/includes"
awk '{ sub(/.*\//, "", $1); if ($1 ~ /\.h$/) print $1, $2 }' "$dir/includes" > "$dir/hedges"
cyclic "$dir/hedges" > "$dir/cycle"
none "$dir/cycle" "headers include each other in a cycle"
# kernels may include the kernel ABI (kernels.h, the list kernels.inc), the
# RNG, and headers of the kernel layer itself (src/ref/*.h, arch/**/*.h)
ls src/ref/*.h arch/*.h arch/*/*.h 2>/dev/null | sed 's|.*/||' > "$dir/kernel_headers"
printf 'kernels.h\nkernels.inc\nrng.h\n' >> "$dir/kernel_headers"
awk 'NR == FNR { ok[$1]; next } $1 ~ /^(src\/ref|arch)\// && !($2 in ok)' \
    "$dir/kernel_headers" "$dir/includes" > "$dir/bad"
none "$dir/bad" "kernels include model headers"
ls cli/*.h | sed 's|.*/||' > "$dir/cli_headers"; echo ngpt.h >> "$dir/cli_headers"
ls bench/*.h | sed 's|.*/||' > "$dir/bench_headers"
awk 'NR == FNR { bench[$1]; next } FILENAME == ARGV[2] { ok[$1]; next }
     $1 ~ /^cli\// && !($2 in ok) && !($1 ~ /^cli\/(cmd_bench|bench_[a-z_]+)\.c$/ && ($2 in bench))' \
    "$dir/bench_headers" "$dir/cli_headers" "$dir/includes" \
    > "$dir/bad"
none "$dir/bad" "the tool includes internal headers"

# ---- the build: a toolchain file that does not exist is an error
if command -v "${MAKE:-make}" > /dev/null 2>&1; then
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -n -s \
        TOOLCHAIN=toolchains/no-such-board.mk deps > "$dir/out" 2>&1
    rc=$?
    [ $rc -ne 0 ] && grep -q "toolchains/no-such-board.mk: no such file" "$dir/out"
    check $? "make TOOLCHAIN=<missing> stops naming the file (exit $rc): $(cat "$dir/out")"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -n -s \
        TOOLCHAIN=toolchains/aarch64-linux-gnu.mk deps > "$dir/out" 2>&1
    grep -q "aarch64-linux-gnu-gcc" "$dir/out"
    check $? "make TOOLCHAIN=<file> reads the file: $(cat "$dir/out")"
fi
echo "test_structure: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
