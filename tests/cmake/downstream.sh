# examples/downstream against the installed package (find_package(TileGen)), with Ninja:
# configure, build, run (it checks its results against float64 references), and install the
# dispatch library it exports.
source "$(dirname "$0")/lib.sh"
d=$(fresh_dir downstream)
"$CMAKE" -S "$TILEGEN_SRC/examples/downstream" -B "$d/build" -G Ninja \
  -DCMAKE_MAKE_PROGRAM="$NINJA" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_INSTALL_PREFIX="$d/install"
"$NINJA" -C "$d/build"
"$d/build/downstream_demo"
# Every other selectable variant gives the same answers.
TILEGEN_CPU_DISABLE=avx512f "$d/build/downstream_demo" | grep -E "^gemm_f32 37x53x29 +-> tgv_mykernels__gemm__f32__c(_avx2)?$"
TILEGEN_CPU_DISABLE=avx2 "$d/build/downstream_demo" | grep -E "^gemm_f32 37x53x29 +-> tgv_mykernels__gemm__f32__c$"
# The exported dispatch library installs with its header and package config.
"$NINJA" -C "$d/build" install >/dev/null
for f in include/mykernels.h lib/cmake/mykernels/mykernelsTargets.cmake \
         lib/cmake/mykernels/mykernelsConfig.cmake; do
  [ -f "$d/install/$f" ] || fail "missing $d/install/$f"
done
echo "downstream OK"
