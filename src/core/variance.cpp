#include "variance.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "parameters.h"
#include "privacy_accountant.h"
#include "private_statistics.h"

namespace dp {

namespace {

// A third of x, rounded down (so that three thirds never exceed x).
double ThirdDown(double x) {
  const double third = x / 3;
  return third * 3 > x ? std::nextafter(third, 0.0) : third;
}

uint128 WidthUnits(std::int64_t lower_units, std::int64_t upper_units) {
  return static_cast<uint128>(int128{upper_units} - int128{lower_units});
}

}  // namespace

int VarianceSquareShift(std::int64_t lower_units, std::int64_t upper_units) noexcept {
  // W^2 < 2^(2 b) for W < 2^b; the rounded squares stay below 2^62.
  const int bits = BitLength(WidthUnits(lower_units, upper_units));
  return std::max(0, 2 * bits - 62);
}

VarianceMechanisms PlanVariance(std::int64_t lower_units, std::int64_t upper_units, double epsilon,
                                double delta) {
  VarianceMechanisms plan;
  plan.square_shift = VarianceSquareShift(lower_units, upper_units);
  const uint128 width = WidthUnits(lower_units, upper_units);
  // Centred half-units lie in [-W, W]; their rounded squares in [0, W^2 >> shift].
  const uint128 squares_sensitivity = (width * width) >> plan.square_shift;
  if (delta > 0) {
    plan.gaussian = true;
    const double rho = RhoForEpsilonDelta(epsilon, delta);
    const double part = ThirdDown(rho);
    if (!(part > 0))
      throw InvalidParameter("epsilon and delta are too small for dp_variance",
                             "Ask for a larger epsilon or delta: dp_variance splits its "
                             "budget between three releases.");
    try {
      plan.count_gaussian = PlanGaussianForRho(1, part);
      plan.sum_gaussian = PlanGaussianForRho(width, part);
      plan.squares_gaussian = PlanGaussianForRho(squares_sensitivity, part);
    } catch (const InvalidParameter&) {
      throw;
    } catch (const std::invalid_argument&) {
      throw InvalidParameter("epsilon and delta need a discrete Gaussian too wide for dp_variance",
                             "Ask for a larger epsilon or delta.");
    }
    plan.rho = GaussianPlanRho(plan.count_gaussian) + GaussianPlanRho(plan.sum_gaussian) +
               GaussianPlanRho(plan.squares_gaussian);
    return plan;
  }
  const double part = ThirdDown(epsilon);
  if (!(part >= kMinEpsilon))
    throw InvalidParameter("epsilon is too small for dp_variance",
                           "Ask for an epsilon at least three times the smallest one accepted: "
                           "dp_variance splits it between three releases.");
  plan.count_laplace = PlanLaplace(1, part);
  plan.sum_laplace = PlanLaplace(width, part);
  plan.squares_laplace = PlanLaplace(squares_sensitivity, part);
  return plan;
}

double VarianceFromReleases(double noisy_count, double noisy_centred_sum, double noisy_squares,
                            double half_width) {
  const double n = std::max(1.0, noisy_count);
  const double h2 = half_width * half_width;
  const double mean = std::clamp(noisy_centred_sum / n, -half_width, half_width);
  const double mean_square = std::clamp(noisy_squares / n, 0.0, h2);
  const double variance = mean_square - mean * mean;
  // NaN (never expected: every input is finite) fails the comparison; so
  // does -0 (mean_square -0 when Q / N underflows from below): +0 for both.
  if (!(variance > 0)) return 0.0;
  return std::min(variance, h2);
}

void ValidateVarianceBounds(std::int64_t lower_units, std::int64_t upper_units, int unit_exponent) {
  const double half_width =
      std::ldexp(static_cast<double>(WidthUnits(lower_units, upper_units)), unit_exponent - 1);
  if (!std::isfinite(half_width * half_width))
    throw InvalidParameter(
        "bounds too far apart for dp_variance and dp_stddev",
        "((upper - lower) / 2)^2 must be a finite double precision number: narrow the bounds "
        "(half-width at most about 1.34e154), or rescale the values (e.g. x / 1e150).");
}

VarianceRelease ReleaseVariance(const VarianceMechanisms& plan, std::int64_t count,
                                int128 sum_units, int128 squares, std::int64_t lower_units,
                                std::int64_t upper_units, int unit_exponent, RandomSource& rng) {
  const int128 centred = CentredSumHalfUnits(count, sum_units, lower_units, upper_units);
  const int sum_exponent = unit_exponent - 1;  // half-units
  const int squares_exponent = 2 * unit_exponent - 2 + plan.square_shift;
  // Always the same three draws, in this order, whatever the data.
  GridValue c, s, q;
  double sd_q;
  if (plan.gaussian) {
    c = ReleaseGaussian(count, 0, plan.count_gaussian, rng);
    s = ReleaseGaussian(centred, sum_exponent, plan.sum_gaussian, rng);
    q = ReleaseGaussian(squares, squares_exponent, plan.squares_gaussian, rng);
    sd_q = GaussianNoiseStddev(plan.squares_gaussian, squares_exponent);
  } else {
    c = ReleaseLaplace(count, 0, plan.count_laplace, rng);
    s = ReleaseLaplace(centred, sum_exponent, plan.sum_laplace, rng);
    q = ReleaseLaplace(squares, squares_exponent, plan.squares_laplace, rng);
    sd_q = LaplaceNoiseStddev(plan.squares_laplace, squares_exponent);
  }
  const uint128 width = WidthUnits(lower_units, upper_units);
  const double half_width = std::ldexp(static_cast<double>(width), unit_exponent - 1);
  VarianceRelease release;
  const double noisy_count = ToDouble(c);
  release.noise_stddev = sd_q / std::max(1.0, noisy_count);
  if (width == 0) return release;  // lower = upper: h = 0, the answer is 0
  // Normalised by h = W 2^(unit_exponent - 1): S / h is S in half-units over
  // W, Q / h^2 is Q in squared half-units over W^2. The unit exponent cancels,
  // so neither overflows nor underflows for any bounds (in value units, Q
  // overflows to infinity beyond h ~ 1e154 and h^2 underflows to 0 below
  // h ~ 1e-162, which made every answer 0).
  const double w = static_cast<double>(width);
  const double s_over_h = ToDouble(GridValue{s.mantissa, s.exponent - sum_exponent}) / w;
  const double q_over_h2 =
      ToDouble(GridValue{q.mantissa, q.exponent - (2 * unit_exponent - 2)}) / (w * w);
  const double ratio = VarianceFromReleases(noisy_count, s_over_h, q_over_h2, 1.0);
  // ratio in [0, 1], +0 rather than -0: both products stay in [+0, h^2]
  // and [+0, h] (a product with a factor at most 1 never exceeds the other).
  release.variance = ratio * (half_width * half_width);
  release.stddev = std::sqrt(ratio) * half_width;
  return release;
}

void PrepareVarianceSampling(const VarianceMechanisms& plan) {
  if (plan.gaussian) {
    PrepareGaussian(plan.count_gaussian);
    PrepareGaussian(plan.sum_gaussian);
    PrepareGaussian(plan.squares_gaussian);
  } else {
    PrepareLaplace(plan.count_laplace);
    PrepareLaplace(plan.sum_laplace);
    PrepareLaplace(plan.squares_laplace);
  }
}

}  // namespace dp
