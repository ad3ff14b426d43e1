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
