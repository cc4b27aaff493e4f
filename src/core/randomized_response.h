// Randomized response (Warner 1965), the local model of differential
// privacy: each respondent's yes/no answer is reported truthfully with
// probability p = e^epsilon / (1 + e^epsilon) and flipped otherwise, which is
// epsilon-DP for that respondent's answer whatever anyone later does with the
// stored answer. The proportion of true answers is then estimated from the
// randomized ones without bias:
//   estimate = (observed - q) / (p - q),  q = 1 - p,
// with standard error sqrt(observed (1 - observed) / n) / (p - q) (the
// binomial variance of the observed rate, plugged in).
//
// Exactness: the truthful branch is drawn exactly with probability
// 1 / (1 + e^-epsilon') from uniform random bits (exact_sampler.h), epsilon'
// being epsilon rounded down to 24 significant bits like every epsilon in
// dp_agg (laplace_mechanism.h EffectivePrivacyParameter): never more truthful
// than asked for. Work per call is independent of the answer.
#ifndef DP_AGG_CORE_RANDOMIZED_RESPONSE_H
#define DP_AGG_CORE_RANDOMIZED_RESPONSE_H

#include <cstdint>

#include "random_source.h"

namespace dp {

// Above this epsilon randomized response is the truth except with
// probability below 2^-92: refused as meaningless (and to keep the exact
// arithmetic in range).
inline constexpr double kMaxRandomizedResponseEpsilon = 64;

// Throws InvalidParameter unless epsilon is finite, at least kMinEpsilon and
// at most kMaxRandomizedResponseEpsilon.
void ValidateRandomizedResponseEpsilon(double epsilon);

// The probability that an answer is reported truthfully at (effective)
// epsilon: e^epsilon / (1 + e^epsilon), in double (for estimates only; the
// sampler never uses it).
double TruthProbability(double epsilon);

// `answer`, kept with probability e^epsilon' / (1 + e^epsilon'), else flipped.
bool RandomizedResponse(bool answer, double epsilon, RandomSource& rng);

struct ProportionEstimate {
  double estimate = 0;  // unbiased; may lie outside [0, 1] for small n
  double standard_error = 0;
};

// From n randomized answers of which `yes` are true (n may be 0: estimate
// 0.5, standard error infinity).
ProportionEstimate EstimateProportion(std::int64_t yes, std::int64_t n, double epsilon);

}  // namespace dp

#endif  // DP_AGG_CORE_RANDOMIZED_RESPONSE_H
