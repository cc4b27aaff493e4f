#include "laplace_mechanism.h"

#include <cmath>
#include <stdexcept>

#include "exact_sampler.h"

namespace dp {

DyadicEpsilon RoundEpsilonDown(double epsilon) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    throw std::invalid_argument("epsilon must be finite and positive");
  int exponent = 0;
  const double fraction = std::frexp(epsilon, &exponent);  // epsilon = fraction * 2^exponent
  DyadicEpsilon result;
  // fraction * 2^24 is exact; floor rounds down.
  result.mantissa = static_cast<std::uint64_t>(std::floor(std::ldexp(fraction, 24)));
  result.exponent = exponent - 24;
  return result;
}

double EffectivePrivacyParameter(double requested) {
  const DyadicEpsilon rounded = RoundEpsilonDown(requested);
  return std::ldexp(static_cast<double>(rounded.mantissa), rounded.exponent);
}

namespace {

// Is a <= m * 2^shift ?  (a, m >= 0, any shift)
bool AtMostScaled(uint128 a, std::uint64_t m, int shift) {
  if (m == 0) return a == 0;
  if (shift >= 0) {
    // m * 2^shift >= 2^128 > a whenever the product would not fit.
    if (shift >= 128 || uint128{m} > (~uint128{0} >> shift)) return true;
    return a <= (uint128{m} << shift);
  }
  const int down = -shift;
  if (down >= 64) return a == 0;  // m * 2^shift < 1, and a is an integer
  // a <= m / 2^down  <=>  a <= floor(m / 2^down)  (a integer)
  return a <= (uint128{m} >> down);
}

}  // namespace

LaplacePlan PlanLaplace(uint128 sensitivity_units, double epsilon) {
  const DyadicEpsilon eps = RoundEpsilonDown(epsilon);
  LaplacePlan plan;
  if (sensitivity_units == 0) return plan;  // the statistic is constant: no noise needed
  // Smallest grid R = 2^shift with ceil(D / R) / eps <= 2^40, i.e. the finest
  // grid that keeps the noise within 2^40 grid steps. For counts and integer
  // sums with ordinary epsilons that is R = 1: the exact integer statistic.
  int shift = 0;
  while (!AtMostScaled(CeilShift(sensitivity_units, shift), eps.mantissa,
                       eps.exponent + kGridBitsBelowScale) &&
         CeilShift(sensitivity_units, shift) > 1) {
    ++shift;
  }
  plan.grid_shift = shift;
  plan.sensitivity = CeilShift(sensitivity_units, shift);
  // scale = D / (m 2^e) = (D 2^-e) / m for e <= 0, D / (m 2^e) otherwise.
  if (eps.exponent <= 0) {
    const int up = -eps.exponent;
    if (up >= 96 || (plan.sensitivity >> (96 - up)) != 0)
      throw std::invalid_argument("epsilon too small for an exact noise scale");
    plan.scale_numerator = plan.sensitivity << up;
    plan.scale_denominator = eps.mantissa;
  } else {
    if (eps.exponent >= 64) throw std::invalid_argument("epsilon too large");
    plan.scale_numerator = plan.sensitivity;
    plan.scale_denominator = uint128{eps.mantissa} << eps.exponent;
  }
  return plan;
}

void PrepareLaplace(const LaplacePlan& plan) {
  if (plan.sensitivity != 0) PrepareDiscreteLaplace(plan.scale_numerator, plan.scale_denominator);
}

GridValue ReleaseLaplace(int128 value, int unit_exponent, const LaplacePlan& plan,
                         RandomSource& rng) {
  GridValue result;
  result.exponent = unit_exponent + plan.grid_shift;
  const int128 rounded = RoundToGrid(value, plan.grid_shift);
  if (plan.sensitivity == 0) {
    result.mantissa = rounded;
    return result;
  }
  result.mantissa =
      rounded + SampleDiscreteLaplace(rng, plan.scale_numerator, plan.scale_denominator);
  return result;
}

double LaplaceNoiseStddev(const LaplacePlan& plan, int unit_exponent) {
  if (plan.sensitivity == 0) return 0.0;
  const double scale =
      static_cast<double>(plan.scale_numerator) / static_cast<double>(plan.scale_denominator);
  const double q = std::exp(-1.0 / scale);
  // 1 - q computed as -expm1(-1/scale): accurate even when q is within 2^-40 of 1.
  const double steps = std::sqrt(2.0 * q) / -std::expm1(-1.0 / scale);
  return std::ldexp(steps, unit_exponent + plan.grid_shift);
}

}  // namespace dp
