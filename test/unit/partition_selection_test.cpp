// Tests of DP partition selection. The optimal rule (Desfontaines et al.,
// PoPETs 2022): the dyadic table satisfies the four DP inequalities for every
// n, is monotone, reaches 1, is within rounding of the paper's pi(n), and
// its 0.5-release points are the paper's; the decision's release frequencies
// match M_n / 2^64 and it draws one 64-bit word whatever the count. The
// fallback (thresholded discrete Laplace): the threshold keeps the release
// probability of a one-row group at most delta and is the smallest that does,
// and its release frequencies match the exact law.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "counting_source.h"
#include "laplace_mechanism.h"
#include "partition_selection.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::PartitionSelectionPlan;
using dp::PlanPartitionSelection;
using dp_test::kFalseFailureProbability;

// q^k / (1 + q), computed independently of the implementation (pow, not logs).
long double Tail(long double epsilon, std::int64_t k) {
  const long double q = std::exp(-epsilon);
  return std::pow(q, static_cast<long double>(k)) / (1 + q);
}

// The paper's pi(n), n = 0 .. until 1, in long double at epsilon', delta'.
std::vector<long double> PaperPi(long double epsilon, long double delta) {
  const long double e = std::exp(epsilon);
  std::vector<long double> pi{0.0L};
  while (pi.back() < 1.0L && pi.size() < 100000) {
    const long double p = pi.back();
    pi.push_back(std::fmin(1.0L, std::fmin(e * p + delta, 1.0L - (1.0L - p - delta) / e)));
  }
  return pi;
}

const double kEpsilons[] = {0.05, 0.1, 0.3, 0.5, 1.0, std::log(3.0), 2.0, 10.0, 100.0};
const double kDeltas[] = {1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.1, 0.5};

// (1)-(4) of partition_selection.h for p_n = M_n / 2^64 exactly, against
// e^epsilon' from expl without any margin, in the forms q - delta <= e p and
// (1 - p) - delta <= e (1 - q) (1 - p exact: computed from the integer).
TEST(OptimalPartitionSelectionTest, TableSatisfiesTheDpInequalitiesForEveryN) {
  for (double epsilon : kEpsilons) {
    for (double delta : kDeltas) {
      const PartitionSelectionPlan plan = PlanPartitionSelection(epsilon, delta);
      ASSERT_TRUE(plan.optimal()) << epsilon << " " << delta;
      EXPECT_LE(plan.epsilon, epsilon);
      EXPECT_LE(plan.delta, delta);
      const std::vector<std::uint64_t>& m = *plan.table;
      ASSERT_GE(m.size(), 2u);
      ASSERT_EQ(m[0], 0u);
      const long double e = std::exp(static_cast<long double>(plan.epsilon));
      const long double d = plan.delta;
      const unsigned __int128 one = static_cast<unsigned __int128>(1) << 64;
      for (std::size_t n = 1; n <= m.size(); ++n) {
        const unsigned __int128 before = m[n - 1];
        const unsigned __int128 after = n < m.size() ? m[n] : one;
        ASSERT_GE(after, before) << n;  // monotone: (3) and (4)
        const long double p = std::ldexp(static_cast<long double>(before), -64);
        const long double q = std::ldexp(static_cast<long double>(after), -64);
        const long double one_minus_p = std::ldexp(static_cast<long double>(one - before), -64);
        const long double one_minus_q = std::ldexp(static_cast<long double>(one - after), -64);
        EXPECT_LE(q - d, e * p) << epsilon << " " << delta << " n " << n;  // (1)
        EXPECT_LE(one_minus_p - d, e * one_minus_q)
            << epsilon << " " << delta << " n " << n;  // (2)
        EXPECT_LE(p - d, e * q);  // (3)
        EXPECT_LE(one_minus_q - d, e * one_minus_p);  // (4)
      }
      // Near the paper's optimum: the table loses only rounding (a few
      // 2^-64 per step, E's 2^-32 margin), and reaches 1 at the same n* or
      // one later.
      const std::vector<long double> pi = PaperPi(plan.epsilon, plan.delta);
      const std::int64_t paper_star = static_cast<std::int64_t>(pi.size()) - 1;
      EXPECT_GE(plan.always_released(), paper_star);
      EXPECT_LE(plan.always_released(), paper_star + 1) << epsilon << " " << delta;
      for (std::size_t n = 1; n < m.size() && n < pi.size(); ++n) {
        EXPECT_GE(dp::ReleaseProbability(plan, n), pi[n] * (1 - 1e-6L) - 1e-12L)
            << epsilon << " " << delta << " n " << n;
      }
    }
  }
}

TEST(OptimalPartitionSelectionTest, HalfReleasePointsAreThePapers) {
  // The 0.5-release point: the smallest n with p_n >= 1/2. At delta 1e-6:
  // epsilon 0.1: 109 (the Laplace threshold needs 133, 1.22x); epsilon 0.5:
  // 26 (28); 1: 14 (15, 1.07x); 2: 8 (8).
  const struct {
    double epsilon;
    std::int64_t optimal, laplace;
  } cases[] = {{0.1, 109, 133}, {0.5, 26, 28}, {1.0, 14, 15}, {2.0, 8, 8}};
  for (const auto& c : cases) {
    const PartitionSelectionPlan plan = PlanPartitionSelection(c.epsilon, 1e-6);
    EXPECT_EQ(dp::HalfReleasePoint(plan), c.optimal) << c.epsilon;
    const std::vector<long double> pi = PaperPi(plan.epsilon, plan.delta);
    std::int64_t paper = 1;
    while (pi[paper] < 0.5L) ++paper;
    EXPECT_EQ(dp::HalfReleasePoint(plan), paper) << c.epsilon;
    EXPECT_EQ(dp::partition_selection_internal::LaplaceThresholdPlan(c.epsilon, 1e-6).threshold,
              c.laplace);
  }
  // A one-row group is released with exactly floor(delta' 2^64) / 2^64.
  const PartitionSelectionPlan plan = PlanPartitionSelection(1.0, 1e-6);
  EXPECT_EQ((*plan.table)[1], static_cast<std::uint64_t>(std::floor(std::ldexp(plan.delta, 64))));
  EXPECT_EQ(plan.always_released(), 28);
}

TEST(OptimalPartitionSelectionTest, CachedPerSetting) {
  const PartitionSelectionPlan a = PlanPartitionSelection(0.7, 1e-7);
  const PartitionSelectionPlan b = PlanPartitionSelection(0.7, 1e-7);
  EXPECT_EQ(a.table.get(), b.table.get());
  // Requests that round to the same (epsilon', delta') share the table.
  const PartitionSelectionPlan c = PlanPartitionSelection(0.7 * (1 + 1e-12), 1e-7);
  EXPECT_EQ(a.table.get(), c.table.get());
  EXPECT_NE(a.table.get(), PlanPartitionSelection(0.7, 2e-7).table.get());
}

// The memo (bounded_memo.h) keeps 8 tables: after 8 other settings the first
// is built again, equal in content to the one it replaces.
TEST(OptimalPartitionSelectionTest, MemoIsBoundedAndRebuildsTheSameTable) {
  const PartitionSelectionPlan first = PlanPartitionSelection(0.9, 3e-7);
  const std::vector<std::uint64_t> content = *first.table;
  for (int i = 1; i <= 8; ++i) PlanPartitionSelection(0.9 + 0.01 * i, 3e-7);
  const PartitionSelectionPlan again = PlanPartitionSelection(0.9, 3e-7);
  EXPECT_NE(first.table.get(), again.table.get());
  EXPECT_EQ(content, *again.table);
}

// The test fault optimal_one_sided (fault 56) drops inequality (2): at
// (1, 0.1) the table reaches 1 at n = 3 instead of 5, and is cached apart.
TEST(OptimalPartitionSelectionTest, OneSidedFaultIsCachedApart) {
  const PartitionSelectionPlan broken = PlanPartitionSelection(1.0, 0.1, true);
  const PartitionSelectionPlan plan = PlanPartitionSelection(1.0, 0.1);
  EXPECT_EQ(broken.always_released(), 3);
  EXPECT_EQ(plan.always_released(), 5);
  EXPECT_EQ(PlanPartitionSelection(1.0, 0.1).table.get(), plan.table.get());
  EXPECT_NE(broken.table.get(), plan.table.get());
}

// Below the table's reach the rule is the Laplace threshold: epsilon so
// small that p_n has not reached 1 by kMaxOptimalTableSize, or delta below
// 2^16 / 2^64.
TEST(OptimalPartitionSelectionTest, FallsBackWhereTheTableWouldBeTooLong) {
  EXPECT_FALSE(PlanPartitionSelection(1e-4, 1e-6).optimal());
  EXPECT_FALSE(PlanPartitionSelection(1.0, 1e-16).optimal());
  EXPECT_TRUE(PlanPartitionSelection(1.0, 1e-14).optimal());
  EXPECT_TRUE(PlanPartitionSelection(0.01, 1e-6).optimal());
  // Tiny epsilons: E = 1 is the lower bound of e^epsilon'; the table still
  // exists when delta is large (n* = 2 at delta 0.5) and falls back otherwise.
  EXPECT_EQ(PlanPartitionSelection(1e-12, 0.5).always_released(), 2);
  EXPECT_FALSE(PlanPartitionSelection(1e-12, 1e-6).optimal());
  EXPECT_FALSE(PlanPartitionSelection(std::ldexp(1.0, -50), 1e-6).optimal());
  const PartitionSelectionPlan plan = PlanPartitionSelection(1e-4, 1e-6);
  EXPECT_EQ(plan.threshold,
            dp::partition_selection_internal::LaplaceThresholdPlan(1e-4, 1e-6).threshold);
  EXPECT_EQ(dp::HalfReleasePoint(plan), plan.threshold);
}

// Release frequencies of the decision against M_n / 2^64 (Hoeffding, failure
// probability kFalseFailureProbability per check), for every n up to n* + 1.
TEST(OptimalPartitionSelectionTest, ReleaseFrequencyMatchesTheTable) {
  dp::SeededTestRandomSource rng(20261129);
  const PartitionSelectionPlan plan = PlanPartitionSelection(1.0, 0.1);
  ASSERT_TRUE(plan.optimal());
  ASSERT_LE(plan.always_released(), 8);
  const int trials = 200000;
  const double tolerance = std::sqrt(std::log(2 / kFalseFailureProbability) / (2.0 * trials));
  for (std::int64_t count = -1; count <= plan.always_released() + 1; ++count) {
    int released = 0;
    for (int i = 0; i < trials; ++i) released += dp::ReleasePartition(count, plan, rng) ? 1 : 0;
    const long double expected = count <= 0 ? 0.0L : dp::ReleaseProbability(plan, count);
    EXPECT_NEAR(static_cast<double>(released) / trials, static_cast<double>(expected), tolerance)
        << "count " << count;
    if (expected == 0.0L) {
      EXPECT_EQ(released, 0);
    }
    if (expected == 1.0L) {
      EXPECT_EQ(released, trials);
    }
  }
}

// One 64-bit word per decision, whatever the count.
TEST(OptimalPartitionSelectionTest, DrawsOneWordWhateverTheCount) {
  dp::SeededTestRandomSource inner(7);
  const PartitionSelectionPlan plan = PlanPartitionSelection(0.1, 1e-6);
  for (std::int64_t count : {std::int64_t{0}, std::int64_t{1}, std::int64_t{109},
                             plan.always_released(), std::int64_t{1} << 40}) {
    dp_test::CountingSource rng(inner);
    dp::ReleasePartition(count, plan, rng);
    EXPECT_EQ(rng.bytes(), 8u) << count;
  }
}

// A source whose every 64-bit draw is `word` (NextUint64 copies the bytes).
class FixedWordSource final : public dp::RandomSource {
 public:
  explicit FixedWordSource(std::uint64_t word) : word_(word) {}
  void Fill(unsigned char* out, std::size_t length) override {
    for (std::size_t i = 0; i < length; ++i) {
      out[i] = reinterpret_cast<const unsigned char*>(&word_)[i % sizeof word_];
    }
  }

 private:
  std::uint64_t word_;
};

// The decision exactly, not in frequency: a group of n rows is released iff
// the draw U < M_n, so P = M_n / 2^64 to the last 2^-64 (a `U <= M_n` or an
// index one off would pass the frequency test). In particular p_0 = 0: no
// draw at all releases a group of 0 rows or a negative count (U = 0 is the
// only word a `<=` would let through), and groups of n* rows or more (up to
// INT64_MAX) are released by every draw, U = 2^64 - 1 included.
TEST(OptimalPartitionSelectionTest, DecisionIsExactlyTheTableWord) {
  const std::uint64_t top = ~std::uint64_t{0};
  for (const auto& setting : {std::pair<double, double>{1.0, 1e-6}, {1.0, 0.1}, {0.1, 1e-9}}) {
    const PartitionSelectionPlan plan = PlanPartitionSelection(setting.first, setting.second);
    ASSERT_TRUE(plan.optimal());
    const std::vector<std::uint64_t>& m = *plan.table;
    const std::int64_t star = plan.always_released();
    for (std::int64_t count :
         {std::numeric_limits<std::int64_t>::min(), std::int64_t{-1}, std::int64_t{0}}) {
      for (std::uint64_t u : {std::uint64_t{0}, std::uint64_t{1}, top}) {
        FixedWordSource rng(u);
        EXPECT_FALSE(dp::ReleasePartition(count, plan, rng)) << count << " " << u;
      }
    }
    for (std::int64_t n = 1; n < star; ++n) {
      const std::uint64_t word = m[static_cast<std::size_t>(n)];
      ASSERT_GT(word, 0u);
      FixedWordSource below(word - 1);
      FixedWordSource at(word);
      FixedWordSource zero(0);
      FixedWordSource highest(top);
      EXPECT_TRUE(dp::ReleasePartition(n, plan, below)) << n;
      EXPECT_TRUE(dp::ReleasePartition(n, plan, zero)) << n;
      EXPECT_FALSE(dp::ReleasePartition(n, plan, at)) << n;
      EXPECT_FALSE(dp::ReleasePartition(n, plan, highest)) << n;
    }
    for (std::int64_t count :
         {star, star + 1, std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()}) {
      FixedWordSource highest(top);
      EXPECT_TRUE(dp::ReleasePartition(count, plan, highest)) << count;
    }
  }
}

TEST(PartitionSelectionTest, ThresholdBoundsOneRowReleaseByDeltaAndIsSmallest) {
  for (double epsilon : {0.01, 0.1, 0.5, 1.0, std::log(3.0), 2.0, 10.0}) {
    for (double delta : {1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.1, 0.5}) {
      const PartitionSelectionPlan plan =
          dp::partition_selection_internal::LaplaceThresholdPlan(epsilon, delta);
      ASSERT_GE(plan.threshold, 2);
      EXPECT_LE(plan.epsilon, epsilon);
      EXPECT_LE(plan.delta, delta);
      // A one-row group is released iff 1 + Z >= T, i.e. Z >= T - 1.
      EXPECT_LE(Tail(plan.epsilon, plan.threshold - 1), plan.delta * (1 + 1e-12L))
          << epsilon << " " << delta;
      // One less would break the bound (beyond the 1e-9 safety margin).
      if (plan.threshold > 2) {
        EXPECT_GT(Tail(plan.epsilon, plan.threshold - 2), plan.delta * (1 - 1e-6L))
            << epsilon << " " << delta;
      }
    }
  }
}

TEST(PartitionSelectionTest, KnownThreshold) {
  using dp::partition_selection_internal::LaplaceThresholdPlan;
  // epsilon 1, delta 1e-6: smallest k with e^-k / (1 + e^-1) <= 1e-6 is
  // ceil(ln(1e6) - ln(1 + e^-1)) = ceil(13.502) = 14, so T = 15.
  EXPECT_EQ(LaplaceThresholdPlan(1.0, 1e-6).threshold, 15);
  // epsilon ln 3, delta 0.3: q ~ 1/3, q / (1 + q) ~ 1/4 <= 0.3 already at k = 1, T = 2.
  EXPECT_EQ(LaplaceThresholdPlan(std::log(3.0), 0.3).threshold, 2);
}

TEST(PartitionSelectionTest, RefusesDeltaOutsideItsRange) {
  EXPECT_THROW(PlanPartitionSelection(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(PlanPartitionSelection(1.0, 0.6), std::invalid_argument);
  EXPECT_THROW(PlanPartitionSelection(1.0, std::nan("")), std::invalid_argument);
}

// The fallback's release frequencies against the exact law P[count + Z >= T];
// Hoeffding's bound with failure probability kFalseFailureProbability per check.
TEST(PartitionSelectionTest, FallbackReleaseFrequencyMatchesExactLaw) {
  dp::SeededTestRandomSource rng(20261122);
  // delta 1e-17 < 2^16 / 2^64: the fallback, T = 2 + ... at epsilon 20.
  const PartitionSelectionPlan plan = PlanPartitionSelection(20.0, 1e-17);
  ASSERT_FALSE(plan.optimal());
  ASSERT_EQ(plan.threshold, 3);  // k = ceil(17 ln 10 / 20 - ln(1 + e^-20) / 20) = 2
  const int trials = 200000;
  const double tolerance = std::sqrt(std::log(2 / kFalseFailureProbability) / (2.0 * trials));
  for (std::int64_t count : {0, 1, 2, 3, 5}) {
    int released = 0;
    for (int i = 0; i < trials; ++i) released += dp::ReleasePartition(count, plan, rng) ? 1 : 0;
    // P[Z >= m] = q^m / (1 + q) for m >= 1; for m <= 0, by symmetry,
    // P[Z >= m] = 1 - P[Z <= m - 1] = 1 - P[Z >= 1 - m].
    const std::int64_t m = plan.threshold - count;
    const long double expected = m >= 1 ? Tail(plan.epsilon, m) : 1 - Tail(plan.epsilon, 1 - m);
    EXPECT_NEAR(static_cast<double>(released) / trials, static_cast<double>(expected), tolerance)
        << "count " << count;
  }
}

}  // namespace

// The plain-data copy a call site keeps (PartitionSelectionWords, the
// group-selection final function's fn_extra) decides exactly as the plan it
// was copied from: the same draws give the same decision for every count,
// for the optimal rule and for the fallback.
TEST(OptimalPartitionSelectionTest, CopiedPlanDecidesAsThePlan) {
  const std::uint64_t top = ~std::uint64_t{0};
  auto copy = std::make_unique<dp::PartitionSelectionWords>();
  for (const auto& setting : {std::pair<double, double>{1.0, 1e-6}, {0.1, 1e-9}, {0.001, 1e-6}}) {
    const PartitionSelectionPlan plan = PlanPartitionSelection(setting.first, setting.second);
    dp::CopyPartitionSelectionPlan(plan, copy.get());
    EXPECT_EQ(copy->size, static_cast<std::uint64_t>(plan.always_released()));
    const std::int64_t star = plan.optimal() ? plan.always_released() : plan.threshold + 40;
    for (std::int64_t count = -1; count <= star + 1; ++count) {
      if (plan.optimal()) {
        for (std::uint64_t u : {std::uint64_t{0}, std::uint64_t{1} << 40, top / 3, top}) {
          FixedWordSource a(u);
          FixedWordSource b(u);
          EXPECT_EQ(dp::ReleasePartition(count, plan, a), dp::ReleasePartition(count, *copy, b))
              << count << " " << u;
        }
      } else {
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
          dp::SeededTestRandomSource a(seed);
          dp::SeededTestRandomSource b(seed);
          EXPECT_EQ(dp::ReleasePartition(count, plan, a), dp::ReleasePartition(count, *copy, b))
              << count << " " << seed;
        }
      }
    }
  }
}
