// Tests of the per-process memo of Gaussian calibrations (calibration_cache.h):
// a memoized plan or rho is bit-identical to a fresh calibration, on hits, after
// eviction and after clearing; the memo stays bounded; a calibration that
// throws stores nothing; the key distinguishes every argument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "calibration_cache.h"
#include "gaussian_mechanism.h"
#include "privacy_accountant.h"

namespace {

using dp::GaussianPlan;
using dp::uint128;

bool Identical(const GaussianPlan& a, const GaussianPlan& b) {
  return a.grid_shift == b.grid_shift && a.sensitivity == b.sensitivity &&
         a.sigma2_numerator == b.sigma2_numerator && a.sigma2_denominator == b.sigma2_denominator;
}

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Case {
  uint128 sensitivity;
  double epsilon;
  double delta;
};

// Counts, sums with wide and narrow bounds, the small-sigma regime where the
// discrete curve is not monotone, large epsilon, tiny delta, and parameters
// one ulp apart.
std::vector<Case> Cases() {
  return {{1, 1.0, 1e-9},
          {1, 0.1, 1e-5},
          {1, 3.0, 0.4},
          {1, 10.0, 1e-3},
          {1, 1e3, 1e-12},
          {1, 1e-3, 1e-30},
          {1000000, 1.0, 1e-9},
          {uint128{1} << 52, 0.5, 1e-7},
          {(uint128{1} << 100) + 7, 2.0, 1e-10},
          {3, 1.0, 1e-9},
          {1, std::nextafter(1.0, 2.0), 1e-9},
          {1, 1.0, std::nextafter(1e-9, 1.0)}};
}

TEST(CalibrationCacheTest, PlansAreBitIdenticalToFreshCalibrations) {
  dp::ClearGaussianCalibrationCache();
  for (const Case& c : Cases()) {
    const GaussianPlan fresh =
        dp::internal::PlanGaussianUncached(c.sensitivity, c.epsilon, c.delta);
    const GaussianPlan miss = dp::PlanGaussian(c.sensitivity, c.epsilon, c.delta);
    const GaussianPlan hit = dp::PlanGaussian(c.sensitivity, c.epsilon, c.delta);
    EXPECT_TRUE(Identical(fresh, miss)) << c.epsilon << " " << c.delta;
    EXPECT_TRUE(Identical(fresh, hit)) << c.epsilon << " " << c.delta;
  }
  const dp::CalibrationCacheStats stats = dp::GaussianCalibrationCacheStats();
  EXPECT_EQ(stats.misses, Cases().size());
  EXPECT_EQ(stats.hits, Cases().size());
  EXPECT_EQ(stats.entries, Cases().size());
}

TEST(CalibrationCacheTest, KeyDistinguishesEveryArgument) {
  dp::ClearGaussianCalibrationCache();
  // Neighbouring keys must not share an entry: ulp-apart epsilon and delta
  // give different discrete sigma^2 here.
  const GaussianPlan base = dp::PlanGaussian(1, 1.0, 1e-9);
  const GaussianPlan eps = dp::PlanGaussian(1, std::nextafter(1.0, 2.0), 1e-9);
  const GaussianPlan del = dp::PlanGaussian(1, 1.0, std::nextafter(1e-9, 1.0));
  const GaussianPlan sens = dp::PlanGaussian(2, 1.0, 1e-9);
  EXPECT_EQ(dp::GaussianCalibrationCacheStats().misses, 4u);
  EXPECT_TRUE(
      Identical(eps, dp::internal::PlanGaussianUncached(1, std::nextafter(1.0, 2.0), 1e-9)));
  EXPECT_TRUE(
      Identical(del, dp::internal::PlanGaussianUncached(1, 1.0, std::nextafter(1e-9, 1.0))));
  EXPECT_TRUE(Identical(sens, dp::internal::PlanGaussianUncached(2, 1.0, 1e-9)));
  EXPECT_FALSE(Identical(base, sens));
}

TEST(CalibrationCacheTest, BoundedAndStillExactAfterEviction) {
  dp::ClearGaussianCalibrationCache();
  const std::size_t n = dp::kCalibrationCacheEntries + 10;
  std::vector<GaussianPlan> first;
  for (std::size_t i = 0; i < n; ++i) first.push_back(dp::PlanGaussian(1 + i, 1.0, 1e-6));
  EXPECT_EQ(dp::GaussianCalibrationCacheStats().entries, dp::kCalibrationCacheEntries);
  // The first ten were evicted (oldest first): computed again, identically.
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(Identical(first[i], dp::PlanGaussian(1 + i, 1.0, 1e-6))) << i;
    EXPECT_TRUE(Identical(first[i], dp::internal::PlanGaussianUncached(1 + i, 1.0, 1e-6))) << i;
  }
  EXPECT_LE(dp::GaussianCalibrationCacheStats().entries, dp::kCalibrationCacheEntries);
}

TEST(CalibrationCacheTest, FailuresStoreNothing) {
  dp::ClearGaussianCalibrationCache();
  // Too wide for the sampler: refused every time, nothing stored.
  for (int i = 0; i < 2; ++i)
    EXPECT_THROW(dp::PlanGaussian(1, 1e-12, 1e-300), std::invalid_argument);
  EXPECT_THROW(dp::PlanGaussian(1, 0.0, 1e-9), std::invalid_argument);
  EXPECT_THROW(dp::PlanGaussian(1, 1.0, 1.0), std::invalid_argument);
  EXPECT_EQ(dp::GaussianCalibrationCacheStats().entries, 0u);
  EXPECT_EQ(dp::GaussianCalibrationCacheStats().hits, 0u);
}

TEST(CalibrationCacheTest, RhoIsBitIdenticalToFreshSearch) {
  dp::ClearGaussianCalibrationCache();
  for (const auto& [epsilon, delta] : std::vector<std::tuple<double, double>>{
           {1.0, 1e-9}, {0.1, 1e-5}, {5.0, 1e-12}, {1e-3, 1e-30}, {1.0, 0.5}}) {
    const double fresh = dp::internal::RhoForEpsilonDeltaUncached(epsilon, delta);
    EXPECT_TRUE(SameBits(fresh, dp::RhoForEpsilonDelta(epsilon, delta)));
    EXPECT_TRUE(SameBits(fresh, dp::RhoForEpsilonDelta(epsilon, delta)));
  }
  EXPECT_EQ(dp::GaussianCalibrationCacheStats().hits, 5u);
  EXPECT_THROW(dp::RhoForEpsilonDelta(1.0, 0.0), std::invalid_argument);
}

TEST(CalibrationCacheTest, MeanPlansMatchAfterClearing) {
  dp::ClearGaussianCalibrationCache();
  const dp::GaussianMeanPlans cold = dp::PlanGaussianMeanJoint(0, 1000000, 1.0, 1e-9);
  const dp::GaussianMeanPlans warm = dp::PlanGaussianMeanJoint(0, 1000000, 1.0, 1e-9);
  dp::ClearGaussianCalibrationCache();
  const dp::GaussianMeanPlans again = dp::PlanGaussianMeanJoint(0, 1000000, 1.0, 1e-9);
  EXPECT_TRUE(Identical(cold.count, warm.count) && Identical(cold.centred_sum, warm.centred_sum));
  EXPECT_TRUE(Identical(cold.count, again.count) && Identical(cold.centred_sum, again.centred_sum));
}

}  // namespace
