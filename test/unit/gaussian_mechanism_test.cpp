// Tests of the (epsilon, delta) Gaussian mechanism: the analytic calibration
// of the continuous Gaussian (Balle & Wang 2018), the exact privacy curve and
// calibration of the discrete Gaussian (CKS20 Theorem 7), the exact discrete
// Gaussian sampler (CKS20 Algorithm 3) against its exact pmf with power
// checks, and the grid release, count, sum and mean built on them.
//
// Reference values marked "mpmath" were computed independently with mpmath
// 1.3 at 200 (continuous) or 40 (discrete) significant digits, the discrete
// ones by direct summation of the defining series.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "exact_sampler.h"
#include "gaussian_mechanism.h"
#include "grid_value.h"
#include "laplace_mechanism.h"
#include "parameters.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::AnalyticGaussianDelta;
using dp::AnalyticGaussianLogDelta;
using dp::AnalyticGaussianSigma;
using dp::DiscreteGaussianLogDelta;
using dp::DiscreteGaussianLogUpperTail;
using dp::DiscreteGaussianSigma2;
using dp::DiscreteGaussianSupported;
using dp::DiscreteGaussianVariance;
using dp::DyadicSigma2;
using dp::GaussianMeanPlans;
using dp::GaussianPlan;
using dp::GridValue;
using dp::int128;
using dp::PlanGaussian;
using dp::ReleaseGaussian;
using dp::SampleDiscreteGaussian;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::Binning;
using dp_test::ChiSquareFit;
using dp_test::FitResult;
using dp_test::kInt128Max;
using dp_test::kInt128Min;
using dp_test::kMinExpectedPerBin;
using dp_test::NonCentrality;
using dp_test::PowerMarginInSigmas;
using dp_test::ToLongDouble;

using LD = long double;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

std::string Text(uint128 value) { return dp::Int128ToString(static_cast<int128>(value)); }

// ---------------------------------------------------------------------------
// Independent evaluations used as references.

// Phi(x) for x < 0 and its complement, by erfc in long double.
LD NormalLowerTail(LD x) { return std::erfc(-x / std::sqrt(2.0L)) / 2; }

// Balle-Wang's delta straight from Theorem 8 in long double (no Mills
// ratio): fine while e^epsilon fits and the two terms do not cancel to
// below ~1e-13 relative, which holds for epsilon in [1e-3, 100] at the
// calibrated sigma.
LD NaiveContinuousDelta(LD sensitivity, LD sigma, LD epsilon) {
  const LD a = sensitivity / (2 * sigma);
  const LD b = epsilon * sigma / sensitivity;
  return NormalLowerTail(a - b) - std::exp(epsilon) * NormalLowerTail(-a - b);
}

// The discrete Gaussian N_Z(0, sigma^2) by brute-force summation (sigma up
// to a few thousand), or, for large sigma, through the continuous normal
// with +-1/2 bin edges (the midpoint rule, whose relative error for a
// Gaussian of scale sigma >= 2000 is below 1e-7 per bin and invisible in
// the chi-square tests with 1e5 samples).
class DiscreteGaussianPmf {
 public:
  explicit DiscreteGaussianPmf(LD sigma2) : sigma2_(sigma2), sigma_(std::sqrt(sigma2)) {
    if (sigma_ < 2000) {
      half_ = static_cast<std::int64_t>(std::ceil(std::sqrt(2 * 120 * sigma2_))) + 2;
      std::vector<LD> weights(2 * half_ + 1);
      LD total = 0;
      // Add from the tails inwards for accuracy.
      for (std::int64_t k = half_; k >= 0; --k) {
        const LD w = std::exp(-static_cast<LD>(k) * k / (2 * sigma2_));
        weights[half_ + k] = w;
        weights[half_ - k] = w;
        total += k == 0 ? w : 2 * w;
      }
      prefix_.assign(weights.size() + 1, 0);
      for (std::size_t i = 0; i < weights.size(); ++i)
        prefix_[i + 1] = prefix_[i] + weights[i] / total;
      normalizer_ = total;
    }
  }

  bool Summed() const { return !prefix_.empty(); }
  LD Normalizer() const { return normalizer_; }

  LD Pmf(std::int64_t x) const {
    return std::exp(-static_cast<LD>(x) * x / (2 * sigma2_)) / normalizer_;
  }

  // P[low <= X <= high]; kInt128Min / kInt128Max stand for -inf / +inf.
  // (Prefix-sum differences: accurate to ~1e-19 absolute, enough for bins.)
  LD Interval(int128 low, int128 high) const {
    if (Summed()) {
      const int128 lo = std::max<int128>(low, -half_);
      const int128 hi = std::min<int128>(high, half_);
      if (hi < lo) return 0;
      return prefix_[static_cast<std::size_t>(hi + half_ + 1)] -
             prefix_[static_cast<std::size_t>(lo + half_)];
    }
    // Mirror the left tail to the right (no cancellation against 1).
    if (high != kInt128Max && high < 0)
      return Interval(-high, low == kInt128Min ? kInt128Max : -low);
    // P[N > x] for the continuous N(0, sigma^2), with cells [k - 1/2, k + 1/2].
    auto above = [&](LD x) { return NormalLowerTail(-x / sigma_); };
    const LD q_low = low == kInt128Min ? 1 : above(ToLongDouble(low) - 0.5L);
    const LD q_high = high == kInt128Max ? 0 : above(ToLongDouble(high) + 0.5L);
    return q_low - q_high;
  }

  // log P[X >= k] for k >= 0 by summation from the far end (relative accuracy).
  LD LogUpperTail(std::int64_t k) const {
    const std::int64_t span = static_cast<std::int64_t>(std::ceil(std::sqrt(240.0L) * sigma_)) + 2;
    LD sum = 0;
    for (std::int64_t j = k + span; j >= k; --j)
      sum += std::exp(-static_cast<LD>(j - k) * static_cast<LD>(j + k) / (2 * sigma2_));
    return -static_cast<LD>(k) * k / (2 * sigma2_) + std::log(sum) - std::log(normalizer_);
  }

  // P[|X| <= k].
  LD Central(std::int64_t k) const { return Interval(-k, k); }

 private:
  LD sigma2_;
  LD sigma_;
  std::int64_t half_ = 0;
  std::vector<LD> prefix_;
  LD normalizer_ = 0;
};

// CKS20 Theorem 7 by brute-force summation: sum over k > c of
// P[k] (1 - exp(-D (k - c) / sigma^2)), c = eps sigma^2 / D - D / 2.
LD BruteForceDiscreteDelta(LD sigma2, LD epsilon, LD sensitivity) {
  const DiscreteGaussianPmf pmf(sigma2);
  const LD c = epsilon * sigma2 / sensitivity - sensitivity / 2;
  const LD sigma = std::sqrt(sigma2);
  const std::int64_t first = static_cast<std::int64_t>(std::floor(c)) + 1;
  const std::int64_t last = static_cast<std::int64_t>(std::max<LD>(first, 0) + 40 * sigma + 10);
  LD sum = 0;
  for (std::int64_t k = last; k >= first; --k)
    sum += pmf.Pmf(k) * -std::expm1(-sensitivity * (k - c) / sigma2);
  return sum;
}

// ---------------------------------------------------------------------------
// Analytic Gaussian: the privacy curve.

TEST(AnalyticGaussianDeltaTest, MatchesHighPrecisionReferences) {
  struct Case {
    double sigma, epsilon;
    LD log_delta;  // mpmath, 200 digits, sensitivity 1
  };
  const Case cases[] = {
      {1, 1, -2.0640664465003905345L},       {4, 0.25, -3.7513728703031811228L},
      {0.001, 1e6, -125007.53901751747341L}, {20000, 0.001, -216.82082606227219846L},
      {37, 1, -695.75396925072253948L},      {0.3, 10, -2.856023858367043709L}};
  for (const Case& c : cases) {
    const LD got = AnalyticGaussianLogDelta(1.0, c.sigma, c.epsilon);
    // Relative accuracy 1e-13 of delta, i.e. absolute in log delta (plus
    // the double rounding of the log itself).
    EXPECT_NEAR(static_cast<double>(got), static_cast<double>(c.log_delta),
                1e-13 + 4e-16 * std::fabs(static_cast<double>(c.log_delta)))
        << c.sigma << " " << c.epsilon;
  }
  // Scale invariance: only sigma / sensitivity matters.
  EXPECT_NEAR(AnalyticGaussianLogDelta(1000.0, 4000.0, 0.25), -3.7513728703031811228, 1e-13);
  EXPECT_NEAR(AnalyticGaussianDelta(1.0, 1.0, 1.0), std::exp(-2.0640664465003905345), 1e-15);
}

TEST(AnalyticGaussianDeltaTest, NeverUnderflowsOrOverflows) {
  for (double epsilon : {1e-300, 1e-15, 1e-3, 1.0, 1e3, 1e6, 1e12, 1e300}) {
    for (double sigma : {1e-300, 1e-10, 1e-3, 1.0, 1e3, 1e10, 1e300}) {
      const double log_delta = AnalyticGaussianLogDelta(1.0, sigma, epsilon);
      EXPECT_FALSE(std::isnan(log_delta)) << sigma << " " << epsilon;
      EXPECT_LE(log_delta, 0.0) << sigma << " " << epsilon;
    }
  }
  // Far into the tail: e^-2.5e11, not 0 and not -inf.
  const double deep = AnalyticGaussianLogDelta(1.0, 0.001, 1e6 * 1e3);
  EXPECT_TRUE(std::isfinite(deep));
  EXPECT_LT(deep, -1e9);
}

TEST(AnalyticGaussianDeltaTest, RejectsInvalidArguments) {
  EXPECT_THROW(AnalyticGaussianLogDelta(0, 1, 1), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianLogDelta(1, 0, 1), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianLogDelta(1, 1, 0), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianLogDelta(1, 1, std::nan("")), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianLogDelta(1, HUGE_VAL, 1), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Analytic Gaussian: calibration.

const double kEpsilonGrid[] = {1e-3, 0.1, 1, 10, 100, 1e4, 1e6};
const double kDeltaGrid[] = {1e-300, 1e-12, 1e-6, 0.1};

TEST(AnalyticGaussianSigmaTest, SatisfiesTheConditionAndASlightlySmallerSigmaDoesNot) {
  for (double epsilon : kEpsilonGrid) {
    for (double delta : kDeltaGrid) {
      const double sigma = AnalyticGaussianSigma(1.0, epsilon, delta);
      ASSERT_TRUE(std::isfinite(sigma) && sigma > 0) << epsilon << " " << delta;
      const double log_delta = std::log(delta);
      EXPECT_LE(AnalyticGaussianLogDelta(1.0, sigma, epsilon), log_delta)
          << epsilon << " " << delta;
      // The safety margin shifts sigma by < 1e-9 relative (the log-delta
      // curve has slope <= -1 in log sigma here).
      EXPECT_GT(AnalyticGaussianLogDelta(1.0, sigma * (1 - 1e-8), epsilon), log_delta)
          << epsilon << " " << delta;
      // An independent long double evaluation agrees where it is usable.
      if (epsilon <= 100) {
        const LD naive = NaiveContinuousDelta(1, sigma, epsilon);
        EXPECT_NEAR(static_cast<double>(std::log(naive)),
                    AnalyticGaussianLogDelta(1.0, sigma, epsilon), 1e-10)
            << epsilon << " " << delta;
        EXPECT_LE(naive, delta * (1 + 1e-10)) << epsilon << " " << delta;
      }
    }
  }
}

TEST(AnalyticGaussianSigmaTest, MatchesTheExactOptimumFromHighPrecision) {
  struct Case {
    double epsilon, delta;
    LD sigma;  // mpmath: the root of delta(sigma) = delta, 200 digits
  };
  const Case cases[] = {
      {0.001, 1e-6, 2436.5524937485808217L},     {0.1, 1e-300, 367.90923857768499422L},
      {1, 1e-6, 4.2246788893268352923L},         {1, 1e-12, 6.5578220674588500942L},
      {10, 0.1, 0.28181207212613931336L},        {1e4, 1e-12, 0.0074311540612912279564L},
      {1e6, 1e-300, 0.00072587254398209585956L}, {0.5, 0.5, 0.59091759925878091194L}};
  for (const Case& c : cases) {
    const double sigma = AnalyticGaussianSigma(1.0, c.epsilon, c.delta);
    // Never below the optimum (privacy), and above it by the safety margin
    // only (a relative margin of 9.3e-10 on delta moves sigma by less).
    EXPECT_GE(sigma, c.sigma) << c.epsilon << " " << c.delta;
    EXPECT_LE(sigma, c.sigma * (1 + 1e-9L)) << c.epsilon << " " << c.delta;
  }
}

TEST(AnalyticGaussianSigmaTest, BeatsTheClassicalGaussianMechanismForEpsilonBelowOne) {
  // Dwork & Roth Theorem A.1: sigma = sqrt(2 ln(1.25 / delta)) D / epsilon,
  // valid for epsilon < 1.
  for (double epsilon : {1e-3, 0.01, 0.1, 0.5, 0.9}) {
    for (double delta : {1e-300, 1e-12, 1e-6, 1e-3, 0.1}) {
      const double classic = std::sqrt(2 * std::log(1.25 / delta)) / epsilon;
      const double analytic = AnalyticGaussianSigma(1.0, epsilon, delta);
      EXPECT_LT(analytic, classic) << epsilon << " " << delta;
      // And the classical sigma does satisfy the exact condition.
      EXPECT_LE(AnalyticGaussianLogDelta(1.0, classic, epsilon), std::log(delta));
    }
  }
}

TEST(AnalyticGaussianSigmaTest, IsStableMonotoneAndScalesWithTheSensitivity) {
  for (double delta : kDeltaGrid) {
    double previous = HUGE_VAL;
    for (double epsilon : kEpsilonGrid) {
      const double sigma = AnalyticGaussianSigma(1.0, epsilon, delta);
      EXPECT_LT(sigma, previous) << epsilon << " " << delta;  // more epsilon, less noise
      previous = sigma;
      for (double sensitivity : {0.5, 3.0, 1e6, 1e-6}) {
        const double scaled = AnalyticGaussianSigma(sensitivity, epsilon, delta);
        EXPECT_NEAR(scaled / (sigma * sensitivity), 1.0, 1e-12) << sensitivity;
        EXPECT_LE(AnalyticGaussianLogDelta(sensitivity, scaled, epsilon), std::log(delta));
      }
    }
  }
  for (double epsilon : kEpsilonGrid) {
    double previous = 0;
    for (double delta : kDeltaGrid) {  // increasing delta, less noise
      const double sigma = AnalyticGaussianSigma(1.0, epsilon, delta);
      if (previous > 0) {
        EXPECT_LT(sigma, previous) << epsilon << " " << delta;
      }
      previous = sigma;
    }
  }
  // Extremes still work: the smallest epsilon the extension accepts, the
  // smallest subnormal delta, and delta close to 1.
  EXPECT_TRUE(std::isfinite(AnalyticGaussianSigma(1.0, dp::kMinEpsilon, 1e-300)));
  EXPECT_TRUE(std::isfinite(AnalyticGaussianSigma(1.0, 1.0, 4.9406564584124654e-324)));
  EXPECT_TRUE(std::isfinite(AnalyticGaussianSigma(1.0, 1e-3, 0.999)));
  EXPECT_EQ(AnalyticGaussianSigma(0.0, 1.0, 1e-6), 0.0);
}

TEST(AnalyticGaussianSigmaTest, RejectsInvalidArguments) {
  EXPECT_THROW(AnalyticGaussianSigma(1, 0, 1e-6), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(1, -1, 1e-6), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(1, HUGE_VAL, 1e-6), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(1, 1, 0), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(1, 1, 1), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(1, 1, std::nan("")), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(-1, 1, 1e-6), std::invalid_argument);
  EXPECT_THROW(AnalyticGaussianSigma(HUGE_VAL, 1, 1e-6), std::invalid_argument);
  EXPECT_THROW(dp::ValidateDelta(0), dp::InvalidParameter);
  EXPECT_THROW(dp::ValidateDelta(1), dp::InvalidParameter);
  EXPECT_THROW(dp::ValidateDelta(-0.5), dp::InvalidParameter);
  EXPECT_THROW(dp::ValidateDelta(std::nan("")), dp::InvalidParameter);
  EXPECT_NO_THROW(dp::ValidateDelta(1e-300));
}

// ---------------------------------------------------------------------------
// Discrete Gaussian: privacy curve and calibration.

TEST(DiscreteGaussianDeltaTest, MatchesHighPrecisionReferences) {
  struct Case {
    uint128 sensitivity, numerator, denominator;
    double epsilon;
    LD log_delta;  // mpmath, 40 digits, direct summation
  };
  const Case cases[] = {
      {1, 1, 10, 1, -0.025031144573009081658L},
      {1, 100, 1, 1, -57.318360503552089228L},
      {1, 100, 1, 3, -458.37325572985472943L},
      {1, 13, 8, 0.5, -1.854914395059992186L},
      {3, 5, 2, 2, -1.2595364704731979115L},
      // sigma ~ 632 and ~ 866: the Euler-Maclaurin branch.
      {1, 400000, 1, 0.001, -8.282028545240364712L},
      {1, 3000001, 4, 0.05, -952.69602266440647487L},
      {1000, 1000000, 1, 0.002, -0.96152895983598611208L},
      {2, 123456789, 1024, 0.01, -9.2418614748277552889L},
  };
  for (const Case& c : cases) {
    const double got =
        DiscreteGaussianLogDelta(c.sensitivity, c.numerator, c.denominator, c.epsilon);
    EXPECT_NEAR(got, static_cast<double>(c.log_delta),
                1e-13 + 4e-16 * std::fabs(static_cast<double>(c.log_delta)))
        << Text(c.numerator) << "/" << Text(c.denominator) << " eps " << c.epsilon;
  }
}

TEST(DiscreteGaussianDeltaTest, AgreesWithBruteForceSummationOnBothSidesOfTheMethodSwitch) {
  // Direct summation is used up to 4096 terms, Euler-Maclaurin beyond; sweep
  // sigma across the switch (around sigma ~ 146 for small c).
  SeededTestRandomSource rng(101);
  for (int i = 0; i < 60; ++i) {
    const LD sigma = std::exp(std::log(0.3L) + (std::log(1500.0L) - std::log(0.3L)) * i / 59);
    const uint128 denominator = Pow2(16);
    const uint128 numerator = static_cast<uint128>(std::ceil(sigma * sigma * 65536));
    const LD sigma2 = ToLongDouble(numerator) / ToLongDouble(denominator);
    const uint128 sensitivity = 1 + rng.UniformBelow(3);
    // epsilon such that c / sigma spans [-0.5, 5]: delta from ~1 to ~1e-7.
    const LD z = -0.5L + 5.5L * rng.UniformBelow(1000) / 1000;
    const LD epsilon = std::max<LD>(1e-6L, (z * std::sqrt(sigma2) + ToLongDouble(sensitivity) / 2) *
                                               ToLongDouble(sensitivity) / sigma2);
    const LD reference = BruteForceDiscreteDelta(sigma2, epsilon, ToLongDouble(sensitivity));
    const double got =
        DiscreteGaussianLogDelta(sensitivity, numerator, denominator, static_cast<double>(epsilon));
    EXPECT_NEAR(got, static_cast<double>(std::log(reference)), 1e-11)
        << "sigma " << static_cast<double>(sigma) << " eps " << static_cast<double>(epsilon);
  }
}

TEST(DiscreteGaussianDeltaTest, DiffersFromTheContinuousCurveSoItNeedsItsOwnCalibration) {
  // The discrete Gaussian is NOT at least as private as the continuous one
  // at the same sigma (contrary to a common assumption): e.g. sensitivity 1,
  // sigma^2 = 100, epsilon = 1: 1.279e-25 against 1.231e-25.
  const double discrete = DiscreteGaussianLogDelta(1, 100, 1, 1.0);
  const double continuous = AnalyticGaussianLogDelta(1.0, 10.0, 1.0);
  EXPECT_GT(discrete, continuous + 0.03);
  EXPECT_GT(DiscreteGaussianLogDelta(1, 1, 10, 1.0),
            AnalyticGaussianLogDelta(1.0, std::sqrt(0.1), 1.0) + 0.1);
  // ... and sometimes more private (sigma^2 = 1/2, epsilon = 1).
  EXPECT_LT(DiscreteGaussianLogDelta(1, 1, 2, 1.0),
            AnalyticGaussianLogDelta(1.0, std::sqrt(0.5), 1.0));
}

TEST(DiscreteGaussianDeltaTest, SmallerShiftsAreNoWorseThanTheSensitivity) {
  // The privacy argument: for neighbours whose rounded statistics differ by
  // d < D, delta(d) <= delta(D) (monotone likelihood ratio).
  for (uint128 numerator : {uint128{3}, uint128{25}, uint128{1000}, uint128{123457}}) {
    for (double epsilon : {0.1, 1.0, 3.0}) {
      double previous = -HUGE_VAL;
      for (uint128 d = 1; d <= 8; ++d) {
        const double log_delta = DiscreteGaussianLogDelta(d, numerator, 4, epsilon);
        EXPECT_GE(log_delta, previous) << Text(numerator) << " " << epsilon << " " << Text(d);
        previous = log_delta;
      }
    }
  }
}

TEST(DiscreteGaussianSigma2Test, SatisfiesTheDiscreteConditionAndIsNearlyMinimal) {
  for (uint128 sensitivity : {uint128{1}, uint128{2}, uint128{7}, uint128{1000}}) {
    for (double epsilon : {0.01, 0.3, 1.0, 3.0, 10.0}) {
      for (double delta : {1e-12, 1e-6, 0.01}) {
        const DyadicSigma2 s = DiscreteGaussianSigma2(sensitivity, epsilon, delta);
        const std::string where = "D " + Text(sensitivity) + " eps " + std::to_string(epsilon) +
                                  " delta " + std::to_string(delta);
        ASSERT_TRUE(s.numerator > 0) << where;
        EXPECT_TRUE((s.denominator & (s.denominator - 1)) == 0) << where;  // a power of two
        EXPECT_TRUE(DiscreteGaussianSupported(s.numerator, s.denominator)) << where;
        EXPECT_LE(DiscreteGaussianLogDelta(sensitivity, s.numerator, s.denominator, epsilon),
                  std::log(delta))
            << where;
        // 1e-6 less noise violates the condition (the curve is monotone at
        // these parameters).
        const uint128 smaller = s.numerator - s.numerator / 1000000;
        EXPECT_GT(DiscreteGaussianLogDelta(sensitivity, smaller, s.denominator, epsilon),
                  std::log(delta))
            << where;
        // Close to the continuous calibration for large sigma.
        const double continuous =
            AnalyticGaussianSigma(static_cast<double>(sensitivity), epsilon, delta);
        const double ratio = static_cast<double>(std::sqrt(ToLongDouble(s.numerator) /
                                                           ToLongDouble(s.denominator))) /
                             continuous;
        if (continuous > 100) {
          EXPECT_NEAR(ratio, 1.0, 1e-3) << where;
        }
      }
    }
  }
}

TEST(DiscreteGaussianSigma2Test, HandlesTheNonMonotoneRegionBySearchingAndVerifying) {
  // For epsilon = 3, D = 1 the discrete curve rises again between sigma^2 =
  // 0.5 and 0.65; every returned value must satisfy the condition anyway.
  for (double delta : {0.0095, 0.011, 0.0125, 0.0134, 0.02}) {
    const DyadicSigma2 s = DiscreteGaussianSigma2(1, 3.0, delta);
    EXPECT_LE(DiscreteGaussianLogDelta(1, s.numerator, s.denominator, 3.0), std::log(delta))
        << delta;
  }
  EXPECT_LT(DiscreteGaussianLogDelta(1, 1, 2, 3.0), DiscreteGaussianLogDelta(1, 13, 20, 3.0));
}

TEST(DiscreteGaussianSigma2Test, RejectsWhatTheSamplerCannotDo) {
  // sigma ~ 4e11 for sensitivity 1 would need sigma^4 > 2^125.
  EXPECT_THROW(DiscreteGaussianSigma2(1, 1e-12, 1e-12), std::invalid_argument);
  EXPECT_THROW(DiscreteGaussianSigma2(1, 0, 1e-6), std::invalid_argument);
  EXPECT_THROW(DiscreteGaussianSigma2(1, 1, 1.5), std::invalid_argument);
  const DyadicSigma2 zero = DiscreteGaussianSigma2(0, 1, 1e-6);
  EXPECT_TRUE(zero.numerator == 0);
  // Huge epsilon: tiny but positive sigma^2, still verified.
  const DyadicSigma2 tiny = DiscreteGaussianSigma2(1, 1e6, 1e-300);
  EXPECT_LE(DiscreteGaussianLogDelta(1, tiny.numerator, tiny.denominator, 1e6), std::log(1e-300));
}

TEST(DiscreteGaussianTailTest, MatchesBruteForceSummation) {
  // sigma from 0.5 to ~1700: direct summation and Euler-Maclaurin branches.
  for (LD sigma2 : {0.25L, 2.5L, 37.25L, 20000.0L, 1e5L + 0.25L, 3e6L}) {
    const DiscreteGaussianPmf pmf(sigma2);
    ASSERT_TRUE(pmf.Summed());
    const uint128 numerator = static_cast<uint128>(sigma2 * 4);  // exact
    for (LD z : {0.0001L, 0.5L, 1.96L, 3.0L, 10.0L, 30.0L}) {
      const std::int64_t k =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(z * std::sqrt(sigma2)));
      const double reference = static_cast<double>(pmf.LogUpperTail(k));
      EXPECT_NEAR(DiscreteGaussianLogUpperTail(numerator, 4, k), reference,
                  1e-12 * std::max(1.0, std::fabs(reference)))
          << static_cast<double>(sigma2) << " " << k;
    }
    LD variance = 0;
    for (std::int64_t x = static_cast<std::int64_t>(40 * std::sqrt(sigma2)) + 10; x >= 1; --x)
      variance += 2 * pmf.Pmf(x) * x * x;
    EXPECT_NEAR(DiscreteGaussianVariance(numerator, 4) / static_cast<double>(variance), 1.0, 1e-12)
        << static_cast<double>(sigma2);
  }
  EXPECT_THROW(DiscreteGaussianLogUpperTail(1, 1, 0), std::invalid_argument);
}

// ---------------------------------------------------------------------------
// Discrete Gaussian: the sampler.

TEST(DiscreteGaussianSamplerTest, RejectsUnsupportedParameters) {
  SeededTestRandomSource rng(201);
  EXPECT_THROW(SampleDiscreteGaussian(rng, 1, 0), std::invalid_argument);
  // 2 num den t^2 >= 2^127.
  EXPECT_THROW(SampleDiscreteGaussian(rng, Pow2(63), 1), std::invalid_argument);
  EXPECT_THROW(SampleDiscreteGaussian(rng, 1, Pow2(126)), std::invalid_argument);
  EXPECT_FALSE(DiscreteGaussianSupported(Pow2(63), 1));
  EXPECT_FALSE(DiscreteGaussianSupported(1, 0));
  EXPECT_TRUE(DiscreteGaussianSupported(Pow2(61) + 3, 1));
  EXPECT_TRUE(DiscreteGaussianSupported(4, Pow2(122)));
  EXPECT_TRUE(DiscreteGaussianSupported(0, 1));
}

TEST(DiscreteGaussianSamplerTest, ZeroAndTinyVarianceGiveZero) {
  SeededTestRandomSource rng(202);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(SampleDiscreteGaussian(rng, 0, 1) == 0);
    // P[X != 0] ~ 2 exp(-2^99): never.
    ASSERT_TRUE(SampleDiscreteGaussian(rng, 1, Pow2(100)) == 0);
  }
}

TEST(DiscreteGaussianSamplerTest, LargestSupportedVarianceWorks) {
  // sigma ~ 1.5e9: |X| > 12 sigma has probability ~1e-32 per draw.
  SeededTestRandomSource rng(203);
  const uint128 numerator = Pow2(61) + 3;
  const LD limit = 12 * std::sqrt(ToLongDouble(numerator));
  bool negative = false, positive = false;
  for (int i = 0; i < 2000; ++i) {
    const int128 x = SampleDiscreteGaussian(rng, numerator, 1);
    ASSERT_LT(std::fabs(ToLongDouble(x)), limit);
    negative = negative || x < 0;
    positive = positive || x > 0;
  }
  // Each sign has probability ~1/2: missing one in 2000 draws ~ 2^-1999.
  EXPECT_TRUE(negative && positive);
}

// Bins of width w, as dp_test::Binning, each (tails included) expecting at
// least kMinExpectedPerBin samples (see stats_util.h).
Binning ChooseGaussianBinning(const DiscreteGaussianPmf& d, int128 width, std::uint64_t n) {
  Binning b;
  b.width = width;
  const LD min_p = kMinExpectedPerBin / static_cast<LD>(n);
  auto bin = [&](int128 k) { return d.Interval(k * width, (k + 1) * width - 1); };
  if (bin(0) < min_p || d.Interval(width, kInt128Max) < min_p || d.Interval(kInt128Min, -1) < min_p)
    throw std::invalid_argument("too few samples for three bins");
  while (bin(b.highest + 1) >= min_p && d.Interval((b.highest + 2) * width, kInt128Max) >= min_p)
    ++b.highest;
  while (bin(b.lowest - 1) >= min_p && d.Interval(kInt128Min, (b.lowest - 1) * width - 1) >= min_p)
    --b.lowest;
  return b;
}

std::vector<LD> BinProbabilities(const Binning& b, const DiscreteGaussianPmf& d) {
  std::vector<LD> p;
  p.push_back(d.Interval(kInt128Min, b.lowest * b.width - 1));
  for (int128 k = b.lowest; k <= b.highest; ++k)
    p.push_back(d.Interval(k * b.width, (k + 1) * b.width - 1));
  p.push_back(d.Interval((b.highest + 1) * b.width, kInt128Max));
  return p;
}

FitResult FitDiscreteGaussian(const Binning& b, const DiscreteGaussianPmf& d, std::uint64_t n,
                              const std::function<int128()>& sample) {
  std::vector<std::uint64_t> counts(b.Count(), 0);
  for (std::uint64_t i = 0; i < n; ++i) ++counts[b.Index(sample())];
  return ChiSquareFit(counts, BinProbabilities(b, d));
}

struct GaussianCase {
  const char* name;
  uint128 numerator;
  uint128 denominator;
  int128 bin_width;
};
void PrintTo(const GaussianCase& c, std::ostream* os) { *os << c.name; }

// sigma from 0.55 to ~1e6, integer, dyadic and non-dyadic sigma^2.
const GaussianCase kGaussianCases[] = {
    {"s2_0p3", 3, 10, 1},
    {"s2_2p5", 5, 2, 1},
    {"s2_7over3", 7, 3, 1},
    {"s2_37p25", 149, 4, 1},
    {"s2_120563p27", 123456789, 1024, 16},
    {"s2_2p40plus12345", Pow2(40) + 12345, 1, int128{1} << 16},
};

constexpr std::uint64_t kGaussianSamples = 100000;

class DiscreteGaussianFitTest : public ::testing::TestWithParam<GaussianCase> {
 protected:
  DiscreteGaussianFitTest()
      : pmf_(ToLongDouble(GetParam().numerator) / ToLongDouble(GetParam().denominator)),
        binning_(ChooseGaussianBinning(pmf_, GetParam().bin_width, kGaussianSamples)) {}
  DiscreteGaussianPmf pmf_;
  Binning binning_;
};

std::string Describe(const FitResult& fit) {
  return "chi2 = " + std::to_string(fit.statistic) +
         ", df = " + std::to_string(fit.degrees_of_freedom) +
         ", critical = " + std::to_string(fit.critical_value);
}

TEST_P(DiscreteGaussianFitTest, MatchesTheExactPmf) {
  const GaussianCase& c = GetParam();
  SeededTestRandomSource rng(3000);
  const FitResult fit = FitDiscreteGaussian(binning_, pmf_, kGaussianSamples, [&] {
    return SampleDiscreteGaussian(rng, c.numerator, c.denominator);
  });
  // Pearson chi-square at alpha = 1e-9: false failure probability 1e-9.
  EXPECT_GE(fit.degrees_of_freedom, 2);
  EXPECT_LT(fit.statistic, fit.critical_value) << Describe(fit);
}

TEST_P(DiscreteGaussianFitTest, DetectsAWrongSigma) {
  // Power check: samples with 1.5 times the variance must be rejected. The
  // mean statistic under this alternative exceeds the critical value by
  // >= 10 standard deviations (the detection would fail for a random seed
  // only in a >10-sigma event).
  const GaussianCase& c = GetParam();
  SeededTestRandomSource rng(3100);
  const FitResult fit = FitDiscreteGaussian(binning_, pmf_, kGaussianSamples, [&] {
    return SampleDiscreteGaussian(rng, 3 * c.numerator, 2 * c.denominator);
  });
  const DiscreteGaussianPmf alternative(1.5L * ToLongDouble(c.numerator) /
                                        ToLongDouble(c.denominator));
  const double lambda =
      NonCentrality(kGaussianSamples, fit.probabilities, BinProbabilities(binning_, alternative));
  EXPECT_GE(PowerMarginInSigmas(lambda, fit.degrees_of_freedom, fit.critical_value), 10);
  EXPECT_GT(fit.statistic, fit.critical_value) << Describe(fit);
}

INSTANTIATE_TEST_SUITE_P(Variances, DiscreteGaussianFitTest, ::testing::ValuesIn(kGaussianCases),
                         [](const ::testing::TestParamInfo<GaussianCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(DiscreteGaussianSamplerTest, ChiSquareDetectsTheLaplaceProposal) {
  // Power check against a sampler that forgets the acceptance step (and so
  // returns the discrete Laplace proposal with t = floor(sigma) + 1).
  const DiscreteGaussianPmf pmf(37.25L);  // t = floor(sigma) + 1 = 7
  const Binning binning = ChooseGaussianBinning(pmf, 1, kGaussianSamples);
  SeededTestRandomSource rng(3200);
  const FitResult fit = FitDiscreteGaussian(binning, pmf, kGaussianSamples,
                                            [&] { return dp::SampleDiscreteLaplace(rng, 7, 1); });
  const dp_test::DiscreteLaplace laplace(7, 1);
  std::vector<LD> alt;
  alt.push_back(laplace.Interval(kInt128Min, binning.lowest - 1));
  for (int128 k = binning.lowest; k <= binning.highest; ++k) alt.push_back(laplace.Interval(k, k));
  alt.push_back(laplace.Interval(binning.highest + 1, kInt128Max));
  EXPECT_GE(PowerMarginInSigmas(NonCentrality(kGaussianSamples, fit.probabilities, alt),
                                fit.degrees_of_freedom, fit.critical_value),
            10);
  EXPECT_GT(fit.statistic, fit.critical_value) << Describe(fit);
}

TEST(DiscreteGaussianSamplerTest, LowBitsAreUniformAtLargeSigma) {
  // sigma ~ 1.05e6: by Poisson summation the residues mod 256 are uniform up
  // to exp(-2 pi^2 sigma^2 / 256^2) ~ 0; a sampler with float artefacts in
  // its low bits (Mironov 2012) would fail. Chi-square with 255 df: false
  // failure probability 1e-9.
  SeededTestRandomSource rng(3300);
  const uint128 numerator = Pow2(40) + 12345;
  const std::uint64_t n = 256 * 200;
  std::vector<std::uint64_t> counts(256, 0);
  for (std::uint64_t i = 0; i < n; ++i)
    ++counts[static_cast<std::size_t>(
        static_cast<uint128>(SampleDiscreteGaussian(rng, numerator, 1)) & 255)];
  const FitResult fit = ChiSquareFit(counts, std::vector<LD>(256, 1.0L / 256));
  EXPECT_LT(fit.statistic, fit.critical_value);
}

// ---------------------------------------------------------------------------
// PlanGaussian and ReleaseGaussian.

uint128 CeilDivPow2(uint128 value, int shift) {
  if (shift >= 128) return value == 0 ? 0 : 1;
  const uint128 r = Pow2(shift);
  return value / r + (value % r != 0 ? 1 : 0);
}

LD Sigma(const GaussianPlan& plan) {
  return std::sqrt(ToLongDouble(plan.sigma2_numerator) / ToLongDouble(plan.sigma2_denominator));
}

TEST(PlanGaussianTest, CountsUseTheIntegerGridAndTheDiscreteCalibration) {
  for (double epsilon : {0.1, 0.5, 1.0, 10.0}) {
    for (double delta : {1e-12, 1e-6}) {
      const GaussianPlan plan = dp::PlanGaussianCount(epsilon, delta);
      EXPECT_EQ(plan.grid_shift, 0);
      EXPECT_TRUE(plan.sensitivity == 1);
      const DyadicSigma2 s = DiscreteGaussianSigma2(1, epsilon, delta);
      EXPECT_TRUE(plan.sigma2_numerator == s.numerator && plan.sigma2_denominator == s.denominator);
    }
  }
  // Integer sums at ordinary parameters: grid 1 too.
  const GaussianPlan sum = dp::PlanGaussianSum(-1000, 5000, 1.0, 1e-9);
  EXPECT_EQ(sum.grid_shift, 0);
  EXPECT_TRUE(sum.sensitivity == 5000);
}

TEST(PlanGaussianTest, InvariantsHoldForManySensitivitiesAndParameters) {
  const uint128 sensitivities[] = {
      1,           2, 3, 1000, Pow2(20) + 1, Pow2(40) + 1, Pow2(62), Pow2(64) - 1, Pow2(64) + 12345,
      Pow2(90) + 1};
  struct Parameters {
    double epsilon, delta;
  };
  const Parameters parameters[] = {{1e-3, 1e-6}, {0.1, 1e-12}, {1, 1e-6},
                                   {1, 1e-300},  {10, 0.01},   {1e4, 1e-9}};
  SeededTestRandomSource rng(301);
  for (uint128 d : sensitivities) {
    for (const Parameters& p : parameters) {
      const GaussianPlan plan = PlanGaussian(d, p.epsilon, p.delta);
      const std::string where = "D = " + Text(d) + ", eps = " + std::to_string(p.epsilon) +
                                ", delta = " + std::to_string(p.delta);
      ASSERT_GE(plan.grid_shift, 0) << where;
      ASSERT_LT(plan.grid_shift, 128) << where;
      EXPECT_TRUE(plan.sensitivity == CeilDivPow2(d, plan.grid_shift)) << where;
      // The discrete condition holds for the rounded statistic's sensitivity.
      EXPECT_LE(DiscreteGaussianLogDelta(plan.sensitivity, plan.sigma2_numerator,
                                         plan.sigma2_denominator, p.epsilon),
                std::log(p.delta))
          << where;
      EXPECT_TRUE(DiscreteGaussianSupported(plan.sigma2_numerator, plan.sigma2_denominator))
          << where;
      // Noise within ~2^30 grid steps (unless the grid cannot get coarser) ...
      const double per_unit = AnalyticGaussianSigma(1.0, p.epsilon, p.delta);
      if (plan.sensitivity > 1) {
        EXPECT_LE(Sigma(plan), std::ldexp(1.0L, 30) * 1.001L) << where;
      }
      // ... on the finest grid that achieves it.
      if (plan.grid_shift > 0) {
        EXPECT_GT(ToLongDouble(CeilDivPow2(d, plan.grid_shift - 1)) * per_unit,
                  std::ldexp(1.0L, 30))
            << where;
      }
      EXPECT_NO_THROW(ReleaseGaussian(0, 0, plan, rng)) << where;
    }
  }
}

TEST(PlanGaussianTest, HugeSensitivityUsesACoarserGrid) {
  const GaussianPlan plan = PlanGaussian(Pow2(62), 1.0, 1e-6);
  // sigma per unit of sensitivity ~ 4.2247: 2^(62 - s) * 4.22 <= 2^30 first at s = 35.
  EXPECT_EQ(plan.grid_shift, 35);
  EXPECT_TRUE(plan.sensitivity == Pow2(27));
  EXPECT_GT(Sigma(plan), std::ldexp(1.0L, 29));
  EXPECT_LE(Sigma(plan), std::ldexp(1.0L, 30));
}

TEST(PlanGaussianTest, ZeroSensitivityAddsNoNoise) {
  const GaussianPlan plan = PlanGaussian(0, 1.0, 1e-6);
  EXPECT_TRUE(plan.sensitivity == 0);
  EXPECT_EQ(plan.grid_shift, 0);
  EXPECT_EQ(dp::GaussianNoiseStddev(plan, 0), 0.0);
  SeededTestRandomSource rng(302);
  for (int128 value : {int128{0}, int128{-1}, int128{12345}, int128{1} << 125}) {
    const GridValue out = ReleaseGaussian(value, -7, plan, rng);
    EXPECT_TRUE(out.mantissa == value);
    EXPECT_EQ(out.exponent, -7);
  }
}

TEST(PlanGaussianTest, RejectsInvalidOrUnsupportedParameters) {
  EXPECT_THROW(PlanGaussian(1, 0, 1e-6), std::invalid_argument);
  EXPECT_THROW(PlanGaussian(1, 1, 0), std::invalid_argument);
  EXPECT_THROW(PlanGaussian(1, 1, 1), std::invalid_argument);
  EXPECT_THROW(PlanGaussian(1, std::nan(""), 1e-6), std::invalid_argument);
  // Sensitivity 1 step needs sigma ~ 4e11 > 2^31 here.
  EXPECT_THROW(PlanGaussian(1, 1e-12, 1e-12), std::invalid_argument);
  // The smallest epsilon still works with a moderate delta (sigma ~ 4e5).
  EXPECT_NO_THROW(PlanGaussian(1, dp::kMinEpsilon, 1e-6));
}

TEST(ReleaseGaussianTest, RoundsToTheGridLikeTheLaplaceRelease) {
  // With sensitivity 0 (no noise) both releases reduce to the rounding.
  SeededTestRandomSource rng(303);
  std::vector<int128> values;
  for (int v = -40; v <= 40; ++v) values.push_back(v);
  for (int i = 0; i < 300; ++i) {
    const int128 v = static_cast<int128>(rng.UniformBelow128(Pow2(100)));
    values.push_back(rng.FairBit() ? -v : v);
  }
  const int128 big = (int128{1} << 126) - 1;
  values.push_back(big);
  values.push_back(-big);
  for (int shift : {0, 1, 3, 22, 62, 100, 126, 127}) {
    GaussianPlan gaussian;
    gaussian.grid_shift = shift;
    dp::LaplacePlan laplace;
    laplace.grid_shift = shift;
    for (int128 value : values) {
      const GridValue g = ReleaseGaussian(value, 5, gaussian, rng);
      const GridValue l = dp::ReleaseLaplace(value, 5, laplace, rng);
      ASSERT_TRUE(g.mantissa == l.mantissa) << dp::Int128ToString(value) << " >> " << shift;
      ASSERT_EQ(g.exponent, 5 + shift);
    }
  }
}

TEST(ReleaseGaussianTest, OutputExponentIsUnitPlusGridShift) {
  SeededTestRandomSource rng(304);
  for (uint128 d : {uint128{1}, uint128{1000}, Pow2(62), Pow2(63)}) {
    const GaussianPlan plan = PlanGaussian(d, 1.0, 1e-9);
    for (int unit : {-1135, -61, 0, 935})
      EXPECT_EQ(ReleaseGaussian(12345, unit, plan, rng).exponent, unit + plan.grid_shift);
  }
}

TEST(ReleaseGaussianTest, NoiseOnACoarseGridFollowsTheDiscreteGaussian) {
  // Sensitivity 2^62 at (1, 1e-6): grid 2^35, sigma ~ 5.7e8 steps. The
  // output minus round(value / 2^35) must be N_Z(0, sigma^2) with the
  // plan's sigma^2: chi-square on bins of 2^24 steps, false failure
  // probability 1e-9.
  const GaussianPlan plan = PlanGaussian(Pow2(62), 1.0, 1e-6);
  ASSERT_EQ(plan.grid_shift, 35);
  const int128 value = -((int128{1} << 90) + 0x2ABCDEF12345);
  const int128 rounded = dp_test::FloorDiv(2 * value + (int128{1} << 35), int128{1} << 36);
  const DiscreteGaussianPmf pmf(ToLongDouble(plan.sigma2_numerator) /
                                ToLongDouble(plan.sigma2_denominator));
  ASSERT_FALSE(pmf.Summed());
  const std::uint64_t n = 50000;
  const Binning binning = ChooseGaussianBinning(pmf, int128{1} << 24, n);
  SeededTestRandomSource rng(305);
  const FitResult fit = FitDiscreteGaussian(
      binning, pmf, n, [&] { return ReleaseGaussian(value, 0, plan, rng).mantissa - rounded; });
  EXPECT_LT(fit.statistic, fit.critical_value) << Describe(fit);
}

TEST(ReleaseGaussianTest, NoiseStddevIsThatOfTheDiscreteDistribution) {
  for (double epsilon : {0.5, 3.0, 30.0}) {
    const GaussianPlan plan = dp::PlanGaussianCount(epsilon, 1e-6);
    const DiscreteGaussianPmf pmf(ToLongDouble(plan.sigma2_numerator) /
                                  ToLongDouble(plan.sigma2_denominator));
    LD variance = 0;
    for (std::int64_t x = 1; x < 200; ++x) variance += 2 * pmf.Pmf(x) * x * x;
    for (int unit : {-20, 0, 7})
      EXPECT_NEAR(dp::GaussianNoiseStddev(plan, unit) /
                      std::ldexp(std::sqrt(static_cast<double>(variance)), unit),
                  1.0, 1e-12)
          << epsilon;
  }
}

// ---------------------------------------------------------------------------
// Mean.

TEST(GaussianMeanTest, SplitsEpsilonAndDeltaAndUsesTheWidth) {
  const GaussianMeanPlans plans = dp::PlanGaussianMean(-7, 10, 1.0, 1e-6);
  const GaussianPlan count = PlanGaussian(1, 0.5, 5e-7);
  const GaussianPlan sum = PlanGaussian(17, 0.5, 5e-7);
  EXPECT_TRUE(plans.count.sigma2_numerator == count.sigma2_numerator &&
              plans.count.sigma2_denominator == count.sigma2_denominator);
  EXPECT_TRUE(plans.centred_sum.sensitivity == 17);
  EXPECT_TRUE(plans.centred_sum.sigma2_numerator == sum.sigma2_numerator &&
              plans.centred_sum.sigma2_denominator == sum.sigma2_denominator);
  const GaussianMeanPlans widest =
      dp::PlanGaussianMean(std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max(), 1.0, 1e-9);
  EXPECT_GT(widest.centred_sum.grid_shift, 0);
  // Halves never round up, even for a subnormal delta (3 x 2^-1074 / 2
  // would round half-to-even up to 2 x 2^-1074): the parts compose to delta.
  const double tiny = 3 * 4.9406564584124654e-324;
  const GaussianMeanPlans subnormal = dp::PlanGaussianMean(0, 1, 1.0, tiny);
  const GaussianPlan expected = PlanGaussian(1, 0.5, 4.9406564584124654e-324);
  EXPECT_TRUE(subnormal.count.sigma2_numerator == expected.sigma2_numerator &&
              subnormal.count.sigma2_denominator == expected.sigma2_denominator);
}

TEST(GaussianMeanTest, AlwaysWithinTheBoundsAndExactWithoutNoise) {
  const std::int64_t many = std::int64_t{1} << 40;
  struct Scenario {
    std::int64_t lower, upper, count;
    int128 sum;
    double epsilon, delta;
  };
  const Scenario scenarios[] = {{0, 100, 0, 0, 1.0, 1e-6},       {0, 100, 0, 0, 1e-3, 1e-6},
                                {-5, 3, 3, 3, 0.01, 1e-9},       {7, 7, 100, 700, 1.0, 1e-6},
                                {0, 1, many, many, 1e-3, 1e-12}, {-1, 1, 1, 1, 1e4, 0.1}};
  for (const Scenario& s : scenarios) {
    const GaussianMeanPlans plans = dp::PlanGaussianMean(s.lower, s.upper, s.epsilon, s.delta);
    for (std::uint64_t seed = 0; seed < 100; ++seed) {
      SeededTestRandomSource rng(seed);
      const double mean = dp::ReleaseGaussianMean(s.count, s.sum, s.lower, s.upper, 0, plans, rng);
      ASSERT_GE(mean, static_cast<double>(s.lower));
      ASSERT_LE(mean, static_cast<double>(s.upper));
    }
  }
  // At epsilon 1e6 the discrete sigma^2 is ~1e-6: a non-zero draw has
  // probability ~2 exp(-5e5). The answer is the exact arithmetic.
  SeededTestRandomSource rng(306);
  const GaussianMeanPlans unit_range = dp::PlanGaussianMean(0, 1, 1e6, 0.1);
  EXPECT_EQ(dp::ReleaseGaussianMean(10, 5, 0, 1, 0, unit_range, rng), 0.5);
  EXPECT_EQ(dp::ReleaseGaussianMean(4, 1, 0, 1, 0, unit_range, rng), 0.25);
  const GaussianMeanPlans quarters = dp::PlanGaussianMean(0, 3, 1e6, 0.1);
  EXPECT_EQ(dp::ReleaseGaussianMean(2, 3, 0, 3, -2, quarters, rng), 0.375);
  const dp::MeanRelease parts = dp::ReleaseGaussianMeanParts(4, 1, 0, 1, 0, unit_range, rng);
  EXPECT_TRUE(parts.noisy_count.mantissa == 4 && parts.noisy_count.exponent == 0);
  // Centred sum 2 * 1 - 4 * 1 = -2 half-units.
  EXPECT_TRUE(parts.noisy_centred_sum.mantissa == -2 && parts.noisy_centred_sum.exponent == -1);
}

}  // namespace
