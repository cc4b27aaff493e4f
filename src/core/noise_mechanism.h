// One interface for the additive noise mechanisms (Laplace and discrete
// Gaussian), and one place where the public parameters of a private
// aggregate are validated.
//
// Modelled on the idea of Google's differential-privacy library
// (cc/algorithms/numerical-mechanisms.h: a NumericalMechanism built by a
// Builder that checks epsilon, delta and sensitivity once, in Build()); the
// code is our own. Two differences, both for the PostgreSQL layer:
//  * NoiseMechanism is a trivially destructible value, not a class hierarchy
//    behind a unique_ptr: final functions keep it in fn_extra, across calls
//    that may longjmp (a PostgreSQL ERROR), where no destructor may be owed.
//  * Validation throws InvalidParameter (parameters.h), which CallCore turns
//    into SQLSTATE 22023 with the hint.
#ifndef DP_AGG_CORE_NOISE_MECHANISM_H
#define DP_AGG_CORE_NOISE_MECHANISM_H

#include <cstdint>
#include <limits>
#include <type_traits>

#include "confidence.h"
#include "gaussian_mechanism.h"
#include "grid_value.h"
#include "laplace_mechanism.h"
#include "random_source.h"

namespace dp {

// Administrative caps on what a query may ask for (dp_agg.max_epsilon,
// dp_agg.max_delta). The defaults cap nothing beyond the mechanisms' own
// domain: used where the parameters were validated against the caps before.
struct PrivacyLimits {
  double max_epsilon = std::numeric_limits<double>::infinity();
  double max_delta = 1.0;
};

// The privacy parameters a mechanism is calibrated to: the requests rounded
// down to 24 significant bits (EffectivePrivacyParameter). delta == 0 means
// pure epsilon-DP (Laplace).
struct PrivacyParameters {
  double epsilon = 0;
  double delta = 0;
};

// Every public parameter a private aggregate call may have, as the query
// gave it. The has_* flags say which ones the aggregate takes.
struct PublicParameters {
  double epsilon = 0;
  bool has_delta = false;  // the (epsilon, delta) variant: delta must lie in (0, 1)
  double delta = 0;
  bool has_bounds = false;
  bool integer_bounds = false;  // compare lower_integer/upper_integer, exactly
  double lower = 0, upper = 0;
  std::int64_t lower_integer = 0, upper_integer = 0;
  bool has_confidence = false;
  double confidence = 0;
  bool has_fraction = false;
  double fraction = 0;
};

// The one validation path for the public parameters of every private
// aggregate (and of the margin functions): epsilon, delta, bounds,
// confidence, fraction, in this order, each refused with InvalidParameter.
// Reads only the query's values, never data. Returns the effective privacy
// parameters.
PrivacyParameters ValidatePublicParameters(const PublicParameters& parameters,
                                           const PrivacyLimits& limits);

enum class NoiseKind : std::uint8_t { kLaplace, kGaussian };

// Additive noise for a statistic of given sensitivity, on a binary grid,
// sampled exactly. Built only by MechanismBuilder.
class NoiseMechanism {
 public:
  NoiseMechanism() = default;  // an unusable placeholder (for caches)

  NoiseKind kind() const noexcept { return kind_; }
  // The effective parameters the noise is calibrated to.
  double epsilon() const noexcept { return epsilon_; }
  double delta() const noexcept { return delta_; }

  // `value` (in units of 2^unit_exponent) plus noise; on the mechanism's grid.
  GridValue AddNoise(int128 value, int unit_exponent, RandomSource& rng) const;
  // Computes and caches what AddNoise's first draw would (the sampler's
  // constants), so that the first group pays no more than the others.
  void PrepareSampling() const;
  // The noise's quantile interval at `confidence` (confidence.h), which must
  // already be valid (ValidatePublicParameters).
  NoiseInterval Interval(int unit_exponent, double confidence) const;
  // Standard deviation of the noise, in value units.
  double NoiseStddev(int unit_exponent) const;

  const LaplacePlan& laplace_plan() const noexcept { return laplace_; }
  const GaussianPlan& gaussian_plan() const noexcept { return gaussian_; }

 private:
  friend class MechanismBuilder;
  NoiseKind kind_ = NoiseKind::kLaplace;
  double epsilon_ = 0;
  double delta_ = 0;
  LaplacePlan laplace_;
  GaussianPlan gaussian_;
};
static_assert(std::is_trivially_destructible_v<NoiseMechanism>,
              "NoiseMechanism lives in fn_extra across PostgreSQL calls that may raise");

// The bounded mean (private_statistics.h): a noisy count and a noisy sum of
// values re-centred on the midpoint, in half-units, each a NoiseMechanism of
// the same kind. Laplace: each calibrated to the part of the budget
// SplitMeanBudget gives it. Gaussian: calibrated jointly in zCDP
// (PlanGaussianMeanJoint); both parts then report the whole (epsilon, delta).
// Built only by MechanismBuilder::BuildMean.
struct MeanMechanisms {
  NoiseMechanism count;  // sensitivity 1
  NoiseMechanism centred_sum;  // sensitivity upper - lower half-units

  // sum_units: the exact sum of the `count` clamped values, in units.
  // Both parts' NoiseMechanism::PrepareSampling.
  void PrepareSampling() const {
    count.PrepareSampling();
    centred_sum.PrepareSampling();
  }
  MeanRelease AddNoise(std::int64_t count_value, int128 sum_units, std::int64_t lower_units,
                       std::int64_t upper_units, int unit_exponent, RandomSource& rng) const;
  // The two noise intervals behind the mean's interval, the confidence split
  // evenly between them (confidence.h); confidence must already be valid.
  MeanNoiseIntervals Intervals(int unit_exponent, double confidence) const;
};
static_assert(std::is_trivially_destructible_v<MeanMechanisms>,
              "MeanMechanisms lives in fn_extra across PostgreSQL calls that may raise");

// Collects epsilon, delta (0 or unset: Laplace; > 0: discrete Gaussian),
// the caps and the sensitivity; Build() validates them once and calibrates.
class MechanismBuilder {
 public:
  MechanismBuilder& SetEpsilon(double epsilon) noexcept {
    epsilon_ = epsilon;
    return *this;
  }
  MechanismBuilder& SetDelta(double delta) noexcept {
    delta_ = delta;
    return *this;
  }
  MechanismBuilder& SetLimits(const PrivacyLimits& limits) noexcept {
    limits_ = limits;
    return *this;
  }
  // The largest change of the statistic between neighbouring datasets, in
  // units of the statistic (1 for a count; SumSensitivity for a sum).
  MechanismBuilder& SetSensitivityUnits(uint128 sensitivity) noexcept {
    sensitivity_ = sensitivity;
    return *this;
  }

  // Throws InvalidParameter for a parameter the query chose badly, also
  // when epsilon and delta together need a discrete Gaussian too wide for
  // the sampler.
  NoiseMechanism Build() const;
  // The mean's two mechanisms for bounds [lower_units, upper_units]: epsilon
  // and delta are validated once, as for Build(), then split by
  // SplitMeanBudget (Laplace) or calibrated jointly by PlanGaussianMeanJoint
  // (with delta); the sensitivity set above is not used.
  MeanMechanisms BuildMean(std::int64_t lower_units, std::int64_t upper_units) const;

 private:
  PrivacyParameters Validate() const;
  // Calibrates without validating: the whole budget after Validate(), or a
  // mean's part, which may lie below the smallest epsilon a query may ask for.
  static NoiseMechanism Calibrate(uint128 sensitivity, double epsilon, double delta);

  double epsilon_ = 0;
  double delta_ = 0;
  PrivacyLimits limits_;
  uint128 sensitivity_ = 1;
};

}  // namespace dp

#endif  // DP_AGG_CORE_NOISE_MECHANISM_H
