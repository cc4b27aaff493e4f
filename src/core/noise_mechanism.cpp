#include "noise_mechanism.h"

#include "parameters.h"

namespace dp {

PrivacyParameters ValidatePublicParameters(const PublicParameters& parameters,
                                           const PrivacyLimits& limits) {
  ValidateEpsilon(parameters.epsilon, limits.max_epsilon);
  if (parameters.has_delta) {
    ValidateDelta(parameters.delta);
    ValidateDeltaAtMost(parameters.delta, limits.max_delta);
  }
  if (parameters.has_bounds) {
    if (parameters.integer_bounds)
      ValidateBounds(parameters.lower_integer, parameters.upper_integer);
    else
      ValidateBounds(parameters.lower, parameters.upper);
  }
  if (parameters.has_confidence) ValidateConfidence(parameters.confidence);
  if (parameters.has_fraction) ValidateFraction(parameters.fraction);
  PrivacyParameters effective;
  effective.epsilon = EffectivePrivacyParameter(parameters.epsilon);
  effective.delta = parameters.has_delta ? EffectivePrivacyParameter(parameters.delta) : 0;
  return effective;
}

NoiseMechanism MechanismBuilder::Build() const {
  PublicParameters parameters;
  parameters.epsilon = epsilon_;
  parameters.has_delta = delta_ != 0;
  parameters.delta = delta_;
  const PrivacyParameters effective = ValidatePublicParameters(parameters, limits_);
  NoiseMechanism mechanism;
  mechanism.epsilon_ = effective.epsilon;
  mechanism.delta_ = effective.delta;
  // Calibrated to the effective values; the planners round the same way, and
  // rounding is idempotent, so this is the noise the request pays for.
  if (effective.delta > 0) {
    mechanism.kind_ = NoiseKind::kGaussian;
    mechanism.gaussian_ = PlanGaussian(sensitivity_, effective.epsilon, effective.delta);
  } else {
    mechanism.kind_ = NoiseKind::kLaplace;
    mechanism.laplace_ = PlanLaplace(sensitivity_, effective.epsilon);
  }
  return mechanism;
}

GridValue NoiseMechanism::AddNoise(int128 value, int unit_exponent, RandomSource& rng) const {
  return kind_ == NoiseKind::kGaussian ? ReleaseGaussian(value, unit_exponent, gaussian_, rng)
                                       : ReleaseLaplace(value, unit_exponent, laplace_, rng);
}

NoiseInterval NoiseMechanism::Interval(int unit_exponent, double confidence) const {
  return kind_ == NoiseKind::kGaussian ? GaussianNoiseInterval(gaussian_, unit_exponent, confidence)
                                       : LaplaceNoiseInterval(laplace_, unit_exponent, confidence);
}

double NoiseMechanism::NoiseStddev(int unit_exponent) const {
  return kind_ == NoiseKind::kGaussian ? GaussianNoiseStddev(gaussian_, unit_exponent)
                                       : LaplaceNoiseStddev(laplace_, unit_exponent);
}

}  // namespace dp
