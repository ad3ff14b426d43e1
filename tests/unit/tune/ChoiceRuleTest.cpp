// tune/ChoiceRule: the rule that keeps `tilegen tune`'s database stable against timing noise
// (docs/tune.md "Choosing"), on synthetic times.
#include "tune/ChoiceRule.h"

#include <gtest/gtest.h>

using namespace tilegen::tune;

namespace {
const std::nullopt_t rejected = std::nullopt;
}

TEST(ChoiceRule, TheRulesFirstChoiceStaysWhenItIsTheFastest) {
  FirstRound r = first_round({10.0, 12.0, 11.0}, 5);
  EXPECT_EQ(r.incumbent, 0u);
  EXPECT_FALSE(r.challenger);
  EXPECT_EQ(r.why, "the rule's first choice, and the fastest");
}

TEST(ChoiceRule, FasterByLessThanTheMarginDoesNotDisplaceIt) {
  FirstRound r = first_round({10.0, 9.6, 12.0}, 5); // 4% faster
  EXPECT_EQ(r.incumbent, 0u);
  EXPECT_FALSE(r.challenger);
  EXPECT_EQ(r.why, "the rule's first choice; rank 2 is faster by less than 5.0%");
}

TEST(ChoiceRule, ClearlyFasterMustBeConfirmed) {
  FirstRound r = first_round({10.0, 12.0, 8.0}, 5);
  EXPECT_EQ(r.incumbent, 0u);
  EXPECT_EQ(r.challenger, 2u);
  EXPECT_TRUE(confirmed(10.0, 8.0, 5));
  EXPECT_FALSE(confirmed(10.0, 9.7, 5)); // the second measurement disagrees: incumbent stays
}

TEST(ChoiceRule, AmongNearEqualFastOnesTheEarliestRankChallenges) {
  // Ranks 2 and 4 are both far faster than rank 1 and within 5% of each other: rank 2 (index
  // 1) challenges even though rank 4 measured fastest, so noise between them does not decide.
  FirstRound r = first_round({10.0, 8.3, 12.0, 8.0}, 5);
  EXPECT_EQ(r.challenger, 1u);
  FirstRound again = first_round({10.0, 8.0, 12.0, 8.3}, 5);
  EXPECT_EQ(again.challenger, 1u);
}

TEST(ChoiceRule, RejectedConfigurationsAreNeverChosen) {
  FirstRound r = first_round({rejected, 12.0, rejected, 11.9}, 5);
  EXPECT_EQ(r.incumbent, 1u); // the first that passed
  EXPECT_FALSE(r.challenger);
  FirstRound fast_rejected = first_round({rejected, 12.0, 1.0}, 5);
  EXPECT_EQ(fast_rejected.incumbent, 1u);
  EXPECT_EQ(fast_rejected.challenger, 2u);
  FirstRound none = first_round({rejected, rejected}, 5);
  EXPECT_FALSE(none.incumbent);
  EXPECT_EQ(none.why, "no configuration compiled and verified; no entry written");
}

TEST(ChoiceRule, AZeroMarginTakesTheFastestAfterConfirmation) {
  FirstRound r = first_round({10.0, 9.99}, 0);
  EXPECT_EQ(r.challenger, 1u);
  EXPECT_TRUE(confirmed(10.0, 9.99, 0));
}

// tune --keep-baseline: the baseline (last in the order: after the ranked configurations) is
// the incumbent, so a database never trades the configuration it replaces for one that is not
// clearly faster.
TEST(ChoiceRule, AKeptBaselineIsTheIncumbent) {
  FirstRound fastest = first_round({10.0, 12.0, 9.0}, 5, 2);
  EXPECT_EQ(fastest.incumbent, 2u);
  EXPECT_FALSE(fastest.challenger);
  EXPECT_EQ(fastest.why, "the baseline, and the fastest");
  // rank 1 is faster than the baseline, by less than the margin: the baseline stays
  FirstRound close = first_round({10.0, 12.0, 10.4}, 5, 2);
  EXPECT_EQ(close.incumbent, 2u);
  EXPECT_FALSE(close.challenger);
  EXPECT_EQ(close.why, "the baseline; rank 1 is faster by less than 5.0%");
  // the rule's first choice is slower than the baseline but within the margin of it: it does
  // not challenge (without --keep-baseline it would have been chosen)
  FirstRound slower = first_round({10.4, 12.0, 10.0}, 5, 2);
  EXPECT_EQ(slower.incumbent, 2u);
  EXPECT_FALSE(slower.challenger);
  EXPECT_EQ(slower.why, "the baseline, and the fastest");
  // clearly faster: it challenges, and wins only if confirmed
  FirstRound faster = first_round({8.0, 12.0, 10.0}, 5, 2);
  EXPECT_EQ(faster.incumbent, 2u);
  EXPECT_EQ(faster.challenger, 0u);
}

TEST(ChoiceRule, ARejectedBaselineIsNotKept) {
  FirstRound r = first_round({10.0, 12.0, rejected}, 5, 2);
  EXPECT_EQ(r.incumbent, 0u);
  EXPECT_EQ(r.why, "the rule's first choice, and the fastest");
}
