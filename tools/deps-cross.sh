#!/bin/sh
# deps-cross.sh — the cross compilers, ARM SLEEF/xxHash/cJSON/utf8proc and qemu-user that
# `make test` needs for the ARM runs (Debian/Ubuntu x86-64 hosts). Installs
# them as root (or with passwordless sudo); otherwise prints the command.
need=
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need=1
command -v arm-linux-gnueabihf-gcc >/dev/null 2>&1 || need=1
command -v qemu-aarch64 >/dev/null 2>&1 || need=1
command -v qemu-arm >/dev/null 2>&1 || need=1
[ -e /usr/aarch64-linux-gnu/include/stdio.h ] || need=1
[ -e /usr/arm-linux-gnueabihf/include/stdio.h ] || need=1
[ -e /usr/include/aarch64-linux-gnu/sleef.h ] || need=1
[ -e /usr/include/arm-linux-gnueabihf/sleef.h ] || need=1
[ -e /usr/lib/aarch64-linux-gnu/libcjson.so ] || need=1
[ -e /usr/lib/arm-linux-gnueabihf/libcjson.so ] || need=1
[ -e /usr/lib/aarch64-linux-gnu/libutf8proc.so ] || need=1
[ -e /usr/lib/arm-linux-gnueabihf/libutf8proc.so ] || need=1
[ -z "$need" ] && exit 0
pkgs="gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross qemu-user libsleef-dev:arm64 libxxhash-dev:arm64 libsleef-dev:armhf libxxhash-dev:armhf libcjson-dev:arm64 libcjson-dev:armhf libutf8proc-dev:arm64 libutf8proc-dev:armhf"
cmd="dpkg --add-architecture arm64 && dpkg --add-architecture armhf && apt-get update && apt-get install -y $pkgs"
if command -v apt-get >/dev/null 2>&1; then
    sudo=
    [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && sudo=sudo; }
    if [ "$(id -u)" = 0 ] || [ -n "$sudo" ]; then
        echo "deps-cross: installing $pkgs"
        $sudo dpkg --add-architecture arm64 && $sudo dpkg --add-architecture armhf
        $sudo apt-get update -q || true      # a mirror mid-sync must not stop us
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs && exit 0
    fi
fi
echo "deps-cross: the ARM runs need a cross toolchain and qemu-user; run: sudo sh -c '$cmd'" >&2
exit 1
