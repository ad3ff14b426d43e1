#!/bin/sh
# Build steps of HIP variants (cmake/TileGen.cmake, docs/hip.md); POSIX sh, no bashisms.
#
#   tilegen_hip.sh device COMPILER KIND ARCH SRC OUT WORKDIR
#     One code object (ELF, no offload bundle) of SRC's device pass for ARCH. KIND is the
#     target table's compiler name: "hipcc" (Debian's ROCm 5.2, which brings its own device
#     libraries) or "clang-19" (a newer clang on ROCm 5.2's headers and bitcode: the
#     oclc_isa_version file of an arch ROCm 5.2 lacks is made in WORKDIR from the gfx940 one,
#     which holds nothing but the ISA version number; ROCM_BITCODE overrides the bitcode dir).
#   tilegen_hip.sh images HEADER ARCH=CODE_OBJECT...
#     The header a variant's host pass includes (TG_HIP_IMAGES): each code object embedded with
#     .incbin under a symbol of its own and the table tg_hip_images[] of (arch, begin, end).
set -eu
mode=$1
shift
case $mode in
device)
  cc=$1 kind=$2 arch=$3 src=$4 out=$5 work=$6
  extra=""
  if [ "$kind" != hipcc ]; then
    bc=${ROCM_BITCODE:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
    num=${arch#gfx}
    dir=$work/bitcode
    if [ ! -f "$bc/oclc_isa_version_$num.bc" ] && [ ! -f "$dir/oclc_isa_version_$num.bc" ]; then
      mkdir -p "$dir"
      for f in "$bc"/*.bc; do ln -sf "$f" "$dir/"; done
      ver=""
      # __oclc_ISA_version: major * 1000 + minor * 100 + stepping (gfx942: 9402; gfx1100: 11000)
      case $num in
        ???) ver=$(( ${num%??} * 1000 + $(echo "$num" | cut -c2) * 100 + $(echo "$num" | cut -c3) )) ;;
        ????) ver=$(( ${num%??} * 1000 + $(echo "$num" | cut -c3) * 100 + $(echo "$num" | cut -c4) )) ;;
        *) echo "tilegen_hip.sh: no ISA version for $arch" >&2; exit 1 ;;
      esac
      llvm-dis-19 "$bc/oclc_isa_version_940.bc" -o - | sed "s/i32 9400,/i32 $ver,/" |
        llvm-as-19 -o "$dir/oclc_isa_version_$num.bc.tmp.$$"
      mv "$dir/oclc_isa_version_$num.bc.tmp.$$" "$dir/oclc_isa_version_$num.bc"
    fi
    if [ -f "$dir/oclc_isa_version_$num.bc" ]; then extra="--rocm-device-lib-path=$dir"
    else extra="--rocm-device-lib-path=$bc"; fi
  fi
  exec "$cc" -x hip --offload-arch="$arch" --cuda-device-only --no-gpu-bundle-output -O3 \
    -std=c++17 $extra -c "$src" -o "$out"
  ;;
images)
  header=$1
  shift
  id=$(basename "$header" | tr -c 'A-Za-z0-9_\n' '_')
  {
    echo "/* code objects of $(basename "$header" .images.h) (cmake/tilegen_hip.sh) */"
    n=0
    for pair in "$@"; do
      arch=${pair%%=*} co=${pair#*=}
      s=tgimg_${id}_$n
      printf '__asm__(".pushsection .rodata\\n.balign 64\\n.globl %s_b\\n.hidden %s_b\\n%s_b:\\n.incbin \\"%s\\"\\n.globl %s_e\\n.hidden %s_e\\n%s_e:\\n.byte 0\\n.popsection\\n");\n' \
        "$s" "$s" "$s" "$co" "$s" "$s" "$s"
      echo "extern \"C\" const unsigned char ${s}_b[], ${s}_e[];"
      n=$((n + 1))
    done
    echo "static const tg_hip_image tg_hip_images[] = {"
    n=0
    for pair in "$@"; do
      echo "    {\"${pair%%=*}\", tgimg_${id}_${n}_b, tgimg_${id}_${n}_e},"
      n=$((n + 1))
    done
    echo "};"
  } > "$header.tmp"
  mv "$header.tmp" "$header"
  ;;
*)
  echo "usage: tilegen_hip.sh device|images ..." >&2
  exit 2
  ;;
esac
