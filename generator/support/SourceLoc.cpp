#include "support/SourceLoc.h"

#include "support/InternalError.h"

namespace tilegen {

std::string SourceLoc::str() const {
  if (!known())
    return "<unknown>";
  return *file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

void internal_error(const std::string& what) { throw InternalError(what); }

} // namespace tilegen
