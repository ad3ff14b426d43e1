#!/usr/bin/env bash
# Installs what tilegen needs on a Debian 12 machine, only what is missing. Runs as root (or
# with sudo available). Safe to run repeatedly.
#   scripts/install-deps.sh           the build, the tests and the benchmarks' packages
#   scripts/install-deps.sh --torch   Debian's PyTorch (CPU) and its CMake package, for the
#                                     cmake.torch_ops test (scripts/test.sh installs it in the
#                                     background while it builds: about 2 minutes of apt)
set -euo pipefail

if [[ ${1:-} == --torch ]]; then
  packages=(python3-torch libtorch-dev)
else
packages=(
  cmake ninja-build g++ gcc make pkg-config      # build
  ccache                                         # scripts/test.sh: compiles shared across its trees
  libyaml-cpp-dev                                # spec parsing
  libgtest-dev googletest                        # unit tests
  llvm-14-tools                                  # FileCheck, not, lit.py (golden tests)
  clang-14 libclang-rt-14-dev                    # the sanitized build (ASan + UBSan) and the
                                                 # libFuzzer target (docs/testing.md)
  python3                                        # runs lit
  libopenblas-dev                                # CPU benchmark baseline
  hipcc libamdhip64-dev rocm-device-libs         # HIP targets: hipcc (ROCm 5.2) for gfx90a, HIP's
  clang-19 llvm-19 lld-19                        # headers; clang-19 + its objdump for gfx942 and
                                                 # gfx1100 (tests/hip, docs/hip.md); lld-19 links
                                                 # its AMDGPU code objects (without it clang-19
                                                 # takes Debian's default ld.lld, lld 14, which
                                                 # knows no elf64_amdgpu)
  chromium libvulkan1                            # WGSL tests: headless Chromium, and SwiftShader's
                                                 # Vulkan ICD (shipped with chromium) for Dawn in Node
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross    # Arm targets: the cross compiler and its C library
  qemu-user                                      # (a Recommends), qemu-aarch64 runs the result
                                                 # (tests/arm, docs/c-backend.md "Arm")
)
# Node.js + npm validate the JSON Schema (ajv-cli); keep a preinstalled node if there is one.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # Packages this architecture has none of (ROCm's on arm64, say) are named and skipped: the
  # tests that need them skip themselves (bench/run_cpu.sh runs natively on aarch64).
  available=()
  for p in "${missing[@]}"; do
    # Read the whole policy before matching: `grep -q` would exit at the first match, and under
    # pipefail apt-cache's SIGPIPE would then read as "no candidate".
    policy=$(apt-cache policy "$p" 2>/dev/null || true)
    if grep -q 'Candidate: [^(]' <<<"$policy"; then
      available+=("$p")
    else
      echo "install-deps: no $p for $(dpkg --print-architecture): skipped"
    fi
  done
  if ((${#available[@]})); then
    $SUDO apt-get install -y -qq --no-install-recommends "${available[@]}" >/dev/null
  fi
else
  echo "install-deps: everything is installed${1:+ ($1)}"
fi
