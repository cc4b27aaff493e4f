// Tests of the fixed-work exact samplers (exact_sampler.h):
//  (a) exactness: chi-square fits against the exact pmf at the parameters the
//      mechanisms really use, and the exact fallbacks for ambiguous
//      comparisons give the right conditional probabilities;
//  (b) fixed work, proven without timing: a counting RandomSource shows the
//      number of bytes drawn is the same for every output (outside events of
//      probability < 2^-64 per draw);
//  (c) determinism with the seeded source, independent of the constant cache.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "counting_source.h"
#include "exact_sampler.h"
#include "gaussian_mechanism.h"
#include "laplace_mechanism.h"
#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::int128;
using dp::kComparisonBytes;
using dp::RandomSource;
using dp::SampleBernoulliExpMinus;
using dp::SampleDiscreteGaussian;
using dp::SampleDiscreteLaplace;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp::internal::ConstantKind;
using dp::internal::ConstantSpec;
using dp::internal::Thresholds;
using dp_test::BinomialAcceptanceInterval;
using dp_test::ChooseBinning;
using dp_test::DiscreteLaplace;
using dp_test::FitDiscreteLaplace;
using dp_test::FitResult;
using dp_test::kFalseFailureProbability;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

// Serves `script` first, then the inner source.
class ScriptedSource final : public RandomSource {
 public:
  ScriptedSource(std::vector<unsigned char> script, RandomSource& inner)
      : script_(std::move(script)), inner_(inner) {}
  void Fill(unsigned char* out, std::size_t length) override {
    bytes_ += length;
    while (length > 0 && position_ < script_.size()) {
      *out++ = script_[position_++];
      --length;
    }
    if (length > 0) inner_.Fill(out, length);
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::vector<unsigned char> script_;
  std::size_t position_ = 0;
  RandomSource& inner_;
  std::uint64_t bytes_ = 0;
};

struct Params {
  const char* name;
  uint128 t, s;
};

// The parameters of the real mechanisms (PlanLaplace), plus extremes.
std::vector<Params> MechanismParameters() {
  std::vector<Params> out;
  const struct {
    const char* name;
    uint128 sensitivity;
    double epsilon;
  } cases[] = {{"count eps 0.05", 1, 0.05},
               {"count eps 0.1", 1, 0.1},
               {"count eps 1", 1, 1.0},
               {"float sum grid eps 0.1", uint128{1000} << 52, 0.1},
               {"float sum grid eps 1", uint128{1000} << 52, 1.0}};
  for (const auto& c : cases) {
    const dp::LaplacePlan plan = dp::PlanLaplace(c.sensitivity, c.epsilon);
    out.push_back({c.name, plan.scale_numerator, plan.scale_denominator});
  }
  out.push_back({"t1 s1", 1, 1});
  out.push_back({"t3 s10", 3, 10});
  out.push_back({"t 2^95+12345 s 6", Pow2(95) + 12345, 6});
  out.push_back({"t1 s 2^100", 1, Pow2(100)});
  return out;
}

// ---------------------------------------------------------------------------
// (a) Exactness.

TEST(FixedWorkSamplerTest, ThresholdsBracketTheConstantsTightly) {
  // The certified bounds are 192-bit: below and above differ by at most 2
  // units of 2^-80, and agree with a long double estimate of c 2^80 (an
  // independent check of the MPFR code; c down to ~1e-24 for k = 7).
  for (int k = 0; k < 8; ++k) {
    for (ConstantKind kind :
         {ConstantKind::kLogistic, ConstantKind::kTwiceLogistic, ConstantKind::kExpMinus}) {
      ConstantSpec spec;
      spec.kind = kind;
      spec.t = 7;
      spec.s = 3;
      spec.k = k;
      const Thresholds th = dp::internal::ComputeThresholds(spec);
      const long double gamma = std::ldexp(3.0L / 7.0L, k);
      const long double c = kind == ConstantKind::kExpMinus   ? std::exp(-gamma)
                            : kind == ConstantKind::kLogistic ? 1 / (1 + std::exp(gamma))
                                                              : 2 / (1 + std::exp(gamma));
      const long double scaled = std::ldexp(c, 80);
      EXPECT_LE(th.below, th.above);
      EXPECT_LE(th.above - th.below, uint128{2});
      EXPECT_GE(th.above, uint128{1});
      // floor() loses < 1 unit; long double exp is good to ~1e-17 relative.
      EXPECT_LE(std::fabs(static_cast<long double>(th.below) - scaled), 1 + 1e-15L * scaled)
          << k << " " << static_cast<int>(kind);
    }
  }
}

// P[V < c | V in [u, u + 1) 2^-80] = c 2^80 - u, computed with MPFR at 300 bits.
double ConditionalProbability(const ConstantSpec& spec, uint128 u) {
  mpfr_t c, x;
  mpfr_init2(c, 300);
  mpfr_init2(x, 300);
  mpfr_set_uj(x, static_cast<std::uint64_t>(spec.s), MPFR_RNDN);
  mpfr_mul_2si(x, x, spec.k, MPFR_RNDN);
  mpfr_div_ui(x, x, static_cast<unsigned long>(spec.t), MPFR_RNDN);  // gamma
  if (spec.kind == ConstantKind::kExpMinus) {
    mpfr_neg(x, x, MPFR_RNDN);
    mpfr_exp(c, x, MPFR_RNDN);
  } else {
    mpfr_exp(x, x, MPFR_RNDN);
    mpfr_add_ui(x, x, 1, MPFR_RNDN);
    mpfr_ui_div(c, spec.kind == ConstantKind::kLogistic ? 1 : 2, x, MPFR_RNDN);
  }
  mpfr_mul_2ui(c, c, 80, MPFR_RNDN);
  mpfr_set_uj(x, static_cast<std::uint64_t>(u >> 64), MPFR_RNDN);
  mpfr_mul_2ui(x, x, 64, MPFR_RNDN);
  mpfr_add_ui(x, x, static_cast<unsigned long>(static_cast<std::uint64_t>(u)), MPFR_RNDN);
  mpfr_sub(c, c, x, MPFR_RNDN);
  const double p = mpfr_get_d(c, MPFR_RNDN);
  mpfr_clear(c);
  mpfr_clear(x);
  return p;
}

TEST(FixedWorkSamplerTest, RefineConstantHasTheExactConditionalProbability) {
  // The ambiguous case is forced by choosing u = floor(c 2^80); the refined
  // decision must then be true with probability c 2^80 - u. Binomial (KL)
  // acceptance interval: false failure probability 1e-9 per constant.
  SeededTestRandomSource rng(501);
  const std::uint64_t n = 100000;
  const ConstantSpec specs[] = {{ConstantKind::kLogistic, 3, 1, 0},
                                {ConstantKind::kTwiceLogistic, 20, 1, 0},
                                {ConstantKind::kExpMinus, 1, 1, 2}};
  for (const ConstantSpec& spec : specs) {
    const Thresholds th = dp::internal::ComputeThresholds(spec);
    const uint128 u =
        th.below;  // floor(lo 2^80) = floor(c 2^80) unless c 2^80 is within 2^-112 of an integer
    const double p = ConditionalProbability(spec, u);
    ASSERT_GT(p, 0.0);
    ASSERT_LT(p, 1.0);
    std::uint64_t hits = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      hits += dp::internal::RefineConstant(rng, spec, u) ? 1 : 0;
    const auto interval = BinomialAcceptanceInterval(p, n, kFalseFailureProbability);
    EXPECT_TRUE(interval.Contains(static_cast<double>(hits) / n))
        << p << " vs " << static_cast<double>(hits) / n;
  }
}

TEST(FixedWorkSamplerTest, RefineRationalHasTheExactConditionalProbability) {
  // c = 1/3: 2^80 = 3 floor(2^80 / 3) + 1, so with u = floor(2^80 / 3) the
  // conditional probability of V < 1/3 is 1/3. Likewise c = 5/7 with
  // 5 2^80 mod 7 = 5 * 2^(80 mod 3) mod 7 = 5 * 4 mod 7 = 6: probability 6/7.
  SeededTestRandomSource rng(502);
  const std::uint64_t n = 200000;
  const struct {
    uint128 a, b;
    double p;
  } cases[] = {{1, 3, 1.0 / 3}, {5, 7, 6.0 / 7}};
  for (const auto& c : cases) {
    const uint128 u = (c.a << 80) / c.b;
    std::uint64_t hits = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      hits += dp::internal::RefineRational(rng, c.a >> 48, c.a << 80, 0, c.b, u) ? 1 : 0;
    const auto interval = BinomialAcceptanceInterval(c.p, n, kFalseFailureProbability);
    EXPECT_TRUE(interval.Contains(static_cast<double>(hits) / n)) << c.p;
  }
}

TEST(FixedWorkSamplerTest, DiscreteLaplaceMatchesTheExactPmfAtMechanismParameters) {
  // Pearson chi-square at alpha = 1e-9 per case (every bin expects >= 50).
  const std::uint64_t n = 200000;
  SeededTestRandomSource rng(503);
  for (const Params& p : MechanismParameters()) {
    const DiscreteLaplace pmf(p.t, p.s);
    const long double scale = dp_test::ToLongDouble(p.t) / dp_test::ToLongDouble(p.s);
    if (scale < 0.05L) continue;  // (t1 s 2^100: always 0, tested elsewhere)
    int128 width = 1;
    while (static_cast<long double>(width) * 16 < scale) width *= 2;
    const auto binning = ChooseBinning(pmf, width, n);
    const FitResult fit =
        FitDiscreteLaplace(pmf, binning, n, [&] { return SampleDiscreteLaplace(rng, p.t, p.s); });
    EXPECT_GE(fit.degrees_of_freedom, 2) << p.name;
    EXPECT_LT(fit.statistic, fit.critical_value) << p.name;
  }
}

TEST(FixedWorkSamplerTest, DiscreteLaplaceFallbackIsExercisedAndStaysValid) {
  // Force the negligible events: the tail comparison (H != 0 possible) and a
  // geometric digit read u = 0 / u = below; the draw then reads more bytes
  // and still returns a value of the right form.
  const uint128 t = 20, s = 1;
  const std::size_t n = dp::internal::DiscreteLaplaceBytes(t, s);
  const int digits = static_cast<int>((n - 1) / kComparisonBytes) - 2;
  SeededTestRandomSource inner(504);
  std::vector<unsigned char> script(n, 0x5a);
  // Tail comparison u = 0: ambiguous.
  std::memset(script.data() + kComparisonBytes * digits, 0, kComparisonBytes);
  ScriptedSource scripted(script, inner);
  const int128 x = SampleDiscreteLaplace(scripted, t, s);
  EXPECT_GT(scripted.bytes(), n);  // the fallback drew more
  EXPECT_TRUE(x > -(int128{1} << 100) && x < (int128{1} << 100));
  // A fully zero script: every digit decided "1", tail ambiguous, nonzero.
  ScriptedSource zeros(std::vector<unsigned char>(n, 0), inner);
  const int128 y = SampleDiscreteLaplace(zeros, t, s);
  EXPECT_GT(zeros.bytes(), n);
  EXPECT_GE(y, static_cast<int128>(Pow2(digits)));  // G >= 2^K - 1, positive sign
}

TEST(FixedWorkSamplerTest, BernoulliExpMinusFrequenciesAcrossTheWholePart) {
  // Whole parts 0..12 and fractions, incl. a 127-bit denominator.
  SeededTestRandomSource rng(505);
  const std::uint64_t n = 300000;
  const struct {
    uint128 num, den;
  } cases[] = {{1, 3}, {2, 1}, {7, 2}, {25, 3}, {12, 1}, {Pow2(126) + Pow2(125), Pow2(126) - 1}};
  for (const auto& c : cases) {
    const long double gamma = dp_test::ToLongDouble(c.num) / dp_test::ToLongDouble(c.den);
    const double p = static_cast<double>(std::exp(-gamma));
    std::uint64_t hits = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      hits += SampleBernoulliExpMinus(rng, c.num, c.den) ? 1 : 0;
    const auto interval = BinomialAcceptanceInterval(p, n, kFalseFailureProbability);
    EXPECT_TRUE(interval.Contains(static_cast<double>(hits) / n))
        << static_cast<double>(gamma) << ": " << static_cast<double>(hits) / n << " vs " << p;
  }
}

// ---------------------------------------------------------------------------
// (b) The work does not depend on the value drawn.

TEST(FixedWorkSamplerTest, DiscreteLaplaceDrawsTheSameBytesWhateverItReturns) {
  SeededTestRandomSource inner(506);
  dp_test::CountingSource rng(inner);
  for (const Params& p : MechanismParameters()) {
    const std::uint64_t expected = dp::internal::DiscreteLaplaceBytes(p.t, p.s);
    const long double scale = dp_test::ToLongDouble(p.t) / dp_test::ToLongDouble(p.s);
    // Bytes per draw, per |x| bucket relative to the scale.
    std::map<int, std::uint64_t> bucket_draws;
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t before = rng.bytes();
      const int128 x = SampleDiscreteLaplace(rng, p.t, p.s);
      ASSERT_EQ(rng.bytes() - before, expected) << p.name << ", x = " << static_cast<double>(x);
      const long double magnitude = x < 0 ? -dp_test::ToLongDouble(x) : dp_test::ToLongDouble(x);
      ++bucket_draws[x == 0 ? 0 : magnitude <= scale ? 1 : magnitude <= 4 * scale ? 2 : 3];
    }
    // Very different outputs were drawn with the same work (zero only where
    // it has probability > 1e-3, i.e. at small scales).
    if (scale > 0.05L) {
      EXPECT_GT(bucket_draws[1] + bucket_draws[0], 0U) << p.name;
      EXPECT_GT(bucket_draws[2], 0U) << p.name;
      EXPECT_GT(bucket_draws[3], 0U) << p.name;
    }
    if (scale < 30) {
      EXPECT_GT(bucket_draws[0], 0U) << p.name;
    }
  }
}

TEST(FixedWorkSamplerTest, BernoulliExpMinusDrawsTheSameBytesForEveryArgumentAndOutcome) {
  SeededTestRandomSource inner(507);
  dp_test::CountingSource rng(inner);
  const std::uint64_t expected = kComparisonBytes * (6 + dp::kBernoulliExpLoopTrials);
  std::uint64_t trues = 0;
  for (std::uint64_t whole = 0; whole <= 70; ++whole) {
    for (const uint128 den : {uint128{1}, uint128{3}, Pow2(100) + 1}) {
      for (int i = 0; i < 200; ++i) {
        const uint128 num = whole * den + (den - 1) * static_cast<uint128>(i % 2);
        const std::uint64_t before = rng.bytes();
        trues += SampleBernoulliExpMinus(rng, num, den) ? 1 : 0;
        ASSERT_EQ(rng.bytes() - before, expected) << static_cast<int>(whole);
      }
    }
  }
  EXPECT_GT(trues, 100U);
}

TEST(FixedWorkSamplerTest, DiscreteGaussianRoundsAllCostTheSame) {
  // Every rejection round draws one discrete Laplace proposal and one
  // fixed-work acceptance test, so the bytes of a draw are a whole number of
  // rounds of identical cost; the output only determines when to stop, and
  // in rejection sampling the number of rounds is independent of the value
  // accepted.
  SeededTestRandomSource inner(508);
  dp_test::CountingSource rng(inner);
  const dp::GaussianPlan plans[] = {dp::PlanGaussianCount(1.0, 1e-6),
                                    dp::PlanGaussian(uint128{1000} << 52, 1.0, 1e-6)};
  for (const dp::GaussianPlan& plan : plans) {
    const double sigma = std::sqrt(static_cast<double>(plan.sigma2_numerator) /
                                   static_cast<double>(plan.sigma2_denominator));
    const uint128 t = static_cast<uint128>(std::floor(sigma)) + 1;
    const std::uint64_t round = dp::internal::DiscreteLaplaceBytes(t, 1) +
                                kComparisonBytes * (6 + dp::kBernoulliExpLoopTrials);
    bool small = false, large = false;
    for (int i = 0; i < 5000; ++i) {
      const std::uint64_t before = rng.bytes();
      const int128 x = SampleDiscreteGaussian(rng, plan.sigma2_numerator, plan.sigma2_denominator);
      ASSERT_EQ((rng.bytes() - before) % round, 0U);
      const double magnitude = std::fabs(static_cast<double>(x));
      small = small || magnitude < 0.5 * sigma;
      large = large || magnitude > 2 * sigma;
    }
    EXPECT_TRUE(small);
    EXPECT_TRUE(large);
  }
}

// ---------------------------------------------------------------------------
// (c) Determinism.

TEST(FixedWorkSamplerTest, SeededDrawsAreReproducibleWhateverTheCacheHolds) {
  auto run = [](std::uint64_t seed) {
    SeededTestRandomSource rng(seed);
    std::vector<int128> out;
    for (const Params& p : MechanismParameters())
      for (int i = 0; i < 50; ++i) out.push_back(SampleDiscreteLaplace(rng, p.t, p.s));
    for (int i = 0; i < 50; ++i) out.push_back(SampleDiscreteGaussian(rng, 1000, 7));
    for (int i = 0; i < 50; ++i) out.push_back(SampleBernoulliExpMinus(rng, 3 + i, 4) ? 1 : 0);
    return out;
  };
  const std::vector<int128> first = run(509);
  // Evict the cached constants with other parameters, then repeat.
  SeededTestRandomSource other(1);
  for (uint128 t = 100; t < 120; ++t) SampleDiscreteLaplace(other, t, 3);
  const std::vector<int128> second = run(509);
  EXPECT_TRUE(first == second);
  EXPECT_FALSE(first == run(510));
}

}  // namespace
