// Tests of the bounded variance (core/variance.h) and of randomized response
// (core/randomized_response.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "grid_value.h"
#include "parameters.h"
#include "random_source.h"
#include "randomized_response.h"
#include "variance.h"

namespace {

using dp::int128;
using dp::SeededTestRandomSource;
using dp::uint128;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

// The rounded squares stay below 2^62 for every pair of bounds, so 2^62
// rows cannot overflow their int128 sum.
TEST(VarianceTest, SquaresFitForEveryWidth) {
  const std::int64_t widths[][2] = {{0, 0},         {0, 1},         {0, 100},
                                    {-5, 5},        {0, 1 << 30},   {kInt64Min, kInt64Max},
                                    {0, kInt64Max}, {-1, kInt64Max}};
  for (const auto& b : widths) {
    const int shift = dp::VarianceSquareShift(b[0], b[1]);
    for (const std::int64_t v : {b[0], b[1], b[0] / 2 + b[1] / 2})
      EXPECT_LT(dp::CentredSquare(v, b[0], b[1], shift), std::uint64_t{1} << 62)
          << b[0] << " " << b[1];
  }
  // Small integer widths are exact (no rounding of the squares).
  EXPECT_EQ(dp::VarianceSquareShift(0, 100), 0);
  EXPECT_EQ(dp::CentredSquare(0, 0, 100, 0), 10000u);  // (2*0 - 100)^2
  EXPECT_EQ(dp::CentredSquare(50, 0, 100, 0), 0u);
}

TEST(VarianceTest, PostProcessingStaysInBounds) {
  const double h = 5;
  EXPECT_EQ(dp::VarianceFromReleases(0, 0, 0, h), 0);
  EXPECT_EQ(dp::VarianceFromReleases(-10, 0, 1e9, h), 25);  // N = 1, mean 0
  EXPECT_EQ(dp::VarianceFromReleases(-10, 1e9, 1e9, h), 0);  // mean and E c^2 at h
  EXPECT_EQ(dp::VarianceFromReleases(10, 0, -1e9, h), 0);
  EXPECT_EQ(dp::VarianceFromReleases(10, 50, 250, h), 0);  // mean h, E c^2 = h^2
  EXPECT_DOUBLE_EQ(dp::VarianceFromReleases(10, 0, 100, h), 10);
}

// Laplace and Gaussian plans: the Gaussian form reports its zCDP cost, the
// sum of three parts, each at most rho/3.
TEST(VarianceTest, PlansAndCost) {
  const dp::VarianceMechanisms laplace = dp::PlanVariance(0, 1000, 1.0, 0);
  EXPECT_FALSE(laplace.gaussian);
  EXPECT_EQ(laplace.rho, 0);
  const dp::VarianceMechanisms gaussian = dp::PlanVariance(0, 1000, 1.0, 1e-6);
  EXPECT_TRUE(gaussian.gaussian);
  EXPECT_GT(gaussian.rho, 0);
  EXPECT_THROW(dp::PlanVariance(0, 10, 1e-15, 0), dp::InvalidParameter);
}

// Accuracy at a large epsilon on 1..1000 (variance 83333.25): the bounds of
// sql/variance.sql (failure probability < 1e-10 per draw), over 200 draws.
TEST(VarianceTest, Accurate) {
  SeededTestRandomSource rng(29);
  const int n = 1000;
  int128 sum = 0, squares = 0;
  const dp::VarianceMechanisms plan = dp::PlanVariance(0, 1000, 10, 0);
  for (int v = 1; v <= n; ++v) {
    sum += v;
    squares += dp::CentredSquare(v, 0, 1000, plan.square_shift);
  }
  for (int i = 0; i < 200; ++i) {
    const dp::VarianceRelease r = dp::ReleaseVariance(plan, n, sum, squares, 0, 1000, 0, rng);
    EXPECT_NEAR(r.variance, 83333.25, 2600);
    EXPECT_GE(r.variance, 0);
    EXPECT_LE(r.variance, 250000);
  }
}

// Float bounds (unit exponent -61 for [0, 1]): squares on a coarser grid,
// still accurate.
TEST(VarianceTest, AccurateOnFloatGrid) {
  SeededTestRandomSource rng(7);
  const int exponent = dp::ChooseUnitExponent(0, 1);
  const double scale = dp::UnitScale(exponent);
  const std::int64_t lower = dp::ToUnits(0.0, exponent, scale);
  const std::int64_t upper = dp::ToUnits(1.0, exponent, scale);
  const dp::VarianceMechanisms plan = dp::PlanVariance(lower, upper, 10, 0);
  EXPECT_GT(plan.square_shift, 0);
  int128 sum = 0, squares = 0;
  for (int v = 1; v <= 1000; ++v) {
    const std::int64_t units = dp::ToUnits(v / 1000.0, exponent, scale);
    sum += units;
    squares += dp::CentredSquare(units, lower, upper, plan.square_shift);
  }
  for (int i = 0; i < 50; ++i) {
    const dp::VarianceRelease r =
        dp::ReleaseVariance(plan, 1000, sum, squares, lower, upper, exponent, rng);
    EXPECT_NEAR(r.variance, 0.08333325, 0.0026);
  }
}

// Review of issue 29: the answer was computed in value units, so h^2 and Q
// overflowed to infinity beyond h ~ 1e154 and underflowed to 0 below
// h ~ 1e-162 (every answer 0, some -0). Normalised by h it is as accurate as
// on [0, 1] at every scale; bounds whose h^2 is no double are refused.
TEST(VarianceTest, AccurateAtExtremeScales) {
  SeededTestRandomSource rng(11);
  for (const double top : {1e-300, 1e-160, 1e150}) {
    const int exponent = dp::ChooseUnitExponent(0, top);
    const double scale = dp::UnitScale(exponent);
    const std::int64_t lower = dp::ToUnits(0.0, exponent, scale);
    const std::int64_t upper = dp::ToUnits(top, exponent, scale);
    EXPECT_NO_THROW(dp::ValidateVarianceBounds(lower, upper, exponent));
    const dp::VarianceMechanisms plan = dp::PlanVariance(lower, upper, 10, 0);
    int128 sum = 0, squares = 0;
    for (int v = 1; v <= 1000; ++v) {
      const std::int64_t units = dp::ToUnits(v / 1000.0 * top, exponent, scale);
      sum += units;
      squares += dp::CentredSquare(units, lower, upper, plan.square_shift);
    }
    for (int i = 0; i < 50; ++i) {
      const dp::VarianceRelease r =
          dp::ReleaseVariance(plan, 1000, sum, squares, lower, upper, exponent, rng);
      // The [0, 1] tolerance scaled by top (stddev: 0.005 on 0.288675).
      EXPECT_NEAR(r.stddev / top, 0.288675, 0.005) << top;
      EXPECT_FALSE(std::signbit(r.variance));
      EXPECT_LE(r.stddev, top / 2);
    }
  }
  const int wide = dp::ChooseUnitExponent(0, 1e200);
  EXPECT_THROW(dp::ValidateVarianceBounds(dp::ToUnits(0.0, wide), dp::ToUnits(1e200, wide), wide),
               dp::InvalidParameter);
  const int widest = dp::ChooseUnitExponent(-1e154, 1e154);
  EXPECT_NO_THROW(
      dp::ValidateVarianceBounds(dp::ToUnits(-1e154, widest), dp::ToUnits(1e154, widest), widest));
}

// -0 from Q / N underflowing from below is answered as +0.
TEST(VarianceTest, NeverNegativeZero) {
  EXPECT_FALSE(std::signbit(dp::VarianceFromReleases(10, 0, -0.0, 1.0)));
  EXPECT_FALSE(std::signbit(dp::VarianceFromReleases(10, -0.0, -0.0, 0.0)));
  SeededTestRandomSource rng(3);
  const dp::VarianceMechanisms plan = dp::PlanVariance(5, 5, 1, 0);
  const dp::VarianceRelease r = dp::ReleaseVariance(plan, 10, 50, 0, 5, 5, 0, rng);
  EXPECT_EQ(r.variance, 0);
  EXPECT_FALSE(std::signbit(r.variance));
  EXPECT_FALSE(std::signbit(r.stddev));
}

TEST(RandomizedResponseTest, RateMatches) {
  SeededTestRandomSource rng(1);
  const int n = 200000;
  int kept = 0;
  for (int i = 0; i < n; ++i) kept += dp::RandomizedResponse(true, 1.0, rng) ? 1 : 0;
  // Chernoff: |rate - p| < 0.0067 fails with 2.7e-10 (sql/randomized_response.sql).
  EXPECT_NEAR(static_cast<double>(kept) / n, std::exp(1.0) / (1 + std::exp(1.0)), 0.0067);
}

TEST(RandomizedResponseTest, EstimateAndErrors) {
  const dp::ProportionEstimate none = dp::EstimateProportion(0, 0, 1.0);
  EXPECT_EQ(none.estimate, 0.5);
  EXPECT_TRUE(std::isinf(none.standard_error));
  const double p = std::exp(1.0) / (1 + std::exp(1.0));
  // Every answer true in the randomized data: the estimate is (1 - q)/(p - q) > 1.
  const dp::ProportionEstimate all = dp::EstimateProportion(100, 100, 1.0);
  EXPECT_NEAR(all.estimate, p / (2 * p - 1), 1e-6);
  SeededTestRandomSource rng(3);
  EXPECT_THROW(dp::RandomizedResponse(true, 0, rng), dp::InvalidParameter);
  EXPECT_THROW(dp::EstimateProportion(1, 2, 65), dp::InvalidParameter);
  EXPECT_THROW(dp::EstimateProportion(1, 2, std::nan("")), dp::InvalidParameter);
}

}  // namespace
