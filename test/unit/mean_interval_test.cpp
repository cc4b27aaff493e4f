// Mean intervals by test inversion: coverage of the true mean of the clamped
// values at the nominal level (binomial acceptance bounds at 1e-9), with the
// real mechanisms producing the releases, and width below the union-bound
// interval's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "confidence.h"
#include "grid_value.h"
#include "mean_interval.h"
#include "mean_interval_reference.h"
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

// Issue 31: the fast path (laws built once, each p-value from K + 1 distinct
// terms, an ITP search) against the computation it replaced
// (mean_interval_reference.h), on releases of the real mechanisms: integer
// and fractional bounds, counts from 0 (Fieller's unbounded sets) to 10^5,
// epsilon 0.05 to 4, Laplace and Gaussian noise, confidence 0.5 to 1 - 1e-6.
struct Case {
  bool gaussian;
  double lower, upper;  // bounds
  bool integer;  // integer bounds (units of 1), else the fixed-point units of doubles
  std::int64_t n;
  double epsilon;
  double confidence;
};

struct Units {
  int exponent = 0;
  std::int64_t lower = 0, upper = 0;
};

Units UnitsOf(double lower, double upper, bool integer) {
  Units u;
  if (integer) {
    u.lower = static_cast<std::int64_t>(lower);
    u.upper = static_cast<std::int64_t>(upper);
    return u;
  }
  u.exponent = dp::ChooseUnitExponent(lower, upper);
  u.lower = dp::ToUnits(lower, u.exponent);
  u.upper = dp::ToUnits(upper, u.exponent);
  return u;
}

std::vector<Case> OracleCases() {
  struct Bounds {
    double lower, upper;
    bool integer;
  };
  const std::vector<Bounds> all_bounds = {{0, 100, true}, {-20, 80, true}, {0.0, 1.0, false}};
  const std::vector<std::int64_t> counts = {0, 1, 4, 60, 2000, 100000};
  std::vector<Case> cases;
  for (bool gaussian : {false, true})
    for (const Bounds& b : all_bounds)
      for (std::int64_t n : counts)
        for (double epsilon : {0.05, 1.0, 4.0})
          for (double confidence : {0.5, 0.95, 0.999999})
            cases.push_back({gaussian, b.lower, b.upper, b.integer, n, epsilon, confidence});
  return cases;
}

TEST(MeanTestIntervalTest, FastPathMatchesTheReferenceComputation) {
  SeededTestRandomSource rng(31);
  int intervals = 0, identical = 0, sides = 0, near = 0;
  double worst = 0;
  for (const Case& c : OracleCases()) {
    const Units u = UnitsOf(c.lower, c.upper, c.integer);
    // A sum of clamped values near 30% of the range (in units).
    const dp::int128 sum =
        dp::int128{c.n} * u.lower +
        static_cast<dp::int128>(static_cast<long double>(c.n) * (u.upper - u.lower) * 0.3L);
    const dp::MeanPlans laplace = dp::PlanMean(u.lower, u.upper, c.epsilon);
    const dp::GaussianMeanPlans gaussian =
        dp::PlanGaussianMeanJoint(u.lower, u.upper, c.epsilon, 1e-6);
    if (c.gaussian ? !dp::GaussianMeanTestIsTractable(gaussian)
                   : !dp::LaplaceMeanTestIsTractable(laplace))
      continue;
    // The laws once, as a PostgreSQL call site keeps them.
    std::vector<double> storage(c.gaussian ? dp::GaussianMeanTestStorageDoubles(gaussian)
                                           : dp::LaplaceMeanTestStorageDoubles(laplace));
    const dp::MeanTestLaws laws =
        c.gaussian ? dp::GaussianMeanTestLaws(gaussian, u.exponent, storage.data(), storage.size())
                   : dp::LaplaceMeanTestLaws(laplace, u.exponent, storage.data(), storage.size());
    const double range = c.upper - c.lower;
    for (int t = 0; t < 4; ++t) {
      const dp::MeanRelease r =
          c.gaussian
              ? dp::ReleaseGaussianMeanParts(c.n, sum, u.lower, u.upper, u.exponent, gaussian, rng)
              : dp::ReleaseMeanParts(c.n, sum, u.lower, u.upper, u.exponent, laplace, rng);
      const dp::ConfidenceInterval fast =
          dp::MeanTestInterval(laws, r, u.lower, u.upper, u.exponent, c.confidence);
      const dp::ConfidenceInterval once =
          c.gaussian
              ? dp::GaussianMeanTestInterval(r, u.lower, u.upper, u.exponent, gaussian,
                                             c.confidence)
              : dp::LaplaceMeanTestInterval(r, u.lower, u.upper, u.exponent, laplace, c.confidence);
      const dp::ConfidenceInterval old =
          c.gaussian ? dp_reference::GaussianMeanTestInterval(r, u.lower, u.upper, u.exponent,
                                                              gaussian, c.confidence)
                     : dp_reference::LaplaceMeanTestInterval(r, u.lower, u.upper, u.exponent,
                                                             laplace, c.confidence);
      // The shared laws give the one-off entry point's value, bit for bit.
      EXPECT_EQ(fast.low, once.low);
      EXPECT_EQ(fast.high, once.high);
      // Both edges are rejected points located to 2^-40 of a bracket no
      // wider than the range (reference: 40 bisection steps; fast path: ITP
      // to the same width, or until both ends round to the same double):
      // where p crosses alpha once near the edge they agree to 2^-38 of the
      // range. Where the discrete noise makes p step up and down across
      // alpha within the last geometric step (small counts on integer grids)
      // the two searches may stop at different crossings, in either
      // direction: by less than 1e-3 of the interval's width, and for at
      // most 2% of the edges.
      const double slack = std::ldexp(range, -38);
      const double crossing = slack + 1e-3 * (old.high - old.low);
      const std::string what = std::string(c.gaussian ? "gaussian" : "laplace") + " [" +
                               std::to_string(c.lower) + ", " + std::to_string(c.upper) +
                               "] n=" + std::to_string(c.n) + " eps=" + std::to_string(c.epsilon) +
                               " conf=" + std::to_string(c.confidence);
      EXPECT_NEAR(fast.low, old.low, crossing) << what;
      EXPECT_NEAR(fast.high, old.high, crossing) << what;
      near += (std::fabs(fast.low - old.low) <= slack) + (std::fabs(fast.high - old.high) <= slack);
      worst = std::max(
          {worst, std::fabs(fast.low - old.low) / range, std::fabs(fast.high - old.high) / range});
      ++intervals;
      identical += fast.low == old.low && fast.high == old.high;
      sides += (fast.low == old.low) + (fast.high == old.high);
      // The p-values themselves are the reference's, bit for bit.
      const double h = (c.upper - c.lower) / 2;
      for (double mu : {-h, -h / 3, 0.0, h / 7, h}) {
        const double centred = mu;
        const double p_fast =
            c.gaussian ? dp::GaussianMeanPValue(r, u.lower, u.upper, u.exponent, gaussian, centred)
                       : dp::LaplaceMeanPValue(r, u.lower, u.upper, u.exponent, laplace, centred);
        const double p_old = c.gaussian ? dp_reference::GaussianMeanPValue(
                                              r, u.lower, u.upper, u.exponent, gaussian, centred)
                                        : dp_reference::LaplaceMeanPValue(
                                              r, u.lower, u.upper, u.exponent, laplace, centred);
        EXPECT_EQ(p_fast, p_old) << what << " mu=" << mu;
      }
    }
  }
  std::printf(
      "[ oracle ] %d intervals: %d identical, %d of %d edges identical, %d within 2^-38 of the "
      "range, largest difference %.3g of the range\n",
      intervals, identical, sides, 2 * intervals, near, worst);
  EXPECT_GE(near, 0.98 * 2 * intervals);
  EXPECT_GT(intervals, 1000);
}

TEST(MeanTestIntervalTest, LawsNeedTheirStorage) {
  const dp::MeanPlans plans = dp::PlanMean(0, 100, 1.0);
  std::vector<double> storage(dp::LaplaceMeanTestStorageDoubles(plans));
  ASSERT_GT(storage.size(), 1u);
  EXPECT_THROW(dp::LaplaceMeanTestLaws(plans, 0, storage.data(), storage.size() - 1),
               std::invalid_argument);
  const dp::GaussianMeanPlans gaussian = dp::PlanGaussianMeanJoint(0, 100, 1.0, 1e-6);
  std::vector<double> gaussian_storage(dp::GaussianMeanTestStorageDoubles(gaussian));
  EXPECT_THROW(
      dp::GaussianMeanTestLaws(gaussian, 0, gaussian_storage.data(), gaussian_storage.size() - 1),
      std::invalid_argument);
}

}  // namespace
