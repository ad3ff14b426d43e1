# cmake --install this build into $WORK/prefix and check the package layout.
source "$(dirname "$0")/lib.sh"
rm -rf "$PREFIX"
"$CMAKE" --install "$TILEGEN_BUILD" --prefix "$PREFIX" >/dev/null
for f in bin/tilegen include/tilegen/runtime.h include/tilegen/variant.h \
         include/tilegen/dispatch.h lib/cmake/TileGen/TileGenConfig.cmake \
         lib/cmake/TileGen/TileGenConfigVersion.cmake lib/cmake/TileGen/TileGenTargets.cmake \
         lib/cmake/TileGen/TileGen.cmake share/tilegen/kernels/gemm.yaml \
         share/tilegen/kernels/softmax.yaml include/tilegen/metal.h \
         lib/cmake/TileGen/metal/metal_stdlib lib/cmake/TileGen/metal/embed.cmake; do
  [ -f "$PREFIX/$f" ] || fail "missing $PREFIX/$f"
done
ls "$PREFIX"/lib*/libtilegen_runtime.a >/dev/null || fail "missing libtilegen_runtime.a"
ls "$PREFIX"/lib*/libtilegen_runtime_metal.a >/dev/null || fail "missing libtilegen_runtime_metal.a"
if [ "${TILEGEN_HAVE_CUDA:-0}" = 1 ]; then
  [ -f "$PREFIX/include/tilegen/cuda.h" ] || fail "missing include/tilegen/cuda.h"
  ls "$PREFIX"/lib*/libtilegen_runtime_cuda.a >/dev/null || fail "missing libtilegen_runtime_cuda.a"
  grep -q "TileGen::runtime_cuda" "$PREFIX"/lib*/cmake/TileGen/TileGenTargets.cmake ||
    fail "TileGen::runtime_cuda not exported"
fi
# (not piped into grep -q: with pipefail, tilegen's write after grep exits is a SIGPIPE failure)
"$PREFIX/bin/tilegen" targets >"$WORK/installed-targets.txt" || fail "installed tilegen does not run"
grep -q '^c_avx2 ' "$WORK/installed-targets.txt" || fail "installed tilegen lists no c_avx2"
if [ -f "$PREFIX/include/tilegen/hip.h" ]; then
  ls "$PREFIX"/lib*/libtilegen_runtime_hip.a >/dev/null || fail "missing libtilegen_runtime_hip.a"
  grep -q "TileGen::runtime_hip" "$PREFIX"/lib*/cmake/TileGen/TileGenTargets.cmake ||
    fail "TileGen::runtime_hip not exported"
  grep -q '^gfx942 ' "$WORK/installed-targets.txt" || fail "installed tilegen lists no gfx942"
fi
echo "installed into $PREFIX"
