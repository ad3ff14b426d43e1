# add_tile_kernels(tgt SPECS <shipped kernels> TARGETS c TORCH) against the installed package and
# the system's PyTorch (Debian's libtorch-dev + python3-torch here): configure, build the
# extension, then torch_ops.py imports it and checks every operator (values against torch's
# float64 math, error messages, Meta kernels, torch.compile where PyTorch has it).
# Exit 77 (ctest: skipped) where PyTorch or its CMake package is missing.
source "$(dirname "$0")/lib.sh"
python=${PYTHON:-/usr/bin/python3}
if ! torch_dir=$("$python" -c 'import torch, os, sys
for d in [getattr(__import__("torch.utils", fromlist=["x"]), "cmake_prefix_path", ""), "/usr/lib/x86_64-linux-gnu/cmake", "/usr/lib/cmake", "/usr/share/cmake"]:
    if d and os.path.exists(os.path.join(d, "Torch", "TorchConfig.cmake")):
        print(os.path.join(d, "Torch")); sys.exit(0)
sys.exit(1)' 2>/dev/null); then
  echo "SKIP: no PyTorch with its CMake package (TorchConfig.cmake) for $python"
  exit 77
fi
d=$(fresh_dir torch_ops)
cp -r "$TILEGEN_SRC/tests/cmake/torch_project" "$d/src"
"$CMAKE" -S "$d/src" -B "$d/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" \
  -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PREFIX" \
  -DTorch_DIR="$torch_dir" >"$d/configure.log" 2>&1 || { cat "$d/configure.log"; fail "configure"; }
grep -q "PyTorch .* extension tgt_torch" "$d/configure.log" || fail "no extension message"
"$NINJA" -C "$d/build" >"$d/build.log" 2>&1 || { tail -60 "$d/build.log"; fail "build"; }
pkg="$d/build/tgt_torch"
[[ -f $pkg/__init__.py && -f $pkg/_tgt_ops.so ]] || fail "package $pkg incomplete: $(ls "$pkg")"
# One translation unit compiled against torch's headers, nothing of tilegen needed at run time.
grep -c "tgt_torch.cpp" "$d/build.log" >/dev/null || fail "tgt_torch.cpp not compiled"
if readelf -d "$pkg/_tgt_ops.so" | grep -q "tilegen"; then fail "the extension needs a tilegen library"; fi
PYTHONPATH="$d/build" "$python" "$TILEGEN_SRC/tests/cmake/torch_ops.py" || fail "torch_ops.py"

# TORCH needs the C library: WGSL targets alone are a configure error that says so.
mkdir -p "$d/wgsl"
cat > "$d/wgsl/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(tilegen_torch_wgsl LANGUAGES C CXX)
find_package(TileGen REQUIRED)
add_tile_kernels(w SPECS "${TILEGEN_KERNELS_DIR}/softmax.yaml" TARGETS wgsl TORCH)
CM
if "$CMAKE" -S "$d/wgsl" -B "$d/wgsl/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" \
  -DCMAKE_PREFIX_PATH="$PREFIX" >"$d/wgsl.log" 2>&1; then
  fail "TORCH with WGSL targets only configured"
fi
grep -q "TORCH needs C or CUDA targets" "$d/wgsl.log" || { cat "$d/wgsl.log"; fail "no TORCH/WGSL message"; }
echo "torch_ops.sh: passed"
