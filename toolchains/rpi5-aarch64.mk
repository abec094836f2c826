# Raspberry Pi 5 (Cortex-A76) with a 64-bit OS: ARMv8.2 with the dot product
# instructions (__ARM_FEATURE_DOTPROD: the 8-bit products use SDOT). Its
# tests run under qemu-aarch64 -cpu max, which has them too.
include toolchains/aarch64-linux-gnu.mk
CPUFLAGS := -mcpu=cortex-a76
BUILD := build/rpi5
RUN_ENV := qemu-aarch64 -cpu max /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 --library-path /usr/aarch64-linux-gnu/lib:/usr/lib/aarch64-linux-gnu
