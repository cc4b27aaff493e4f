// Tests of private quantiles over a fixed grid (quantile.h): the grid and its
// fixed size, merging and restoring states, parameter checks, exact dyadic
// utilities and their sensitivity (brute force on neighbouring datasets),
// answers always within the bounds, accuracy at high epsilon, and the release
// distribution against exact permute-and-flip probabilities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <vector>

#include "parameters.h"
#include "quantile.h"
#include "random_source.h"
#include "selection.h"
#include "stats_util.h"

namespace {

using dp::int128;
using dp::QuantileGrid;
using dp::QuantileUtility;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::ChiSquareFit;
using dp_test::FitResult;
using dp_test::kFalseFailureProbability;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

QuantileGrid GridOf(double lower, double upper, std::size_t bins,
                    const std::vector<double>& values) {
  QuantileGrid grid(lower, upper, bins);
  for (double v : values) grid.Add(v);
  return grid;
}

// ---------------------------------------------------------------------------
// Construction and the grid

TEST(QuantileGridTest, RejectsBadBoundsAndBinCounts) {
  EXPECT_THROW(QuantileGrid(kNaN, 1), dp::InvalidParameter);
  EXPECT_THROW(QuantileGrid(0, kNaN), dp::InvalidParameter);
  EXPECT_THROW(QuantileGrid(-kInf, 1), dp::InvalidParameter);
  EXPECT_THROW(QuantileGrid(0, kInf), dp::InvalidParameter);
  EXPECT_THROW(QuantileGrid(2, 1), dp::InvalidParameter);
  EXPECT_THROW(QuantileGrid(0, 1, 0), dp::InvalidParameter);
  EXPECT_THROW(QuantileGrid(0, 1, dp::kMaxQuantileBins + 1), dp::InvalidParameter);
  EXPECT_NO_THROW(QuantileGrid(0, 1, dp::kMaxQuantileBins));
  EXPECT_NO_THROW(QuantileGrid(3, 3));
  EXPECT_EQ(QuantileGrid(0, 1).bins(), dp::kDefaultQuantileBins);
}

TEST(QuantileGridTest, BinsOfASimpleGrid) {
  const QuantileGrid grid(0, 8, 8);  // bins [j, j + 1), the last one [7, 8]
  for (int j = 0; j <= 8; ++j) EXPECT_EQ(grid.EdgeValue(j), j);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(grid.BinPoint(i), i + 0.5);
    EXPECT_EQ(grid.BinIndex(i), static_cast<std::size_t>(i));
    EXPECT_EQ(grid.BinIndex(i + 0.5), static_cast<std::size_t>(i));
    EXPECT_EQ(grid.BinIndex(std::nextafter(i + 1.0, 0.0)), static_cast<std::size_t>(i));
  }
  EXPECT_EQ(grid.BinIndex(8), 7U);
  EXPECT_EQ(grid.BinIndex(-5), 0U);
  EXPECT_EQ(grid.BinIndex(1e300), 7U);
  EXPECT_EQ(grid.BinIndex(-kInf), 0U);
  EXPECT_EQ(grid.BinIndex(kInf), 7U);
  EXPECT_THROW(grid.BinPoint(8), std::out_of_range);
  EXPECT_THROW(grid.EdgeValue(9), std::out_of_range);
}

TEST(QuantileGridTest, EdgesAndPointsAreOrderedAndConsistentForAnyBounds) {
  const double bounds[][2] = {{0, 1},
                              {-1, 1},
                              {-DBL_MAX, DBL_MAX},
                              {0, DBL_MAX},
                              {-DBL_MAX, -DBL_MAX / 3},
                              {0, 5e-324},
                              {-1e-310, 1e-310},
                              {1, std::nextafter(1.0, 2.0)},  // fewer units than bins
                              {-1, 1e-300},
                              {1e15, 1e15 + 3},
                              {-123.456, 789.5}};
  for (const auto& b : bounds) {
    for (std::size_t bins : {std::size_t{1}, std::size_t{7}, dp::kDefaultQuantileBins}) {
      const QuantileGrid grid(b[0], b[1], bins);
      EXPECT_EQ(grid.EdgeValue(0), b[0]);
      EXPECT_EQ(grid.EdgeValue(bins), b[1]);
      for (std::size_t i = 0; i < bins; ++i) {
        const double low = grid.EdgeValue(i);
        const double high = grid.EdgeValue(i + 1);
        const double point = grid.BinPoint(i);
        ASSERT_LE(low, high) << b[0] << " " << b[1] << " bin " << i;
        ASSERT_LE(low, point);
        ASSERT_LE(point, high);
        ASSERT_GE(point, b[0]);
        ASSERT_LE(point, b[1]);
        // A point strictly between the (rounded) edges lies in its own bin.
        if (low < point && point < high) {
          ASSERT_EQ(grid.BinIndex(point), i) << b[0] << " " << b[1] << " bin " << i;
        }
      }
      EXPECT_EQ(grid.BinIndex(b[0]), 0U);
      EXPECT_EQ(grid.BinIndex(b[1]), bins - 1);
    }
  }
}

TEST(QuantileGridTest, AddIgnoresNaNAndClamps) {
  QuantileGrid grid(0, 8, 8);
  for (double v : {kNaN, -kNaN}) grid.Add(v);
  EXPECT_EQ(grid.total(), 0);
  for (double v : {-kInf, -1.0, 0.0, 3.25, 8.0, 9.0, kInf}) grid.Add(v);
  EXPECT_EQ(grid.total(), 7);
  const std::vector<std::int64_t> expected = {3, 0, 0, 1, 0, 0, 0, 3};
  EXPECT_EQ(grid.counts(), expected);
}

TEST(QuantileGridTest, MemoryIsFixed) {
  QuantileGrid grid(-10, 10);
  const std::size_t bins = grid.counts().size();
  EXPECT_EQ(bins, dp::kDefaultQuantileBins);
  SeededTestRandomSource rng(1);
  for (int i = 0; i < 200000; ++i)
    grid.Add(static_cast<double>(rng.UniformBelow(1u << 30)) / (1u << 25) - 16);
  EXPECT_EQ(grid.counts().size(), bins);
  EXPECT_EQ(grid.counts().capacity(), bins);
  EXPECT_EQ(grid.total(), 200000);
  std::int64_t sum = 0;
  for (auto c : grid.counts()) sum += c;
  EXPECT_EQ(sum, 200000);
}

TEST(QuantileGridTest, MergeEqualsAddingEverythingToOneGrid) {
  SeededTestRandomSource rng(2);
  QuantileGrid all(-3.5, 12.25, 100);
  QuantileGrid parts[3] = {QuantileGrid(-3.5, 12.25, 100), QuantileGrid(-3.5, 12.25, 100),
                           QuantileGrid(-3.5, 12.25, 100)};
  for (int i = 0; i < 30000; ++i) {
    const double v = static_cast<double>(rng.UniformBelow(1u << 20)) / (1u << 15) - 8;
    all.Add(v);
    parts[rng.UniformBelow(3)].Add(v);
  }
  QuantileGrid merged(-3.5, 12.25, 100);
  for (const auto& part : parts) merged.Merge(part);
  EXPECT_EQ(merged.counts(), all.counts());
  EXPECT_EQ(merged.total(), all.total());
  // Merging in another order, or into a part, gives the same.
  QuantileGrid other = parts[2];
  other.Merge(parts[0]);
  other.Merge(parts[1]);
  EXPECT_EQ(other.counts(), all.counts());
  // Different grids do not merge.
  EXPECT_THROW(merged.Merge(QuantileGrid(-3.5, 12.25, 99)), std::invalid_argument);
  EXPECT_THROW(merged.Merge(QuantileGrid(-3.5, 12.5, 100)), std::invalid_argument);
  EXPECT_THROW(merged.Merge(QuantileGrid(-3, 12.25, 100)), std::invalid_argument);
}

TEST(QuantileGridTest, RestoreCountsRoundTripsAndValidates) {
  const QuantileGrid original = GridOf(0, 1, 4, {0.1, 0.1, 0.6, 0.9, 1.0});
  QuantileGrid copy(0, 1, 4);
  copy.RestoreCounts(original.counts());
  EXPECT_EQ(copy.counts(), original.counts());
  EXPECT_EQ(copy.total(), 5);
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW(copy.RestoreCounts({1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(copy.RestoreCounts({1, 2, 3, 4, 5}), std::invalid_argument);
  EXPECT_THROW(copy.RestoreCounts({1, -2, 3, 4}), std::invalid_argument);
  EXPECT_THROW(copy.RestoreCounts({big, 1, 0, 0}), std::invalid_argument);
  EXPECT_EQ(copy.counts(), original.counts());  // unchanged by failed restores
  copy.RestoreCounts({big, 0, 0, 0});
  EXPECT_EQ(copy.total(), big);
  EXPECT_THROW(copy.Add(0.5), std::overflow_error);
  EXPECT_THROW(copy.Merge(original), std::overflow_error);
}

// ---------------------------------------------------------------------------
// Parameters

TEST(QuantileReleaseTest, RejectsBadFractionAndEpsilon) {
  SeededTestRandomSource rng(3);
  for (const QuantileGrid& grid : {GridOf(0, 1, 16, {0.5}), QuantileGrid(2, 2)}) {
    for (double fraction : {-0.1, 1.1, -kInf, kInf, kNaN, -1e-300, std::nextafter(1.0, 2.0)}) {
      EXPECT_THROW(grid.Release(fraction, 1.0, rng), dp::InvalidParameter) << fraction;
      EXPECT_THROW(grid.Utility(fraction), dp::InvalidParameter) << fraction;
    }
    for (double epsilon : {0.0, -1.0, kNaN, kInf})
      EXPECT_THROW(grid.Release(0.5, epsilon, rng), dp::InvalidParameter) << epsilon;
  }
}

TEST(QuantileReleaseTest, EqualBoundsReturnTheBound) {
  SeededTestRandomSource rng(4);
  const QuantileGrid grid = GridOf(-2.5, -2.5, 16, {1, 2, 3});
  for (double fraction : {0.0, 0.5, 1.0}) EXPECT_EQ(grid.Release(fraction, 0.1, rng), -2.5);
  EXPECT_EQ(QuantileGrid(7, 7).ReleaseMedian(1.0, rng), 7);
}

// ---------------------------------------------------------------------------
// Utilities

// -max(0, C_i - f n, f n - C_{i+1}) in rows, from the counts, in long double
// (exact here: few rows, and fractions with <= 60 significant bits).
std::vector<long double> RowUtilities(const std::vector<std::int64_t>& counts, long double f) {
  long double n = 0;
  for (auto c : counts) n += c;
  std::vector<long double> u;
  long double below = 0;
  for (auto c : counts) {
    const long double low = below;
    below += c;
    u.push_back(-std::max({0.0L, low - f * n, f * n - below}));
  }
  return u;
}

TEST(QuantileUtilityTest, UtilitiesAreExactDyadicRationals) {
  const QuantileGrid grid = GridOf(0, 10, 10, {0.5, 1.5, 1.5, 2.5, 2.5, 2.5, 7.5, 9, 10, 10, 10});
  for (double f :
       {0.0, 1.0, 0.5, 0.1, 1.0 / 3, 0.9, 0.25, std::ldexp(1.0, -64), std::ldexp(3.0, -64)}) {
    const QuantileUtility u = grid.Utility(f);
    ASSERT_EQ(u.sensitivity, uint128{1} << u.fraction_bits);
    ASSERT_LE(u.fraction_bits, 64);
    // The exact binary value of f has this many fractional bits, no fewer.
    ASSERT_EQ(std::ldexp(std::ldexp(f, u.fraction_bits), -u.fraction_bits), f);
    if (u.fraction_bits > 0) {
      ASSERT_NE(std::fmod(std::ldexp(f, u.fraction_bits - 1), 1.0), 0.0) << f;
    }
    const auto expected = RowUtilities(grid.counts(), f);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const long double got = std::ldexp(static_cast<long double>(u.scores[i]), -u.fraction_bits);
      ASSERT_EQ(got, expected[i]) << "f " << f << " bin " << i;
    }
  }
  // More than 64 fractional bits: rounded to a multiple of 2^-64.
  EXPECT_EQ(grid.Utility(1e-30).fraction_bits, 0);  // rounds to 0
  EXPECT_EQ(grid.Utility(std::ldexp(3.0, -66)).fraction_bits, 64);  // 0.75 * 2^-64 -> 2^-64
  EXPECT_EQ(grid.Utility(std::ldexp(1.0, -65)).fraction_bits, 0);  // tie to even: 0
  EXPECT_EQ(grid.Utility(std::ldexp(3.0, -65)).fraction_bits, 63);  // tie to even: 2^-63
  const QuantileUtility rounded = grid.Utility(std::ldexp(3.0, -66));
  const auto expected = RowUtilities(grid.counts(), std::ldexp(1.0L, -64));
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(std::ldexp(static_cast<long double>(rounded.scores[i]), -64), expected[i]);
}

TEST(QuantileUtilityTest, LargeCountsDoNotOverflow) {
  QuantileGrid grid(0, 1, 4);
  const std::int64_t third = std::numeric_limits<std::int64_t>::max() / 3;
  grid.RestoreCounts({third, 0, third, third});
  for (double f : {std::ldexp(1.0, -64), std::ldexp(3.0, -64), 0.5, 1.0, 1.0 - DBL_EPSILON / 2}) {
    const QuantileUtility u = grid.Utility(f);
    for (int128 s : u.scores) ASSERT_LE(s, 0);
    // Some bin holds the target rank: utility 0.
    EXPECT_EQ(*std::max_element(u.scores.begin(), u.scores.end()), 0) << f;
  }
}

// The sensitivity proof in quantile.h, checked by brute force: for many small
// datasets D and every added value x (also outside the bounds), the
// utilities of D and D + {x} differ by at most one row in every bin; the
// bound is attained; and the utility is not monotonic.
TEST(QuantileUtilityTest, SensitivityIsOneRowByBruteForce) {
  SeededTestRandomSource rng(5);
  const double values[] = {-1, 0, 0.3, 1, 1.5, 2, 2.99, 3, 3.7, 4, 5};
  const double fractions[] = {0.0, 1.0, 0.5, 0.1, 1.0 / 3, 0.9, 0.75, std::ldexp(1.0, -64), 1e-30};
  bool attained = false;
  bool non_monotonic = false;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> data;
    const int n = static_cast<int>(rng.UniformBelow(9));
    for (int i = 0; i < n; ++i) data.push_back(values[rng.UniformBelow(std::size(values))]);
    const QuantileGrid base = GridOf(0, 4, 4, data);
    for (double x : values) {
      QuantileGrid neighbour = base;
      neighbour.Add(x);
      for (double f : fractions) {
        const QuantileUtility u = base.Utility(f);
        const QuantileUtility v = neighbour.Utility(f);
        ASSERT_EQ(u.sensitivity, v.sensitivity);
        bool up = false, down = false;
        for (std::size_t i = 0; i < u.scores.size(); ++i) {
          const int128 diff = v.scores[i] - u.scores[i];
          const uint128 magnitude =
              diff < 0 ? static_cast<uint128>(-diff) : static_cast<uint128>(diff);
          ASSERT_LE(magnitude, u.sensitivity) << "trial " << trial << " x " << x << " f " << f;
          attained = attained || magnitude == u.sensitivity;
          up = up || diff > 0;
          down = down || diff < 0;
        }
        non_monotonic = non_monotonic || (up && down);
      }
    }
  }
  EXPECT_TRUE(attained);
  EXPECT_TRUE(non_monotonic);
}

// ---------------------------------------------------------------------------
// Releases

TEST(QuantileReleaseTest, AnswerAlwaysWithinBounds) {
  SeededTestRandomSource rng(6);
  const double bounds[][2] = {
      {0, 1},   {-DBL_MAX, DBL_MAX}, {0, 5e-324}, {-1e-310, 1e-310}, {1, std::nextafter(1.0, 2.0)},
      {-5, -4}, {1e300, DBL_MAX}};
  for (const auto& b : bounds) {
    for (std::size_t bins : {std::size_t{1}, std::size_t{3}, dp::kDefaultQuantileBins}) {
      QuantileGrid empty(b[0], b[1], bins);
      QuantileGrid full(b[0], b[1], bins);
      for (double v : {-DBL_MAX, DBL_MAX, 0.0, b[0], b[1], kNaN, kInf}) full.Add(v);
      for (const QuantileGrid* grid : {&empty, &full}) {
        for (double epsilon : {dp::kMinEpsilon, 5e-324, 1e-3, 1.0, 1e6}) {
          for (double fraction : {0.0, 0.5, 1.0, 0.01}) {
            const double answer = grid->Release(fraction, epsilon, rng);
            ASSERT_GE(answer, b[0]);
            ASSERT_LE(answer, b[1]);
            ASSERT_FALSE(std::isnan(answer));
          }
        }
      }
    }
  }
}

TEST(QuantileReleaseTest, EmptyInputIsUniformOverBins) {
  // No rows: every bin has utility 0, so every bin is equally likely.
  SeededTestRandomSource rng(7);
  const QuantileGrid grid(0, 8, 8);
  std::vector<std::uint64_t> counts(8, 0);
  const std::uint64_t n = 40000;
  for (std::uint64_t i = 0; i < n; ++i) ++counts[grid.BinIndex(grid.ReleaseMedian(1.0, rng))];
  const FitResult fit = ChiSquareFit(counts, std::vector<long double>(8, 1.0L / 8));
  EXPECT_LT(fit.statistic, fit.critical_value);
}

TEST(QuantileReleaseTest, HighEpsilonFindsTheQuantileBin) {
  // 1000 values at 0.5, 1.5, ..., 999.5 over [0, 1000] in 1000 bins: bin i
  // holds the value i + 0.5 and spans the ranks [i, i + 1]. For fraction f
  // the target rank is 1000 f; the bins containing it have utility 0, every
  // other bin at least 0.4 rows less (targets 500, 100, ..., 123.4), so at
  // epsilon 200 its exponent is >= 40: all 160 releases are right except
  // with probability < 160 * 1000 * exp(-40) < 1e-12.
  SeededTestRandomSource rng(8);
  QuantileGrid grid(0, 1000, 1000);
  for (int i = 0; i < 1000; ++i) grid.Add(i + 0.5);
  for (double f : {0.5, 0.1, 0.25, 0.9, 0.999, 0.0, 1.0, 0.1234}) {
    const double target = 1000 * f;
    for (int run = 0; run < 20; ++run) {
      const double answer = grid.Release(f, 200.0, rng);
      // Bin i is right iff i <= target <= i + 1.
      const double bin = std::floor(answer);
      ASSERT_EQ(answer, bin + 0.5);
      ASSERT_LE(bin, target) << f;
      ASSERT_GE(bin + 1, target) << f;
    }
  }
  // The default grid, skewed data: the answer's bin has utility 0 and lies
  // within one bin of the sample quantile.
  QuantileGrid skewed(-100, 300);
  std::vector<double> data;
  for (int i = 0; i < 5000; ++i) data.push_back(std::pow(i / 5000.0, 3) * 250 - 50);
  for (double v : data) skewed.Add(v);
  const double width = 400.0 / dp::kDefaultQuantileBins;
  for (double f : {0.5, 0.05, 0.95}) {
    const QuantileUtility u = skewed.Utility(f);
    const double sample = data[static_cast<std::size_t>(f * data.size())];
    for (int run = 0; run < 5; ++run) {
      const double answer = skewed.Release(f, 200.0, rng);
      EXPECT_EQ(u.scores[skewed.BinIndex(answer)], 0) << f;
      EXPECT_LE(std::fabs(answer - sample), 1.5 * width) << f;
    }
  }
  // All rows equal: their bin spans every rank in [0, n], so it is chosen
  // for the median. Rank 0 is also held by every (empty) bin below it, rank
  // n by every bin above it.
  QuantileGrid point(0, 1, 16);
  for (int i = 0; i < 100; ++i) point.Add(0.3);
  const double bin_point = point.BinPoint(point.BinIndex(0.3));
  for (int run = 0; run < 20; ++run) {
    EXPECT_EQ(point.ReleaseMedian(200.0, rng), bin_point);
    EXPECT_LE(point.Release(0.0, 200.0, rng), bin_point);
    EXPECT_GE(point.Release(1.0, 200.0, rng), bin_point);
  }
}

// The release distribution equals permute-and-flip on the utilities computed
// by hand (in rows) with epsilon / 2 per row of distance.
TEST(QuantileReleaseTest, ReleaseFrequenciesMatchPermuteAndFlip) {
  const std::vector<double> data = {0.5, 0.5, 0.5, 2.5, 2.5, 2.5, 2.5,
                                    2.5, 3.5, 6.5, 6.5, 6.5, 6.5};
  const QuantileGrid grid = GridOf(0, 8, 8, data);
  struct Case {
    double fraction, epsilon;
  };
  SeededTestRandomSource rng(9);
  const std::uint64_t n = 60000;
  for (const Case& c : {Case{0.5, 1.0}, Case{0.3, 0.8}, Case{0.9, 1.0}}) {
    const auto rows = RowUtilities(grid.counts(), c.fraction);
    const dp::SelectionScale scale = dp::PlanSelection(1, c.epsilon, false);
    // Exponents epsilon' * distance / 2 with epsilon' the rate actually
    // used (checked against epsilon / 2 in selection_test), for distance in rows.
    const long double rate = std::ldexp(static_cast<long double>(scale.multiplier), -scale.shift);
    const long double best = *std::max_element(rows.begin(), rows.end());
    std::vector<long double> exponents;
    for (long double r : rows) exponents.push_back(std::min(rate * (best - r), 64.0L));
    // P[r] = p_r * integral_0^1 prod_{s != r} (1 - t p_s) dt (see selection_test).
    std::vector<long double> p;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::vector<long double> poly{1.0L};
      for (std::size_t s = 0; s < rows.size(); ++s) {
        if (s == r) continue;
        poly.push_back(0.0L);
        for (std::size_t k = poly.size() - 1; k > 0; --k)
          poly[k] -= std::exp(-exponents[s]) * poly[k - 1];
      }
      long double integral = 0;
      for (std::size_t k = 0; k < poly.size(); ++k) integral += poly[k] / (k + 1);
      p.push_back(std::exp(-exponents[r]) * integral);
    }
    for (long double pi : p) ASSERT_GE(n * pi, dp_test::kMinExpectedPerBin) << c.fraction;
    std::vector<std::uint64_t> counts(8, 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const double answer = grid.Release(c.fraction, c.epsilon, rng);
      ASSERT_EQ(answer, std::floor(answer) + 0.5);  // always a bin midpoint
      ++counts[grid.BinIndex(answer)];
    }
    const FitResult fit = ChiSquareFit(counts, p);
    EXPECT_LT(fit.statistic, fit.critical_value) << "fraction " << c.fraction;
  }
}

TEST(QuantileReleaseTest, DefaultGridReleaseIsFast) {
  SeededTestRandomSource rng(10);
  QuantileGrid grid(0, 1);
  for (int i = 0; i < 100000; ++i) grid.Add(static_cast<double>(rng.UniformBelow(1000000)) / 1e6);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) grid.ReleaseMedian(1.0, rng);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds / 200, 0.01);  // well under 10 ms per release of 1024 bins
}

}  // namespace
