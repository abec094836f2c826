#!/bin/sh
# suite.sh — what `make test` runs: every build's suite, then one total.
#   1. the native build (make test-native)
#   2. when the native build's kernels are avx512 (ARCH=auto on a CPU with
#      AVX-512): the avx2 build too, natively, in build/avx2 — the binary for
#      any Haswell/Zen, with the same golden constants; and when they have
#      AVX-512 VNNI, the avx512 build without it (VNNI=0, build/avx512-novnni:
#      an AVX-512 CPU before Ice Lake and Zen 4) on the tests of the kernels,
#      the CPU check and the 8-bit and 4-bit models
#   3. on x86-64 Linux (and no TOOLCHAIN given): the AArch64 and ARMv7 builds
#      under qemu-user, installing the cross toolchain when it can, and the
#      Pi 5's ARMv8.2 build (dot product instructions) on the tests of the
#      kernels and 8-bit and 4-bit models
# Each run appends "label passed failed" to the results file; a build that
# fails before its tests run is recorded as one failure. The builds follow
# one another; each compiles TEST_JOBS files at once (the Makefile's
# TEST_JOBS: the CPUs online) and runs its tests TEST_JOBS at a time.
MAKE=${MAKE:-make}
case " $MAKEFLAGS" in     # under make -jN the builds share its N job slots
*" -j"*) jobs= ;;
*) jobs=-j${TEST_JOBS:-1} ;;
esac
DOTPROD_TESTS="test_kernels test_gemm test_q8 test_q4 test_weights test_forward"
NOVNNI_TESTS="test_kernels test_cpu test_q8 test_q4"
results=$(pwd)/build/test-results
mkdir -p build && : > "$results"

run() {     # run LABEL [make arguments]
    label=$1; shift
    before=$(wc -l < "$results")
    $MAKE --no-print-directory $jobs "$@" test-native RESULTS="$results"
    [ "$(wc -l < "$results")" -gt "$before" ] || echo "$label-build-failed 0 1" >> "$results"
}

run native ${TOOLCHAIN:+TOOLCHAIN=$TOOLCHAIN}
if [ "$($MAKE --no-print-directory -s ${TOOLCHAIN:+TOOLCHAIN=$TOOLCHAIN} print-arch)" = avx512 ]; then
    run avx2 ARCH=avx2 BUILD=build/avx2
    if [ "$($MAKE --no-print-directory -s ${TOOLCHAIN:+TOOLCHAIN=$TOOLCHAIN} print-vnni)" = 1 ]; then
        run avx512-novnni ARCH=avx512 VNNI=0 BUILD=build/avx512-novnni TEST_LABEL=-novnni \
            TEST_BIN="$(for t in $NOVNNI_TESTS; do printf 'build/avx512-novnni/tests/%s ' $t; done)" \
            TEST_SH="tests/test_cli_quantize.sh tests/test_cli_checksum.sh"
    fi
fi
if [ -z "$TOOLCHAIN" ] && [ "$(uname -m)" = x86_64 ] && [ "$(uname -s)" = Linux ]; then
    if sh tools/deps-cross.sh; then
        run aarch64 TOOLCHAIN=toolchains/aarch64-linux-gnu.mk
        run armv7 TOOLCHAIN=toolchains/armv7-linux-gnueabihf.mk
        # the Pi 5's build (ARMv8.2, SDOT for the 8-bit products): the tests
        # of the kernels, the 8-bit model and the board checksums
        run aarch64-dotprod TOOLCHAIN=toolchains/rpi5-aarch64.mk TEST_LABEL=-dotprod \
            TEST_BIN="$(for t in $DOTPROD_TESTS; do printf 'build/rpi5/tests/%s ' $t; done)" \
            TEST_SH="tests/test_cli_quantize.sh tests/test_cli_checksum.sh"
    else
        echo "skipped: ARM runs under qemu (no cross toolchain; see the command above)" >> "$results"
    fi
fi
sh tests/total.sh "$results"
