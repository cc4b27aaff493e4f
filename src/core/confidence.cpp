#include "confidence.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "parameters.h"

namespace dp {

namespace {

using LD = long double;

// The tail must be at most miss * (1 - 2^-slack_bits): see confidence.h.
LD LogMissBudget(double miss, int slack_bits) {
  if (!std::isfinite(miss) || !(miss > 0) || !(miss < 1))
    throw std::invalid_argument("miss probability must lie strictly between 0 and 1");
  return std::log(static_cast<LD>(miss)) + std::log1p(-std::ldexp(1.0L, -slack_bits));
}
// The closed-form Laplace tail is evaluated to ~1e-17 relative (an error of
// a few long double ulps in its exponent); the summed Gaussian tail to
// ~1e-14.
constexpr int kLaplaceSlackBits = 56;
constexpr int kGaussianSlackBits = 40;

// 1 - confidence, rounded down (exact for confidence >= 1/2, Sterbenz).
double MissOf(double confidence) {
  ValidateConfidence(confidence);
  const double miss = 1.0 - confidence;
  return confidence >= 0.5 ? miss : std::nextafter(miss, 0.0);
}

LD ToLongDouble(const GridValue& value) {
  return std::ldexp(static_cast<LD>(value.mantissa), value.exponent);
}

// Rounds a positive grid value up to a double.
double RoundUpToDouble(const GridValue& value) {
  const double nearest = ToDouble(value);
  const uint128 magnitude = static_cast<uint128>(value.mantissa);
  if (BitLength(magnitude) <= 53 && std::isfinite(nearest) && nearest >= DBL_MIN)
    return nearest;  // 53-bit mantissa in the normal range: ToDouble is exact
  return std::nextafter(nearest, HUGE_VAL);
}

NoiseInterval MakeInterval(uint128 quantile, int grid_exponent, bool rounded, double stddev) {
  NoiseInterval interval;
  interval.quantile_steps = quantile;
  if (rounded) {
    // k R + R/2 = (2k + 1) R/2. k < 2^100 in practice, so 2k + 1 fits.
    interval.half_width = GridValue{static_cast<int128>(2 * quantile + 1), grid_exponent - 1};
  } else {
    interval.half_width = GridValue{static_cast<int128>(quantile), grid_exponent};
  }
  interval.half_width_value =
      interval.half_width.mantissa == 0 ? 0.0 : RoundUpToDouble(interval.half_width);
  interval.noise_stddev = stddev;
  return interval;
}

// Outward rounding of an interval end to a double.
double RoundDown(LD x) {
  const double d = static_cast<double>(x);
  return static_cast<LD>(d) > x ? std::nextafter(d, -HUGE_VAL) : d;
}
double RoundUp(LD x) {
  const double d = static_cast<double>(x);
  return static_cast<LD>(d) < x ? std::nextafter(d, HUGE_VAL) : d;
}

}  // namespace

void ValidateConfidence(double confidence) {
  if (!std::isfinite(confidence) || !(confidence > 0) || !(confidence < 1)) {
    char buffer[120];
    std::snprintf(buffer, sizeof buffer, "confidence must lie strictly between 0 and 1, not %g",
                  confidence);
    throw InvalidParameter(buffer, "Give the confidence level as a fraction, e.g. 0.95.");
  }
}

uint128 LaplaceNoiseQuantile(const LaplacePlan& plan, double miss) {
  const LD budget = LogMissBudget(miss, kLaplaceSlackBits);
  if (plan.sensitivity == 0) return 0;
  // P[|X| > k] = 2 q^(k+1) / (1 + q), q = exp(-rate), rate = s / t.
  const LD rate = static_cast<LD>(plan.scale_denominator) / static_cast<LD>(plan.scale_numerator);
  const LD log_factor = std::log(2.0L) - std::log1p(std::exp(-rate));
  auto log_miss = [&](LD k) { return log_factor - (k + 1) * rate; };
  const LD estimate = std::max<LD>(0, std::ceil((log_factor - budget) / rate) - 1);
  if (estimate >= std::ldexp(1.0L, 63)) {
    // Beyond integer precision: round up generously (never below the quantile).
    return static_cast<uint128>(estimate * (1 + 1e-15L)) + 2;
  }
  LD k = estimate;
  while (k > 0 && log_miss(k - 1) <= budget) k -= 1;
  while (log_miss(k) > budget) k += 1;
  return static_cast<uint128>(k);
}

uint128 GaussianNoiseQuantile(const GaussianPlan& plan, double miss) {
  const LD budget = LogMissBudget(miss, kGaussianSlackBits);
  if (plan.sensitivity == 0 || plan.sigma2_numerator == 0) return 0;
  // P[|X| > k] = 2 P[X >= k + 1], non-increasing in k.
  auto ok = [&](uint128 k) {
    const LD log_tail = DiscreteGaussianLogUpperTail(plan.sigma2_numerator, plan.sigma2_denominator,
                                                     static_cast<int128>(k + 1));
    return std::log(2.0L) + log_tail <= budget;
  };
  if (ok(0)) return 0;
  uint128 lo = 0;  // fails
  uint128 hi = 1;
  while (!ok(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > (uint128{1} << 100)) throw std::logic_error("Gaussian quantile search diverged");
  }
  while (hi - lo > 1) {
    const uint128 middle = lo + (hi - lo) / 2;
    if (ok(middle)) {
      hi = middle;
    } else {
      lo = middle;
    }
  }
  return hi;
}

NoiseInterval LaplaceNoiseIntervalForMiss(const LaplacePlan& plan, int unit_exponent, double miss) {
  return MakeInterval(LaplaceNoiseQuantile(plan, miss), unit_exponent + plan.grid_shift,
                      plan.grid_shift > 0, LaplaceNoiseStddev(plan, unit_exponent));
}

NoiseInterval GaussianNoiseIntervalForMiss(const GaussianPlan& plan, int unit_exponent,
                                           double miss) {
  return MakeInterval(GaussianNoiseQuantile(plan, miss), unit_exponent + plan.grid_shift,
                      plan.grid_shift > 0, GaussianNoiseStddev(plan, unit_exponent));
}

NoiseInterval LaplaceNoiseInterval(const LaplacePlan& plan, int unit_exponent, double confidence) {
  return LaplaceNoiseIntervalForMiss(plan, unit_exponent, MissOf(confidence));
}

NoiseInterval GaussianNoiseInterval(const GaussianPlan& plan, int unit_exponent,
                                    double confidence) {
  return GaussianNoiseIntervalForMiss(plan, unit_exponent, MissOf(confidence));
}

ConfidenceInterval MeanConfidenceInterval(const MeanRelease& release, std::int64_t lower_units,
                                          std::int64_t upper_units, int unit_exponent,
                                          const NoiseInterval& count,
                                          const NoiseInterval& centred_sum) {
  // Bounds in extended precision: 62-bit unit values are exact in a long double.
  const LD lower = std::ldexp(static_cast<LD>(lower_units), unit_exponent);
  const LD upper = std::ldexp(static_cast<LD>(upper_units), unit_exponent);
  const LD mid =
      std::ldexp(static_cast<LD>(lower_units) + static_cast<LD>(upper_units), unit_exponent - 1);
  ConfidenceInterval result{RoundDown(lower), RoundUp(upper)};
  const LD noisy_count = ToLongDouble(release.noisy_count);
  const LD count_width = ToLongDouble(count.half_width);
  // On the event that both intervals hold, the true count n and centred sum
  // S (value units) satisfy n in [n_lo, n_hi], S in [s_lo, s_hi], n >= 1.
  const LD n_hi = noisy_count + count_width;
  if (!(n_hi >= 1)) return result;  // no count >= 1 is consistent: no information
  const LD n_lo = std::max<LD>(1, noisy_count - count_width);
  const LD sum = ToLongDouble(release.noisy_centred_sum);
  const LD sum_width = ToLongDouble(centred_sum.half_width);
  const LD s_lo = sum - sum_width;
  const LD s_hi = sum + sum_width;
  // S / n is monotone in each variable on the box: the extremes are corners.
  const LD deviation_max = s_hi >= 0 ? s_hi / n_lo : s_hi / n_hi;
  const LD deviation_min = s_lo <= 0 ? s_lo / n_lo : s_lo / n_hi;
  // Widened by 2^-58 of the terms' size against the rounding of the long
  // double arithmetic above, then clamped (the true mean is within the bounds).
  const LD pad = std::ldexp(1.0L, -58);
  const LD low = std::clamp(mid + deviation_min - (std::fabs(mid) + std::fabs(deviation_min)) * pad,
                            lower, upper);
  const LD high = std::clamp(
      mid + deviation_max + (std::fabs(mid) + std::fabs(deviation_max)) * pad, lower, upper);
  result.low = RoundDown(low);
  result.high = RoundUp(high);
  return result;
}

MeanNoiseIntervals LaplaceMeanNoiseIntervals(const MeanPlans& plans, int unit_exponent,
                                             double confidence) {
  const double half_miss = MissOf(confidence) / 2;
  return {LaplaceNoiseIntervalForMiss(plans.count, 0, half_miss),
          LaplaceNoiseIntervalForMiss(plans.centred_sum, unit_exponent - 1, half_miss)};
}

MeanNoiseIntervals GaussianMeanNoiseIntervals(const GaussianMeanPlans& plans, int unit_exponent,
                                              double confidence) {
  const double half_miss = MissOf(confidence) / 2;
  return {GaussianNoiseIntervalForMiss(plans.count, 0, half_miss),
          GaussianNoiseIntervalForMiss(plans.centred_sum, unit_exponent - 1, half_miss)};
}

ConfidenceInterval LaplaceMeanInterval(const MeanRelease& release, std::int64_t lower_units,
                                       std::int64_t upper_units, int unit_exponent,
                                       const MeanPlans& plans, double confidence) {
  const MeanNoiseIntervals noise = LaplaceMeanNoiseIntervals(plans, unit_exponent, confidence);
  return MeanConfidenceInterval(release, lower_units, upper_units, unit_exponent, noise.count,
                                noise.centred_sum);
}

ConfidenceInterval GaussianMeanInterval(const MeanRelease& release, std::int64_t lower_units,
                                        std::int64_t upper_units, int unit_exponent,
                                        const GaussianMeanPlans& plans, double confidence) {
  const MeanNoiseIntervals noise = GaussianMeanNoiseIntervals(plans, unit_exponent, confidence);
  return MeanConfidenceInterval(release, lower_units, upper_units, unit_exponent, noise.count,
                                noise.centred_sum);
}

}  // namespace dp
