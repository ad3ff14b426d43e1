#include "tune/ChoiceRule.h"

#include <cstdio>

namespace tilegen::tune {

namespace {

std::string percent(double m) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", m);
  return buf;
}

} // namespace

bool confirmed(double incumbent_us, double challenger_us, double margin_percent) {
  return challenger_us < (1.0 - margin_percent / 100.0) * incumbent_us;
}

FirstRound first_round(const std::vector<std::optional<double>>& times, double margin_percent,
                       std::optional<size_t> keep) {
  FirstRound r;
  std::optional<size_t> fastest;
  for (size_t i = 0; i < times.size(); ++i) {
    if (!times[i])
      continue;
    if (!r.incumbent)
      r.incumbent = i;
    if (!fastest || *times[i] < *times[*fastest])
      fastest = i;
  }
  if (!r.incumbent) {
    r.why = "no configuration compiled and verified; no entry written";
    return r;
  }
  const bool kept = keep && *keep < times.size() && times[*keep];
  if (kept)
    r.incumbent = *keep;
  r.incumbent_name = kept ? "the baseline" : "the rule's first choice";
  const std::string& first = r.incumbent_name;
  size_t challenger = *fastest;
  for (size_t i = 0; i < times.size(); ++i)
    if (times[i] && *times[i] <= (1.0 + margin_percent / 100.0) * *times[*fastest]) {
      challenger = i;
      break;
    }
  if (challenger == *r.incumbent) {
    r.why = challenger == *fastest ? first + ", and the fastest"
                                   : first + "; rank " + std::to_string(*fastest + 1) +
                                         " is faster by less than " + percent(margin_percent);
    return r;
  }
  if (!confirmed(*times[*r.incumbent], *times[challenger], margin_percent)) {
    // (a kept baseline is not first in the order: the configuration to name is the fastest)
    const size_t named = kept ? *fastest : challenger;
    r.why = named == *r.incumbent ? first + ", and the fastest"
                                  : first + "; rank " + std::to_string(named + 1) +
                                        " is faster by less than " + percent(margin_percent);
    return r;
  }
  r.challenger = challenger;
  return r;
}

} // namespace tilegen::tune
