#include "exact_sampler.h"

#include <stdexcept>

namespace dp {

bool SampleBernoulliRational(RandomSource& rng, uint128 numerator, uint128 denominator) {
  if (denominator == 0 || numerator > denominator)
    throw std::invalid_argument("Bernoulli probability must lie in [0, 1]");
  return rng.UniformBelow128(denominator) < numerator;
}

bool SampleBernoulliExpMinus(RandomSource& rng, uint128 numerator, uint128 denominator) {
  if (denominator == 0) throw std::invalid_argument("Bernoulli(exp(-x)): zero denominator");
  if (numerator > denominator) {
    // exp(-g) = exp(-1)^floor(g) * exp(-(g - floor(g))): one exp(-1) trial
    // per whole unit, then the fractional part.
    for (uint128 whole = numerator / denominator; whole > 0; --whole) {
      if (!SampleBernoulliExpMinus(rng, 1, 1)) return false;
    }
    return SampleBernoulliExpMinus(rng, numerator % denominator, denominator);
  }
  // For g = numerator/denominator in [0, 1]: draw A_k ~ Bernoulli(g / k) for
  // k = 1, 2, ... until the first failure at index K; P[K odd] = exp(-g)
  // (CKS20 Algorithm 1). Bernoulli(g/k) is the conjunction of the independent
  // exact trials Bernoulli(g) and Bernoulli(1/k).
  if (numerator == 0) return true;
  std::uint64_t k = 1;
  for (;;) {
    const bool success =
        SampleBernoulliRational(rng, numerator, denominator) && rng.UniformBelow(k) == 0;
    if (!success) break;
    ++k;
  }
  return (k & 1U) == 1U;
}

namespace {
// Draws V ~ Geometric with P[V = v] = (1 - 1/e) e^-v as the number of
// Bernoulli(exp(-1)) successes before the first failure, always drawing
// kGeometricTrials trials so that the work done does not reveal V.
std::uint64_t SampleGeometricExpMinusOne(RandomSource& rng) {
  std::uint64_t first_failure = 0;
  bool failed = false;
  for (;;) {
    for (int trial = 0; trial < kGeometricTrials; ++trial) {
      const bool success = SampleBernoulliExpMinus(rng, 1, 1);
      if (!failed) {
        if (success) {
          ++first_failure;
        } else {
          failed = true;
        }
      }
    }
    if (failed) return first_failure;
  }
}
}  // namespace

int128 SampleDiscreteLaplace(RandomSource& rng, uint128 t, uint128 s) {
  if (t == 0 || s == 0) throw std::invalid_argument("discrete Laplace: scale must be positive");
  if ((t >> 96) != 0) throw std::invalid_argument("discrete Laplace: scale numerator too large");
  for (;;) {
    const uint128 u = rng.UniformBelow128(t);
    if (!SampleBernoulliExpMinus(rng, u, t)) continue;
    const uint128 v = SampleGeometricExpMinusOne(rng);
    // X = U + t V is geometric with P[X = x] proportional to exp(-x / t);
    // Y = floor(X / s) is geometric with parameter exp(-s / t).
    const uint128 x = u + t * v;
    const uint128 y = x / s;
    const bool negative = rng.FairBit();
    if (negative && y == 0) continue;  // reject "-0" so that 0 is not counted twice
    return negative ? -static_cast<int128>(y) : static_cast<int128>(y);
  }
}

}  // namespace dp
