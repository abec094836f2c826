#!/bin/sh
# test_fpmode_scope.sh — every function include/ngpt.h declares starts its
# body with NGPT_FPMODE_SCOPE (src/base/fpmode.h, docs/DESIGN.md §4): the
# library computes in its own floating-point mode whatever mode the caller's
# thread runs in, with no exception to remember. The declarations are read
# the way tests/public_decls.h reads them (a line at column 0, not a typedef,
# whose first "(" follows an ngpt_ name), so a function added to the header
# later is checked without touching this file. Its definition is the line in
# src/ that starts with its return type and holds "name(", and the line after
# its "{" must be exactly "    NGPT_FPMODE_SCOPE;".
# Prints the run.sh summary line.
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }

# one name a line, as the tests' declaration list has them
names=$(awk '/^[ \/*#]/ || /typedef/ { next }
             match($0, /ngpt_[a-z0-9_]*\(/) && RSTART == index($0, "(") - RLENGTH + 1 {
                 print substr($0, RSTART, RLENGTH - 1)
             }' include/ngpt.h | sort -u)
n=$(echo "$names" | grep -c .)
[ "$n" -gt 50 ]
check $? "found $n declarations in include/ngpt.h (run from the source tree)"

# "file:line name first-line-of-body" for every definition of a declared name
awk -v names="$names" '
    BEGIN { split(names, list, "\n"); for (i in list) want[list[i]] }
    FNR == 1 { pending = "" }
    pending != "" && $0 == "{" { getline body; print where "\t" pending "\t" body; pending = ""; next }
    /^[A-Za-z_]/ && !/^static / && !/;[ \t]*$/ && match($0, /[ *]ngpt_[a-z0-9_]*\(/) {
        name = substr($0, RSTART + 1, RLENGTH - 2)
        if (!(name in want)) next
        where = FILENAME ":" FNR
        if (index($0, "{")) print where "\t" name "\t" substr($0, index($0, "{") + 1)   # one line
        else pending = name
    }' src/*/*.c > "${TMPDIR:-/tmp}/fpmode_scope.$$"
for name in $names; do
    def=$(awk -F '\t' -v n="$name" '$2 == n' "${TMPDIR:-/tmp}/fpmode_scope.$$" | head -n 1)
    if [ -z "$def" ]; then
        check 1 "$name is declared in include/ngpt.h, but no definition of it was found in src/ \
(a line \"<type> $name(...)\" followed by a line \"{\")"
        continue
    fi
    where=$(printf '%s\n' "$def" | cut -f1)
    body=$(printf '%s\n' "$def" | cut -f3-)
    [ "$body" = "    NGPT_FPMODE_SCOPE;" ]
    check $? "$where: $name (declared in include/ngpt.h) does not start with NGPT_FPMODE_SCOPE: \
make \"    NGPT_FPMODE_SCOPE;\" the first line of its body and include \"base/fpmode.h\" \
(src/base/fpmode.h: every public function runs in the library's floating-point mode)"
done
rm -f "${TMPDIR:-/tmp}/fpmode_scope.$$"
echo "test_fpmode_scope: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
