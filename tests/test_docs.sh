#!/bin/sh
# test_docs.sh — what the docs say about the sources, where a script can see
# it (reads sources only):
#  - docs/DESIGN.md's §2 "Where things live" and README's "Layout" name
#    every folder of src/ and every top-level folder of the repository
#    (docs/ aside), and docs/ARCHITECTURE.md's drawing every folder of src/.
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

echo "test_docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
