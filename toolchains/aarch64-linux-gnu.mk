# Generic 64-bit ARM Linux (Debian cross compiler), ARMv8.0-A baseline: runs
# on Raspberry Pi 3/4/5 with a 64-bit OS. Tests run under qemu-aarch64.
CC := aarch64-linux-gnu-gcc
AR := aarch64-linux-gnu-ar
CPUFLAGS ?= -march=armv8-a
BUILD ?= build/aarch64
# The guest's dynamic loader is started explicitly rather than found with
# -L: with -L, qemu-user 7.2 hangs (aarch64) or crashes (armv7) in the guest's
# pthread_create, and the thread pool needs threads.
RUN_ENV ?= qemu-aarch64 /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 --library-path /usr/aarch64-linux-gnu/lib:/usr/lib/aarch64-linux-gnu
