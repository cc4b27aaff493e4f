// Checks of the statistical helpers themselves against closed forms, so that
// a mistake in a helper cannot silently weaken the other tests.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats_util.h"

namespace {

using namespace dp_test;

TEST(StatsUtilTest, ChiSquareSurvivalMatchesClosedForms) {
  // df = 2: exp(-x/2). df = 1: erfc(sqrt(x/2)). df = 4: exp(-x/2) (1 + x/2).
  for (double x : {0.1, 1.0, 5.0, 20.0, 41.0, 80.0}) {
    EXPECT_NEAR(static_cast<double>(ChiSquareSurvival(x, 2) / std::exp(-x / 2)), 1.0, 1e-12) << x;
    EXPECT_NEAR(static_cast<double>(ChiSquareSurvival(x, 1) / std::erfc(std::sqrt(x / 2))), 1.0,
                1e-10)
        << x;
    EXPECT_NEAR(static_cast<double>(ChiSquareSurvival(x, 4) / (std::exp(-x / 2) * (1 + x / 2))),
                1.0, 1e-12)
        << x;
  }
}

TEST(StatsUtilTest, CriticalValuesAtOneInABillion) {
  // df = 2: 2 ln(1e9) = 41.4465. df = 1: z^2 with z = 6.10941 (two-sided
  // normal quantile of 1e-9): 37.3249.
  EXPECT_NEAR(ChiSquareCriticalValue(2, 1e-9), 2 * std::log(1e9), 1e-9);
  EXPECT_NEAR(ChiSquareCriticalValue(1, 1e-9), 37.3249, 1e-3);
  // Even df: Q(m, y) = exp(-y) sum_{k < m} y^k / k! in closed form.
  for (int df : {10, 40, 100, 256}) {
    auto closed_form = [df](long double x) {
      const long double y = x / 2;
      long double term = 1, sum = 1;
      for (int k = 1; k < df / 2; ++k) {
        term *= y / k;
        sum += term;
      }
      return std::exp(-y) * sum;
    };
    for (long double x : {df / 2.0L, df * 1.0L, df * 2.0L, df * 4.0L})
      EXPECT_NEAR(static_cast<double>(ChiSquareSurvival(x, df) / closed_form(x)), 1.0, 1e-12)
          << df << " " << static_cast<double>(x);
    const double critical = ChiSquareCriticalValue(df, 1e-9);
    EXPECT_NEAR(static_cast<double>(closed_form(critical)), 1e-9, 1e-18) << df;
  }
}

TEST(StatsUtilTest, DiscreteLaplaceProbabilitiesAreConsistent) {
  for (auto [t, s] : {std::pair<uint128, uint128>{1, 1}, {10, 3}, {3, 10}, {uint128{1} << 40, 7}}) {
    const DiscreteLaplace d(t, s);
    long double total = 0;
    for (int x = -2000; x <= 2000; ++x) total += d.Pmf(x);
    if (t < 100) {
      EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15);
    }
    EXPECT_NEAR(static_cast<double>(d.Interval(kInt128Min, kInt128Max)), 1.0, 1e-15);
    EXPECT_NEAR(static_cast<double>(d.Interval(-3, 5)),
                static_cast<double>(d.Pmf(-3) + d.Pmf(-2) + d.Pmf(-1) + d.Pmf(0) + d.Pmf(1) +
                                    d.Pmf(2) + d.Pmf(3) + d.Pmf(4) + d.Pmf(5)),
                1e-15);
    EXPECT_NEAR(static_cast<double>(d.Interval(-5, -2)),
                static_cast<double>(d.Pmf(-5) + d.Pmf(-4) + d.Pmf(-3) + d.Pmf(-2)), 1e-15);
    EXPECT_NEAR(static_cast<double>(d.Interval(kInt128Min, -1) + d.Interval(0, kInt128Max)), 1.0,
                1e-15);
  }
  // Binning covers every integer exactly once.
  const DiscreteLaplace d(10, 3);
  const Binning b = ChooseBinning(d, 1, 200000);
  long double total = 0;
  for (long double p : b.Probabilities(d)) {
    EXPECT_GE(p * 200000, kMinExpectedPerBin);
    total += p;
  }
  EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15);
  EXPECT_EQ(b.Index(-1000000), 0U);
  EXPECT_EQ(b.Index(1000000), b.Count() - 1);
  EXPECT_EQ(b.Index(0), static_cast<std::size_t>(1 - b.lowest));
}

TEST(StatsUtilTest, BinomialIntervalIsNoWiderThanHoeffding) {
  for (double p : {0.001, 0.1, 0.5, 0.9}) {
    const auto interval = BinomialAcceptanceInterval(p, 100000, 1e-9);
    const double hoeffding = std::sqrt(std::log(2 / 1e-9) / (2 * 100000.0));
    EXPECT_TRUE(interval.Contains(p));
    EXPECT_LE(interval.high - p, hoeffding + 1e-12);
    EXPECT_LE(p - interval.low, hoeffding + 1e-12);
    EXPECT_GT(interval.high - p, 0);
  }
  EXPECT_EQ(BinomialAcceptanceInterval(0, 10, 1e-9).high, 0.0);
  EXPECT_EQ(BinomialAcceptanceInterval(1, 10, 1e-9).low, 1.0);
}

TEST(StatsUtilTest, MeanDeviationBoundIsNearTheGaussianOne) {
  // For many samples the Chernoff bound approaches sqrt(2 sigma^2 ln(2/delta) / n).
  const DiscreteLaplace d(2, 1);
  const std::uint64_t n = 1000000;
  const double gaussian = std::sqrt(2 * static_cast<double>(d.Variance()) * std::log(2 / 1e-9) / n);
  const double chernoff = DiscreteLaplaceMeanDeviation(d.q(), n, 1e-9);
  EXPECT_GE(chernoff, gaussian * 0.999);
  EXPECT_LE(chernoff, gaussian * 1.1);
}

}  // namespace
