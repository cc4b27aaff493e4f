// Tests of the Laplace mechanism on a binary grid: epsilon rounding, the
// plan (grid and exact noise scale), rounding to the grid, and the realised
// noise distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "exact_sampler.h"
#include "grid_value.h"
#include "laplace_mechanism.h"
#include "parameters.h"
#include "private_statistics.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::DyadicEpsilon;
using dp::GridValue;
using dp::int128;
using dp::LaplaceNoiseStddev;
using dp::LaplacePlan;
using dp::PlanCount;
using dp::PlanLaplace;
using dp::ReleaseLaplace;
using dp::RoundEpsilonDown;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::BernsteinDeviation;
using dp_test::Binning;
using dp_test::ChooseBinning;
using dp_test::DiscreteLaplace;
using dp_test::DiscreteLaplaceMeanDeviation;
using dp_test::FitDiscreteLaplace;
using dp_test::FitResult;
using dp_test::FloorDiv;
using dp_test::kFalseFailureProbability;
using dp_test::ToLongDouble;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

const double kEpsilons[] = {
    dp::kMinEpsilon, 1e-12, 1e-6, 0.01, 0.1, 1.0 / 3, 0.5, 0.7, 1, 2, 3, 10, 1000, 123456.789};

// ---------------------------------------------------------------------------
// RoundEpsilonDown

TEST(RoundEpsilonDownTest, KeepsTwentyFourBitsAndNeverRoundsUp) {
  SeededTestRandomSource rng(31);
  std::vector<double> epsilons(std::begin(kEpsilons), std::end(kEpsilons));
  epsilons.push_back(5e-324);  // the smallest subnormal
  epsilons.push_back(1.7976931348623157e308);
  for (int i = 0; i < 10000; ++i) {
    const double mantissa = 1 + std::ldexp(static_cast<double>(rng.UniformBelow(1ULL << 52)), -52);
    epsilons.push_back(std::ldexp(mantissa, static_cast<int>(rng.UniformBelow(120)) - 60));
  }
  for (double epsilon : epsilons) {
    const DyadicEpsilon rounded = RoundEpsilonDown(epsilon);
    ASSERT_LT(rounded.mantissa, 1ULL << 24) << epsilon;
    ASSERT_GE(rounded.mantissa, 1ULL << 23) << epsilon;  // normalised: 24 significant bits
    const long double value =
        std::ldexp(static_cast<long double>(rounded.mantissa), rounded.exponent);
    ASSERT_LE(value, epsilon) << epsilon;
    ASSERT_LT((epsilon - value) / epsilon, std::ldexp(1.0L, -23)) << epsilon;
  }
}

TEST(RoundEpsilonDownTest, DyadicEpsilonsAreExact) {
  for (double epsilon : {0.5, 1.0, 0.75, 10.0, std::ldexp(1.0, -50), std::ldexp(12345.0, -20)}) {
    const DyadicEpsilon rounded = RoundEpsilonDown(epsilon);
    EXPECT_EQ(std::ldexp(static_cast<double>(rounded.mantissa), rounded.exponent), epsilon);
  }
  const DyadicEpsilon one = RoundEpsilonDown(1.0);
  EXPECT_EQ(one.mantissa, 1ULL << 23);
  EXPECT_EQ(one.exponent, -23);
}

TEST(RoundEpsilonDownTest, RejectsNonPositiveAndNonFinite) {
  for (double epsilon : {0.0, -0.0, -1.0, std::nan(""), HUGE_VAL, -HUGE_VAL})
    EXPECT_THROW(RoundEpsilonDown(epsilon), std::invalid_argument) << epsilon;
}

// ---------------------------------------------------------------------------
// PlanLaplace

// scale == sensitivity / epsilon' exactly, by cross-multiplication:
// numerator * m * 2^e == sensitivity * denominator.
bool ScaleIsExactlySensitivityOverEpsilon(const LaplacePlan& plan, const DyadicEpsilon& eps) {
  if (eps.exponent <= 0) {
    // numerator * m == sensitivity * denominator * 2^-e; the left side is
    // < 2^120 (numerator < 2^96, m < 2^24), the right side checked for overflow.
    const int up = -eps.exponent;
    if (plan.scale_numerator >= Pow2(96) || up >= 128) return false;
    const uint128 right = plan.sensitivity * plan.scale_denominator;
    if (up > 0 && (right >> (128 - up)) != 0) return false;
    return plan.scale_numerator * eps.mantissa == (right << up);
  }
  // numerator == sensitivity * denominator / (m 2^e)
  return plan.scale_numerator * (uint128{eps.mantissa} << eps.exponent) ==
         plan.sensitivity * plan.scale_denominator;
}

// c > epsilon' * 2^40 for an integer c, without overflow.
bool ExceedsEpsilonTimes2To40(uint128 c, const DyadicEpsilon& eps) {
  const int shift = eps.exponent + dp::kGridBitsBelowScale;
  if (shift >= 0) return shift < 100 && c > (uint128{eps.mantissa} << shift);
  return -shift >= 64 ? c > 0 : c > (eps.mantissa >> -shift);  // c integer
}

uint128 CeilDivPow2(uint128 value, int shift) {
  const uint128 r = Pow2(shift);
  return value / r + (value % r != 0 ? 1 : 0);
}

TEST(PlanLaplaceTest, CountsUseTheIntegerGridAndTheExactScale) {
  for (double epsilon : {0.1, 0.5, 1.0, 10.0}) {
    const LaplacePlan plan = PlanLaplace(1, epsilon);
    EXPECT_EQ(plan.grid_shift, 0) << epsilon;
    EXPECT_TRUE(plan.sensitivity == 1) << epsilon;
    EXPECT_TRUE(ScaleIsExactlySensitivityOverEpsilon(plan, RoundEpsilonDown(epsilon))) << epsilon;
  }
  // Dyadic epsilons give exactly 1/epsilon.
  const LaplacePlan half = PlanLaplace(1, 0.5);
  EXPECT_TRUE(half.scale_numerator == 2 * half.scale_denominator);
}

TEST(PlanLaplaceTest, InvariantsHoldForManySensitivitiesAndEpsilons) {
  const uint128 sensitivities[] = {
      1,        2,        3,        1000,         Pow2(20) + 1,     Pow2(40),    Pow2(40) + 1,
      Pow2(62), Pow2(63), Pow2(64), 3 * Pow2(62), Pow2(64) + 12345, Pow2(90) + 1};
  SeededTestRandomSource rng(32);
  for (uint128 d : sensitivities) {
    for (double epsilon : kEpsilons) {
      const DyadicEpsilon eps = RoundEpsilonDown(epsilon);
      const LaplacePlan plan = PlanLaplace(d, epsilon);
      const std::string where = "D = " + dp::Int128ToString(static_cast<int128>(d)) +
                                ", eps = " + std::to_string(epsilon);
      ASSERT_GE(plan.grid_shift, 0) << where;
      ASSERT_LT(plan.grid_shift, 128) << where;
      // The rounded statistic's sensitivity, in grid steps.
      EXPECT_TRUE(plan.sensitivity == CeilDivPow2(d, plan.grid_shift)) << where;
      EXPECT_TRUE(ScaleIsExactlySensitivityOverEpsilon(plan, eps)) << where;
      // Noise within 2^40 grid steps (unless the grid cannot get coarser) ...
      if (plan.sensitivity > 1) {
        EXPECT_FALSE(ExceedsEpsilonTimes2To40(plan.sensitivity, eps)) << where;
      }
      // ... on the finest grid that achieves it.
      if (plan.grid_shift > 0) {
        EXPECT_TRUE(ExceedsEpsilonTimes2To40(CeilDivPow2(d, plan.grid_shift - 1), eps)) << where;
      }
      // The sampler accepts the scale.
      EXPECT_TRUE(plan.scale_numerator < Pow2(96)) << where;
      EXPECT_NO_THROW(ReleaseLaplace(0, 0, plan, rng)) << where;
    }
  }
}

TEST(PlanLaplaceTest, HugeSensitivityUsesACoarserGridAndAScaleNear2To40) {
  for (double epsilon : {0.1, 0.5, 0.7, 1.0, 10.0}) {
    const LaplacePlan plan = PlanLaplace(Pow2(62), epsilon);
    EXPECT_GT(plan.grid_shift, 0) << epsilon;
    const double scale = static_cast<double>(ToLongDouble(plan.scale_numerator) /
                                             ToLongDouble(plan.scale_denominator));
    EXPECT_GT(scale, std::ldexp(1.0, 39)) << epsilon;
    EXPECT_LE(scale, std::ldexp(1.0, 40)) << epsilon;
  }
  const LaplacePlan one = PlanLaplace(Pow2(62), 1.0);
  EXPECT_EQ(one.grid_shift, 22);
  EXPECT_TRUE(one.sensitivity == Pow2(40));
}

TEST(PlanLaplaceTest, SmallestEpsilonStillWorks) {
  const double epsilon = std::ldexp(1.0, -50);
  ASSERT_EQ(epsilon, dp::kMinEpsilon);
  const LaplacePlan count = PlanLaplace(1, epsilon);
  EXPECT_EQ(count.grid_shift, 0);
  EXPECT_TRUE(count.scale_numerator == Pow2(50) * count.scale_denominator);  // scale 2^50
  const LaplacePlan huge = PlanLaplace(Pow2(62), epsilon);
  EXPECT_EQ(huge.grid_shift, 62);
  EXPECT_TRUE(huge.sensitivity == 1);
  // Half of it, as PlanMean uses.
  const LaplacePlan half = PlanLaplace(Pow2(63), epsilon / 2);
  EXPECT_TRUE(half.scale_numerator == Pow2(51) * half.scale_denominator);
  SeededTestRandomSource rng(33);
  for (int i = 0; i < 100; ++i) {
    EXPECT_NO_THROW(ReleaseLaplace(5, 0, count, rng));
    EXPECT_NO_THROW(ReleaseLaplace(5, 0, huge, rng));
    EXPECT_NO_THROW(ReleaseLaplace(5, 0, half, rng));
  }
}

TEST(PlanLaplaceTest, ZeroSensitivityAddsNoNoise) {
  const LaplacePlan plan = PlanLaplace(0, 1.0);
  EXPECT_TRUE(plan.sensitivity == 0);
  EXPECT_EQ(plan.grid_shift, 0);
  EXPECT_EQ(LaplaceNoiseStddev(plan, 0), 0.0);
  SeededTestRandomSource rng(34);
  const int128 values[] = {0, -1, 12345, -(int128{1} << 125), (int128{1} << 125)};
  for (int128 value : values) {
    for (int unit : {-1135, -61, 0, 935}) {
      const GridValue out = ReleaseLaplace(value, unit, plan, rng);
      EXPECT_TRUE(out.mantissa == value);
      EXPECT_EQ(out.exponent, unit);
    }
  }
}

// ---------------------------------------------------------------------------
// ReleaseLaplace

TEST(ReleaseLaplaceTest, OutputExponentIsUnitPlusGridShift) {
  SeededTestRandomSource rng(35);
  for (uint128 d : {uint128{1}, uint128{1000}, Pow2(62), Pow2(63)}) {
    for (double epsilon : {0.1, 1.0, 10.0}) {
      const LaplacePlan plan = PlanLaplace(d, epsilon);
      for (int unit : {-1135, -61, 0, 935}) {
        EXPECT_EQ(ReleaseLaplace(12345, unit, plan, rng).exponent, unit + plan.grid_shift);
      }
    }
  }
}

TEST(ReleaseLaplaceTest, RoundsToTheGridHalfUp) {
  // A plan without noise isolates the rounding: value / 2^shift rounded to
  // nearest, ties toward +infinity, i.e. the remainder value - rounded * R
  // lies in [-R/2, R/2).
  SeededTestRandomSource rng(36);
  std::vector<int128> values;
  for (int v = -40; v <= 40; ++v) values.push_back(v);
  const int128 big = (int128{1} << 126) - 1;
  for (int128 v : {big, -big, big - 12345, -big + 12345, int128{1} << 100, -(int128{1} << 100)})
    values.push_back(v);
  for (int i = 0; i < 1000; ++i) {
    int128 v = static_cast<int128>(rng.UniformBelow128(uint128{1} << 100));
    values.push_back(rng.FairBit() ? -v : v);
  }
  for (int shift : {1, 2, 3, 22, 62, 100, 125, 126}) {
    LaplacePlan plan;
    plan.grid_shift = shift;  // sensitivity 0: no noise
    const int128 r = int128{1} << shift;
    for (int128 value : values) {
      const int128 rounded = ReleaseLaplace(value, 0, plan, rng).mantissa;
      const int128 remainder = value - rounded * r;
      ASSERT_TRUE(-r / 2 <= remainder && remainder < r / 2)
          << dp::Int128ToString(value) << " >> " << shift << " -> " << dp::Int128ToString(rounded);
    }
  }
  LaplacePlan by8;
  by8.grid_shift = 3;
  const int expected[][2] = {{-12, -1}, {-13, -2}, {-4, 0},   {-5, -1}, {4, 1},
                             {3, 0},    {12, 2},   {-11, -1}, {-20, -2}};
  for (const auto& e : expected)
    EXPECT_TRUE(ReleaseLaplace(e[0], 0, by8, rng).mantissa == e[1]) << e[0] << " / 8";
  // A grid coarser than any value rounds everything to 0.
  LaplacePlan coarse;
  coarse.grid_shift = 127;
  EXPECT_TRUE(ReleaseLaplace(big, 0, coarse, rng).mantissa == 0);
  EXPECT_TRUE(ReleaseLaplace(-big, 0, coarse, rng).mantissa == 0);
}

TEST(ReleaseLaplaceTest, NoiseIsAddedToTheRoundedValue) {
  // Noise of scale 2^-100 grid steps is exactly 0 unless the geometric part
  // reaches 2^100 (probability ~exp(-2^100)): the output is the rounded value.
  LaplacePlan plan;
  plan.grid_shift = 3;
  plan.sensitivity = 1;
  plan.scale_numerator = 1;
  plan.scale_denominator = Pow2(100);
  SeededTestRandomSource rng(37);
  for (int v = -40; v <= 40; ++v) {
    const GridValue out = ReleaseLaplace(v, -5, plan, rng);
    EXPECT_TRUE(out.mantissa == FloorDiv(2 * v + 8, 16)) << v;  // floor(v/8 + 1/2)
    EXPECT_EQ(out.exponent, -2);
  }
}

TEST(ReleaseLaplaceTest, NoiseOnACoarseGridFollowsTheDiscreteLaplace) {
  // Sensitivity 2^62 at epsilon 1: grid 2^22, scale 2^40 steps. The
  // difference between the output and round(value / 2^22) must be discrete
  // Laplace with exactly that scale: chi-square on bins of 2^36 steps,
  // false failure probability 1e-9.
  const LaplacePlan plan = PlanLaplace(Pow2(62), 1.0);
  ASSERT_EQ(plan.grid_shift, 22);
  const int128 value = -((int128{1} << 80) + 0x2ABCDEF);
  const int128 rounded = FloorDiv(2 * value + (int128{1} << 22), int128{1} << 23);
  const DiscreteLaplace pmf(plan.scale_numerator, plan.scale_denominator);
  const std::uint64_t n = 100000;
  const Binning binning = ChooseBinning(pmf, int128{1} << 36, n);
  SeededTestRandomSource rng(38);
  const FitResult fit = FitDiscreteLaplace(
      pmf, binning, n, [&] { return ReleaseLaplace(value, 0, plan, rng).mantissa - rounded; });
  EXPECT_LT(fit.statistic, fit.critical_value);
}

// ---------------------------------------------------------------------------
// Noise scale

// Moments of the discrete Laplace distribution with P(x) ~ q^|x|, summed
// numerically: E[min(Z^2, k^2)] and E[Z^4].
struct TruncatedMoments {
  long double second_truncated = 0;
  long double fourth = 0;
};
TruncatedMoments MomentsOf(const DiscreteLaplace& d, long double truncation) {
  TruncatedMoments m;
  for (int x = -2000; x <= 2000; ++x) {
    const long double p = d.Pmf(x);
    const long double x2 = static_cast<long double>(x) * x;
    m.second_truncated += p * std::min(x2, truncation * truncation);
    m.fourth += p * x2 * x2;
  }
  return m;
}

TEST(NoiseScaleTest, CountNoiseHasTheExactDiscreteLaplaceVariance) {
  const double epsilon = 0.5;
  const LaplacePlan plan = PlanCount(epsilon);
  const DiscreteLaplace pmf(plan.scale_numerator, plan.scale_denominator);
  const long double q = pmf.q();
  ASSERT_NEAR(static_cast<double>(q), std::exp(-0.5), 1e-15);
  const long double variance = 2 * q / ((1 - q) * (1 - q));

  const std::uint64_t n = 200000;
  SeededTestRandomSource rng(39);
  long double sum_of_squares = 0;
  long double sum = 0;
  const int128 value = 1000;
  for (std::uint64_t i = 0; i < n; ++i) {
    const GridValue out = ReleaseLaplace(value, 0, plan, rng);
    ASSERT_EQ(out.exponent, 0);
    const long double z = ToLongDouble(out.mantissa - value);
    sum += z;
    sum_of_squares += z * z;
  }
  const long double mean_square = sum_of_squares / n;  // the noise mean is 0 by symmetry

  // Rigorous bound, false failure probability <= 1e-9 in total:
  // (1) all |Z_i| <= K except with probability n * P[|Z| > K] <= 5e-10;
  // (2) on that event mean(Z^2) = mean(min(Z^2, K^2)), a mean of i.i.d.
  //     variables in [0, K^2] with variance <= E[Z^4]: Bernstein's
  //     inequality with delta = 5e-10;
  // (3) E[min(Z^2, K^2)] differs from the variance by the (computed, tiny)
  //     truncated tail, which is added to the allowance.
  const double delta = kFalseFailureProbability / 2;
  long double k = 0;
  while (n * 2 * std::pow(q, k + 1) / (1 + q) > delta) ++k;
  const TruncatedMoments moments = MomentsOf(pmf, k);
  ASSERT_NEAR(static_cast<double>(MomentsOf(pmf, 1e6).second_truncated),
              static_cast<double>(variance), 1e-12);
  const double allowance = BernsteinDeviation(n, static_cast<double>(moments.fourth),
                                              static_cast<double>(k * k), delta) +
                           static_cast<double>(variance - moments.second_truncated);
  EXPECT_NEAR(static_cast<double>(mean_square), static_cast<double>(variance), allowance)
      << "K = " << static_cast<double>(k);
  // Power: the allowance is below 10% of the variance, so noise of a scale
  // 1.2 times too large (variance ~1.4 times) or too small would be detected.
  EXPECT_LT(allowance, 0.1 * static_cast<double>(variance));
  // And the noise is centred: Chernoff bound from the exact moment
  // generating function, false failure probability 1e-9 (about 0.04 here).
  EXPECT_LT(std::fabs(static_cast<double>(sum / n)),
            DiscreteLaplaceMeanDeviation(q, n, kFalseFailureProbability));

  // The reported standard deviation is that of the distribution sampled.
  EXPECT_NEAR(LaplaceNoiseStddev(plan, 0), std::sqrt(static_cast<double>(variance)), 1e-12);
}

long double ReferenceStddev(const LaplacePlan& plan, int unit_exponent) {
  const long double rate =
      ToLongDouble(plan.scale_denominator) / ToLongDouble(plan.scale_numerator);
  const long double q = std::exp(-rate);
  return std::sqrt(2 * q) / -std::expm1(-rate) * std::ldexp(1.0L, unit_exponent + plan.grid_shift);
}

TEST(NoiseScaleTest, LaplaceNoiseStddevIsSqrt2qOverOneMinusQ) {
  for (double epsilon : {0.1, 0.5, 1.0, 10.0}) {
    for (int unit : {-61, 0, 20}) {
      const LaplacePlan plan = PlanCount(epsilon);
      const long double reference = ReferenceStddev(plan, unit);
      EXPECT_NEAR(LaplaceNoiseStddev(plan, unit) / reference, 1.0, 1e-12) << epsilon << " " << unit;
    }
  }
  // For large scales the core's 1 - exp(-1/scale) loses ~12 bits to
  // cancellation (see the disabled test below); 1e-4 holds.
  for (double epsilon : {0.1, 0.3, 0.7, 1.0, 1.3}) {
    const LaplacePlan plan = PlanLaplace(Pow2(62), epsilon);
    EXPECT_NEAR(LaplaceNoiseStddev(plan, -30) / ReferenceStddev(plan, -30), 1.0, 1e-4) << epsilon;
  }
}

// Disabled: documents a precision defect in the core (see the test report).
// LaplaceNoiseStddev computes 1 - q with q = exp(-1/scale) rounded to double;
// for scales near 2^40 grid steps that subtraction cancels ~40 bits, leaving a
// relative error up to ~4e-5 (e.g. epsilon 0.3). -expm1(-1/scale) is exact to
// ~1e-16.
TEST(NoiseScaleTest, LaplaceNoiseStddevIsAccurateForLargeScales) {
  for (double epsilon : {0.1, 0.3, 0.7, 1.0, 1.3}) {
    const LaplacePlan plan = PlanLaplace(Pow2(62), epsilon);
    EXPECT_NEAR(LaplaceNoiseStddev(plan, 0) / ReferenceStddev(plan, 0), 1.0, 1e-9) << epsilon;
  }
}

}  // namespace
