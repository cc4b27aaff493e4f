// The zCDP accountant: conversion values against an independent
// high-precision evaluation of CKS20 Corollary 13, the conversion never
// below the exact privacy profile of the Gaussian mechanism it accounts for,
// never worse than Bun-Steinke's simpler bound, monotonicity, composition, and
// sigma calibration for a target rho.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gaussian_mechanism.h"
#include "parameters.h"
#include "privacy_accountant.h"

namespace {

using dp::PrivacyAccountant;

// Reference values: mpmath at 40 digits, minimising
// (a-1)(a rho - eps) + a log(1 - 1/a) - log(a - 1) over a > 1 (CKS20 Cor. 13).
TEST(ZcdpConversionTest, MatchesIndependentHighPrecisionValues) {
  struct Case {
    double rho, epsilon, delta;
  };
  for (const Case& c :
       {Case{0.5, 1.0, 0.2468463307829444870748}, Case{0.01, 0.5, 3.505878060052390974015e-5},
        Case{0.1, 2.0, 4.325210869092558231959e-6}}) {
    const double delta = dp::ZcdpDelta(c.rho, c.epsilon);
    EXPECT_GE(delta, c.delta) << c.rho;  // never below the infimum
    EXPECT_LE(delta, c.delta * (1 + 1e-9)) << c.rho;
  }
}

TEST(ZcdpConversionTest, NeverBelowTheExactGaussianProfile) {
  // A Gaussian with sensitivity 1 and sigma is exactly 1/(2 sigma^2)-zCDP, so
  // any valid conversion must report at least its exact delta (Balle & Wang).
  for (double sigma : {0.5, 1.0, 2.0, 4.2, 10.0, 45.0}) {
    const double rho = 1 / (2 * sigma * sigma);
    for (double epsilon : {0.01, 0.1, 0.5, 1.0, 2.0, 5.0}) {
      const double exact = dp::AnalyticGaussianDelta(1, sigma, epsilon);
      EXPECT_GE(dp::ZcdpDelta(rho, epsilon), exact) << sigma << " " << epsilon;
    }
  }
}

TEST(ZcdpConversionTest, NoWorseThanBunSteinke) {
  // BS16 Prop. 1.3: rho-zCDP implies (rho + 2 sqrt(rho log(1/delta)), delta).
  for (double rho : {1e-4, 0.01, 0.1, 1.0, 5.0}) {
    for (double delta : {1e-12, 1e-6, 1e-3}) {
      const double simple = rho + 2 * std::sqrt(rho * std::log(1 / delta));
      const double tight = dp::ZcdpEpsilon(rho, delta);
      EXPECT_LT(tight, simple) << rho << " " << delta;
      // And consistent with ZcdpDelta: at that epsilon delta is reached.
      EXPECT_LE(dp::ZcdpDelta(rho, tight), delta * (1 + 1e-9)) << rho;
    }
  }
}

TEST(ZcdpConversionTest, Monotone) {
  double previous = 0;
  for (double rho = 1e-3; rho < 10; rho *= 1.7) {
    const double delta = dp::ZcdpDelta(rho, 1.0);
    EXPECT_GE(delta, previous);
    previous = delta;
  }
  previous = 1;
  for (double epsilon = 0.01; epsilon < 20; epsilon *= 1.5) {
    const double delta = dp::ZcdpDelta(0.05, epsilon);
    EXPECT_LE(delta, previous);
    previous = delta;
  }
}

TEST(ZcdpConversionTest, RhoForBudgetIsTheLargestThatFits) {
  for (double epsilon : {0.1, 1.0, 3.0}) {
    for (double delta : {1e-9, 1e-6}) {
      const double rho = dp::RhoForEpsilonDelta(epsilon, delta);
      EXPECT_LE(dp::ZcdpDelta(rho, epsilon), delta);
      EXPECT_GT(dp::ZcdpDelta(rho * (1 + 1e-9), epsilon), delta * (1 - 1e-6));
    }
  }
}

// Issue 26 finding 4: RhoForEpsilonDelta(1e-20, 1e-300) stepped down one
// double at a time from 1e-300 and never returned. Over extreme inputs the
// result must fit (its conversion is within delta at epsilon) and be maximal
// at double resolution (the next double up does not fit). Both are checked
// by the conversion itself, not by timing, so a slow but correct search
// passes and a fast but wrong one fails; the old one never got here.
TEST(ZcdpConversionTest, RhoForBudgetFitsAndIsMaximalAtExtremes) {
  const double kSubnormals[] = {std::numeric_limits<double>::denorm_min(), 1e-310, 2.5e-320};
  std::vector<double> epsilons = {1e-300,
                                  1e-20,
                                  1e-17,
                                  1e-15,
                                  8.881784197001252e-16,
                                  1e-6,
                                  1,
                                  1e6,
                                  1e100,
                                  1e300,
                                  std::numeric_limits<double>::max()};
  std::vector<double> deltas = {1e-300, 2.2250738585072014e-308, 1e-100, 1e-6,
                                0.5,    std::nextafter(1.0, 0.0)};
  for (double s : kSubnormals) {
    epsilons.push_back(s);
    deltas.push_back(s);
  }
  for (double epsilon : epsilons) {
    for (double delta : deltas) {
      const double rho = dp::RhoForEpsilonDelta(epsilon, delta);
      ASSERT_TRUE(std::isfinite(rho)) << epsilon << " " << delta;
      ASSERT_GE(rho, 0.0) << epsilon << " " << delta;
      EXPECT_LE(dp::ZcdpDelta(rho, epsilon), delta) << epsilon << " " << delta;
      EXPECT_GT(dp::ZcdpDelta(std::nextafter(rho, HUGE_VAL), epsilon), delta)
          << epsilon << " " << delta;
    }
  }
}

TEST(ZcdpConversionTest, RhoForBudgetOfFindingFourIsZeroAndMaximal) {
  // At epsilon 1e-20 the orders alpha the accountant searches (up to
  // 1 + e^45) cannot push delta below about e^-46, far above 1e-300: no
  // positive rho is certified, and 0 (which is (epsilon, 0)-DP) is the answer.
  EXPECT_EQ(dp::RhoForEpsilonDelta(1e-20, 1e-300), 0.0);
  EXPECT_GT(dp::ZcdpDelta(std::numeric_limits<double>::denorm_min(), 1e-20), 1e-300);
  // Where a positive rho fits, the result is the usual one: ZcdpEpsilon
  // agrees that it is within epsilon, and 1e-9 more does not fit.
  const double rho = dp::RhoForEpsilonDelta(1e-15, 1e-300);
  ASSERT_GT(rho, 0.0);
  EXPECT_LE(dp::ZcdpEpsilon(rho, 1e-300), 1e-15 * (1 + 1e-9));
  EXPECT_GT(dp::ZcdpDelta(rho * (1 + 1e-9), 1e-15), 1e-300);
  // A huge epsilon buys a huge but finite rho.
  const double huge = dp::RhoForEpsilonDelta(1e300, 1e-6);
  EXPECT_GT(huge, 1e200);
  EXPECT_TRUE(std::isfinite(huge));
}

TEST(PrivacyAccountantTest, GaussianCountEpsilonIsZeroWhenNothingFits) {
  // At delta 0.5 even the smallest epsilon dp_count accepts costs more than
  // rho 0.5 (the plan's sigma has a floor): the answer is 0, found after at
  // most 51 halvings (issue 26: the search went on to 1e-300 for seconds).
  ASSERT_GT(dp::GaussianPlanRho(dp::PlanGaussianCount(dp::kMinEpsilon, 0.5)), 0.5);
  EXPECT_EQ(dp::GaussianCountEpsilonForRho(0.5, 0.5), 0.0);
  // Where an epsilon fits, the answer fits.
  const double epsilon = dp::GaussianCountEpsilonForRho(0.5, 1e-6);
  ASSERT_GT(epsilon, 0.0);
  EXPECT_LE(dp::GaussianPlanRho(dp::PlanGaussianCount(epsilon, 1e-6)), 0.5);
}

TEST(PrivacyAccountantTest, HundredGaussianCountsNearTheExactComposition) {
  // 100 counts sharing (1, 1e-6): the accountant's sigma against exact
  // Gaussian composition (100 releases of sensitivity 1 = one of sensitivity
  // 10, calibrated by Balle & Wang) and against linear accounting.
  const double rho = dp::RhoForEpsilonDelta(1.0, 1e-6);
  const double sigma = std::sqrt(100 / (2 * rho));
  const double exact = dp::AnalyticGaussianSigma(10, 1.0, 1e-6);
  const double linear = dp::AnalyticGaussianSigma(1, 0.01, 1e-8);
  EXPECT_LT(sigma / exact, 1.10);
  EXPECT_GT(sigma / exact, 1.0);  // cannot beat the exact composition
  EXPECT_GT(linear / sigma, 5.0);
  PrivacyAccountant accountant;
  for (int i = 0; i < 100; ++i) accountant.AddGaussian(1, sigma);
  EXPECT_LE(accountant.Delta(1.0), 1e-6 * (1 + 1e-9));
  EXPECT_LE(accountant.Epsilon(1e-6), 1.0 + 1e-9);
}

TEST(PrivacyAccountantTest, PureReleasesComposeNoWorseThanBasicAndBetterWhenMany) {
  PrivacyAccountant few;
  few.AddPure(0.5);
  few.AddPure(0.5);
  EXPECT_EQ(few.Epsilon(0), 1.0);
  EXPECT_EQ(few.Delta(1.0), 0.0);
  EXPECT_LE(few.Epsilon(1e-6), 1.0);
  PrivacyAccountant many;
  for (int i = 0; i < 1000; ++i) many.AddPure(0.01);
  EXPECT_NEAR(many.spend().pure_epsilon, 10.0, 1e-9);
  EXPECT_GE(many.spend().pure_epsilon, 10.0 - 1e-12);
  // 1000 x 0.01 = 0.05-zCDP: about (1.7, 1e-6) instead of (10, 0).
  const double epsilon = many.Epsilon(1e-6);
  EXPECT_LT(epsilon, 2.0);
  EXPECT_GE(epsilon, dp::ZcdpEpsilon(0.05, 1e-6) * (1 - 1e-9));
}

TEST(PrivacyAccountantTest, MixedAndApproximateReleases) {
  PrivacyAccountant a;
  a.AddPure(0.3);
  a.AddGaussian(1, 5.0);
  a.AddApproximate(0.1, 1e-7);
  const double delta = a.Delta(1.5);
  // Never below basic composition of the parts' own conversions' lower parts:
  // at least the approximate delta, and at most what basic composition gives.
  EXPECT_GE(delta, 1e-7);
  EXPECT_LE(delta, dp::ZcdpDelta(1.0 / 50, 1.5 - 0.3 - 0.1) + 1e-7 + 1e-18);
  // Adding a release never lowers the reported loss.
  PrivacyAccountant b = a;
  b.AddGaussian(1, 20.0);
  EXPECT_GE(b.Delta(1.5), delta);
  EXPECT_GE(b.Epsilon(1e-6), a.Epsilon(1e-6));
  // Below the approximate releases' delta nothing can be certified.
  EXPECT_EQ(a.Epsilon(5e-8), HUGE_VAL);
  EXPECT_THROW(a.AddPure(-1), std::invalid_argument);
  EXPECT_THROW(a.AddZcdp(NAN), std::invalid_argument);
}

TEST(PrivacyAccountantTest, Sigma2ForRhoIsExactAndTight) {
  for (dp::uint128 d : {dp::uint128{1}, dp::uint128{3}, dp::uint128{1} << 40}) {
    for (double rho : {1e-6, 0.003, 0.5, 7.0}) {
      const dp::DyadicSigma2 s = dp::Sigma2ForRho(d, rho);
      const long double sigma2 = static_cast<long double>(s.numerator) / s.denominator;
      const long double ideal = static_cast<long double>(d) * d / (2 * rho);
      EXPECT_GE(sigma2, ideal * (1 - 1e-18L));
      EXPECT_LE(sigma2, ideal * (1 + 1e-11L));
    }
  }
}

TEST(PrivacyAccountantTest, PlanForRhoCostsAtMostRho) {
  for (dp::uint128 units : {dp::uint128{1}, dp::uint128{1000}, dp::uint128{1} << 62}) {
    for (double rho : {1e-4, 0.02, 1.0}) {
      const dp::GaussianPlan plan = dp::PlanGaussianForRho(units, rho);
      EXPECT_LE(dp::GaussianPlanRho(plan), rho * (1 + 1e-11));
      EXPECT_GE(dp::GaussianPlanRho(plan), rho * (1 - 1e-9));
    }
  }
}

TEST(PrivacyAccountantTest, JointGaussianMeanBeatsHalving) {
  // Bounds [0, 100] in units 1: the joint plan's worst-case numerator noise
  // is smaller than halving epsilon and delta, and it stays within budget.
  for (double epsilon : {0.1, 1.0}) {
    const dp::GaussianMeanPlans halved = dp::PlanGaussianMean(0, 100, epsilon, 1e-6);
    const dp::GaussianMeanPlans joint = dp::PlanGaussianMeanJoint(0, 100, epsilon, 1e-6);
    const double ratio =
        dp::GaussianNoiseStddev(halved.count, 0) / dp::GaussianNoiseStddev(joint.count, 0);
    EXPECT_GT(ratio, 1.15) << epsilon;
    const double rho = dp::GaussianPlanRho(joint.count) + dp::GaussianPlanRho(joint.centred_sum);
    EXPECT_LE(dp::ZcdpDelta(rho, epsilon), 1e-6 * (1 + 1e-9)) << epsilon;
  }
}

TEST(PrivacyAccountantTest, ZcdpIsNeverPureAndConversionsAreConsistent) {
  // However small rho is, a zCDP release is never (epsilon, 0)-DP.
  PrivacyAccountant tiny;
  tiny.AddZcdp(1e-9);
  EXPECT_GT(tiny.Delta(50.0), 0.0);
  EXPECT_FALSE(tiny.WithinBudget(50.0, 0.0));
  // The rho of an (epsilon, delta) guarantee converts back within it, and
  // 1e-6 relative more rho does not (RhoForEpsilonDelta is the largest).
  for (double epsilon : {0.1, 1.0, 4.0}) {
    for (double delta : {1e-9, 1e-6, 1e-3}) {
      const double rho = dp::RhoForEpsilonDelta(epsilon, delta);
      EXPECT_LE(dp::ZcdpDelta(rho, epsilon), delta) << epsilon << " " << delta;
      EXPECT_GT(dp::ZcdpDelta(rho * (1 + 1e-6), epsilon), delta) << epsilon << " " << delta;
      EXPECT_LE(dp::ZcdpEpsilon(rho, delta), epsilon * (1 + 1e-9)) << epsilon << " " << delta;
    }
  }
  dp::PrivacySpend negative;
  negative.rho = -1;
  EXPECT_THROW(PrivacyAccountant{negative}, std::invalid_argument);
}

TEST(PrivacyAccountantTest, HundredGaussianCountsAdmittedNearTheOptimum) {
  // The analyst's recipe of docs/analyst_guide.md "How much a query costs": share the rho
  // that (1, 1e-6) buys among 100 counts written in (epsilon, delta).
  const double budget_rho = dp::RhoForEpsilonDelta(1.0, 1e-6);
  const double epsilon = dp::GaussianCountEpsilonForRho(budget_rho / 100, 1e-6);
  const dp::GaussianPlan plan = dp::PlanGaussianCount(epsilon, 1e-6);
  EXPECT_LE(dp::GaussianPlanRho(plan), budget_rho / 100);
  // The zCDP budget's certificate: the sum of the rho charged fits, and its
  // conversion is within (1, 1e-6).
  double total = 0;
  for (int i = 0; i < 100; ++i) total += dp::GaussianPlanRho(plan);
  EXPECT_LE(total, budget_rho * (1 + 1e-12));
  EXPECT_LE(dp::ZcdpEpsilon(total, 1e-6), 1.0 + 1e-9);
  const double optimum = std::sqrt(100 / (2 * budget_rho));
  const double sigma = dp::GaussianNoiseStddev(plan, 0);
  EXPECT_LE(sigma / optimum, 1.10);
  EXPECT_GE(sigma / optimum, 0.999);
  // Slightly more epsilon costs more than the share.
  EXPECT_GT(dp::GaussianPlanRho(dp::PlanGaussianCount(epsilon * (1 + 1e-6), 1e-6)),
            budget_rho / 100);
}

}  // namespace
