// Smith's exponential mechanism for quantiles on the fixed-point lattice:
// the exact output distribution (chi-square against probabilities computed
// from the definition, point by point, independently of the block
// construction), the utility's sensitivity max(f, 1 - f) by brute force over
// neighbouring datasets, the block partition, and the double release.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "continuous_quantile.h"
#include "parameters.h"
#include "quantile.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::SeededTestRandomSource;
using dp::SmithBlocks;
using dp::SmithQuantile;
using dp::uint128;
using dp_test::ChiSquareFit;
using dp_test::FitResult;

// d(y) in rows for every lattice point y in [lower, upper], straight from
// the definition: max(0, below - f n, f n - upto).
std::vector<long double> DistancesByDefinition(const std::vector<std::int64_t>& rows,
                                               std::int64_t lower, std::int64_t upper,
                                               double fraction) {
  std::vector<long double> d;
  const long double target = static_cast<long double>(fraction) * rows.size();
  for (std::int64_t y = lower; y <= upper; ++y) {
    long double below = 0, upto = 0;
    for (std::int64_t x : rows) {
      below += x < y;
      upto += x <= y;
    }
    d.push_back(std::max({0.0L, below - target, target - upto}));
  }
  return d;
}

// P[y] proportional to exp(-min(lambda d(y), 64)), lambda per row being the
// rate that PlanSelection gives for sensitivity max(f, 1 - f).
std::vector<long double> PointProbabilities(const std::vector<std::int64_t>& rows,
                                            std::int64_t lower, std::int64_t upper, double fraction,
                                            double epsilon) {
  const dp::DyadicFraction f = dp::ToDyadic(fraction);
  const uint128 one = uint128{1} << f.bits;
  const dp::SelectionScale scale =
      dp::PlanSelection(std::max(f.numerator, one - f.numerator), epsilon, false);
  const long double rate_per_row =
      std::ldexp(static_cast<long double>(scale.multiplier), f.bits - scale.shift);
  // Independent check of the rate: epsilon / (2 max(f, 1 - f)) up to the
  // 24-bit rounding of epsilon.
  const long double ideal = epsilon / (2 * std::max(fraction, 1 - fraction));
  EXPECT_LE(rate_per_row, ideal * (1 + 1e-15L));
  EXPECT_GE(rate_per_row, ideal * (1 - 2e-7L));
  std::vector<long double> p;
  long double total = 0;
  for (long double d : DistancesByDefinition(rows, lower, upper, fraction)) {
    p.push_back(std::exp(-std::min(rate_per_row * d, 64.0L)));
    total += p.back();
  }
  for (auto& x : p) x /= total;
  return p;
}

// Groups consecutive cells so that each expects >= kMinExpectedPerBin of n.
struct Grouping {
  std::vector<std::size_t> group_of;
  std::vector<long double> probabilities;
};
Grouping GroupCells(const std::vector<long double>& p, std::uint64_t n) {
  Grouping g;
  long double running = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    g.group_of.push_back(g.probabilities.size());
    running += p[i];
    if (running * n >= dp_test::kMinExpectedPerBin) {
      g.probabilities.push_back(running);
      running = 0;
    }
  }
  if (running > 0 || g.probabilities.empty()) {
    // The tail joins the last complete group.
    if (g.probabilities.empty()) {
      g.probabilities.push_back(running);
    } else {
      g.probabilities.back() += running;
      for (auto& group : g.group_of)
        if (group == g.probabilities.size()) group = g.probabilities.size() - 1;
    }
  }
  return g;
}

TEST(SmithQuantileTest, LatticeReleaseMatchesTheExponentialMechanismExactly) {
  const std::vector<std::int64_t> rows = {3, 3, 7, 12, 12, 12, 20, 33};
  struct Case {
    double fraction, epsilon;
    std::vector<std::int64_t> rows;
  };
  const std::vector<Case> cases = {{0.5, 1.0, rows}, {0.25, 0.7, rows}, {0.9, 2.0, rows},
                                   {0.5, 8.0, rows}, {0.5, 1.0, {}},  // no rows: uniform
                                   {0.0, 1.5, rows}, {1.0, 1.5, rows}};
  SeededTestRandomSource rng(41);
  const std::uint64_t n = 40000;
  for (const Case& c : cases) {
    const std::vector<long double> p = PointProbabilities(c.rows, 0, 40, c.fraction, c.epsilon);
    const Grouping g = GroupCells(p, n);
    ASSERT_GE(g.probabilities.size(), 2u);
    std::vector<std::uint64_t> counts(g.probabilities.size(), 0);
    const dp::SmithSampler sampler(dp::BuildSmithBlocks(c.rows, 0, 40, c.fraction, c.epsilon));
    for (std::uint64_t i = 0; i < n; ++i) {
      // A few draws through the one-shot entry point, the rest from the
      // sampler built once (the same code path after construction).
      const std::int64_t y = i < 500
                                 ? dp::ReleaseSmithUnits(c.rows, 0, 40, c.fraction, c.epsilon, rng)
                                 : sampler.SamplePoint(rng);
      ASSERT_GE(y, 0);
      ASSERT_LE(y, 40);
      ++counts[g.group_of[static_cast<std::size_t>(y)]];
    }
    const FitResult fit = ChiSquareFit(counts, g.probabilities);
    EXPECT_LT(fit.statistic, fit.critical_value)
        << "fraction " << c.fraction << " epsilon " << c.epsilon;
  }
}

TEST(SmithQuantileTest, ChiSquareDetectsTheSensitivityOneMechanism) {
  // Power: the distribution of a median run with sensitivity 1 (twice the
  // noise) is far from the exact one at these sample sizes.
  const std::vector<std::int64_t> rows = {3, 3, 7, 12, 12, 12, 20, 33};
  const std::vector<long double> p = PointProbabilities(rows, 0, 40, 0.5, 1.0);
  const std::vector<long double> wrong = PointProbabilities(rows, 0, 40, 0.5, 0.5);
  const Grouping g = GroupCells(p, 40000);
  std::vector<long double> p_grouped(g.probabilities.size(), 0),
      wrong_grouped(g.probabilities.size(), 0);
  for (std::size_t y = 0; y < p.size(); ++y) {
    p_grouped[g.group_of[y]] += p[y];
    wrong_grouped[g.group_of[y]] += wrong[y];
  }
  const double lambda = dp_test::NonCentrality(40000, p_grouped, wrong_grouped);
  const int df = static_cast<int>(p_grouped.size()) - 1;
  EXPECT_GE(dp_test::PowerMarginInSigmas(
                lambda, df, dp_test::ChiSquareCriticalValue(df, dp_test::kFalseFailureProbability)),
            10);
}

TEST(SmithQuantileTest, BlocksOfHugeLengthsAreDrawnInProportion) {
  // Real bounds: the lattice has ~2^62 points and the two end blocks are
  // ~50 times the data's spread. Block frequencies against
  // l_b exp(-a_b) / sum, computed in long double from the block list.
  SmithQuantile q(-50, 50);
  SeededTestRandomSource data_rng(7);
  for (int i = 0; i < 30; ++i) q.Add(static_cast<double>(data_rng.UniformBelow(1000000)) / 1e6);
  std::vector<std::int64_t> sorted = q.units();
  std::sort(sorted.begin(), sorted.end());
  for (double epsilon : {0.3, 2.0}) {
    const SmithBlocks sb =
        dp::BuildSmithBlocks(sorted, q.lower_units(), q.upper_units(), 0.5, epsilon);
    const long double rate =
        std::ldexp(static_cast<long double>(sb.scale.multiplier), -sb.scale.shift);
    std::vector<long double> log_w;
    long double best = -INFINITY;
    for (const auto& b : sb.blocks) {
      const long double a =
          b.capped ? 64.0L : std::min(64.0L, rate * static_cast<long double>(b.distance));
      log_w.push_back(std::log(static_cast<long double>(b.length)) - a);
      best = std::max(best, log_w.back());
    }
    std::vector<long double> p;
    long double total = 0;
    for (long double lw : log_w) total += std::exp(lw - best);
    for (long double lw : log_w) p.push_back(std::exp(lw - best) / total);
    const std::uint64_t n = 30000;
    const Grouping g = GroupCells(p, n);
    ASSERT_GE(g.probabilities.size(), 2u) << epsilon;
    std::vector<std::uint64_t> counts(g.probabilities.size(), 0);
    SeededTestRandomSource rng(11);
    const dp::SmithSampler sampler(sb);
    for (std::uint64_t i = 0; i < n; ++i) ++counts[g.group_of[sampler.SampleBlock(rng)]];
    const FitResult fit = ChiSquareFit(counts, g.probabilities);
    EXPECT_LT(fit.statistic, fit.critical_value) << epsilon;
  }
}

TEST(SmithQuantileTest, UtilitySensitivityIsMaxOfFAndOneMinusFByBruteForce) {
  SeededTestRandomSource rng(5);
  for (double fraction : {0.0, 0.1, 0.5, 0.77, 1.0}) {
    const dp::DyadicFraction f = dp::ToDyadic(fraction);
    const long double claimed = std::max(fraction, 1 - fraction);
    long double worst = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<std::int64_t> rows;
      const int size = 1 + static_cast<int>(rng.UniformBelow(9));
      for (int i = 0; i < size; ++i)
        rows.push_back(static_cast<std::int64_t>(rng.UniformBelow(16)));
      std::vector<std::int64_t> neighbour = rows;
      neighbour.erase(neighbour.begin() + static_cast<long>(rng.UniformBelow(rows.size())));
      const auto d = DistancesByDefinition(rows, 0, 15, fraction);
      const auto d2 = DistancesByDefinition(neighbour, 0, 15, fraction);
      for (std::size_t y = 0; y < d.size(); ++y) worst = std::max(worst, std::fabs(d[y] - d2[y]));
      // The blocks carry exactly these distances (in units of 2^-bits rows).
      std::sort(rows.begin(), rows.end());
      const SmithBlocks sb = dp::BuildSmithBlocks(rows, 0, 15, fraction, 1.0);
      std::int64_t y = 0;
      for (const auto& b : sb.blocks) {
        ASSERT_EQ(b.first, y);
        for (uint128 k = 0; k < b.length; ++k, ++y) {
          ASSERT_EQ(std::ldexp(static_cast<long double>(b.distance), -f.bits),
                    d[static_cast<std::size_t>(y)]);
        }
      }
      ASSERT_EQ(y, 16);  // the blocks partition the lattice
      ASSERT_EQ(sb.sensitivity, std::max(f.numerator, (uint128{1} << f.bits) - f.numerator));
    }
    EXPECT_LE(worst, claimed + 1e-15L) << fraction;
    EXPECT_GE(worst, claimed - 1e-15L) << fraction;  // and it is attained
  }
}

TEST(SmithQuantileTest, ReleaseStaysWithinBoundsAndIgnoresNaN) {
  SmithQuantile q(-3.5, 1e6);
  q.Add(NAN);
  EXPECT_EQ(q.rows(), 0u);
  q.Add(-INFINITY);
  q.Add(INFINITY);
  q.Add(42);
  EXPECT_EQ(q.rows(), 3u);
  SeededTestRandomSource rng(3);
  for (int i = 0; i < 200; ++i) {
    const double x = q.Release(0.5, 0.1, rng);
    EXPECT_GE(x, -3.5);
    EXPECT_LE(x, 1e6);
  }
  SmithQuantile point(2, 2);
  point.Add(5);
  EXPECT_EQ(point.Release(0.5, 1.0, rng), 2);
  EXPECT_THROW(q.Release(1.5, 1.0, rng), dp::InvalidParameter);
  EXPECT_THROW(q.Release(0.5, 0.0, rng), dp::InvalidParameter);
  EXPECT_THROW(SmithQuantile(1, 0), dp::InvalidParameter);
}

TEST(SmithQuantileTest, MergeEqualsAddingEverything) {
  SmithQuantile a(0, 10), b(0, 10), all(0, 10);
  for (int i = 0; i < 50; ++i) {
    (i % 3 == 0 ? a : b).Add(i * 0.21);
    all.Add(i * 0.21);
  }
  a.Merge(b);
  std::vector<std::int64_t> x = a.units(), y = all.units();
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  EXPECT_EQ(x, y);
  EXPECT_THROW(a.Merge(SmithQuantile(0, 11)), std::invalid_argument);
}

TEST(SmithQuantileTest, HighEpsilonFindsTheMedianOfManyRows) {
  // epsilon 5 on 20,001 rows 1e-4 apart in [0, 2], bounds [-100, 100]:
  // lambda = 5 per row, so every point more than 12.8 ranks from the median
  // is capped at weight e^-64 per lattice point. The capped points (< 2^63)
  // weigh at most 2^63 e^-64 < 1.6e-9 in all, while the gap next to the
  // median alone (1e-4 = 3.6e12 lattice units of 2^-55) weighs at least
  // 3.6e12 e^-2.5 > 2.9e11: P[the answer is more than 12.8 ranks away]
  // < 1e-20 for this single draw.
  SmithQuantile q(-100, 100);
  std::vector<double> values;
  for (int i = 0; i <= 20000; ++i) values.push_back(i * 1e-4);
  for (double v : values) q.Add(v);
  // The cap merges everything beyond 12.8 ranks into one block per side.
  std::vector<std::int64_t> sorted = q.units();
  std::sort(sorted.begin(), sorted.end());
  const SmithBlocks sb = dp::BuildSmithBlocks(sorted, q.lower_units(), q.upper_units(), 0.5, 5.0);
  ASSERT_TRUE(sb.blocks.front().capped);
  ASSERT_TRUE(sb.blocks.back().capped);
  EXPECT_LE(sb.blocks.size(), 2u + 2 * 27);
  for (std::size_t i = 1; i + 1 < sb.blocks.size(); ++i) EXPECT_FALSE(sb.blocks[i].capped);
  SeededTestRandomSource rng(12);
  const double x = q.Release(0.5, 5.0, rng);
  EXPECT_GE(x, values[10000 - 100]);
  EXPECT_LE(x, values[10000 + 100]);
}

}  // namespace

namespace {

// The array API used by the PostgreSQL state (MakeSmithLattice, SmithPointOf,
// ReleaseSmithQuantile) is the same mechanism as SmithQuantile: same lattice,
// same points, and the same release from the same random stream.
TEST(SmithLatticeTest, ArrayApiMatchesSmithQuantile) {
  const double lower = -3.5, upper = 1234.25;
  const dp::SmithLattice lattice = dp::MakeSmithLattice(lower, upper);
  SmithQuantile q(lower, upper);
  EXPECT_EQ(lattice.unit_exponent, q.unit_exponent());
  EXPECT_EQ(lattice.lower_units, q.lower_units());
  EXPECT_EQ(lattice.upper_units, q.upper_units());
  std::vector<std::int64_t> points;
  for (int i = 0; i < 300; ++i) {
    const double v = (i % 7 == 0) ? 1e9 : (i % 11 == 0 ? -1e9 : i * 3.17 - 20);
    q.Add(v);
    points.push_back(dp::SmithPointOf(lattice, v));
  }
  EXPECT_EQ(points, q.units());
  for (const std::int64_t p : points) {
    EXPECT_GE(p, lattice.lower_units);
    EXPECT_LE(p, lattice.upper_units);
  }
  for (const double f : {0.0, 0.25, 0.5, 0.9, 1.0}) {
    SeededTestRandomSource a(77), b(77);
    std::vector<std::int64_t> shuffled(points.rbegin(), points.rend());
    const double from_array =
        dp::ReleaseSmithQuantile(lattice, shuffled.data(), shuffled.size(), f, 0.7, a);
    EXPECT_TRUE(std::is_sorted(shuffled.begin(), shuffled.end()));
    EXPECT_EQ(from_array, q.Release(f, 0.7, b));
  }
  SeededTestRandomSource rng(1);
  EXPECT_THROW(dp::MakeSmithLattice(2, 1), dp::InvalidParameter);
  EXPECT_THROW(dp::MakeSmithLattice(0, INFINITY), dp::InvalidParameter);
  EXPECT_THROW(dp::ReleaseSmithQuantile(lattice, points.data(), points.size(), 2.0, 1.0, rng),
               dp::InvalidParameter);
  // No rows: still an answer within the bounds.
  const double empty = dp::ReleaseSmithQuantile(lattice, nullptr, 0, 0.5, 1.0, rng);
  EXPECT_GE(empty, lower);
  EXPECT_LE(empty, upper);
}

}  // namespace
