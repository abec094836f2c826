#!/bin/sh
# suite.sh — what `make test` runs: every build's suite, then one total.
#   1. the native build (make test-native)
#   2. when the native build's kernels are avx512 (ARCH=auto on a CPU with
#      AVX-512): the avx2 build too, natively, in build/avx2 — the binary for
#      any Haswell/Zen, with the same golden constants
#   3. on x86-64 Linux (and no TOOLCHAIN given): the AArch64 and ARMv7 builds
#      under qemu-user, installing the cross toolchain when it can
# Each run appends "label passed failed" to the results file; a build that
# fails before its tests run is recorded as one failure.
MAKE=${MAKE:-make}
results=$(pwd)/build/test-results
mkdir -p build && : > "$results"

run() {     # run LABEL [make arguments]
    label=$1; shift
    before=$(wc -l < "$results")
    $MAKE --no-print-directory "$@" test-native RESULTS="$results"
    [ "$(wc -l < "$results")" -gt "$before" ] || echo "$label-build-failed 0 1" >> "$results"
}

run native ${TOOLCHAIN:+TOOLCHAIN=$TOOLCHAIN}
if [ "$($MAKE --no-print-directory -s ${TOOLCHAIN:+TOOLCHAIN=$TOOLCHAIN} print-arch)" = avx512 ]; then
    run avx2 ARCH=avx2 BUILD=build/avx2
fi
if [ -z "$TOOLCHAIN" ] && [ "$(uname -m)" = x86_64 ] && [ "$(uname -s)" = Linux ]; then
    if sh tools/deps-cross.sh; then
        run aarch64 TOOLCHAIN=toolchains/aarch64-linux-gnu.mk
        run armv7 TOOLCHAIN=toolchains/armv7-linux-gnueabihf.mk
    else
        echo "skipped: ARM runs under qemu (no cross toolchain; see the command above)" >> "$results"
    fi
fi
sh tests/total.sh "$results"
