# Raspberry Pi 5 (Cortex-A76) with a 64-bit OS.
include toolchains/aarch64-linux-gnu.mk
CPUFLAGS := -mcpu=cortex-a76
BUILD := build/rpi5
