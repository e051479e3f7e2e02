# SPDX-License-Identifier: Apache-2.0
# Cross-compiles for 64-bit ARM Linux with Debian's cross compiler (g++-aarch64-linux-gnu) and runs the
# results under user-mode QEMU (qemu-user), so ctest drives the aarch64 test binaries from an x86 host.
# The target's libraries (libxxhash-dev:arm64, libgtest-dev:arm64) come from Debian multiarch: they live
# in /usr/lib/aarch64-linux-gnu, beside the host's, and share its /usr/include.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# find_library and find_package look in <prefix>/lib/aarch64-linux-gnu, never in the host's x86_64 one.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# The programs run on the cross toolchain's own C and C++ runtime, under /usr/aarch64-linux-gnu: -L makes
# QEMU take the dynamic loader from there, and LD_LIBRARY_PATH the libraries. Without the latter the loader
# consults the host's ld.so.cache, which lists multiarch's libc6:arm64 (pulled in by libxxhash0:arm64):
# a loader of one glibc build with the libc of another, under which creating a thread never returns.
find_program(BLUME_QEMU_AARCH64 qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR
    "${BLUME_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib")
