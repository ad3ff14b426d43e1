// ChoiceRule: which configuration `tilegen tune` writes for a class (docs/tune.md
// "Choosing"). Pure functions of the measured times, so that the rule is tested without a
// machine's noise:
//  1. the incumbent is the first configuration, in the schedule rule's order, that compiled
//     and verified (or the kept baseline, tune --keep-baseline); the challenger is the first
//     in that order whose time is within the margin of the fastest one's;
//  2. the incumbent stays if the challenger is the incumbent or not faster by more than the
//     margin;
//  3. otherwise both are timed again, and the challenger wins only if it is again faster by
//     more than the margin.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tilegen::tune {

struct FirstRound {
  std::optional<size_t> incumbent;  // index into the ranked list; nullopt: none passed
  std::optional<size_t> challenger; // set: must be confirmed (confirmed())
  std::string incumbent_name;       // "the baseline" (kept) or "the rule's first choice"
  std::string why;                  // the verdict when nothing is to be confirmed
};

// `times`: per configuration in the rule's order, its time (geometric mean of its medians),
// nullopt if rejected. `margin_percent` >= 0. `keep`: the incumbent instead of the first that
// passed (tune --keep-baseline: the configuration a database replaces), where it passed.
FirstRound first_round(const std::vector<std::optional<double>>& times, double margin_percent,
                       std::optional<size_t> keep = std::nullopt);

// Step 3: the second measurement of the incumbent and the challenger.
bool confirmed(double incumbent_us, double challenger_us, double margin_percent);

} // namespace tilegen::tune
