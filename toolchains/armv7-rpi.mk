# Raspberry Pi 2, 3 and 4 with a 32-bit OS (Raspberry Pi OS 32-bit, armhf):
# ARMv7-A with NEON-VFPv4 and hard float, tuned for the Pi 2's Cortex-A7;
# the same binary runs on the Cortex-A53 (Pi 2 v1.2, Pi 3) and the
# Cortex-A72 (Pi 4). For a Pi 3/4 only, tune for it instead:
#   make TOOLCHAIN=toolchains/armv7-rpi.mk CPUFLAGS="-mcpu=cortex-a53 -mfpu=neon-fp-armv8 -mfloat-abi=hard"
# (not for Pi 1 / Zero: ARMv6 without NEON). Tests run under qemu-arm.
include toolchains/armv7-linux-gnueabihf.mk
CPUFLAGS := -mcpu=cortex-a7 -mfpu=neon-vfpv4 -mfloat-abi=hard
BUILD := build/armv7-rpi
