// InternalError: a bug in tilegen, as opposed to a mistake in the user's spec. User errors go
// through DiagEngine with a location and a hint; an InternalError says what invariant broke.
// The CLI catches it, prints "internal error: ..." with the command line needed to reproduce,
// and exits 70.
#pragma once

#include <stdexcept>
#include <string>

namespace tilegen {

class InternalError : public std::logic_error {
public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

[[noreturn]] void internal_error(const std::string& what);

#define TG_ASSERT(cond, msg)                                                                     \
  do {                                                                                           \
    if (!(cond))                                                                                 \
      ::tilegen::internal_error(std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " +    \
                                (msg) + " [" #cond "]");                                         \
  } while (0)

} // namespace tilegen
