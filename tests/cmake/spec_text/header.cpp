// The generated header of hostile.yaml, included from C++ (spec_text.sh c): compiles with
// -Wall -Wextra -Werror, and declares exactly the API (no planted definitions).
#include "st.h"

#include <type_traits>

static_assert(std::is_same<decltype(&st_hostile),
                           tg_status (*)(const tg_launch*, const float*, float*, int64_t, float)>::value,
              "st_hostile has the spec's signature");

int main() { return 0; }
