// Tests of the statistics behind dp_count, dp_sum and dp_avg: sensitivities,
// the epsilon split of the bounded mean, and the range and accuracy of the
// released mean.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "grid_value.h"
#include "laplace_mechanism.h"
#include "parameters.h"
#include "private_statistics.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::ChooseUnitExponent;
using dp::int128;
using dp::LaplacePlan;
using dp::MeanPlans;
using dp::PlanCount;
using dp::PlanLaplace;
using dp::PlanMean;
using dp::PlanSum;
using dp::ReleaseMean;
using dp::SeededTestRandomSource;
using dp::ToDouble;
using dp::ToUnits;
using dp::uint128;
using dp_test::kFalseFailureProbability;
using dp_test::ToLongDouble;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr uint128 Pow2(int k) { return uint128{1} << k; }

// At this epsilon every sensitivity up to 2^64 keeps the integer grid
// (sensitivity <= epsilon * 2^40 = 2^70), so plan.sensitivity is the exact
// sensitivity that was asked for.
const double kExactGridEpsilon = std::ldexp(1.0, 30);

bool SamePlan(const LaplacePlan& a, const LaplacePlan& b) {
  return a.grid_shift == b.grid_shift && a.sensitivity == b.sensitivity &&
         a.scale_numerator == b.scale_numerator && a.scale_denominator == b.scale_denominator;
}

std::string Text(uint128 value) { return dp::Int128ToString(static_cast<int128>(value)); }

// ---------------------------------------------------------------------------

TEST(PlanCountTest, IsTheLaplacePlanForSensitivityOne) {
  for (double epsilon : {dp::kMinEpsilon, 0.1, 0.5, 1.0, 10.0})
    EXPECT_TRUE(SamePlan(PlanCount(epsilon), PlanLaplace(1, epsilon))) << epsilon;
}

TEST(PlanSumTest, SensitivityIsTheLargerBoundMagnitude) {
  struct Case {
    std::int64_t lower, upper;
    uint128 sensitivity;
  };
  const Case cases[] = {{-5, 3, 5},
                        {2, 9, 9},
                        {-9, -2, 9},
                        {-7, 7, 7},
                        {0, 0, 0},
                        {4, 4, 4},
                        {kInt64Min, 0, Pow2(63)},
                        {kInt64Min, kInt64Max, Pow2(63)},
                        {kInt64Min, kInt64Min, Pow2(63)},
                        {-1, kInt64Max, Pow2(63) - 1},
                        {kInt64Max, kInt64Max, Pow2(63) - 1}};
  for (const Case& c : cases) {
    const LaplacePlan plan = PlanSum(c.lower, c.upper, kExactGridEpsilon);
    EXPECT_EQ(plan.grid_shift, 0);
    EXPECT_TRUE(plan.sensitivity == c.sensitivity)
        << "[" << c.lower << ", " << c.upper << "]: " << Text(plan.sensitivity);
    // At an ordinary epsilon it is the Laplace plan of that sensitivity.
    EXPECT_TRUE(SamePlan(PlanSum(c.lower, c.upper, 1.0), PlanLaplace(c.sensitivity, 1.0)));
  }
}

TEST(PlanMeanTest, SplitsEpsilonAndUsesHalfTheWidth) {
  // The centred sum is kept in half-units (2v - (lower + upper)), so its
  // sensitivity is upper - lower half-units: (upper - lower) / 2 units, exact
  // also for odd widths.
  struct Case {
    std::int64_t lower, upper;
    uint128 width;  // upper - lower
  };
  const Case cases[] = {{0, 3, 3},
                        {-3, 0, 3},
                        {0, 4, 4},
                        {-7, 10, 17},
                        {5, 5, 0},
                        {-100, 100, 200},
                        {0, 1, 1},
                        {kInt64Min, kInt64Max, Pow2(64) - 1},
                        {kInt64Min, 0, Pow2(63)},
                        {0, kInt64Max, Pow2(63) - 1}};
  for (const Case& c : cases) {
    const MeanPlans exact = PlanMean(c.lower, c.upper, kExactGridEpsilon);
    EXPECT_EQ(exact.centred_sum.grid_shift, 0);
    EXPECT_TRUE(exact.centred_sum.sensitivity == c.width)
        << "[" << c.lower << ", " << c.upper << "]: " << Text(exact.centred_sum.sensitivity);
    for (double epsilon : {0.1, 0.3, 1.0, 10.0}) {
      const MeanPlans plans = PlanMean(c.lower, c.upper, epsilon);
      EXPECT_TRUE(SamePlan(plans.count, PlanLaplace(1, epsilon / 2))) << epsilon;
      EXPECT_TRUE(SamePlan(plans.centred_sum, PlanLaplace(c.width, epsilon / 2))) << epsilon;
    }
  }
  // Concretely, at epsilon 1 the count's noise scale is 1 / 0.5 = 2 ...
  const MeanPlans plans = PlanMean(0, 10, 1.0);
  EXPECT_TRUE(plans.count.scale_numerator == 2 * plans.count.scale_denominator);
  // ... and the centred sum's 10 / 0.5 = 20 half-units.
  EXPECT_TRUE(plans.centred_sum.scale_numerator == 20 * plans.centred_sum.scale_denominator);
  // A plan for the whole epsilon would be different (scale 1).
  EXPECT_FALSE(SamePlan(plans.count, PlanCount(1.0)));
}

TEST(PlanMeanTest, WorksAtTheSmallestEpsilon) {
  EXPECT_NO_THROW(PlanMean(kInt64Min, kInt64Max, dp::kMinEpsilon));
  EXPECT_NO_THROW(PlanMean(0, 1, dp::kMinEpsilon));
}

// ---------------------------------------------------------------------------
// ReleaseMean

struct MeanScenario {
  double lower, upper;  // bounds as the user gives them
  std::int64_t count;
  double average;  // of the clamped values, in [lower, upper]
  double epsilon;
};

TEST(ReleaseMeanTest, AlwaysWithinTheBounds) {
  const std::int64_t many = std::int64_t{1} << 40;
  const MeanScenario scenarios[] = {
      {0, 100, 0, 0, 1.0},  // no rows at all
      {0, 100, 0, 0, dp::kMinEpsilon},  // no rows, enormous noise
      {0, 100, 1000, 0, dp::kMinEpsilon},
      {0, 100, 1000, 100, dp::kMinEpsilon},
      {-5, 3, 3, 1, 0.01},
      {-1e300, 1e300, 10, 0, dp::kMinEpsilon},  // the noise overflows double
      {-1e300, 1e300, 10, 1e300, 1e-3},
      {0, 1e300, 10, 1e300, 1e-3},
      {0, 1e300, many, 0, 1e-3},
      {-1e-300, -1e-301, 5, -5e-301, dp::kMinEpsilon},
      {7, 7, 0, 7, dp::kMinEpsilon},  // zero width
      {7, 7, 100, 7, 1.0},
      {-4.9406564584124654e-324, 4.9406564584124654e-324, 1, 0, dp::kMinEpsilon},
      {0, 1, many, 1, dp::kMinEpsilon},
      {-1, 1, many, -1, 10.0},
      {-1, 1, 1, 1, 1e6},
  };
  for (const MeanScenario& s : scenarios) {
    const int unit = ChooseUnitExponent(s.lower, s.upper);
    const std::int64_t lower_units = ToUnits(s.lower, unit);
    const std::int64_t upper_units = ToUnits(s.upper, unit);
    const int128 sum_units = int128{s.count} * ToUnits(s.average, unit);
    const double lower = ToDouble({lower_units, unit});
    const double upper = ToDouble({upper_units, unit});
    const MeanPlans plans = PlanMean(lower_units, upper_units, s.epsilon);
    for (std::uint64_t seed = 0; seed < 300; ++seed) {
      SeededTestRandomSource rng(seed);
      const double mean =
          ReleaseMean(s.count, sum_units, lower_units, upper_units, unit, plans, rng);
      ASSERT_FALSE(std::isnan(mean)) << s.lower << " " << s.upper;
      ASSERT_GE(mean, lower) << s.lower << " " << s.upper << " seed " << seed;
      ASSERT_LE(mean, upper) << s.lower << " " << s.upper << " seed " << seed;
    }
  }
}

TEST(ReleaseMeanTest, DegenerateRangeReturnsTheBoundExactly) {
  SeededTestRandomSource rng(41);
  const MeanPlans plans = PlanMean(7, 7, 0.5);
  for (std::int64_t count : {0, 1, 1000})
    EXPECT_EQ(ReleaseMean(count, int128{count} * 7, 7, 7, 0, plans, rng), 7.0);
}

TEST(ReleaseMeanTest, MidpointOfIntegerBoundsIsExact) {
  // At epsilon 1e6 the noise scales are 2e-6 grid steps: a non-zero draw
  // has probability ~2 exp(-5e5) per release, i.e. never. The answer is then
  // exactly the arithmetic, including a midpoint that is not an integer.
  SeededTestRandomSource rng(42);
  const MeanPlans unit_range = PlanMean(0, 1, 1e6);
  EXPECT_EQ(ReleaseMean(10, 5, 0, 1, 0, unit_range, rng), 0.5);
  EXPECT_EQ(ReleaseMean(4, 1, 0, 1, 0, unit_range, rng), 0.25);
  EXPECT_NEAR(ReleaseMean(3, 1, 0, 1, 0, unit_range, rng), 1.0 / 3, 1e-15);
  const MeanPlans negative = PlanMean(-3, 0, 1e6);
  EXPECT_EQ(ReleaseMean(4, -6, -3, 0, 0, negative, rng), -1.5);
  EXPECT_EQ(ReleaseMean(2, -1, -3, 0, 0, negative, rng), -0.5);
  // Units of 2^-2: [0, 3] units = [0, 0.75], values 1 and 2 units -> 0.375.
  const MeanPlans quarters = PlanMean(0, 3, 1e6);
  EXPECT_EQ(ReleaseMean(2, 3, 0, 3, -2, quarters, rng), 0.375);
  // No rows: max(1, noisy count) = 1 and a centred sum of 0 give the midpoint.
  EXPECT_EQ(ReleaseMean(0, 0, 0, 1, 0, unit_range, rng), 0.5);
  EXPECT_EQ(ReleaseMean(0, 0, -3, 0, 0, negative, rng), -1.5);
}

// Smallest k with P[|Z| >= k] = 2 q^k / (1 + q) <= delta for the discrete
// Laplace noise of `plan` (scale t/s grid steps, q = exp(-s/t)).
double TailBound(const LaplacePlan& plan, double delta) {
  const long double rate =
      ToLongDouble(plan.scale_denominator) / ToLongDouble(plan.scale_numerator);
  return static_cast<double>(std::ceil(std::log(2.0L / delta) / rate));
}

// With |count noise| <= k1 and |centred-sum noise| <= k2 (the latter in
// value units), the released mean m + (C + Z2) / (n + Z1) differs from the
// true mean m + C / n by at most (|C| k1 + n k2) / (n (n - k1)); clamping
// to the bounds can only bring it closer.
double MeanErrorBound(std::int64_t n, double centred_sum_value, const MeanPlans& plans,
                      int unit_exponent, double delta) {
  const double k1 = TailBound(plans.count, delta);
  const double k2 = TailBound(plans.centred_sum, delta) *
                    std::ldexp(1.0, unit_exponent - 1 + plans.centred_sum.grid_shift);
  const double nn = static_cast<double>(n);
  return (std::fabs(centred_sum_value) * k1 + nn * k2) / (nn * (nn - k1)) + 1e-12;
}

TEST(ReleaseMeanTest, AccurateAtLargeEpsilonWithManyRows) {
  // 100000 rows, half 25 and half 50, in [0, 100] (units of 2^0): mean 37.5.
  // Centred sum in value units: sum - n * 50 = -1.25e6.
  // k1, k2 are exceeded with probability 2.5e-11 each; with 20 repetitions
  // the test fails falsely with probability <= 1e-9 in total.
  const std::int64_t n = 100000;
  const std::int64_t lower = 0, upper = 100;
  const int128 sum = (n / 2) * 25 + (n / 2) * 50;
  const MeanPlans plans = PlanMean(lower, upper, 10);
  ASSERT_EQ(plans.count.grid_shift, 0);
  ASSERT_EQ(plans.centred_sum.grid_shift, 0);
  const int repetitions = 20;
  const double delta = kFalseFailureProbability / (2 * repetitions);
  const double bound = MeanErrorBound(n, -1.25e6, plans, 0, delta);
  EXPECT_LT(bound, 0.005);  // i.e. the answer is checked to ~1e-4 relative
  for (int i = 0; i < repetitions; ++i) {
    SeededTestRandomSource rng(500 + i);
    EXPECT_NEAR(ReleaseMean(n, sum, lower, upper, 0, plans, rng), 37.5, bound) << i;
  }
}

TEST(ReleaseMeanTest, UsesTheUnitExponent) {
  // Bounds [0, 1] in units of 2^-61, half the rows 0.25 and half 0.5: the
  // centred sum is -0.125 n in value units, the mean 0.375. The sum's grid is
  // coarser than a unit here (grid_shift > 0). Same failure budget as above.
  const int unit = ChooseUnitExponent(0, 1);
  const std::int64_t lower = ToUnits(0, unit), upper = ToUnits(1, unit);
  const std::int64_t n = 100000;
  const int128 sum = (n / 2) * int128{ToUnits(0.25, unit)} + (n / 2) * int128{ToUnits(0.5, unit)};
  const MeanPlans plans = PlanMean(lower, upper, 10);
  EXPECT_GT(plans.centred_sum.grid_shift, 0);
  const int repetitions = 20;
  const double delta = kFalseFailureProbability / (2 * repetitions);
  const double bound = MeanErrorBound(n, -0.125 * n, plans, unit, delta);
  EXPECT_LT(bound, 0.001);
  for (int i = 0; i < repetitions; ++i) {
    SeededTestRandomSource rng(600 + i);
    EXPECT_NEAR(ReleaseMean(n, sum, lower, upper, unit, plans, rng), 0.375, bound) << i;
  }
}

}  // namespace
