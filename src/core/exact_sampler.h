// Exact samplers built from uniformly random integers only.
//
// Source: C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
// Differential Privacy", NeurIPS 2020 (arXiv:2004.00010), Algorithms 1 and 2.
// Every probability is a rational number compared against uniform integers:
// no exp(), log() or floating point anywhere, so the output distribution is
// exactly the one stated, and there are no holes for an attacker to exploit
// (Mironov, "On significance of the least significant bits for differential
// privacy", CCS 2012).
#ifndef DP_AGG_CORE_EXACT_SAMPLER_H
#define DP_AGG_CORE_EXACT_SAMPLER_H

#include "random_source.h"

namespace dp {

// True with probability numerator/denominator (0 <= numerator <= denominator,
// denominator >= 1).
bool SampleBernoulliRational(RandomSource& rng, uint128 numerator, uint128 denominator);

// True with probability exp(-numerator/denominator), numerator >= 0,
// denominator >= 1 (CKS20 Algorithm 1).
bool SampleBernoulliExpMinus(RandomSource& rng, uint128 numerator, uint128 denominator);

// Number of trials drawn for the geometric part of the discrete Laplace
// sampler, whatever their outcome. See SampleDiscreteLaplace.
inline constexpr int kGeometricTrials = 48;

// The discrete Laplace distribution with scale t/s on the integers:
//   P[X = x] = (1 - q) / (1 + q) * q^|x|,  q = exp(-s/t),
// (CKS20 Algorithm 2), for integers t, s >= 1 and t < 2^96.
//
// Timing (Jin et al., "Are we there yet? Timing and floating-point attacks on
// differential privacy systems", IEEE S&P 2022): the geometric part, whose
// length grows with |x|, always draws kGeometricTrials Bernoulli(exp(-1))
// trials and uses the position of the first failure, so its running time does
// not depend on the magnitude drawn. Only with probability exp(-48) < 2e-21
// are more trials needed. What remains variable are the rejection steps, whose
// number is independent of |x| except for the rejection of "negative zero".
int128 SampleDiscreteLaplace(RandomSource& rng, uint128 t, uint128 s);

}  // namespace dp

#endif  // DP_AGG_CORE_EXACT_SAMPLER_H
