# 32-bit ARM Linux (Raspberry Pi OS 32-bit, Pi 2/3/4): ARMv7-A with NEON and
# VFPv4 (FMA), per llama.cpp #5481. Tests run under qemu-arm.
CC := arm-linux-gnueabihf-gcc
AR := arm-linux-gnueabihf-ar
CPUFLAGS ?= -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard
BUILD ?= build/armv7
# The guest's dynamic loader is started explicitly rather than found with
# -L: with -L, qemu-user 7.2 hangs (aarch64) or crashes (armv7) in the guest's
# pthread_create, and the thread pool needs threads.
RUN_ENV ?= qemu-arm /usr/arm-linux-gnueabihf/lib/ld-linux-armhf.so.3 --library-path /usr/arm-linux-gnueabihf/lib:/usr/lib/arm-linux-gnueabihf
