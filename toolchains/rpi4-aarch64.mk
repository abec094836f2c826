# Raspberry Pi 4 (Cortex-A72) with a 64-bit OS: no dotprod, no LSE atomics.
include toolchains/aarch64-linux-gnu.mk
CPUFLAGS := -mcpu=cortex-a72
BUILD := build/rpi4
