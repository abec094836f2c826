#!/bin/sh
# test_shared_lib.sh — libngpt.so beside libngpt.a (README "Shared library"):
#  - exports exactly the functions include/ngpt.h declares, read the way
#    tests/public_decls.h reads them (no more: internals stay hidden; no
#    fewer: a declared function defined without the header's visibility);
#  - its soname is libngpt.so.0.MINOR for 0.x (MAJOR from 1.0), with the
#    symlinks libngpt.so -> libngpt.so.SOVERSION -> libngpt.so.VERSION;
#  - the static library's global symbols all keep the ngpt_ prefix;
#  - a program linked against the .so (tests/shared_checksum.c) prints the
#    static CLI's `ngpt checksum` lines, which README promises everywhere;
#  - `make install` (the examples' prefix) holds both libraries and a
#    pkg-config file for either way of linking.
# Env: BUILD (build dir), RUN_ENV (e.g. qemu). Prints the run.sh summary line.
. "$(dirname "$0")/cli_lib.sh"

version=$(awk '/^#define NGPT_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' include/ngpt.h)
case $version in
0.*) soversion=$(echo "$version" | cut -d. -f1-2) ;;
*) soversion=$(echo "$version" | cut -d. -f1) ;;
esac
[ "$(readlink "$B/libngpt.so")" = "libngpt.so.$soversion" ] &&
    [ "$(readlink "$B/libngpt.so.$soversion")" = "libngpt.so.$version" ] && [ -f "$B/libngpt.so.$version" ]
check $? "symlinks libngpt.so -> libngpt.so.$soversion -> libngpt.so.$version: $(ls -l "$B"/libngpt.so* 2>&1)"
soname=$(readelf -d "$B/libngpt.so" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libngpt.so.$soversion" ]
check $? "soname libngpt.so.$soversion: got '$soname'"
needed=$(readelf -d "$B/libngpt.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "$needed" | grep -q "libsleef\.so" && echo "$needed" | grep -q "libcjson\.so"
check $? "SLEEF and cJSON are the .so's DT_NEEDED (xxHash is inlined): $needed"

# exactly the declared functions, every one a function (T)
awk '/^[ \/*#]/ || /typedef/ { next }
     match($0, /ngpt_[a-z0-9_]*\(/) && RSTART == index($0, "(") - RLENGTH + 1 {
         print substr($0, RSTART, RLENGTH - 1)
     }' include/ngpt.h | sort -u > "$dir/declared"
nm -D --defined-only "$B/libngpt.so" > "$dir/nm" 2>&1
awk 'NF == 3 { print $3 }' "$dir/nm" | sort -u > "$dir/exported"
[ "$(grep -c . "$dir/declared")" -gt 50 ]
check $? "found $(grep -c . "$dir/declared") declarations in include/ngpt.h (run from the source tree)"
extra=$(comm -13 "$dir/declared" "$dir/exported" | tr '\n' ' ')
[ -z "$extra" ]
check $? "exported but not declared in ngpt.h: $extra"
missing=$(comm -23 "$dir/declared" "$dir/exported" | tr '\n' ' ')
[ -z "$missing" ]
check $? "declared in ngpt.h but not exported: $missing"
notfn=$(awk 'NF == 3 && $2 != "T" { print $2 " " $3 }' "$dir/nm" | tr '\n' ' ')
[ -z "$notfn" ]
check $? "exported symbols that are not functions: $notfn"

# the static library keeps its namespace: every global symbol is ngpt_*
# (but for ASan's own markers of globals, __odr_asan.<name>)
others=$(nm --defined-only -g "$B/libngpt.a" 2>/dev/null |
         awk 'NF == 3 && $3 !~ /^ngpt_/ && $3 !~ /^__odr_asan[._]ngpt_/ { print $3 }' | tr '\n' ' ')
[ -z "$others" ] && nm --defined-only -g "$B/libngpt.a" 2>/dev/null | grep -q " T ngpt_rng_u32$"
check $? "libngpt.a's global symbols keep the ngpt_ prefix (internals included): $others"

# a program linked against the .so prints the static CLI's golden checksums
readelf -d "$B/tests/shared_checksum" 2>&1 | grep -q "(NEEDED).*\[libngpt.so.$soversion\]"
check $? "shared_checksum needs libngpt.so.$soversion"
$N init --seed 1 --out "$dir/m1.ngpt" > /dev/null 2>&1
$N checksum "$dir/m1.ngpt" > "$dir/want" 2> "$dir/err"
check $? "ngpt checksum (static): $(cat "$dir/err")"
$RUN_ENV "$B/tests/shared_checksum" "$dir/m1.ngpt" > "$dir/got" 2> "$dir/err"
check $? "shared_checksum runs: $(cat "$dir/err")"
cmp -s "$dir/want" "$dir/got" && readme_shows "$dir/got"
check $? "through libngpt.so, README's checksums of seed 1: $(tr '\n' ' ' < "$dir/got")"

# make install (done by make examples): both libraries, one pkg-config file
p="$B/examples/prefix/lib"
[ -f "$p/libngpt.a" ] && [ -f "$p/libngpt.so.$version" ] &&
    [ "$(readlink "$p/libngpt.so.$soversion")" = "libngpt.so.$version" ] &&
    [ "$(readlink "$p/libngpt.so")" = "libngpt.so.$soversion" ]
check $? "make install: libngpt.a, libngpt.so.$version and its links: $(ls "$p" 2>&1 | tr '\n' ' ')"
libs=$(PKG_CONFIG_PATH="$p/pkgconfig" pkg-config --libs ngpt)
static=$(PKG_CONFIG_PATH="$p/pkgconfig" pkg-config --static --libs ngpt)
echo "$libs" | grep -q -- "-lngpt" && ! echo "$libs" | grep -q -- "-lsleef" &&
    echo "$static" | grep -q -- "-lngpt .*-lsleef .*-lxxhash .*-lcjson"
check $? "ngpt.pc: shared '$libs', static '$static'"
summary test_shared_lib
