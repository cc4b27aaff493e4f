// Exact samplers built from uniformly random bits only, doing a fixed amount
// of work whatever value they return.
//
// Exactness. Every decision is a comparison of a uniform real V in [0, 1)
// with a probability c, V < c, and is decided exactly: either c is a rational
// compared in integer arithmetic, or c is one of the transcendental constants
// below, of which we hold certified bounds lo <= c <= hi computed with MPFR
// under directed rounding (correctly rounded exp/div, so the bounds are
// rigorous, not estimates). No floating-point value ever decides an outcome.
//
// Fixed work (timing attacks: Jin, McMurtry, Rubinstein, Ohrimenko, "Are we
// there yet? Timing and floating-point attacks on differential privacy
// systems", IEEE S&P 2022). V is read as kComparisonBits = 80 uniform bits u,
// V in [u, u+1) 2^-80. The comparison is settled by u alone unless the
// interval [u, u+1) 2^-80 straddles c, which has probability <= 2 * 2^-80
// per comparison (the certified bounds are far narrower than 2^-80). Only in
// that event ("ambiguous") are more random bits drawn and c evaluated to
// more precision, until the comparison is settled (exactly; it terminates
// with probability 1). Each sampler below draws all of its randomness in one
// RandomSource::Fill of a length fixed by its parameters, and computes its
// result from those bytes with the same sequence of operations whatever they
// are, except on events of probability <= 2^-64 per draw (stated at each
// sampler), where an exact fallback draws more.
//
// Sources: C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
// Differential Privacy", NeurIPS 2020 (arXiv:2004.00010), Algorithms 1-3;
// the binary decomposition of a geometric variable (its bits are independent;
// e.g. Devroye, "Non-Uniform Random Variate Generation", 1986, and Google's
// differential-privacy library, which samples the geometric bit by bit).
#ifndef DP_AGG_CORE_EXACT_SAMPLER_H
#define DP_AGG_CORE_EXACT_SAMPLER_H

#include <cstddef>
#include <cstdint>

#include "random_source.h"

namespace dp {

// Uniform bits per comparison. 80 bits make an ambiguous comparison (more
// work) have probability <= 2^-79; a draw makes at most ~110 comparisons.
inline constexpr int kComparisonBits = 80;
inline constexpr std::size_t kComparisonBytes = kComparisonBits / 8;

// Padding of the CKS20 Algorithm 1 loop for Bernoulli(exp(-f)), f in [0, 1]:
// the loop runs past this many trials with probability f^M / M! <=
// 1 / 21! < 2^-65.
inline constexpr int kBernoulliExpLoopTrials = 21;

// Bernoulli(exp(-g)) for g >= 64 is split as exp(-63) exp(-(g - 63)): the
// second factor is sampled (with extra work) only after the first succeeded,
// probability exp(-63) < 2^-90.
inline constexpr int kMaxFixedWorkWholePart = 63;

// True with probability numerator/denominator (0 <= numerator <= denominator,
// denominator >= 1). Draws kComparisonBytes (more with probability <= 2^-79).
bool SampleBernoulliRational(RandomSource& rng, uint128 numerator, uint128 denominator);

// True with probability exp(-numerator/denominator), numerator >= 0,
// denominator >= 1. Fixed work: 6 + kBernoulliExpLoopTrials comparisons,
// except with probability < 2^-64 (the CKS loop exceeding its padding, the
// whole part exceeding kMaxFixedWorkWholePart after exp(-63) succeeded, or
// an ambiguous comparison). The 128-bit division numerator / denominator is
// the only arithmetic whose duration may depend on the arguments.
bool SampleBernoulliExpMinus(RandomSource& rng, uint128 numerator, uint128 denominator);

// The discrete Laplace distribution with scale t/s on the integers:
//   P[X = x] = (1 - q) / (1 + q) * q^|x|,  q = exp(-s/t),
// for integers t, s >= 1 and t < 2^96.
//
// X = N * S * (1 + G): N ~ Bernoulli(2q / (1 + q)) (X != 0), S a fair sign,
// G ~ Geometric(q) (P[G = g] = (1 - q) q^g), all independent: then
// P[X = +-m] = q/(1+q) (1-q) q^(m-1) = (1-q)/(1+q) q^m for m >= 1, and
// P[X = 0] = (1-q)/(1+q). No rejection step.
// G's binary digits are independent, digit k being 1 with probability
// q^(2^k) / (1 + q^(2^k)) (P[G = g] is proportional to the product over k
// of q^(b_k 2^k)); G is drawn as its K lowest digits, K the least with
// q^(2^K) <= 2^-80, plus 2^K H, H ~ Geometric(q^(2^K)) independent of them,
// where H != 0 only with probability q^(2^K) <= 2^-80.
// Work: exactly K + 2 comparisons and kComparisonBytes * (K + 2) + 1 random
// bytes (K depends on t/s only; K ~ log2(t/s) + 6), except with probability
// <= (K + 2) 2^-79 + 2^-80 < 2^-72 (an ambiguous comparison or H != 0).
// The first draw with new (t, s) computes and caches the constants
// (~0.1 ms, depending only on the public t and s).
int128 SampleDiscreteLaplace(RandomSource& rng, uint128 t, uint128 s);

// Computes and caches what the first draw with (t, s) would (the constants
// above, and the process's exp(-2^j) table): a call site does this when its
// query starts, so that its first group does not pay ~0.1-0.4 ms that a
// query without groups never pays (a timing channel: site_plans.h in the
// PostgreSQL layer). Scales SampleDiscreteLaplace refuses are left to it.
void PrepareDiscreteLaplace(uint128 t, uint128 s);

// How many times this process has computed the constants of a (t, s) (for
// tests: the PostgreSQL layer counts those computed while a query runs).
std::uint64_t DiscreteLaplaceConstantsBuilt() noexcept;

namespace internal {

// The transcendental constants used above, gamma = 2^k s / t:
enum class ConstantKind {
  kLogistic,  // 1 / (1 + exp(gamma))   (a geometric digit)
  kTwiceLogistic,  // 2 / (1 + exp(gamma))   (P[discrete Laplace != 0])
  kExpMinus,  // exp(-gamma)
};
struct ConstantSpec {
  ConstantKind kind = ConstantKind::kExpMinus;
  uint128 t = 1;
  uint128 s = 1;
  int k = 0;
};

// Thresholds for 80-bit comparisons: V < c is true if u < below, false if
// u >= above, ambiguous otherwise (below <= u < above).
struct Thresholds {
  uint128 below = 0;  // floor(lo 2^80)
  uint128 above = 0;  // min(ceil(hi 2^80), 2^80)
};
Thresholds ComputeThresholds(const ConstantSpec& spec);

// Settles an ambiguous comparison exactly: V < c for V uniform in
// [u, u + 1) 2^-80, drawing further bits of V from rng.
bool RefineConstant(RandomSource& rng, const ConstantSpec& spec, uint128 u);

// Settles V < a / b exactly for V uniform in [u, u + 1) 2^-80, where the
// comparison is ambiguous: u b < a 2^80 < (u + 1) b. Needs b < 2^133, a <= b.
// a and b are given as (a_high, a_low) 256-bit pairs.
bool RefineRational(RandomSource& rng, uint128 a_high, uint128 a_low, uint128 b_high, uint128 b_low,
                    uint128 u);

// Bernoulli(exp(-(whole + numerator / denominator))) for whole <= 63 and
// numerator <= denominator, denominator >= 1, with the fixed work described
// at SampleBernoulliExpMinus. The Gaussian sampler's acceptance step.
bool SampleBernoulliExpMinusSmall(RandomSource& rng, unsigned whole, uint128 numerator,
                                  uint128 denominator);

// Random bytes drawn by SampleDiscreteLaplace(t, s) outside the negligible
// fallback events.
std::size_t DiscreteLaplaceBytes(uint128 t, uint128 s);

}  // namespace internal

}  // namespace dp

#endif  // DP_AGG_CORE_EXACT_SAMPLER_H
