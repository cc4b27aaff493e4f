// Tests of the exact samplers: Bernoulli(p) for rational p,
// Bernoulli(exp(-gamma)), and the discrete Laplace distribution, whose output
// is compared with the exact probability mass function by chi-square tests
// that are also shown to have power against plausible bugs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "exact_sampler.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::int128;
using dp::SampleBernoulliExpMinus;
using dp::SampleBernoulliRational;
using dp::SampleDiscreteLaplace;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::Binning;
using dp_test::BinomialAcceptanceInterval;
using dp_test::ChiSquareFit;
using dp_test::ChooseBinning;
using dp_test::DiscreteLaplace;
using dp_test::FitDiscreteLaplace;
using dp_test::FitResult;
using dp_test::kFalseFailureProbability;
using dp_test::NonCentrality;
using dp_test::PowerMarginInSigmas;
using dp_test::ToLongDouble;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

// Empirical frequency of `trial` over n draws.
double Frequency(std::uint64_t n, const std::function<bool()>& trial) {
  std::uint64_t successes = 0;
  for (std::uint64_t i = 0; i < n; ++i) successes += trial() ? 1 : 0;
  return static_cast<double>(successes) / static_cast<double>(n);
}

// ---------------------------------------------------------------------------
// SampleBernoulliRational

TEST(BernoulliRationalTest, RejectsProbabilitiesOutsideZeroOne) {
  SeededTestRandomSource rng(1);
  EXPECT_THROW(SampleBernoulliRational(rng, 0, 0), std::invalid_argument);
  EXPECT_THROW(SampleBernoulliRational(rng, 3, 2), std::invalid_argument);
  EXPECT_THROW(SampleBernoulliRational(rng, Pow2(100) + 1, Pow2(100)), std::invalid_argument);
}

TEST(BernoulliRationalTest, ProbabilitiesZeroAndOneAreDeterministic) {
  SeededTestRandomSource rng(2);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(SampleBernoulliRational(rng, 0, 5));
    ASSERT_FALSE(SampleBernoulliRational(rng, 0, Pow2(120)));
    ASSERT_TRUE(SampleBernoulliRational(rng, 5, 5));
    ASSERT_TRUE(SampleBernoulliRational(rng, Pow2(120) + 7, Pow2(120) + 7));
  }
}

TEST(BernoulliRationalTest, FrequencyMatchesTheProbability) {
  struct Case {
    uint128 numerator, denominator;
  };
  const Case cases[] = {{1, 3},
                        {2, 7},
                        {1, 1000},
                        {999, 1000},
                        {Pow2(100) + 1, Pow2(101) + 3},
                        {Pow2(127) - 1, ~uint128{0}}};
  SeededTestRandomSource rng(3);
  const std::uint64_t n = 400000;
  for (const Case& c : cases) {
    const double p = static_cast<double>(ToLongDouble(c.numerator) / ToLongDouble(c.denominator));
    const double frequency =
        Frequency(n, [&] { return SampleBernoulliRational(rng, c.numerator, c.denominator); });
    // Chernoff-Hoeffding (KL) bound: false failure probability 1e-9.
    const auto interval = BinomialAcceptanceInterval(p, n, kFalseFailureProbability);
    EXPECT_TRUE(interval.Contains(frequency)) << "p = " << p << ": " << frequency << " not in ["
                                              << interval.low << ", " << interval.high << "]";
    // Power: the acceptance half-width is below max(0.05 p (1 - p), 0.005),
    // so a sampler off by more than that would be caught.
    EXPECT_LT(interval.high - interval.low, std::max(0.1 * p * (1 - p), 0.01)) << p;
  }
}

// ---------------------------------------------------------------------------
// SampleBernoulliExpMinus

TEST(BernoulliExpMinusTest, RejectsZeroDenominator) {
  SeededTestRandomSource rng(4);
  EXPECT_THROW(SampleBernoulliExpMinus(rng, 1, 0), std::invalid_argument);
  EXPECT_THROW(SampleBernoulliExpMinus(rng, 0, 0), std::invalid_argument);
}

TEST(BernoulliExpMinusTest, GammaZeroIsAlwaysTrue) {
  SeededTestRandomSource rng(5);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(SampleBernoulliExpMinus(rng, 0, 1));
    ASSERT_TRUE(SampleBernoulliExpMinus(rng, 0, Pow2(120)));
  }
}

TEST(BernoulliExpMinusTest, HugeGammaIsAlmostNeverTrue) {
  // P[true] = exp(-1000): a single true in 10^4 draws has probability < 1e-430.
  SeededTestRandomSource rng(6);
  for (int i = 0; i < 10000; ++i) ASSERT_FALSE(SampleBernoulliExpMinus(rng, 1000, 1));
  for (int i = 0; i < 10000; ++i)
    ASSERT_FALSE(SampleBernoulliExpMinus(rng, 1000 * Pow2(90), Pow2(90)));
}

TEST(BernoulliExpMinusTest, FrequencyMatchesExpOfMinusGamma) {
  struct Case {
    uint128 numerator, denominator;
  };
  // gamma in {0, 0.3, 1, 2.5, 7}, with small and with 128-bit representations
  // (the integer part and the [0, 1] part take different code paths).
  const Case cases[] = {{0, 1},
                        {3, 10},
                        {1, 1},
                        {5, 2},
                        {7, 1},
                        {3 * Pow2(100), 10 * Pow2(100)},
                        {Pow2(120), Pow2(120)},
                        {5 * Pow2(100), 2 * Pow2(100)},
                        {7 * Pow2(110) + 1, Pow2(110)}};
  SeededTestRandomSource rng(7);
  const std::uint64_t n = 1000000;
  for (const Case& c : cases) {
    const long double gamma = ToLongDouble(c.numerator) / ToLongDouble(c.denominator);
    const double p = static_cast<double>(std::exp(-gamma));
    const double frequency =
        Frequency(n, [&] { return SampleBernoulliExpMinus(rng, c.numerator, c.denominator); });
    // Chernoff-Hoeffding (KL) bound: false failure probability 1e-9 (much
    // tighter than Hoeffding's +-0.0033 for p = exp(-7) ~ 0.0009).
    const auto interval = BinomialAcceptanceInterval(p, n, kFalseFailureProbability);
    EXPECT_TRUE(interval.Contains(frequency))
        << "gamma = " << static_cast<double>(gamma) << ": " << frequency << " not in ["
        << interval.low << ", " << interval.high << "]";
    if (gamma > 0) {
      // Power: a sampler off by 30% in probability would be caught.
      EXPECT_FALSE(interval.Contains(0.7 * p)) << static_cast<double>(gamma);
      EXPECT_FALSE(interval.Contains(std::min(1.3 * p, 1.0))) << static_cast<double>(gamma);
    }
  }
}

// ---------------------------------------------------------------------------
// SampleDiscreteLaplace

TEST(DiscreteLaplaceTest, RejectsInvalidScales) {
  SeededTestRandomSource rng(8);
  EXPECT_THROW(SampleDiscreteLaplace(rng, 0, 1), std::invalid_argument);
  EXPECT_THROW(SampleDiscreteLaplace(rng, 1, 0), std::invalid_argument);
  EXPECT_THROW(SampleDiscreteLaplace(rng, Pow2(96), 1), std::invalid_argument);
  EXPECT_THROW(SampleDiscreteLaplace(rng, ~uint128{0}, 1), std::invalid_argument);
}

TEST(DiscreteLaplaceTest, LargestScaleNumeratorWorks) {
  // t = 2^96 - 1, s = 1: |x| ~ 2^96. P[|x| >= 60 t] = 2 q^(60t)/(1+q) ~ e^-60:
  // false failure probability < 1e-23 over 1000 draws.
  SeededTestRandomSource rng(9);
  const int128 limit = static_cast<int128>(60 * (Pow2(96) - 1));
  bool negative_seen = false;
  bool positive_seen = false;
  for (int i = 0; i < 1000; ++i) {
    const int128 x = SampleDiscreteLaplace(rng, Pow2(96) - 1, 1);
    ASSERT_TRUE(x < limit && x > -limit);
    negative_seen = negative_seen || x < 0;
    positive_seen = positive_seen || x > 0;
  }
  // Each sign has probability ~1/2: missing one in 1000 draws ~ 2^-999.
  EXPECT_TRUE(negative_seen);
  EXPECT_TRUE(positive_seen);
}

// A scale prepared (PrepareDiscreteLaplace) is drawn from without computing
// its constants again, and stays cached while the process prepares and draws
// from up to 31 other scales after it: the query that prepared it at its
// start never pays for it on its first group (the PostgreSQL layer's
// site_plans.h). Replaced in rotation, the 32nd insertion evicted it.
TEST(DiscreteLaplaceTest, PreparedScaleIsNotComputedAgainOnTheFirstDraw) {
  SeededTestRandomSource rng(31);
  const uint128 t = 1000003;
  dp::PrepareDiscreteLaplace(t, 7);
  std::uint64_t built = dp::DiscreteLaplaceConstantsBuilt();
  SampleDiscreteLaplace(rng, t, 7);
  EXPECT_EQ(dp::DiscreteLaplaceConstantsBuilt(), built);
  for (uint128 other = 1; other <= 31; ++other) dp::PrepareDiscreteLaplace(t + other, 7);
  dp::PrepareDiscreteLaplace(t, 7);  // a query using t and a new scale starts
  dp::PrepareDiscreteLaplace(t + 100, 7);
  built = dp::DiscreteLaplaceConstantsBuilt();
  SampleDiscreteLaplace(rng, t, 7);  // its first group
  SampleDiscreteLaplace(rng, t + 100, 7);
  EXPECT_EQ(dp::DiscreteLaplaceConstantsBuilt(), built);
  // Scales the sampler refuses are left to it.
  dp::PrepareDiscreteLaplace(0, 1);
  dp::PrepareDiscreteLaplace(Pow2(96), 1);
  EXPECT_THROW(SampleDiscreteLaplace(rng, Pow2(96), 1), std::invalid_argument);
}

TEST(DiscreteLaplaceTest, HugeDenominatorGivesZero) {
  // s / t = 2^100: P[X != 0] = 2q/(1+q) with q = exp(-2^100), i.e. never.
  SeededTestRandomSource rng(10);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(SampleDiscreteLaplace(rng, 1, Pow2(100)) == 0);
}

struct LaplaceCase {
  const char* name;
  uint128 t;
  uint128 s;
  int128 bin_width;  // coarse bins for huge scales
};

// Readable test output (gtest would otherwise dump the bytes).
void PrintTo(const LaplaceCase& c, std::ostream* os) { *os << c.name; }

// (t, s) with scale t/s from ~0.3 to ~1.3e28 grid steps. s is even for the
// 2^95 case so that "twice the scale" can be sampled as (t, s/2) without
// exceeding the sampler's t < 2^96.
const LaplaceCase kLaplaceCases[] = {
    {"t1_s1", 1, 1, 1},
    {"t2_s1", 2, 1, 1},
    {"t10_s3", 10, 3, 1},
    {"t3_s10", 3, 10, 1},
    {"t2p40plus12345_s7", Pow2(40) + 12345, 7, static_cast<int128>(Pow2(36))},
    {"t2p95plus12345_s6", Pow2(95) + 12345, 6, static_cast<int128>(Pow2(91))},
};

constexpr std::uint64_t kLaplaceSamples = 200000;

class DiscreteLaplaceFitTest : public ::testing::TestWithParam<LaplaceCase> {
 protected:
  DiscreteLaplaceFitTest()
      : pmf_(GetParam().t, GetParam().s),
        binning_(ChooseBinning(pmf_, GetParam().bin_width, kLaplaceSamples)) {}

  std::string Describe(const FitResult& fit) const {
    return "chi2 = " + std::to_string(fit.statistic) +
           ", df = " + std::to_string(fit.degrees_of_freedom) +
           ", critical = " + std::to_string(fit.critical_value);
  }

  DiscreteLaplace pmf_;
  Binning binning_;
};

TEST_P(DiscreteLaplaceFitTest, MatchesTheExactPmf) {
  const LaplaceCase& c = GetParam();
  SeededTestRandomSource rng(1000);
  const FitResult fit = FitDiscreteLaplace(pmf_, binning_, kLaplaceSamples,
                                           [&] { return SampleDiscreteLaplace(rng, c.t, c.s); });
  // Pearson chi-square at alpha = 1e-9: false failure probability 1e-9
  // (every bin expects >= 50 samples, see stats_util.h).
  EXPECT_GE(fit.degrees_of_freedom, 2);
  EXPECT_LT(fit.statistic, fit.critical_value) << Describe(fit);
}

TEST_P(DiscreteLaplaceFitTest, DetectsTwiceTheScale) {
  // Power check: samples of the wrong scale 2t/s must be rejected.
  const LaplaceCase& c = GetParam();
  const uint128 alt_t = c.s % 2 == 0 ? c.t : 2 * c.t;
  const uint128 alt_s = c.s % 2 == 0 ? c.s / 2 : c.s;
  SeededTestRandomSource rng(2000);
  const FitResult fit = FitDiscreteLaplace(
      pmf_, binning_, kLaplaceSamples, [&] { return SampleDiscreteLaplace(rng, alt_t, alt_s); });
  // The expected statistic under this alternative exceeds the critical value
  // by >= 10 standard deviations, so for a random seed the detection would
  // fail only in a >10-sigma event.
  const double lambda = NonCentrality(kLaplaceSamples, fit.probabilities,
                                      binning_.Probabilities(DiscreteLaplace(alt_t, alt_s)));
  EXPECT_GE(PowerMarginInSigmas(lambda, fit.degrees_of_freedom, fit.critical_value), 10);
  EXPECT_GT(fit.statistic, fit.critical_value) << Describe(fit);
}

INSTANTIATE_TEST_SUITE_P(Scales, DiscreteLaplaceFitTest, ::testing::ValuesIn(kLaplaceCases),
                         [](const ::testing::TestParamInfo<LaplaceCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(DiscreteLaplaceTest, ChiSquareDetectsExtraZeros) {
  // Power check: a sampler whose P(0) is doubled (or, where 2 P(0) > 1, one
  // that forgets to reject "-0", giving P'(0) = 2 P(0) / (1 + P(0))) must be
  // rejected. Emulated by mixing extra zeros into correct samples. (At huge
  // scales P(0) ~ 1e-11 and no finite test can see such a change, so only
  // the small scales are used.)
  for (std::size_t i = 0; i < 4; ++i) {
    const LaplaceCase& c = kLaplaceCases[i];
    const DiscreteLaplace pmf(c.t, c.s);
    const Binning binning = ChooseBinning(pmf, c.bin_width, kLaplaceSamples);
    const double p0 = static_cast<double>(pmf.Pmf(0));
    const double mix = p0 <= 0.5 ? p0 / (1 - p0) : p0 / (1 + p0);
    const std::uint64_t mix_threshold = static_cast<std::uint64_t>(std::ldexp(mix, 53));
    SeededTestRandomSource rng(3000 + i);
    const FitResult fit = FitDiscreteLaplace(pmf, binning, kLaplaceSamples, [&]() -> int128 {
      if (rng.UniformBelow(std::uint64_t{1} << 53) < mix_threshold) return 0;
      return SampleDiscreteLaplace(rng, c.t, c.s);
    });
    std::vector<long double> alt = fit.probabilities;
    for (auto& p : alt) p *= 1 - mix;
    alt[binning.Index(0)] += mix;
    // Mean statistic >= 10 sigma above the critical value (see above).
    EXPECT_GE(PowerMarginInSigmas(NonCentrality(kLaplaceSamples, fit.probabilities, alt),
                                  fit.degrees_of_freedom, fit.critical_value),
              10)
        << c.name;
    EXPECT_GT(fit.statistic, fit.critical_value) << c.name;
  }
}

TEST(DiscreteLaplaceTest, LowBitsAreUniformAtLargeScale) {
  // At scale t/s ~ 1.6e11 the residues mod 256 are uniform up to a relative
  // deviation of about 256 s / t ~ 2e-9, which shifts the expected statistic
  // by n * 256 * (2e-9)^2 / 256 ~ 1e-12: negligible. A sampler with float
  // artefacts in its low bits (Mironov 2012) would fail. Chi-square with
  // 255 df: false failure probability 1e-9.
  SeededTestRandomSource rng(4000);
  const uint128 t = Pow2(40) + 12345;
  const std::uint64_t n = 256 * 400;
  std::vector<std::uint64_t> counts(256, 0);
  for (std::uint64_t i = 0; i < n; ++i)
    ++counts[static_cast<std::size_t>(static_cast<uint128>(SampleDiscreteLaplace(rng, t, 7)) &
                                      255)];
  const FitResult fit = ChiSquareFit(counts, std::vector<long double>(256, 1.0L / 256));
  EXPECT_LT(fit.statistic, fit.critical_value);
}

}  // namespace
