#!/bin/sh
# A C compiler that fails on the variant of one configuration (BM=4 BN=128, the rule's first
# choice), so that tune_c.test sees a configuration that does not compile recorded as rejected
# and never chosen. Everything else goes to $REAL_CC.
for a in "$@"; do
  case "$a" in
    tgcand__*.c)
      if grep -q "schedule: BM=4 BN=128:" "$a"; then
        echo "fail_cc.sh: injected failure for BM=4 BN=128" >&2
        exit 1
      fi ;;
  esac
done
exec ${REAL_CC:-cc} "$@"
