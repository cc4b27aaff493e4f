#include "randomized_response.h"

#include <cmath>
#include <limits>
#include <string>

#include "exact_sampler.h"
#include "laplace_mechanism.h"
#include "parameters.h"

namespace dp {

void ValidateRandomizedResponseEpsilon(double epsilon) {
  if (!std::isfinite(epsilon) || !(epsilon >= kMinEpsilon) ||
      epsilon > kMaxRandomizedResponseEpsilon)
    throw InvalidParameter(
        "epsilon of randomized response must lie between 2^-50 and 64",
        "Pass the epsilon the answers were (or are to be) randomized with, e.g. 1.0 "
        "(the answer is kept with probability e/(1+e), about 0.73).");
}

double TruthProbability(double epsilon) {
  const double effective = EffectivePrivacyParameter(epsilon);
  return 1.0 / (1.0 + std::exp(-effective));
}

bool RandomizedResponse(bool answer, double epsilon, RandomSource& rng) {
  ValidateRandomizedResponseEpsilon(epsilon);
  const DyadicEpsilon eps = RoundEpsilonDown(epsilon);
  // exp(-epsilon') = exp(-numerator / denominator), exactly.
  uint128 numerator = eps.mantissa;
  uint128 denominator = 1;
  if (eps.exponent >= 0)
    numerator <<= eps.exponent;  // epsilon <= 64: at most 2^24 * 2^7
  else
    denominator <<= -eps.exponent;  // epsilon >= 2^-50: at most 2^74
  // Keep with probability 1 / (1 + r), r = exp(-epsilon'): each round keeps
  // with 1/2, else flips with probability r, else repeats; so
  // P(keep) = 1/2 + (1 - r)/2 P(keep), i.e. 1 / (1 + r). The number of
  // rounds does not depend on the answer.
  for (;;) {
    if (rng.FairBit()) return answer;
    if (SampleBernoulliExpMinus(rng, numerator, denominator)) return !answer;
  }
}

ProportionEstimate EstimateProportion(std::int64_t yes, std::int64_t n, double epsilon) {
  ValidateRandomizedResponseEpsilon(epsilon);
  const double p = TruthProbability(epsilon);
  const double q = 1 - p;
  ProportionEstimate result;
  if (n <= 0) {
    result.estimate = 0.5;
    result.standard_error = std::numeric_limits<double>::infinity();
    return result;
  }
  const double observed = static_cast<double>(yes) / static_cast<double>(n);
  result.estimate = (observed - q) / (p - q);
  result.standard_error = std::sqrt(observed * (1 - observed) / static_cast<double>(n)) / (p - q);
  return result;
}

}  // namespace dp
