/* Links the C library generated from hostile.yaml at a hostile path (spec_text.sh c). If any
 * spec text had left its comment, the constructor it plants would have trapped before main;
 * here the kernel must run, and the failed `require` must explain itself with the rule and
 * the spec path as visible text. Prints that reason on stdout. */
#include "st.h"

#include <stdio.h>

int main(void) {
  enum { M = 300 };
  float x[M], y[M];
  for (int i = 0; i < M; ++i)
    x[i] = (float)i, y[i] = -1.0f;
  tg_status s = st_hostile(NULL, x, y, M, 2.0f);
  if (s != TG_OK) {
    printf("FAIL: st_hostile returned %s\n", tg_status_string(s));
    return 1;
  }
  for (int i = 0; i < M; ++i)
    if (y[i] != 2.0f * (float)i) {
      printf("FAIL: y[%d] = %g, expected %g\n", i, (double)y[i], 2.0 * i);
      return 1;
    }
  tg_selection sel;
  s = st_hostile_query(NULL, x, y, M, -1.0f, &sel);
  if (s != TG_ERR_INVALID_ARGUMENT) {
    printf("FAIL: alpha = -1 gave %s, expected TG_ERR_INVALID_ARGUMENT\n", tg_status_string(s));
    return 1;
  }
  printf("%s\n", sel.reason);
  return 0;
}
