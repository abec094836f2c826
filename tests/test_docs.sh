#!/bin/sh
# test_docs.sh — what the docs say about the sources, where a script can see
# it (reads sources only):
#  - docs/DESIGN.md's §2 "Where things live" and README's "Layout" name
#    every folder of src/ and every top-level folder of the repository
#    (docs/ aside), and docs/ARCHITECTURE.md's drawing every folder of src/;
#  - the first comment of a file of the library (src/, arch/), which says
#    what the file holds, names no function that another file defines.
# Prints the run.sh summary line.
passed=0 failed=0
check() { if [ "$1" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

# ---- the folders
# the repository's top-level folders: git's when this is a clone (a build
# directory or a venv beside the sources is not the project's), else every one
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files | sed -n 's|^\([^./][^/]*\)/.*|\1|p' | sort -u
else
    ls -d */ | sed 's|/$||' | grep -v '^build$'
fi | grep -v '^docs$' > "$dir/top"
ls -d src/*/ | sed 's|^src/||; s|/$||' > "$dir/src"
[ -s "$dir/top" ] && [ -s "$dir/src" ]
check $? "the folders are read"
sed -n '/^## 2\. /,/^## 3\. /p' docs/DESIGN.md > "$dir/design"
sed -n '/^## Layout/,/^## /p' README.md > "$dir/readme"
# names DOC NAME...: the names that DOC does not write as "NAME/"
names() {
    doc=$1; shift
    for n in "$@"; do grep -qE "(^|[^A-Za-z0-9_./])$n/" "$doc" || printf '%s/ ' "$n"; done
}
for doc in design readme; do
    missing=$(names "$dir/$doc" src $(cat "$dir/top") $(cat "$dir/src"))
    [ -z "$missing" ]
    check $? "$doc: folders it does not name: $missing"
done
missing=$(names docs/ARCHITECTURE.md $(sed 's|^|src/|' "$dir/src"))
[ -z "$missing" ]
check $? "docs/ARCHITECTURE.md: folders of src/ it does not draw: $missing"

# ---- a library file's first comment names only functions it defines: each
# ngpt_ function it names (defined somewhere at a line's start) is defined
# there, for a family (ngpt_cache_*) every member, and for a short form
# after a name ("ngpt_x_save / _load", "ngpt_x_load and its _mem twin")
# either reading (ngpt_x_load, ngpt_x_load_mem)
files=$(ls src/*/*.c arch/*/*.c)
awk 'FNR == 1 { head = ($0 ~ /^\/\*/); last = "" }
     head { while (match($0, /ngpt_[a-z0-9_]+\*?|[ (\/]_[a-z][a-z0-9_]*/)) {
                n = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH)
                if (n ~ /^ngpt_/) { print "names", FILENAME, n; last = n; continue }
                if (last == "") continue
                stem = last; sub(/_[a-z0-9]+\*?$/, "", stem); sub(/^./, "", n)
                print "names", FILENAME, stem n; print "names", FILENAME, last n } }
     head && /\*\// { head = 0 }
     /^[a-z].*[ *]ngpt_[a-z0-9_]+\(/ { match($0, /[ *]ngpt_[a-z0-9_]+\(/)
                                      print "defines", FILENAME, substr($0, RSTART + 1, RLENGTH - 2) }' \
    $files > "$dir/fns"
awk '$1 == "defines" { def[$3] = def[$3] " " $2; next }
     { names[NR] = $2 " " $3 }
     END {
         for (i in names) {
             split(names[i], a, " "); file = a[1]; name = a[2]
             family = sub(/\*$/, "", name)
             for (d in def)
                 if ((family ? index(d, name) == 1 : d == name) && !index(def[d] " ", " " file " "))
                     print file ": " d " (defined in" def[d] ")"
         }
     }' "$dir/fns" | sort -u > "$dir/bad"
grep -q defines "$dir/fns" && [ ! -s "$dir/bad" ]
check $? "a file's first comment names a function another file defines: $(tr '\n' ';' < "$dir/bad")"

echo "test_docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
