#!/bin/sh
# test_structure.sh — the floor plan docs/ARCHITECTURE.md draws, checked on
# the objects of this build (so the kernels of its ISA are included) and on
# the sources. A file's folder is its layer; from the bottom:
#
#   0 base       src/base
#   1 kernels    src/ref, arch/<isa> (and the kernel ABI at src/'s root)
#   2 runtime    src/runtime        2 tokenizer   src/tokenizer
#   3 ops        src/ops            3 grammar     src/grammar (above the tokenizer: its trie)
#   3 template   src/template (above the tokenizer: a rendering's tokens)
#   4 model      src/model
#   5 io         src/io
#   6 train      src/train          6 generate    src/generate
#   6 import     src/import (Hugging Face files -> a checkpoint: above io and tokenizer)
#
# Checked:
#  - a layer calls (nm: who defines and who uses each symbol) and includes
#    only its own folder and the layers below it; two folders on the same
#    floor never reach each other;
#  - kernels use nothing of base but the random numbers (base/philox.c,
#    base/rng.h): they know no context, config or error;
#  - no cycle between object files, nor between headers, nor between
#    folders (calls and includes together: two rooms never reach each other);
#  - the library never calls the tools; the tool (cli/) calls only functions
#    of the public header and includes only ngpt.h and its own headers,
#    except that `ngpt bench`'s command (cli/cmd_bench.c) drives bench/
#    through bench/ngpt_bench.h; bench/ calls the public API, its own files,
#    the kernel cases (kcases/), the kernels and the random numbers, and
#    nothing of the tool (cli/); the bench layer and the kernel cases call
#    only kernels; no test links bench/'s files or includes its headers
#    (tests reach the kernel cases in kcases/; the tool's own tests, the
#    shell tests and the fuzz replay of cli_main, run the whole tool); the
#    shipped tool links nothing from tests/;
#  - every folder of src/ has a floor here;
#  - no more than a handful of files at src/'s root;
#  - no internal header (src/, arch/, bench/, kcases/, cli/) over 200 lines:
#    a header that grows that long holds two concerns (include/ngpt.h, the
#    public manual, is not one of them);
#  - make TOOLCHAIN=<missing file> stops with an error naming the file.
# Env: BUILD (build dir). Prints the run.sh summary line.
B=${BUILD:-build}
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
# none FILE MESSAGE: FILE lists violations; passes when it is empty
none() { [ ! -s "$1" ]; check $? "$2: $(tr '\n' ';' < "$1")"; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

# The layer of a path (a module "src/model/forward" or a file): its floor
# number, or -1 outside the library. Shared by every awk below.
LAYER='function floor_of(p) {
           if (p ~ /^src\/base\//) return 0
           if (p ~ /^(src\/ref|arch)\// || p ~ /^src\/[^\/]+$/) return 1
           if (p ~ /^src\/(runtime|tokenizer)\//) return 2
           if (p ~ /^src\/(ops|grammar|template)\//) return 3
           if (p ~ /^src\/model\//) return 4
           if (p ~ /^src\/io\//) return 5
           if (p ~ /^src\/(train|generate|import)\//) return 6
           return -1
       }
       function room_of(p) {   # the folder, or the kernel layer as one room
           if (floor_of(p) == 1) return "kernels"
           sub(/\/[^\/]*$/, "", p); return p
       }
       function allowed(from, to) {
           if (floor_of(from) < 0 || floor_of(to) < 0) return 1
           if (room_of(from) == room_of(to)) return 1
           if (floor_of(from) == 1 && floor_of(to) == 0)
               return to ~ /^src\/base\/(philox|rng\.h)/
           return floor_of(to) < floor_of(from)
       }'

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
objs=$(find "$B/obj/src" "$B/obj/arch" "$B/obj/cli" "$B/obj/bench" "$B/obj/kcases" -name '*.o' 2>/dev/null | sort)
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

awk "$LAYER"' !allowed($1, $2) { print $1 " -> " $2 " (" $3 ")" }' "$dir/calls" > "$dir/bad"
none "$dir/bad" "a layer calls a layer above it or beside it"

awk '$1 ~ /^src\// && $2 ~ /^(cli|bench)\//' "$dir/calls" > "$dir/bad"
none "$dir/bad" "the library calls the tools"

grep -o 'ngpt_[a-z0-9_]*(' include/ngpt.h | tr -d '(' | sort -u > "$dir/public"
awk 'NR == FNR { pub[$1]; next }
     $1 ~ /^cli\// && $2 !~ /^cli\// && !($3 in pub) && !($1 == "cli/cmd_bench" && $2 ~ /^bench\//)' \
    "$dir/public" "$dir/calls" > "$dir/bad"
none "$dir/bad" "the tool calls internal functions"
awk 'NR == FNR { pub[$1]; next }
     $1 ~ /^bench\// && $2 !~ /^(bench|kcases|src\/ref|arch)\// && $2 != "src/base/philox" && !($3 in pub)' \
    "$dir/public" "$dir/calls" > "$dir/bad"
none "$dir/bad" "ngpt bench calls the library around its public API"
awk '$1 ~ /^(bench|kcases)\// && $2 ~ /^cli\//' "$dir/calls" > "$dir/bad"
none "$dir/bad" "ngpt bench calls into the tool (its command drives it, not the other way)"
awk 'function layer(m) { return m ~ /^(bench\/(timing|peak|peak_avx512|kernel_bench)$|kcases\/)/ }
     layer($1) && !layer($2) && $2 !~ /^(src\/ref|arch)\// && $2 != "src/base/philox"' \
    "$dir/calls" > "$dir/bad"
none "$dir/bad" "the bench layer calls more than kernels"
# (the source names its debug information carries: a build with -g)
[ -f "$B/ngpt" ] && strings -a "$B/ngpt" | grep -E '^tests/[a-z_/]*\.c$' | sort -u > "$dir/bad"
none "$dir/bad" "the ngpt binary links files of tests/"
# the tests' link lines, as make would run them (-B: every one, built or not)
if command -v "${MAKE:-make}" > /dev/null 2>&1; then
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -n -B -s BUILD="$B" \
        $(ls tests/test_*.c | sed "s|^tests/\(.*\)\.c\$|$B/tests/\1|") 2> /dev/null |
        grep -- "-o $B/tests/test_" | grep -E '(^| |-I)bench/' | sed 's/ .*-o / -o /' > "$dir/bad"
    none "$dir/bad" "a test links or reaches bench/ (the kernel cases are kcases/)"
fi
grep -l '^#include ".*bench/' tests/*.c tests/*.h > "$dir/bad"
none "$dir/bad" "a test includes a header of bench/"

# ---- the include graph of the project's own headers: "file included-file"
# (an include is resolved against the file's own folder, then src/, then
# include/, then cli/ and bench/ for the tools)
for f in $(ls src/*.h src/*/*.c src/*/*.h arch/*.h arch/*/*.c arch/*/*.h cli/*.c cli/*.h \
              bench/*.c bench/*.h kcases/*.c kcases/*.h 2>/dev/null); do
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        d=$(dirname "$f")
        for cand in "$d/$inc" "src/$inc" "include/$inc" "cli/$inc" "bench/$inc" "kcases/$inc"; do
            if [ -f "$cand" ]; then
                echo "$f $(realpath --relative-to=. "$cand")"
                continue 2
            fi
        done
        echo "$f unresolved:$inc"
    done
done > "$dir/includes"
grep unresolved: "$dir/includes" > "$dir/bad"
none "$dir/bad" "includes that name no file of the project"
awk '$1 ~ /\.h$/ && $1 != $2' "$dir/includes" > "$dir/hedges"
cyclic "$dir/hedges" > "$dir/cycle"
none "$dir/cycle" "headers include each other in a cycle"
awk "$LAYER"' $2 != "src/kernels.inc" && !allowed($1, $2) { print $1 " includes " $2 }' \
    "$dir/includes" > "$dir/bad"
none "$dir/bad" "a layer includes a header of a layer above it or beside it"
awk '$1 ~ /^cli\// && $2 !~ /^cli\// && $2 != "include/ngpt.h" &&
     !($1 == "cli/cmd_bench.c" && $2 == "bench/ngpt_bench.h")' "$dir/includes" > "$dir/bad"
none "$dir/bad" "the tool includes internal headers"
awk '$1 ~ /^(bench|kcases)\// && $2 !~ /^((bench|kcases)\/|include\/ngpt\.h|src\/kernels\.(h|inc)|src\/gemm\.h|src\/base\/rng\.h)/' \
    "$dir/includes" > "$dir/bad"
none "$dir/bad" "ngpt bench includes library headers beyond the kernel ABI (or the tool's)"

# ---- the folders: calls and includes between rooms run one way
awk "$LAYER"' { a = room_of($1); b = room_of($2); if (a != b) print a, b }' "$dir/calls" "$dir/includes" |
    sort -u > "$dir/redges"
cyclic "$dir/redges" > "$dir/cycle"
[ ! -s "$dir/cycle" ]
check $? "folders reach each other in a cycle: $(grep -F -w -f "$dir/cycle" "$dir/redges" | \
    awk 'NR == FNR { c[$1]; next } ($1 in c) && ($2 in c)' "$dir/cycle" - | tr '\n' ';')"

# ---- every folder of src/ has its floor above (a new one is unchecked until then)
ls -d src/*/ | awk "$LAYER"' floor_of($0 "x") < 0' > "$dir/bad"
none "$dir/bad" "folders of src/ without a floor in test_structure.sh's floor_of"

# ---- src/'s root holds only the kernel ABI: a handful of files
ls src | grep -v '^[a-z]*$' > "$dir/root"
[ "$(wc -l < "$dir/root")" -le 5 ]
check $? "src/ has more than a handful of files at its root: $(tr '\n' ' ' < "$dir/root")"

# ---- headers stay short: one concern each
for f in $(ls src/*.h src/*/*.h arch/*.h arch/*/*.h bench/*.h kcases/*.h cli/*.h 2>/dev/null); do
    n=$(wc -l < "$f")
    [ "$n" -le 200 ] || echo "$f ($n lines)"
done > "$dir/bad"
none "$dir/bad" "headers over 200 lines"

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
