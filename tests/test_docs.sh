#!/bin/sh
# test_docs.sh — what the docs say about the code, where a script can see it:
#  - docs/DESIGN.md's §2 "Where things live" and README's "Layout" name
#    every folder of src/ and every top-level folder of the repository
#    (docs/ aside), and docs/ARCHITECTURE.md's drawing every folder of src/;
#  - the first comment of a file of the library (src/, arch/), which says
#    what the file holds, names no function that another file defines;
#  - no file refers to the developers' notes beside the repository
#    (../shared: FORMATS.md, ANCHORS.md, peers/), which a clone has not;
#  - README's "Command line" synopsis is each command's usage lines
#    (`ngpt <cmd> --help` up to its first blank line, which name every
#    option the help describes): the same options with the same value
#    words, none twice unless the usage has it twice; the same commands as
#    `ngpt --help`; the same subcommands of `ngpt tokenizer` and `ngpt lora`.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

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

# ---- no file cites the developers' shared notes, which a clone lacks (the
# public sources are cited instead); this file names them, spelled out
notes='\.\./shared|shared/(FORMATS|peers|ANCHORS)|(FORMATS|ANCHORS)\.md'
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git grep -l -E "$notes" -- . ':!tests/test_docs.sh'
else
    grep -rlE --exclude-dir=build --exclude-dir=.git "$notes" . | grep -v 'tests/test_docs\.sh$'
fi > "$dir/bad"
[ ! -s "$dir/bad" ]
check $? "files cite the shared notes a clone lacks: $(tr '\n' ' ' < "$dir/bad")"

# ---- README's synopsis of the commands
# synopsis: the options of stdin's usage lines with their value words
# ("--top-k K", "--context exact|shift"), one a line, sorted
synopsis() {
    tr '\n' ' ' | grep -oE '(^|[[ |(])--?[a-z][a-z0-9-]*( [^-[ |][^ ]*)?' |
        sed -E 's/^[[ |(]//; s/[].]+$//' | sort
}
usage_lines() { awk '/^$/ { exit } { print }'; }
sed -n '/^## Command line/,/^[^ ]/p' README.md |
    awk -v d="$dir" '/^    ngpt / { cmd = $2 } cmd != "" && /^    / { print > (d "/readme." cmd) }'
$N --help | sed -n '/^commands:/,/^$/p' | awk 'NF && !/^commands:/ { print $1 }' | sort > "$dir/commands"
ls "$dir" | sed -n 's/^readme\.//p' | sort > "$dir/readme_commands"
[ -s "$dir/commands" ] && cmp -s "$dir/commands" "$dir/readme_commands"
check $? "README's synopsis has the commands of ngpt --help: $(tr '\n' ' ' < "$dir/readme_commands")"
for cmd in $(cat "$dir/commands"); do
    $N "$cmd" --help > "$dir/help" 2>&1 || echo "ngpt $cmd --help failed" >> "$dir/help"
    if [ "$cmd" = tokenizer ] || [ "$cmd" = lora ]; then     # commands of their own
        awk '/^  [a-z][a-z0-9-]+  / { print $1 }' "$dir/help" | sort > "$dir/want"
        sed -n "s/^    ngpt $cmd  *\([^ ]*\).*/\1/p" "$dir/readme.$cmd" | tr '|' '\n' | sort > "$dir/got"
    else
        usage_lines < "$dir/help" | synopsis > "$dir/want"
        synopsis < "$dir/readme.$cmd" > "$dir/got" 2> /dev/null
        # the options the help describes (a line's first word) are in its usage
        awk '/^ +--?[a-z]/ { sub(/,$/, "", $1); print $1 }' "$dir/help" | sort -u > "$dir/described"
        lacking=$(sed 's/ .*//' "$dir/want" | sort -u | comm -13 - "$dir/described" | tr '\n' ' ')
        [ -z "$lacking" ]
        check $? "ngpt $cmd --help describes options its usage lines lack: $lacking"
    fi
    sort -u "$dir/want" > "$dir/want_set"
    sort -u "$dir/got" > "$dir/got_set"
    [ -s "$dir/want" ] && cmp -s "$dir/want_set" "$dir/got_set"
    check $? "README's synopsis of ngpt $cmd: $(diff "$dir/want_set" "$dir/got_set" | grep '^[<>]' | tr '\n' ';')"
    # an option twice in README is twice in the usage lines (--data FILE [--data FILE ...])
    uniq -d "$dir/got" > "$dir/got_twice"
    twice=$(uniq -d "$dir/want" | comm -13 - "$dir/got_twice" | tr '\n' ';')
    [ -z "$twice" ]
    check $? "README's synopsis of ngpt $cmd names twice: $twice"
done

summary test_docs
