# Apple Silicon (M1 and later), macOS 11 or newer, with Apple's clang:
# arm64 with the NEON kernels, tuned for the M1 (ARMv8.5: its dot product
# instructions run the 8-bit products, as on the Pi 5). On the Mac, after
# `brew install sleef xxhash`: make TOOLCHAIN=toolchains/apple-silicon.mk
# (a plain `make` builds the same kernels, untuned). The target is part of
# CC so that compiling, linking and the Makefile's target detection agree.
# On Linux, `make check-apple` compiles every source this way (no SDK, no link).
CC := clang --target=arm64-apple-macos11
AR := ar
CPUFLAGS := -mcpu=apple-m1
BUILD := build/apple-silicon
