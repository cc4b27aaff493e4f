// Tests of DP partition selection: the threshold keeps the release
// probability of a one-row group at most delta and is the smallest that does,
// and the release frequencies match the exact law of the discrete Laplace.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "laplace_mechanism.h"
#include "partition_selection.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::PartitionSelectionPlan;
using dp::PlanPartitionSelection;
using dp_test::kFalseFailureProbability;

// q^k / (1 + q), computed independently of the implementation (pow, not logs).
long double Tail(long double epsilon, std::int64_t k) {
  const long double q = std::exp(-epsilon);
  return std::pow(q, static_cast<long double>(k)) / (1 + q);
}

TEST(PartitionSelectionTest, ThresholdBoundsOneRowReleaseByDeltaAndIsSmallest) {
  for (double epsilon : {0.01, 0.1, 0.5, 1.0, std::log(3.0), 2.0, 10.0}) {
    for (double delta : {1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.1, 0.5}) {
      const PartitionSelectionPlan plan = PlanPartitionSelection(epsilon, delta);
      ASSERT_GE(plan.threshold, 2);
      EXPECT_LE(plan.epsilon, epsilon);
      EXPECT_LE(plan.delta, delta);
      // A one-row group is released iff 1 + Z >= T, i.e. Z >= T - 1.
      EXPECT_LE(Tail(plan.epsilon, plan.threshold - 1), plan.delta * (1 + 1e-12L))
          << epsilon << " " << delta;
      // One less would break the bound (beyond the 1e-9 safety margin).
      if (plan.threshold > 2) {
        EXPECT_GT(Tail(plan.epsilon, plan.threshold - 2), plan.delta * (1 - 1e-6L))
            << epsilon << " " << delta;
      }
    }
  }
}

TEST(PartitionSelectionTest, KnownThreshold) {
  // epsilon 1, delta 1e-6: smallest k with e^-k / (1 + e^-1) <= 1e-6 is
  // ceil(ln(1e6) - ln(1 + e^-1)) = ceil(13.502) = 14, so T = 15.
  EXPECT_EQ(PlanPartitionSelection(1.0, 1e-6).threshold, 15);
  // epsilon ln 3, delta 0.3: q ~ 1/3, q / (1 + q) ~ 1/4 <= 0.3 already at k = 1, T = 2.
  EXPECT_EQ(PlanPartitionSelection(std::log(3.0), 0.3).threshold, 2);
}

TEST(PartitionSelectionTest, RefusesDeltaOutsideItsRange) {
  EXPECT_THROW(PlanPartitionSelection(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(PlanPartitionSelection(1.0, 0.6), std::invalid_argument);
  EXPECT_THROW(PlanPartitionSelection(1.0, std::nan("")), std::invalid_argument);
}

// Release frequencies against the exact law P[count + Z >= T]; the bound is
// Hoeffding's with failure probability kFalseFailureProbability per check.
TEST(PartitionSelectionTest, ReleaseFrequencyMatchesExactLaw) {
  dp::SeededTestRandomSource rng(20261122);
  const PartitionSelectionPlan plan = PlanPartitionSelection(1.0, 0.25);
  ASSERT_EQ(plan.threshold, 3);  // k = ceil(ln 4 - ln(1 + 1/e)) = 2
  const int trials = 200000;
  const double tolerance = std::sqrt(std::log(2 / kFalseFailureProbability) / (2.0 * trials));
  for (std::int64_t count : {0, 1, 2, 3, 5}) {
    int released = 0;
    for (int i = 0; i < trials; ++i) released += dp::ReleasePartition(count, plan, rng) ? 1 : 0;
    // P[Z >= m] = q^m / (1 + q) for m >= 1; for m <= 0, by symmetry,
    // P[Z >= m] = 1 - P[Z <= m - 1] = 1 - P[Z >= 1 - m].
    const std::int64_t m = plan.threshold - count;
    const long double expected = m >= 1 ? Tail(plan.epsilon, m) : 1 - Tail(plan.epsilon, 1 - m);
    EXPECT_NEAR(static_cast<double>(released) / trials, static_cast<double>(expected), tolerance)
        << "count " << count;
  }
}

}  // namespace
