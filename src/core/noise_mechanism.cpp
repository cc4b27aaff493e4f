#include "noise_mechanism.h"

#include "parameters.h"
#include "privacy_accountant.h"

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

PrivacyParameters MechanismBuilder::Validate() const {
  PublicParameters parameters;
  parameters.epsilon = epsilon_;
  parameters.has_delta = delta_ != 0;
  parameters.delta = delta_;
  return ValidatePublicParameters(parameters, limits_);
}

NoiseMechanism MechanismBuilder::Calibrate(uint128 sensitivity, double epsilon, double delta) {
  NoiseMechanism mechanism;
  mechanism.epsilon_ = epsilon;
  mechanism.delta_ = delta;
  if (delta > 0) {
    mechanism.kind_ = NoiseKind::kGaussian;
    mechanism.gaussian_ = PlanGaussian(sensitivity, epsilon, delta);
  } else {
    mechanism.kind_ = NoiseKind::kLaplace;
    mechanism.laplace_ = PlanLaplace(sensitivity, epsilon);
  }
  return mechanism;
}

NoiseMechanism MechanismBuilder::Build() const {
  const PrivacyParameters effective = Validate();
  // Calibrated to the effective values; the planners round the same way, and
  // rounding is idempotent, so this is the noise the request pays for.
  return Calibrate(sensitivity_, effective.epsilon, effective.delta);
}

MeanMechanisms MechanismBuilder::BuildMean(std::int64_t lower_units,
                                           std::int64_t upper_units) const {
  const PrivacyParameters effective = Validate();
  if (effective.delta > 0) {
    // The Gaussian mean: count and centred sum calibrated jointly in zCDP
    // (rho/2 each, rho from (epsilon, delta) by Canonne-Kamath-Steinke 2020's
    // conversion), or the basic-composition halves when those are less noisy:
    // either is (epsilon, delta)-DP, the charge of the call
    // (privacy_accountant.h PlanGaussianMeanJoint).
    const GaussianMeanPlans plans =
        PlanGaussianMeanJoint(lower_units, upper_units, effective.epsilon, effective.delta);
    MeanMechanisms mean;
    for (NoiseMechanism* part : {&mean.count, &mean.centred_sum}) {
      part->kind_ = NoiseKind::kGaussian;
      // No per-part (epsilon, delta): the pair is (epsilon, delta)-DP together.
      part->epsilon_ = effective.epsilon;
      part->delta_ = effective.delta;
    }
    mean.count.gaussian_ = plans.count;
    mean.centred_sum.gaussian_ = plans.centred_sum;
    return mean;
  }
  const MeanPartBudget part = SplitMeanBudget(effective.epsilon, effective.delta);
  // Centred half-unit values 2v - (lower + upper) lie in [-(upper - lower), upper - lower].
  const uint128 width = static_cast<uint128>(int128{upper_units} - int128{lower_units});
  return MeanMechanisms{Calibrate(1, part.epsilon, part.delta),
                        Calibrate(width, part.epsilon, part.delta)};
}

void NoiseMechanism::PrepareSampling() const {
  if (kind_ == NoiseKind::kGaussian) {
    PrepareGaussian(gaussian_);
  } else {
    PrepareLaplace(laplace_);
  }
}

MeanRelease MeanMechanisms::AddNoise(std::int64_t count_value, int128 sum_units,
                                     std::int64_t lower_units, std::int64_t upper_units,
                                     int unit_exponent, RandomSource& rng) const {
  const int128 centred = CentredSumHalfUnits(count_value, sum_units, lower_units, upper_units);
  // The count first, then the centred sum: the order ReleaseMeanParts draws in.
  const GridValue noisy_count = count.AddNoise(count_value, 0, rng);
  const GridValue noisy_centred_sum = centred_sum.AddNoise(centred, unit_exponent - 1, rng);
  return MeanFromReleases(noisy_count, noisy_centred_sum, lower_units, upper_units, unit_exponent);
}

MeanNoiseIntervals MeanMechanisms::Intervals(int unit_exponent, double confidence) const {
  if (count.kind() == NoiseKind::kGaussian)
    return GaussianMeanNoiseIntervals(
        GaussianMeanPlans{count.gaussian_plan(), centred_sum.gaussian_plan()}, unit_exponent,
        confidence);
  return LaplaceMeanNoiseIntervals(MeanPlans{count.laplace_plan(), centred_sum.laplace_plan()},
                                   unit_exponent, confidence);
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
