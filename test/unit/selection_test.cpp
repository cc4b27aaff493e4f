// Tests of exact permute-and-flip (selection.h): the dyadic rate, the exact
// acceptance Bernoulli(exp(-x)) and its cap, the selection distribution
// against exact probabilities (chi-square, with power against the
// exponential mechanism), the privacy ratio on neighbouring score vectors,
// and huge score gaps.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "counting_source.h"
#include "exact_sampler.h"
#include "laplace_mechanism.h"
#include "parameters.h"
#include "random_source.h"
#include "selection.h"
#include "stats_util.h"

namespace {

using dp::int128;
using dp::kMaxSelectionExponent;
using dp::PermuteAndFlip;
using dp::PlanSelection;
using dp::RandomSource;
using dp::SampleSelectionAcceptance;
using dp::SeededTestRandomSource;
using dp::SelectionExponent;
using dp::SelectionScale;
using dp::uint128;
using dp_test::BinomialAcceptanceInterval;
using dp_test::ChiSquareFit;
using dp_test::FitResult;
using dp_test::kFalseFailureProbability;
using dp_test::kInt128Max;
using dp_test::kInt128Min;
using dp_test::kUint128Max;
using dp_test::NonCentrality;
using dp_test::PowerMarginInSigmas;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

// ---------------------------------------------------------------------------
// Exact selection probabilities, computed independently of the sampler from
// per-visit acceptance probabilities p_r = exp(-x_r).

// By enumerating all n! visit orders (n <= 7).
std::vector<long double> ProbabilitiesByEnumeration(const std::vector<long double>& exponents) {
  const std::size_t n = exponents.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<long double> probability(n, 0.0L);
  long double permutations = 0;
  do {
    permutations += 1;
    long double reach = 1;  // probability that every earlier candidate was rejected
    for (std::size_t r : order) {
      probability[r] += reach * std::exp(-exponents[r]);
      reach *= -std::expm1(-exponents[r]);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  for (auto& p : probability) p /= permutations;
  return probability;
}

// By the arrival-time formula: give every candidate an independent uniform
// arrival time; given r's time t, each other s comes first with probability
// t, so P[r] = p_r * integral_0^1 prod_{s != r} (1 - t p_s) dt. The product
// is expanded into polynomial coefficients and integrated term by term.
std::vector<long double> ProbabilitiesByIntegral(const std::vector<long double>& exponents) {
  const std::size_t n = exponents.size();
  std::vector<long double> probability(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<long double> poly{1.0L};
    for (std::size_t s = 0; s < n; ++s) {
      if (s == r) continue;
      const long double p = std::exp(-exponents[s]);
      poly.push_back(0.0L);
      for (std::size_t k = poly.size() - 1; k > 0; --k) poly[k] -= p * poly[k - 1];
    }
    long double integral = 0;
    for (std::size_t k = 0; k < poly.size(); ++k) integral += poly[k] / (k + 1);
    probability[r] = std::exp(-exponents[r]) * integral;
  }
  return probability;
}

std::vector<long double> ExponentsOf(const std::vector<int128>& scores,
                                     const SelectionScale& scale) {
  const int128 best = *std::max_element(scores.begin(), scores.end());
  std::vector<long double> exponents;
  for (int128 s : scores)
    exponents.push_back(
        SelectionExponent(static_cast<uint128>(best) - static_cast<uint128>(s), scale));
  return exponents;
}

std::vector<long double> PermuteAndFlipProbabilities(const std::vector<int128>& scores,
                                                     const SelectionScale& scale) {
  return ProbabilitiesByIntegral(ExponentsOf(scores, scale));
}

std::vector<std::uint64_t> SelectionCounts(const std::vector<int128>& scores,
                                           const SelectionScale& scale, std::uint64_t n,
                                           RandomSource& rng) {
  std::vector<std::uint64_t> counts(scores.size(), 0);
  for (std::uint64_t i = 0; i < n; ++i) ++counts[PermuteAndFlip(scores, scale, rng)];
  return counts;
}

// ---------------------------------------------------------------------------
// 256-bit helpers for exact checks of the rate (independent of selection.cpp:
// 32-bit limbs).

using Big = std::array<std::uint32_t, 9>;  // little-endian, 288 bits

Big ToBig(uint128 x) {
  Big b{};
  for (int i = 0; i < 4; ++i) b[i] = static_cast<std::uint32_t>(x >> (32 * i));
  return b;
}

Big Multiply(const Big& a, const Big& b) {
  Big r{};
  for (int i = 0; i < 9; ++i) {
    std::uint64_t carry = 0;
    for (int j = 0; i + j < 9; ++j) {
      const std::uint64_t t = std::uint64_t{a[i]} * b[j] + r[i + j] + carry;
      r[i + j] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
  }
  return r;
}

Big ShiftLeft(const Big& a, int shift) {
  Big r{};
  for (int bit = 0; bit < 288; ++bit) {
    if ((a[bit / 32] >> (bit % 32)) & 1U) {
      const int to = bit + shift;
      if (to < 0) continue;
      if (to >= 288) throw std::overflow_error("ShiftLeft overflow");
      r[to / 32] |= std::uint32_t{1} << (to % 32);
    }
  }
  return r;
}

int Compare(const Big& a, const Big& b) {
  for (int i = 8; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

long double ToLongDouble(const Big& a) {
  long double x = 0;
  for (int i = 8; i >= 0; --i) x = x * 4294967296.0L + a[i];
  return x;
}

// ---------------------------------------------------------------------------
// PlanSelection

const uint128 kSensitivities[] = {1,
                                  2,
                                  3,
                                  1000,
                                  (uint128{1} << 64) - 1,
                                  uint128{1} << 64,
                                  (uint128{1} << 64) + 1,
                                  (uint128{1} << 65) - 1,
                                  (uint128{1} << 100) + 12345,
                                  (uint128{1} << 127) + 1,
                                  kUint128Max};
const double kEpsilons[] = {5e-324, dp::kMinEpsilon, 1e-6, 0.01, 0.1, 1.0 / 3, 0.5, 1, 2, 10, 1000,
                            1e300};

TEST(PlanSelectionTest, RateIsEpsilonOverTwoDeltaRoundedDown) {
  SeededTestRandomSource rng(101);
  std::vector<uint128> sensitivities(std::begin(kSensitivities), std::end(kSensitivities));
  for (int i = 0; i < 200; ++i) {
    const int bits = 1 + static_cast<int>(rng.UniformBelow(128));
    uint128 d = ((uint128{rng.NextUint64()} << 64) | rng.NextUint64()) >> (128 - bits);
    sensitivities.push_back(d == 0 ? 1 : d);
  }
  for (uint128 delta : sensitivities) {
    for (double epsilon : kEpsilons) {
      for (bool monotonic : {false, true}) {
        const SelectionScale scale = PlanSelection(delta, epsilon, monotonic);
        ASSERT_GE(scale.multiplier, Pow2(63));
        ASSERT_LT(scale.multiplier, Pow2(65));
        // lambda = L 2^-t <= m 2^e / (c Delta)  <=>  L Delta <= m 2^(e + t - log2 c).
        const dp::DyadicEpsilon eps = dp::RoundEpsilonDown(epsilon);
        const int s = eps.exponent + scale.shift - (monotonic ? 0 : 1);
        ASSERT_GE(s, 0);
        const Big lhs = Multiply(ToBig(scale.multiplier), ToBig(delta));
        const Big rhs = ShiftLeft(ToBig(eps.mantissa), s);
        ASSERT_LE(Compare(lhs, rhs), 0) << "rate rounded up";
        // ... and loses less than 2^-60 of it (on top of epsilon's rounding).
        ASSERT_GT(ToLongDouble(lhs) / ToLongDouble(rhs), 1.0L - std::ldexp(1.0L, -60));
      }
    }
  }
}

TEST(PlanSelectionTest, RejectsBadParameters) {
  for (double epsilon : {0.0, -0.0, -1.0, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    EXPECT_THROW(PlanSelection(1, epsilon, false), dp::InvalidParameter) << epsilon;
    SeededTestRandomSource rng(1);
    EXPECT_THROW(PermuteAndFlip({1, 2}, 1, epsilon, false, rng), dp::InvalidParameter) << epsilon;
  }
  EXPECT_THROW(PlanSelection(0, 1.0, false), std::invalid_argument);
}

TEST(SelectionExponentTest, IsEpsilonGapOverTwoDeltaCappedAt64) {
  struct Case {
    uint128 gap, delta;
    double epsilon;
  };
  const Case cases[] = {{1, 1, 1.0},
                        {3, 1, 0.5},
                        {7, 3, 0.1},
                        {1000, 7, 0.01},
                        {Pow2(100), Pow2(100), 2.0},
                        {Pow2(127), Pow2(126) + 1, 1.0 / 3},
                        {kUint128Max, kUint128Max, 0.7},
                        {5, Pow2(64), 1e6}};
  for (const Case& c : cases) {
    for (bool monotonic : {false, true}) {
      const long double expected = std::min<long double>(
          static_cast<long double>(c.epsilon) * static_cast<long double>(c.gap) /
              ((monotonic ? 1 : 2) * static_cast<long double>(c.delta)),
          64.0L);
      const long double x = SelectionExponent(c.gap, PlanSelection(c.delta, c.epsilon, monotonic));
      EXPECT_LE(x, expected * (1 + 1e-15L));
      EXPECT_GE(x, expected * (1 - std::ldexp(1.0L, -22)));
    }
  }
  EXPECT_EQ(SelectionExponent(0, PlanSelection(1, 1.0, false)), 0.0L);
  // Huge gaps are capped, never infinite: 10^30 score units at epsilon 1.
  const uint128 huge = static_cast<uint128>(1000000000000000ULL) * 1000000000000000ULL;
  EXPECT_EQ(SelectionExponent(huge, PlanSelection(1, 1.0, false)), 64.0L);
  EXPECT_EQ(SelectionExponent(kUint128Max, PlanSelection(1, 1e300, true)), 64.0L);
}

// ---------------------------------------------------------------------------
// SampleSelectionAcceptance

TEST(SelectionAcceptanceTest, FrequencyIsExpMinusExponent) {
  struct Case {
    uint128 gap, delta;
    double epsilon;
    bool monotonic;
  };
  // Exponents from 0.05 to 5, with shifts from ~40 to ~190 bits (several
  // 64-bit chunks in the exact comparison), integer and fractional parts.
  const Case cases[] = {
      {1, 10, 1.0, false},  // 0.05
      {1, 1, 1.0, false},  // 0.5
      {2, 1, 1.0, false},  // 1 (whole part only)
      {3, 1, 1.8, true},  // 5.4
      {kUint128Max, Pow2(127) + 1, 1.0, false},  // ~1.0, shift 192
      {Pow2(127) + Pow2(100), Pow2(127) + 1, 1.0, false},  // ~0.5, shift 192
      {Pow2(100) * 3, Pow2(100), 1.0 / 3, false},  // ~0.5, shift ~145
      {123456789, 1000000, 0.05, true},  // ~6.17
  };
  SeededTestRandomSource rng(202);
  const std::uint64_t n = 200000;
  for (const Case& c : cases) {
    const SelectionScale scale = PlanSelection(c.delta, c.epsilon, c.monotonic);
    const long double x = SelectionExponent(c.gap, scale);
    const double p = static_cast<double>(std::exp(-x));
    std::uint64_t successes = 0;
    for (std::uint64_t i = 0; i < n; ++i) successes += SampleSelectionAcceptance(rng, c.gap, scale);
    const double frequency = static_cast<double>(successes) / n;
    const auto interval = BinomialAcceptanceInterval(p, n, kFalseFailureProbability);
    EXPECT_TRUE(interval.Contains(frequency))
        << "x = " << static_cast<double>(x) << " p = " << p << ": " << frequency << " not in ["
        << interval.low << ", " << interval.high << "]";
  }
}

TEST(SelectionAcceptanceTest, GapZeroAlwaysAcceptsAndTinyExponentsAlmostAlways) {
  SeededTestRandomSource rng(203);
  const SelectionScale scale = PlanSelection(kUint128Max, 5e-324, false);  // shift > 1000
  EXPECT_GT(scale.shift, 1000);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_TRUE(SampleSelectionAcceptance(rng, 0, scale));
    // exp(-x) with x < 2^-1000: a rejection would be a 2^-1000 event.
    ASSERT_TRUE(SampleSelectionAcceptance(rng, kUint128Max, scale));
  }
}

// Every 64-bit draw is the same constant, and the bytes read are counted.
class ConstantRandomSource final : public RandomSource {
 public:
  explicit ConstantRandomSource(std::uint64_t word) : word_(word) {}
  void Fill(unsigned char* out, std::size_t length) override {
    bytes_ += length;
    while (length > 0) {
      const std::size_t take = length < 8 ? length : 8;
      std::memcpy(out, &word_, take);
      out += take;
      length -= take;
    }
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t word_;
  std::uint64_t bytes_ = 0;
};

// A gap of 10^30 score units at epsilon 1 (true exponent 5e29) must not
// make the low candidate impossible. Proof by exhibiting a finite sequence of
// random bytes that selects it: with every byte 0, the shuffle keeps the
// order (UniformBelow(2) = 0) and every comparison V < c of the exact
// samplers reads u = 0, which is "less" for every c >= 2^-80: each
// Bernoulli(exp(-2^j)) digit succeeds and the CKS20 loop's first trial
// Bernoulli(0 / 1) fails at the odd index 1, so the capped acceptance
// exp(-64) = exp(-63) exp(-1) succeeds. The mechanism reads a finite number N
// of bytes, so a uniform source produces exactly these bytes with probability
// 2^(-8N) > 0: the low candidate's probability is strictly positive.
TEST(PermuteAndFlipTest, HugeGapLeavesTheLowCandidatePossible) {
  const uint128 gap = static_cast<uint128>(1000000000000000ULL) * 1000000000000000ULL;
  const std::vector<int128> scores = {0, static_cast<int128>(gap)};
  ConstantRandomSource zero(0);
  EXPECT_EQ(PermuteAndFlip(scores, 1, 1.0, false, zero), 0U);
  // Bounded work: two fixed-work Bernoulli(exp(-x)) samples (exp(-63), then
  // exp(-1)) of 27 comparisons each, plus the shuffle.
  EXPECT_GT(zero.bytes(), 0U);
  EXPECT_LE(zero.bytes(), 2U * 27U * dp::kComparisonBytes + 64U);
  // The same for the largest possible gap.
  ConstantRandomSource zero_again(0);
  EXPECT_EQ(PermuteAndFlip({kInt128Min, kInt128Max}, 1, 1e300, true, zero_again), 0U);
  // And the exact probability is at least exp(-64) / 2, not 0.
  const auto p = PermuteAndFlipProbabilities(scores, PlanSelection(1, 1.0, false));
  EXPECT_GT(p[0], 0.0L);
  EXPECT_NEAR(static_cast<double>(p[0] / std::exp(-64.0L)), 0.5, 1e-12);
}

TEST(PermuteAndFlipTest, HugeGapsKeepTheWorkBounded) {
  SeededTestRandomSource seeded(204);
  dp_test::CountingSource rng(seeded);
  std::vector<int128> scores;
  for (int i = 0; i < 16; ++i) scores.push_back(i == 5 ? kInt128Max : kInt128Min + i);
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t most = 0;
  const int runs = 20000;
  for (int i = 0; i < runs; ++i) {
    const std::uint64_t before = rng.bytes();
    ASSERT_EQ(PermuteAndFlip(scores, 1, 1.0, false, rng), 5U);
    most = std::max(most, rng.bytes() - before);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Each of the 15 capped candidates costs one fixed-work Bernoulli(exp(-63))
  // (27 comparisons of 10 bytes), and more only with probability exp(-63):
  // about 15 * 270 bytes per run, plus the shuffle.
  EXPECT_LT(static_cast<double>(rng.bytes()) / runs, 15 * 27 * 10 + 200.0);
  EXPECT_LT(most, 20000U);
  EXPECT_LT(seconds, 2.0);
}

// ---------------------------------------------------------------------------
// PermuteAndFlip

TEST(PermuteAndFlipTest, EmptyCandidateListThrows) {
  SeededTestRandomSource rng(1);
  EXPECT_THROW(PermuteAndFlip({}, 1, 1.0, false, rng), dp::InvalidParameter);
  EXPECT_THROW(PermuteAndFlip({}, PlanSelection(1, 1.0, false), rng), dp::InvalidParameter);
}

TEST(PermuteAndFlipTest, SingleCandidateIsChosen) {
  SeededTestRandomSource rng(2);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(PermuteAndFlip({-42}, 7, 0.001, false, rng), 0U);
}

TEST(PermuteAndFlipTest, ExactProbabilityFormulasAgree) {
  const std::vector<std::vector<long double>> cases = {
      {0, 0.5, 1, 1.5}, {0, 0, 2, 64}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}, {0}, {0, 3}};
  for (const auto& exponents : cases) {
    const auto a = ProbabilitiesByEnumeration(exponents);
    const auto b = ProbabilitiesByIntegral(exponents);
    long double total = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_NEAR(static_cast<double>(a[i]), static_cast<double>(b[i]), 1e-15);
      total += a[i];
    }
    // The exponents include a 0 in every case but one: a best candidate.
    if (exponents[0] == 0) {
      EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15);
    }
  }
}

struct DistributionCase {
  std::vector<int128> scores;
  uint128 sensitivity;
  double epsilon;
  bool monotonic;
};

TEST(PermuteAndFlipTest, FrequenciesMatchExactProbabilities) {
  const DistributionCase cases[] = {
      {{0, 1, 2, 3}, 1, 1.0, false},
      {{0, 1, 2, 3}, 1, 1.0, true},
      {{5, 5, 0}, 1, 0.7, false},  // a tie at the top
      {{7, 7, 7, 7, 7}, 3, 2.0, false},  // all equal: uniform
      {{0, 10, 3, 7, 7, 1}, 3, 0.9, true},
      {{-1000, -400, -250, -100}, 100, 1.3, false},
      {{0, Pow2(110), 3 * Pow2(108), Pow2(111)}, Pow2(110) + 1, 1.0, false},  // big units
  };
  SeededTestRandomSource rng(303);
  const std::uint64_t n = 120000;
  for (const auto& c : cases) {
    const SelectionScale scale = PlanSelection(c.sensitivity, c.epsilon, c.monotonic);
    const auto p = PermuteAndFlipProbabilities(c.scores, scale);
    for (long double pi : p) ASSERT_GE(n * pi, dp_test::kMinExpectedPerBin);
    const auto enumerated = ProbabilitiesByEnumeration(ExponentsOf(c.scores, scale));
    for (std::size_t i = 0; i < p.size(); ++i)
      ASSERT_NEAR(static_cast<double>(p[i]), static_cast<double>(enumerated[i]), 1e-15);
    const FitResult fit = ChiSquareFit(SelectionCounts(c.scores, scale, n, rng), p);
    EXPECT_LT(fit.statistic, fit.critical_value)
        << "scores of size " << c.scores.size() << " monotonic " << c.monotonic;
  }
}

// The chi-square test above can tell permute-and-flip from the exponential
// mechanism (softmax of epsilon u / 2 Delta) and from a factor-2 slip in the
// rate: the expected statistic under those alternatives lies >= 10 standard
// deviations above the critical value.
TEST(PermuteAndFlipTest, ChiSquareTestHasPowerAgainstNearbyMechanisms) {
  const std::vector<int128> scores = {0, 1, 2, 3};
  const std::uint64_t n = 120000;
  const SelectionScale scale = PlanSelection(1, 1.0, false);
  const auto p = PermuteAndFlipProbabilities(scores, scale);
  const int df = static_cast<int>(scores.size()) - 1;
  const double critical = dp_test::ChiSquareCriticalValue(df, kFalseFailureProbability);
  // Exponential mechanism.
  std::vector<long double> softmax;
  long double z = 0;
  for (int128 s : scores) z += std::exp(0.5L * static_cast<long double>(s));
  for (int128 s : scores) softmax.push_back(std::exp(0.5L * static_cast<long double>(s)) / z);
  EXPECT_GE(PowerMarginInSigmas(NonCentrality(n, p, softmax), df, critical), 10.0);
  // The monotonic rate on non-monotonic scores (twice the exponent).
  const auto doubled = PermuteAndFlipProbabilities(scores, PlanSelection(1, 1.0, true));
  EXPECT_GE(PowerMarginInSigmas(NonCentrality(n, p, doubled), df, critical), 10.0);
}

TEST(PermuteAndFlipTest, HighEpsilonPicksTheMaximum) {
  // At epsilon 1000 every non-best candidate is accepted with probability
  // exp(-64) per visit: a wrong answer in these 3000 runs has probability
  // below 3000 * 8 * exp(-64) < 1e-23.
  SeededTestRandomSource rng(404);
  const std::vector<int128> scores = {3, -7, 12, 11, 0, 5, 11, -100};
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(PermuteAndFlip(scores, 1, 1000.0, false, rng), 2U);
  const std::vector<int128> big = {kInt128Min, kInt128Max - 1, kInt128Max, 0};
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(PermuteAndFlip(big, 1, 1000.0, true, rng), 2U);
  // Ties at the top: only the tied maxima, each about half the time.
  const std::vector<int128> tied = {9, 10, 4, 10};
  int first = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::size_t r = PermuteAndFlip(tied, 1, 1000.0, false, rng);
    ASSERT_TRUE(r == 1 || r == 3);
    first += r == 1;
  }
  const auto interval = BinomialAcceptanceInterval(0.5, 1000, kFalseFailureProbability);
  EXPECT_TRUE(interval.Contains(first / 1000.0)) << first;
}

// Exact check of the privacy theorem on neighbouring score vectors (every
// score moves by at most Delta; monotonic: all in the same direction): the
// probability ratio never exceeds exp(epsilon), and it comes close, so the
// rate is not needlessly small. With the monotonic rate on non-monotonic
// neighbours the bound fails, as it must.
TEST(PermuteAndFlipTest, ExactProbabilitiesRespectEpsilonOnNeighbours) {
  SeededTestRandomSource rng(505);
  const double epsilon = 1.0;
  const uint128 delta = 4;
  long double worst[2] = {0, 0};
  long double worst_misused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t n = 2 + rng.UniformBelow(5);
    std::vector<int128> u(n), v(n), w(n);
    const bool up = rng.FairBit();
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = static_cast<int128>(rng.UniformBelow(25));
      const int128 step = static_cast<int128>(rng.UniformBelow(5));  // 0..Delta
      v[i] = u[i] + (rng.FairBit() ? step : -step);  // any direction
      w[i] = u[i] + (up ? step : -step);  // all the same direction
    }
    for (bool monotonic : {false, true}) {
      const SelectionScale scale = PlanSelection(delta, epsilon, monotonic);
      const auto& neighbour = monotonic ? w : v;
      const auto p = PermuteAndFlipProbabilities(u, scale);
      const auto q = PermuteAndFlipProbabilities(neighbour, scale);
      for (std::size_t i = 0; i < n; ++i) {
        worst[monotonic] =
            std::max({worst[monotonic], std::log(p[i] / q[i]), std::log(q[i] / p[i])});
      }
      if (monotonic) {
        const auto qv = PermuteAndFlipProbabilities(v, scale);
        for (std::size_t i = 0; i < n; ++i)
          worst_misused = std::max(worst_misused, std::log(p[i] / qv[i]));
      }
    }
  }
  for (int monotonic = 0; monotonic < 2; ++monotonic) {
    EXPECT_LE(worst[monotonic], epsilon + 1e-12) << "monotonic " << monotonic;
    EXPECT_GT(worst[monotonic], 0.7 * epsilon) << "monotonic " << monotonic;
  }
  EXPECT_GT(worst_misused, epsilon * 1.05);
}

// Black-box check: empirical selection frequencies on two neighbouring score
// vectors chosen to make the ratio large. With N runs each, Hoeffding's
// inequality puts every one of the 2k frequencies within
// m = sqrt(ln(4k / delta) / (2N)) of its probability, simultaneously, except
// with probability delta = 1e-9; so p_hat - m <= e^epsilon (q_hat + m) must
// hold for every candidate in both directions.
TEST(PermuteAndFlipTest, EmpiricalFrequenciesOnNeighboursRespectEpsilon) {
  struct Pair {
    std::vector<int128> u, v;
    bool monotonic;
  };
  const double epsilon = 1.0;
  const Pair pairs[] = {
      {{0, 1, 2}, {1, 0, 1}, false},  // the best drops, others rise: non-monotonic
      {{0, 0, 0, 3}, {1, 1, 1, 3}, true},  // monotonic: the rest rise by Delta
  };
  SeededTestRandomSource rng(606);
  const std::uint64_t n = 150000;
  for (const Pair& pair : pairs) {
    const SelectionScale scale = PlanSelection(1, epsilon, pair.monotonic);
    const std::size_t k = pair.u.size();
    const double m = std::sqrt(std::log(4.0 * k / kFalseFailureProbability) / (2.0 * n));
    const auto cu = SelectionCounts(pair.u, scale, n, rng);
    const auto cv = SelectionCounts(pair.v, scale, n, rng);
    double largest_ratio = 0;
    for (std::size_t i = 0; i < k; ++i) {
      const double pu = static_cast<double>(cu[i]) / n;
      const double pv = static_cast<double>(cv[i]) / n;
      EXPECT_LE(pu - m, std::exp(epsilon) * (pv + m)) << i;
      EXPECT_LE(pv - m, std::exp(epsilon) * (pu + m)) << i;
      largest_ratio = std::max({largest_ratio, pu / pv, pv / pu});
    }
    // The pair is informative: the exact ratio is well above 1.
    const auto p = PermuteAndFlipProbabilities(pair.u, scale);
    const auto q = PermuteAndFlipProbabilities(pair.v, scale);
    long double exact = 0;
    for (std::size_t i = 0; i < k; ++i) exact = std::max({exact, p[i] / q[i], q[i] / p[i]});
    EXPECT_GT(exact, std::exp(0.5L * epsilon));
    EXPECT_LE(exact, std::exp(static_cast<long double>(epsilon)) * (1 + 1e-12L));
  }
}

}  // namespace
