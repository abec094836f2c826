#!/bin/sh
# deps.sh — makes sure SLEEF, xxHash, cJSON and utf8proc headers are visible to $CC.
# Installs them with the system's package manager when it can (apt-get on
# Debian/Ubuntu/Raspberry Pi OS, brew on macOS); otherwise prints the exact
# command to run and fails.
CC=${CC:-cc}
probe() {
    printf '#include <math.h>\n#include <sleef.h>\n#include <xxhash.h>\n#include <cjson/cJSON.h>\n#include <utf8proc.h>\nint main(void){return 0;}\n' |
        $CC $NGPT_DEPS_CPPFLAGS -E -x c - >/dev/null 2>&1
}
probe && exit 0

machine=$($CC -dumpmachine 2>/dev/null)
if [ "$(uname -s)" = Darwin ]; then
    cmd="brew install sleef xxhash cjson utf8proc"
    if command -v brew >/dev/null 2>&1; then
        echo "deps: installing SLEEF, xxHash, cJSON and utf8proc: $cmd"
        $cmd && exit 0
    fi
elif command -v apt-get >/dev/null 2>&1; then
    suffix=
    case "$machine" in
        aarch64-linux-gnu) suffix=:arm64 ;;
        arm-linux-gnueabihf) suffix=:armhf ;;
    esac
    pkgs="libsleef-dev$suffix libxxhash-dev$suffix libcjson-dev$suffix libutf8proc-dev$suffix"
    prep=
    [ -n "$suffix" ] && prep="dpkg --add-architecture ${suffix#:} && "
    cmd="${prep}apt-get update && apt-get install -y $pkgs"
    if [ "$(id -u)" = 0 ]; then
        echo "deps: installing $pkgs"
        [ -n "$suffix" ] && dpkg --add-architecture "${suffix#:}"
        # A partial index failure (a mirror mid-sync) must not stop the install.
        apt-get update -q || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs && probe && exit 0
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        echo "deps: installing $pkgs with sudo"
        [ -n "$suffix" ] && sudo dpkg --add-architecture "${suffix#:}"
        sudo apt-get update -q || true
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs && probe && exit 0
    fi
    cmd="sudo sh -c '$cmd'"
else
    cmd="install SLEEF (>= 3.5), xxHash (>= 0.8), cJSON (>= 1.7.13) and utf8proc (>= 2.1) development packages"
fi
echo "deps: SLEEF, xxHash, cJSON or utf8proc headers are missing for $CC ($machine)." >&2
echo "deps: run: $cmd" >&2
exit 1
