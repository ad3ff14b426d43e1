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
