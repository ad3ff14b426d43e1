# lit configuration for tilegen's golden tests (tests/lit/) and error corpus (tests/errors/).
# A test is a .yaml or .test file with `# RUN:` lines; %tilegen is the CLI under test.
import os
import lit.formats

config.name = "tilegen"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".yaml", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilegen_obj_root, "lit-out")
# Only these folders hold lit tests; kernels/, unit/ etc. are run by ctest directly.
config.excludes = ["unit", "kernels", "cmake", "schema", "wgsl", "fuzz", "browser", "Inputs", "CMakeLists.txt"]

config.environment["PATH"] = os.pathsep.join(
    [config.tilegen_bin_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%tilegen", os.path.join(config.tilegen_bin_dir, "tilegen")))
config.substitutions.append(("%kernels", os.path.join(config.tilegen_src_root, "kernels")))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%runtime_include", os.path.join(config.tilegen_src_root, "runtime", "include")))

# nvcc (CUDA toolkit), for the PTX golden tests of tests/lit/cuda: `%if nvcc %{ ... %}`.
import shutil
nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
if os.path.exists(nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", nvcc))
else:
    lit_config.note("nvcc not found: the PTX checks of tests/lit/cuda are skipped")

# hipcc (Debian's ROCm 5.2: HIP device compiles without an AMD GPU, tests/hip) and clang++ (the
# Metal type check against the declaration shim cmake/metal, tests/metal/typecheck.sh):
# `REQUIRES: hipcc` / `REQUIRES: metal-shim`.
hipcc = os.environ.get("HIPCC") or shutil.which("hipcc")
if hipcc and os.path.exists("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc"):
    config.available_features.add("hipcc")
    config.substitutions.append(("%hipcc", hipcc))
clangxx = shutil.which("clang++")
if clangxx:
    config.available_features.add("metal-shim")
    config.substitutions.append(("%metal_typecheck", clangxx + " -x c++ -std=c++20 -fms-extensions -fsyntax-only -nostdinc -nostdinc++ -isystem " +
                                 os.path.join(config.tilegen_src_root, "cmake", "metal") + " -Wno-unknown-attributes -Werror"))
