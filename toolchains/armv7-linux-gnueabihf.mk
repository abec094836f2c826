# 32-bit ARM Linux (Raspberry Pi OS 32-bit, Pi 2/3/4): ARMv7-A with NEON and
# VFPv4 (FMA), per llama.cpp #5481. Tests run under qemu-arm.
CC := arm-linux-gnueabihf-gcc
AR := arm-linux-gnueabihf-ar
CPUFLAGS ?= -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard
BUILD ?= build/armv7
RUN_ENV ?= qemu-arm -L /usr/arm-linux-gnueabihf -E LD_LIBRARY_PATH=/usr/lib/arm-linux-gnueabihf
