# Generic 64-bit ARM Linux (Debian cross compiler), ARMv8.0-A baseline: runs
# on Raspberry Pi 3/4/5 with a 64-bit OS. Tests run under qemu-aarch64.
CC := aarch64-linux-gnu-gcc
AR := aarch64-linux-gnu-ar
CPUFLAGS ?= -march=armv8-a
BUILD ?= build/aarch64
RUN_ENV ?= qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/lib/aarch64-linux-gnu
