// Mean intervals by test inversion: coverage of the true mean of the clamped
// values at the nominal level (binomial acceptance bounds at 1e-9), with the
// real mechanisms producing the releases, and width below the union-bound
// interval's.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "confidence.h"
#include "mean_interval.h"
#include "privacy_accountant.h"
#include "private_statistics.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::SeededTestRandomSource;

struct Data {
  std::int64_t count = 0;
  dp::int128 sum = 0;
  double mean = 0;
};

Data MakeData(std::int64_t n, std::int64_t lower, std::int64_t upper, std::uint64_t seed) {
  SeededTestRandomSource rng(seed);
  Data d;
  d.count = n;
  for (std::int64_t i = 0; i < n; ++i) {
    // Skewed: mostly small values, some large.
    const std::int64_t span = upper - lower;
    const std::int64_t v =
        lower + static_cast<std::int64_t>(rng.UniformBelow(
                    1 + static_cast<std::uint64_t>(rng.UniformBelow(4) == 0 ? span : span / 5)));
    d.sum += v;
  }
  d.mean = static_cast<double>(d.sum) / static_cast<double>(n);
  return d;
}

struct Outcome {
  std::uint64_t covered = 0;
  double width = 0;
  double union_width = 0;
};

TEST(MeanTestIntervalTest, LaplaceCoverageIsNominalAndNarrowerThanTheUnionBound) {
  const std::uint64_t trials = 2000;
  for (std::int64_t n : {30, 5000}) {
    for (double epsilon : {1.0}) {
      const Data d = MakeData(n, 0, 100, 17 + static_cast<std::uint64_t>(n));
      const dp::MeanPlans plans = dp::PlanMean(0, 100, epsilon);
      SeededTestRandomSource rng(n * 7 + static_cast<std::uint64_t>(epsilon * 10));
      Outcome o;
      for (std::uint64_t t = 0; t < trials; ++t) {
        const dp::MeanRelease r = dp::ReleaseMeanParts(d.count, d.sum, 0, 100, 0, plans, rng);
        const dp::ConfidenceInterval ci = dp::LaplaceMeanTestInterval(r, 0, 100, 0, plans, 0.95);
        const dp::ConfidenceInterval ub = dp::LaplaceMeanInterval(r, 0, 100, 0, plans, 0.95);
        o.covered += ci.low <= d.mean && d.mean <= ci.high;
        o.width += ci.high - ci.low;
        o.union_width += ub.high - ub.low;
      }
      const auto accept =
          dp_test::BinomialAcceptanceInterval(0.95, trials, dp_test::kFalseFailureProbability);
      const double coverage = static_cast<double>(o.covered) / trials;
      // Coverage >= 95% (a discrete p-value is conservative: allow the upper
      // acceptance bound of 96% too).
      EXPECT_GE(coverage, accept.low) << n << " " << epsilon;
      EXPECT_LE(
          coverage,
          dp_test::BinomialAcceptanceInterval(0.96, trials, dp_test::kFalseFailureProbability).high)
          << n << " " << epsilon;
      EXPECT_LT(o.width, o.union_width) << n << " " << epsilon;
    }
  }
}

TEST(MeanTestIntervalTest, GaussianCoverageIsNominalWithJointPlans) {
  const std::uint64_t trials = 2000;
  for (std::int64_t n : {50, 3000}) {
    const Data d = MakeData(n, -20, 80, 5 + static_cast<std::uint64_t>(n));
    const dp::GaussianMeanPlans plans = dp::PlanGaussianMeanJoint(-20, 80, 1.0, 1e-6);
    SeededTestRandomSource rng(99 + static_cast<std::uint64_t>(n));
    std::uint64_t covered = 0;
    double width = 0, union_width = 0;
    for (std::uint64_t t = 0; t < trials; ++t) {
      const dp::MeanRelease r =
          dp::ReleaseGaussianMeanParts(d.count, d.sum, -20, 80, 0, plans, rng);
      const dp::ConfidenceInterval ci = dp::GaussianMeanTestInterval(r, -20, 80, 0, plans, 0.95);
      const dp::ConfidenceInterval ub = dp::GaussianMeanInterval(r, -20, 80, 0, plans, 0.95);
      covered += ci.low <= d.mean && d.mean <= ci.high;
      width += ci.high - ci.low;
      union_width += ub.high - ub.low;
    }
    const double coverage = static_cast<double>(covered) / trials;
    EXPECT_GE(
        coverage,
        dp_test::BinomialAcceptanceInterval(0.95, trials, dp_test::kFalseFailureProbability).low)
        << n;
    EXPECT_LE(
        coverage,
        dp_test::BinomialAcceptanceInterval(0.96, trials, dp_test::kFalseFailureProbability).high)
        << n;
    EXPECT_LT(width, union_width) << n;
  }
}

TEST(MeanTestIntervalTest, PValueIsOneAtTheEstimateAndFallsAway) {
  const dp::MeanPlans plans = dp::PlanMean(0, 100, 1.0);
  SeededTestRandomSource rng(3);
  const Data d = MakeData(1000, 0, 100, 8);
  const dp::MeanRelease r = dp::ReleaseMeanParts(d.count, d.sum, 0, 100, 0, plans, rng);
  const double estimate = dp::ToDouble(r.noisy_centred_sum) / dp::ToDouble(r.noisy_count);
  EXPECT_GE(dp::LaplaceMeanPValue(r, 0, 100, 0, plans, estimate), 0.99);
  EXPECT_LT(dp::LaplaceMeanPValue(r, 0, 100, 0, plans, estimate + 5), 1e-3);
  EXPECT_LT(dp::LaplaceMeanPValue(r, 0, 100, 0, plans, estimate - 5), 1e-3);
}

}  // namespace
