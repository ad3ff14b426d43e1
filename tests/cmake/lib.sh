# Shared helpers of the tests/cmake scripts (sourced). Environment from CMakeLists.txt:
# TILEGEN_SRC, TILEGEN_BUILD, WORK, NINJA, CMAKE, TILEGEN, CC, CXX.
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# fresh_dir NAME: an empty folder $WORK/NAME, echoed.
fresh_dir() {
  local d="$WORK/$1"
  rm -rf "$d"
  mkdir -p "$d"
  echo "$d"
}

# snapshot DIR: every file (hidden ones too) with size, mtime (ns) and checksum, sorted.
snapshot() {
  (cd "$1" && find . -type f -printf '%p %s %T@\n' | sort && find . -type f -print0 | sort -z |
    xargs -0 -r md5sum)
}

PREFIX="$WORK/prefix"
