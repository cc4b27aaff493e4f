// Tests of the error bars: the noise quantiles for count and sum are checked
// to be the exact quantiles against independently computed probabilities
// (P[|X| <= k] >= level > P[|X| <= k - 1]), their empirical coverage is
// checked against that exact coverage, and the conservative interval for
// the mean is checked to cover the true mean at least as often as claimed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "confidence.h"
#include "gaussian_mechanism.h"
#include "grid_value.h"
#include "laplace_mechanism.h"
#include "parameters.h"
#include "private_statistics.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::ConfidenceInterval;
using dp::GaussianMeanPlans;
using dp::GaussianNoiseInterval;
using dp::GaussianNoiseQuantile;
using dp::GaussianPlan;
using dp::GridValue;
using dp::int128;
using dp::LaplaceNoiseInterval;
using dp::LaplaceNoiseQuantile;
using dp::LaplacePlan;
using dp::MeanPlans;
using dp::MeanRelease;
using dp::NoiseInterval;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::BinomialAcceptanceInterval;
using dp_test::DiscreteLaplace;
using dp_test::kFalseFailureProbability;
using dp_test::ToLongDouble;

using LD = long double;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

const double kLevels[] = {0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1 - 1e-9};

// P[|X| > k] for the discrete Laplace noise of a plan, from stats_util's
// independent closed form.
LD LaplaceMiss(const LaplacePlan& plan, uint128 k) {
  const DiscreteLaplace d(plan.scale_numerator, plan.scale_denominator);
  return 2 * d.UpperTail(static_cast<int128>(k) + 1);
}

// P[|X| > k] = 2 P[X >= k + 1] for N_Z(0, sigma^2), by brute-force
// summation (both the tail and the normalizer summed from the far end).
LD GaussianMiss(const GaussianPlan& plan, uint128 k) {
  const LD sigma2 = ToLongDouble(plan.sigma2_numerator) / ToLongDouble(plan.sigma2_denominator);
  const std::int64_t span = static_cast<std::int64_t>(std::ceil(std::sqrt(240 * sigma2))) + 2;
  LD normalizer = 0;
  for (std::int64_t x = span; x >= 1; --x)
    normalizer += std::exp(-static_cast<LD>(x) * x / (2 * sigma2));
  normalizer = 1 + 2 * normalizer;
  const std::int64_t first = static_cast<std::int64_t>(k) + 1;
  LD tail = 0;
  for (std::int64_t x = first + span; x >= first; --x)
    tail += std::exp(-static_cast<LD>(x) * x / (2 * sigma2));
  return 2 * tail / normalizer;
}

std::string Text(uint128 value) { return dp::Int128ToString(static_cast<int128>(value)); }

// ---------------------------------------------------------------------------

TEST(ConfidenceTest, RejectsInvalidLevels) {
  const LaplacePlan laplace = dp::PlanCount(1.0);
  const GaussianPlan gaussian = dp::PlanGaussianCount(1.0, 1e-6);
  for (double level : {0.0, 1.0, -0.5, 1.5, std::nan(""), HUGE_VAL}) {
    EXPECT_THROW(dp::ValidateConfidence(level), dp::InvalidParameter) << level;
    EXPECT_THROW(LaplaceNoiseInterval(laplace, 0, level), std::invalid_argument) << level;
    EXPECT_THROW(GaussianNoiseInterval(gaussian, 0, level), std::invalid_argument) << level;
  }
  EXPECT_THROW(LaplaceNoiseQuantile(laplace, 0.0), std::invalid_argument);
  EXPECT_THROW(GaussianNoiseQuantile(gaussian, 1.0), std::invalid_argument);
  EXPECT_NO_THROW(dp::ValidateConfidence(0.95));
}

TEST(LaplaceIntervalTest, QuantileIsExact) {
  std::vector<LaplacePlan> plans;
  for (double epsilon : {0.01, 0.1, 0.5, 1.0, 3.0, 20.0}) plans.push_back(dp::PlanCount(epsilon));
  plans.push_back(dp::PlanSum(-1000, 250, 0.7));
  plans.push_back(dp::PlanLaplace(Pow2(62), 1.0));  // scale 2^40 steps
  plans.push_back(dp::PlanLaplace(1, dp::kMinEpsilon));  // scale 2^50 steps
  for (const LaplacePlan& plan : plans) {
    for (double level : kLevels) {
      const double miss = 1 - level;
      const uint128 k = LaplaceNoiseQuantile(plan, miss);
      const std::string where = "scale " + Text(plan.scale_numerator) + "/" +
                                Text(plan.scale_denominator) + " level " + std::to_string(level);
      // Coverage >= level ...
      EXPECT_LE(LaplaceMiss(plan, k), miss) << where;
      // ... and k is the smallest such: one step less falls short. (For the
      // 2^50 scale one step changes the miss probability by only 9e-16
      // relative; there the claim is exactness up to the 2^-56 slack.)
      const bool huge = plan.scale_numerator > Pow2(45) * plan.scale_denominator;
      if (k > 0) {
        EXPECT_GT(LaplaceMiss(plan, k - 1), miss * (huge ? 1 - std::ldexp(1.0L, -54) : 1.0L))
            << where << " k " << Text(k);
      }
    }
  }
  // No noise: k = 0.
  EXPECT_TRUE(LaplaceNoiseQuantile(dp::PlanLaplace(0, 1.0), 0.05) == 0);
  // Huge epsilon: the noise is 0 with probability > 0.95.
  EXPECT_TRUE(LaplaceNoiseQuantile(dp::PlanCount(100.0), 0.05) == 0);
}

TEST(GaussianIntervalTest, QuantileIsExact) {
  std::vector<GaussianPlan> plans;
  for (double epsilon : {0.1, 1.0, 3.0, 30.0})
    plans.push_back(dp::PlanGaussianCount(epsilon, 1e-6));
  plans.push_back(dp::PlanGaussianCount(1.0, 1e-300));
  plans.push_back(dp::PlanGaussian(1, 0.01, 1e-9));  // sigma ~ 600: Euler-Maclaurin tails
  plans.push_back(dp::PlanGaussian(3, 0.01, 1e-6));  // sigma ~ 1300
  for (const GaussianPlan& plan : plans) {
    for (double level : kLevels) {
      const double miss = 1 - level;
      const uint128 k = GaussianNoiseQuantile(plan, miss);
      const std::string where = "sigma^2 " + Text(plan.sigma2_numerator) + "/" +
                                Text(plan.sigma2_denominator) + " level " + std::to_string(level);
      EXPECT_LE(GaussianMiss(plan, k), miss) << where;
      if (k > 0) {
        EXPECT_GT(GaussianMiss(plan, k - 1), miss) << where << " k " << Text(k);
      }
    }
  }
  EXPECT_TRUE(GaussianNoiseQuantile(dp::PlanGaussian(0, 1.0, 1e-6), 0.05) == 0);
  EXPECT_TRUE(GaussianNoiseQuantile(dp::PlanGaussianCount(1e6, 0.1), 0.05) == 0);
}

TEST(NoiseIntervalTest, HalfWidthIsInValueUnitsAndCoversTheGridRounding) {
  // Count: integer grid, half-width k, no rounding term.
  const GaussianPlan count = dp::PlanGaussianCount(1.0, 1e-6);
  const NoiseInterval c = GaussianNoiseInterval(count, 0, 0.95);
  EXPECT_TRUE(c.quantile_steps == GaussianNoiseQuantile(count, 0.05));
  EXPECT_TRUE(c.half_width.mantissa == static_cast<int128>(c.quantile_steps));
  EXPECT_EQ(c.half_width.exponent, 0);
  EXPECT_EQ(c.half_width_value, static_cast<double>(c.quantile_steps));
  EXPECT_EQ(c.noise_stddev, dp::GaussianNoiseStddev(count, 0));
  // A sum in units of 2^-20 on a grid of 2^shift units: (2k + 1) R / 2.
  const int unit = -20;
  const GaussianPlan sum = dp::PlanGaussian(Pow2(62), 1.0, 1e-6);
  ASSERT_GT(sum.grid_shift, 0);
  const NoiseInterval s = GaussianNoiseInterval(sum, unit, 0.9);
  EXPECT_TRUE(s.half_width.mantissa == static_cast<int128>(2 * s.quantile_steps + 1));
  EXPECT_EQ(s.half_width.exponent, unit + sum.grid_shift - 1);
  EXPECT_EQ(s.half_width_value, dp::ToDouble(s.half_width));
  // Roughly 1.645 sigma (the discrete Gaussian is essentially normal here).
  EXPECT_NEAR(s.half_width_value / s.noise_stddev, 1.6449, 1e-3);
  // Laplace count at epsilon 1: P[|X| > k] = 2 e^-(k+1) / (1 + e^-1) <= 0.05
  // first at k = 3 (0.0269; k = 2 gives 0.0729).
  const NoiseInterval l = LaplaceNoiseInterval(dp::PlanCount(1.0), 0, 0.95);
  EXPECT_TRUE(l.quantile_steps == 3);
  EXPECT_EQ(l.half_width_value, 3.0);
  EXPECT_EQ(l.noise_stddev, dp::LaplaceNoiseStddev(dp::PlanCount(1.0), 0));
  // A huge half-width that does not fit 53 bits is rounded up.
  const NoiseInterval wide = LaplaceNoiseInterval(dp::PlanLaplace(1, dp::kMinEpsilon), 0, 0.999999);
  EXPECT_GE(static_cast<LD>(wide.half_width_value), ToLongDouble(wide.quantile_steps));
}

TEST(NoiseIntervalTest, EmpiricalCoverageMatchesTheExactCoverage) {
  // The realised frequency of |released - true| <= half_width over n
  // releases must agree with the exact coverage probability P[|X| <= k]
  // (Chernoff bound; 3 random checks at 1e-9 / 4 each).
  const std::uint64_t n = 20000;
  const double level = 0.9;
  const double per_check = kFalseFailureProbability / 4;
  const std::int64_t truth = 123456;
  {
    const GaussianPlan plan = dp::PlanGaussianCount(0.5, 1e-6);
    const NoiseInterval interval = GaussianNoiseInterval(plan, 0, level);
    const double exact = static_cast<double>(1 - GaussianMiss(plan, interval.quantile_steps));
    SeededTestRandomSource rng(11);
    std::uint64_t covered = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const double released = dp::ToDouble(dp::ReleaseGaussian(truth, 0, plan, rng));
      covered += std::fabs(released - truth) <= interval.half_width_value ? 1 : 0;
    }
    const double frequency = static_cast<double>(covered) / n;
    EXPECT_TRUE(BinomialAcceptanceInterval(exact, n, per_check).Contains(frequency))
        << frequency << " vs " << exact;
    // Close to the level: the discreteness adds less than 0.02 here.
    EXPECT_GE(exact, level);
    EXPECT_LT(exact, level + 0.02);
  }
  {
    // A sum of values in units of 2^-3 with a coarse grid (grid_shift > 0),
    // including the rounding term.
    const GaussianPlan plan = dp::PlanGaussian(Pow2(62), 2.0, 1e-9);
    ASSERT_GT(plan.grid_shift, 0);
    const NoiseInterval interval = GaussianNoiseInterval(plan, -3, level);
    const int128 value = (int128{1} << 70) + 12345;  // not on the grid
    const LD true_value = std::ldexp(ToLongDouble(value), -3);
    SeededTestRandomSource rng(12);
    std::uint64_t covered = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const GridValue released = dp::ReleaseGaussian(value, -3, plan, rng);
      const LD error = std::ldexp(ToLongDouble(released.mantissa), released.exponent) - true_value;
      covered += std::fabs(error) <= interval.half_width_value ? 1 : 0;
    }
    // The rounding shifts the coverage by < 1e-8 here (R / sigma < 2^-29).
    // sigma ~ 6e8 steps is too large for brute force: the tail comes from
    // DiscreteGaussianLogUpperTail (checked against summation in
    // gaussian_mechanism_test.cpp).
    const double exact = 1 - 2 * std::exp(dp::DiscreteGaussianLogUpperTail(
                                     plan.sigma2_numerator, plan.sigma2_denominator,
                                     static_cast<int128>(interval.quantile_steps) + 1));
    EXPECT_TRUE(
        BinomialAcceptanceInterval(exact, n, per_check).Contains(static_cast<double>(covered) / n));
  }
  {
    const LaplacePlan plan = dp::PlanCount(0.3);
    const NoiseInterval interval = LaplaceNoiseInterval(plan, 0, level);
    const double exact = static_cast<double>(1 - LaplaceMiss(plan, interval.quantile_steps));
    SeededTestRandomSource rng(13);
    std::uint64_t covered = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const double released = dp::ToDouble(dp::ReleaseLaplace(truth, 0, plan, rng));
      covered += std::fabs(released - truth) <= interval.half_width_value ? 1 : 0;
    }
    EXPECT_TRUE(
        BinomialAcceptanceInterval(exact, n, per_check).Contains(static_cast<double>(covered) / n));
    EXPECT_GE(exact, level);
    EXPECT_LT(exact, level + 0.03);
  }
  {
    // Power of the check above: the interval of the wrong distribution
    // (one step narrower) has an exact coverage outside the acceptance
    // interval, i.e. an off-by-one quantile would be detected.
    const LaplacePlan plan = dp::PlanCount(0.3);
    const NoiseInterval interval = LaplaceNoiseInterval(plan, 0, level);
    const double exact = static_cast<double>(1 - LaplaceMiss(plan, interval.quantile_steps));
    const double narrower = static_cast<double>(1 - LaplaceMiss(plan, interval.quantile_steps - 1));
    EXPECT_FALSE(BinomialAcceptanceInterval(exact, n, per_check).Contains(narrower));
  }
}

// ---------------------------------------------------------------------------
// Mean.

TEST(MeanIntervalTest, LaplacePartsReproduceReleaseMean) {
  const MeanPlans plans = dp::PlanMean(-50, 200, 0.8);
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SeededTestRandomSource a(seed);
    SeededTestRandomSource b(seed);
    const double mean = dp::ReleaseMean(37, 37 * 90, -50, 200, -2, plans, a);
    const MeanRelease parts = dp::ReleaseMeanParts(37, 37 * 90, -50, 200, -2, plans, b);
    ASSERT_EQ(mean, parts.mean) << seed;
    EXPECT_EQ(parts.noisy_count.exponent, 0);
    EXPECT_EQ(parts.noisy_centred_sum.exponent, -3 + plans.centred_sum.grid_shift);
  }
}

TEST(MeanIntervalTest, HandComputedCases) {
  NoiseInterval count;
  count.half_width = GridValue{5, 0};
  NoiseInterval sum;
  sum.half_width = GridValue{40, -1};  // 20 value units
  MeanRelease release;
  release.noisy_count = GridValue{100, 0};
  release.noisy_centred_sum = GridValue{-600, -1};  // -300 value units
  // Bounds [0, 10]: mid 5. n in [95, 105], S in [-320, -280]:
  // mean in [5 - 320/95, 5 - 280/105].
  const ConfidenceInterval interval = dp::MeanConfidenceInterval(release, 0, 10, 0, count, sum);
  EXPECT_NEAR(interval.low, 5 - 320.0 / 95, 1e-12);
  EXPECT_NEAR(interval.high, 5 - 280.0 / 105, 1e-12);
  EXPECT_LE(interval.low, 5 - 320.0 / 95);
  EXPECT_GE(interval.high, 5 - 280.0 / 105);
  // A positive sum straddling zero: S in [-10, 30] -> [5 - 10/95, 5 + 30/95].
  release.noisy_centred_sum = GridValue{20, -1};
  const ConfidenceInterval straddle = dp::MeanConfidenceInterval(release, 0, 10, 0, count, sum);
  EXPECT_NEAR(straddle.low, 5 - 10.0 / 95, 1e-12);
  EXPECT_NEAR(straddle.high, 5 + 30.0 / 95, 1e-12);
  // Clamped to the bounds when the box reaches beyond them.
  release.noisy_count = GridValue{6, 0};
  const ConfidenceInterval clamped = dp::MeanConfidenceInterval(release, 0, 10, 0, count, sum);
  EXPECT_EQ(clamped.low, 0.0);  // 5 - 10/1
  EXPECT_EQ(clamped.high, 10.0);
  // No count >= 1 in the count interval: the whole range.
  release.noisy_count = GridValue{-10, 0};
  const ConfidenceInterval nothing = dp::MeanConfidenceInterval(release, -3, 4, -2, count, sum);
  EXPECT_EQ(nothing.low, -0.75);
  EXPECT_EQ(nothing.high, 1.0);
  // Degenerate bounds: the single possible value.
  const ConfidenceInterval point = dp::MeanConfidenceInterval(release, 7, 7, 0, count, sum);
  EXPECT_EQ(point.low, 7.0);
  EXPECT_EQ(point.high, 7.0);
}

struct MeanScenario {
  std::int64_t n;
  std::int64_t lower, upper;  // units of 2^unit
  int unit;
  double epsilon;
  double max_mean_width;  // fraction of the range (a usefulness check)
};

// Values of row i: a fixed pattern inside the bounds (true mean computable).
std::int64_t RowValue(const MeanScenario& s, std::int64_t i) {
  const std::int64_t width = s.upper - s.lower;
  return s.lower + (i * 7919) % (width + 1) / 2 + (i % 3 == 0 ? width / 2 : 0);
}

TEST(MeanIntervalTest, CoversTheTrueMeanAtLeastAsOftenAsClaimed) {
  // Empirical coverage over `trials` releases must not be significantly
  // below the level: the frequency is compared with the lower end of the
  // Chernoff acceptance interval of Binomial(trials, level), below which a
  // correct (coverage >= level) interval falls with probability at most
  // per_check; 6 checks at 1e-9 / 6 each.
  const MeanScenario scenarios[] = {
      {5, 0, 10, 0, 1.0, 1.0},  // few rows: the count is barely known, clamping
      {200, 0, 10, 0, 1.0, 0.5},  // the count and the sum both matter
      {1000, -40, 100, -3, 0.3, 0.1},  // many rows, fractional units
  };
  const double level = 0.9;
  const std::uint64_t trials = 6000;
  const double per_check = kFalseFailureProbability / 6;
  for (const MeanScenario& s : scenarios) {
    int128 sum = 0;
    for (std::int64_t i = 0; i < s.n; ++i) sum += RowValue(s, i);
    const LD true_mean = std::ldexp(ToLongDouble(sum), s.unit) / s.n;
    const double range = std::ldexp(static_cast<double>(s.upper - s.lower), s.unit);
    const std::string where = "n " + std::to_string(s.n);
    // Gaussian.
    {
      const GaussianMeanPlans plans = dp::PlanGaussianMean(s.lower, s.upper, s.epsilon, 1e-6);
      const double half_miss = (1 - level) / 2;
      const NoiseInterval count_interval =
          dp::GaussianNoiseIntervalForMiss(plans.count, 0, half_miss);
      const NoiseInterval sum_interval =
          dp::GaussianNoiseIntervalForMiss(plans.centred_sum, s.unit - 1, half_miss);
      SeededTestRandomSource rng(21 + s.n);
      std::uint64_t covered = 0;
      double total_width = 0;
      for (std::uint64_t t = 0; t < trials; ++t) {
        const MeanRelease release =
            dp::ReleaseGaussianMeanParts(s.n, sum, s.lower, s.upper, s.unit, plans, rng);
        const ConfidenceInterval interval = dp::MeanConfidenceInterval(
            release, s.lower, s.upper, s.unit, count_interval, sum_interval);
        if (t == 0) {
          const ConfidenceInterval wrapped =
              dp::GaussianMeanInterval(release, s.lower, s.upper, s.unit, plans, level);
          ASSERT_EQ(wrapped.low, interval.low);
          ASSERT_EQ(wrapped.high, interval.high);
        }
        // The released mean always lies inside its own interval.
        ASSERT_LE(interval.low, release.mean) << where;
        ASSERT_GE(interval.high, release.mean) << where;
        covered += (interval.low <= true_mean && true_mean <= interval.high) ? 1 : 0;
        total_width += interval.high - interval.low;
      }
      const double frequency = static_cast<double>(covered) / trials;
      EXPECT_GE(frequency, BinomialAcceptanceInterval(level, trials, 2 * per_check).low)
          << "Gaussian " << where;
      // Not vacuous: narrower than the whole range on average.
      EXPECT_LE(total_width / trials, s.max_mean_width * range) << "Gaussian " << where;
    }
    // Laplace.
    {
      const MeanPlans plans = dp::PlanMean(s.lower, s.upper, s.epsilon);
      const double half_miss = (1 - level) / 2;
      const NoiseInterval count_interval =
          dp::LaplaceNoiseIntervalForMiss(plans.count, 0, half_miss);
      const NoiseInterval sum_interval =
          dp::LaplaceNoiseIntervalForMiss(plans.centred_sum, s.unit - 1, half_miss);
      SeededTestRandomSource rng(31 + s.n);
      std::uint64_t covered = 0;
      double total_width = 0;
      for (std::uint64_t t = 0; t < trials; ++t) {
        const MeanRelease release =
            dp::ReleaseMeanParts(s.n, sum, s.lower, s.upper, s.unit, plans, rng);
        const ConfidenceInterval interval = dp::MeanConfidenceInterval(
            release, s.lower, s.upper, s.unit, count_interval, sum_interval);
        if (t == 0) {
          const ConfidenceInterval wrapped =
              dp::LaplaceMeanInterval(release, s.lower, s.upper, s.unit, plans, level);
          ASSERT_EQ(wrapped.low, interval.low);
          ASSERT_EQ(wrapped.high, interval.high);
        }
        ASSERT_LE(interval.low, release.mean) << where;
        ASSERT_GE(interval.high, release.mean) << where;
        covered += (interval.low <= true_mean && true_mean <= interval.high) ? 1 : 0;
        total_width += interval.high - interval.low;
      }
      const double frequency = static_cast<double>(covered) / trials;
      EXPECT_GE(frequency, BinomialAcceptanceInterval(level, trials, 2 * per_check).low)
          << "Laplace " << where;
      EXPECT_LE(total_width / trials, s.max_mean_width * range) << "Laplace " << where;
    }
  }
}

TEST(MeanIntervalTest, SplitsTheMissProbabilityBetweenCountAndSum) {
  // The convenience functions build the count and sum intervals at miss
  // (1 - confidence) / 2 each (union bound), not at 1 - confidence.
  const MeanScenario s{1000, -40, 100, -3, 0.3, 0.1};
  const GaussianMeanPlans plans = dp::PlanGaussianMean(s.lower, s.upper, s.epsilon, 1e-6);
  MeanRelease release;
  release.noisy_count = GridValue{1003, 0};
  release.noisy_centred_sum = GridValue{-70000, s.unit - 1 + plans.centred_sum.grid_shift};
  const ConfidenceInterval wrapped =
      dp::GaussianMeanInterval(release, s.lower, s.upper, s.unit, plans, 0.9);
  const ConfidenceInterval split = dp::MeanConfidenceInterval(
      release, s.lower, s.upper, s.unit, dp::GaussianNoiseIntervalForMiss(plans.count, 0, 0.05),
      dp::GaussianNoiseIntervalForMiss(plans.centred_sum, s.unit - 1, 0.05));
  const ConfidenceInterval unsplit = dp::MeanConfidenceInterval(
      release, s.lower, s.upper, s.unit, dp::GaussianNoiseIntervalForMiss(plans.count, 0, 0.1),
      dp::GaussianNoiseIntervalForMiss(plans.centred_sum, s.unit - 1, 0.1));
  EXPECT_EQ(wrapped.low, split.low);
  EXPECT_EQ(wrapped.high, split.high);
  EXPECT_LT(split.low, unsplit.low);
  EXPECT_GT(split.high, unsplit.high);
  const MeanPlans laplace = dp::PlanMean(s.lower, s.upper, s.epsilon);
  const ConfidenceInterval laplace_wrapped =
      dp::LaplaceMeanInterval(release, s.lower, s.upper, s.unit, laplace, 0.9);
  const ConfidenceInterval laplace_split = dp::MeanConfidenceInterval(
      release, s.lower, s.upper, s.unit, dp::LaplaceNoiseIntervalForMiss(laplace.count, 0, 0.05),
      dp::LaplaceNoiseIntervalForMiss(laplace.centred_sum, s.unit - 1, 0.05));
  EXPECT_EQ(laplace_wrapped.low, laplace_split.low);
  EXPECT_EQ(laplace_wrapped.high, laplace_split.high);
}

}  // namespace
