// The mean interval's test inversion as it was before issue 31 (a p-value
// over all 2K + 1 count terms through a std::function, the noise laws
// rebuilt for every interval, a geometric search from a step that ignored
// sums wider than 2^20 grid steps and 40 bisection steps per edge): the
// oracle that mean_interval_test.cpp compares the fast path with. Copied
// from src/core/mean_interval.cpp at commit 330457b; not used by dp_agg.
#ifndef DP_AGG_TEST_UNIT_MEAN_INTERVAL_REFERENCE_H
#define DP_AGG_TEST_UNIT_MEAN_INTERVAL_REFERENCE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "confidence.h"
#include "gaussian_mechanism.h"
#include "private_statistics.h"

namespace dp_reference {

using dp::ConfidenceInterval;
using dp::DiscreteGaussianLogUpperTail;
using dp::GaussianMeanPlans;
using dp::MeanPlans;
using dp::MeanRelease;
using dp::uint128;
using dp::ValidateConfidence;

using LD = long double;

// P[Z_c = k] on its support and P[Z_s >= k] for any integer k, in grid steps.
struct NoiseLaws {
  std::vector<double> count_pmf;  // index k + K for k in [-K, K]
  long count_radius = 0;  // K
  LD count_omitted = 0;  // P[|Z_c| > K], bounded above
  LD count_step = 1;  // R_c in value units
  LD sum_step = 1;  // R_s in value units
  LD slack_sum = 0;  // half a sum step if the sum was rounded to its grid
  LD slack_count = 0;  // half a count step if the count was rounded
  LD tail_error = 0;  // absolute error bound of SumTail (added to p)
  std::function<double(double)> sum_tail;  // P[Z_s >= k], k an integer (as a double)
};

// The count's law is summed over |k| <= K with P[|Z_c| > K] < e^-28 ~ 7e-13
// (that mass is added to the p-value, which is compared with alpha >= 1e-9
// or so in practice: the interval gets at most that much wider).
inline constexpr LD kTruncationNats = 28;

inline NoiseLaws LaplaceLaws(const MeanPlans& plans, int unit_exponent) {
  NoiseLaws laws;
  laws.count_step = std::ldexp(1.0L, plans.count.grid_shift);
  laws.slack_count = plans.count.grid_shift > 0 ? laws.count_step / 2 : 0;
  laws.sum_step = std::ldexp(1.0L, unit_exponent - 1 + plans.centred_sum.grid_shift);
  laws.slack_sum = plans.centred_sum.grid_shift > 0 ? laws.sum_step / 2 : 0;
  if (plans.count.sensitivity == 0) {
    laws.count_pmf = {1};
  } else {
    const LD rate = static_cast<LD>(plans.count.scale_denominator) /
                    static_cast<LD>(plans.count.scale_numerator);
    const LD q = std::exp(-rate);
    laws.count_radius = static_cast<long>(std::ceil(kTruncationNats / rate));
    for (long k = -laws.count_radius; k <= laws.count_radius; ++k)
      laws.count_pmf.push_back(
          static_cast<double>((1 - q) / (1 + q) * std::exp(-rate * std::labs(k))));
    laws.count_omitted = 2 * std::exp(-rate * (laws.count_radius + 1)) / (1 + q);
  }
  if (plans.centred_sum.sensitivity == 0) {
    laws.sum_tail = [](double k) { return k <= 0 ? 1.0 : 0.0; };
  } else {
    const LD rate = static_cast<LD>(plans.centred_sum.scale_denominator) /
                    static_cast<LD>(plans.centred_sum.scale_numerator);
    const double rate_d = static_cast<double>(rate);
    const double log_one_plus_q = static_cast<double>(std::log1p(std::exp(-rate)));
    // P[Z >= k] = q^k / (1 + q) for k >= 1; by symmetry 1 - q^(1-k) / (1 + q) for k <= 0.
    laws.sum_tail = [rate_d, log_one_plus_q](double k) {
      if (k >= 1) return std::exp(-rate_d * k - log_one_plus_q);
      return 1 - std::exp(-rate_d * (1 - k) - log_one_plus_q);
    };
    laws.tail_error = 1e-15L;
  }
  return laws;
}

inline NoiseLaws GaussianLaws(const GaussianMeanPlans& plans, int unit_exponent) {
  NoiseLaws laws;
  laws.count_step = std::ldexp(1.0L, plans.count.grid_shift);
  laws.slack_count = plans.count.grid_shift > 0 ? laws.count_step / 2 : 0;
  laws.sum_step = std::ldexp(1.0L, unit_exponent - 1 + plans.centred_sum.grid_shift);
  laws.slack_sum = plans.centred_sum.grid_shift > 0 ? laws.sum_step / 2 : 0;
  if (plans.count.sensitivity == 0 || plans.count.sigma2_numerator == 0) {
    laws.count_pmf = {1};
  } else {
    const uint128 num = plans.count.sigma2_numerator, den = plans.count.sigma2_denominator;
    const LD sigma2 = static_cast<LD>(num) / static_cast<LD>(den);
    const LD p0 = 1 - 2 * std::exp(static_cast<LD>(DiscreteGaussianLogUpperTail(num, den, 1)));
    laws.count_radius = static_cast<long>(std::ceil(std::sqrt(2 * kTruncationNats * sigma2))) + 1;
    for (long k = -laws.count_radius; k <= laws.count_radius; ++k)
      laws.count_pmf.push_back(
          static_cast<double>(p0 * std::exp(-static_cast<LD>(k) * k / (2 * sigma2))));
    laws.count_omitted =
        2 *
        std::exp(static_cast<LD>(DiscreteGaussianLogUpperTail(num, den, laws.count_radius + 1)));
  }
  if (plans.centred_sum.sensitivity == 0 || plans.centred_sum.sigma2_numerator == 0) {
    laws.sum_tail = [](double k) { return k <= 0 ? 1.0 : 0.0; };
  } else {
    const uint128 num = plans.centred_sum.sigma2_numerator,
                  den = plans.centred_sum.sigma2_denominator;
    const LD sigma = std::sqrt(static_cast<LD>(num) / static_cast<LD>(den));
    if (sigma < 1024) {
      // Exact tail of the discrete Gaussian from a table of P[Z >= k],
      // k = 0..M, summed backwards from the pmf; beyond M the tail is below
      // e^-46 (added as the tail error).
      const LD sigma2 = sigma * sigma;
      const long m = static_cast<long>(std::ceil(std::sqrt(2 * 46 * sigma2))) + 1;
      const LD p0 = 1 - 2 * std::exp(static_cast<LD>(DiscreteGaussianLogUpperTail(num, den, 1)));
      auto table = std::make_shared<std::vector<double>>(static_cast<std::size_t>(m) + 2, 0.0);
      LD running = 0;
      for (long k = m; k >= 0; --k) {
        running += p0 * std::exp(-static_cast<LD>(k) * k / (2 * sigma2));
        (*table)[static_cast<std::size_t>(k)] = static_cast<double>(running);
      }
      auto upper = [table, m](double j) {  // j >= 1
        return j > static_cast<double>(m) ? 0.0 : (*table)[static_cast<std::size_t>(j)];
      };
      laws.sum_tail = [upper](double k) {
        if (k >= 1) return upper(k);
        return 1 - upper(1 - k);
      };
      laws.tail_error = 1e-13L + 2 * std::exp(-46.0L);
    } else {
      // sigma >= 1024 steps: the discrete tail equals the continuous one
      // with a continuity correction, P[Z >= k] = Q((k - 1/2) / sigma), up
      // to an absolute error below 1e-7 (Euler-Maclaurin: the correction
      // terms are O(phi / sigma^2)); that bound is added to the p-value.
      const double scale = static_cast<double>(sigma * std::sqrt(2.0L));
      laws.sum_tail = [scale](double k) { return 0.5 * std::erfc((k - 0.5) / scale); };
      laws.tail_error = 1e-7L;
    }
  }
  return laws;
}

struct Releases {
  LD count = 0;  // C~ in value units (rows)
  LD centred_sum = 0;  // S~ in value units
  LD half_range = 0;  // h = (upper - lower) / 2
  LD mid = 0;
  LD lower = 0;
  LD upper = 0;
};

inline Releases ReadReleases(const MeanRelease& release, std::int64_t lower_units,
                             std::int64_t upper_units, int unit_exponent) {
  Releases r;
  r.count = std::ldexp(static_cast<LD>(release.noisy_count.mantissa), release.noisy_count.exponent);
  r.centred_sum = std::ldexp(static_cast<LD>(release.noisy_centred_sum.mantissa),
                             release.noisy_centred_sum.exponent);
  r.lower = std::ldexp(static_cast<LD>(lower_units), unit_exponent);
  r.upper = std::ldexp(static_cast<LD>(upper_units), unit_exponent);
  r.mid =
      std::ldexp(static_cast<LD>(lower_units) + static_cast<LD>(upper_units), unit_exponent - 1);
  r.half_range =
      std::ldexp(static_cast<LD>(upper_units) - static_cast<LD>(lower_units), unit_exponent - 1);
  return r;
}

// Summed in double (exp in double is ~10x faster than in long double); the
// rounding error of the sum, < 1e-13 absolute, is covered by tail_error.
inline LD PValue(const NoiseLaws& laws, const Releases& r, LD mu) {
  const LD observed = std::fabs(r.centred_sum - mu * r.count);
  const LD w = std::max<LD>(0, observed - laws.slack_sum - std::fabs(mu) * laws.slack_count);
  const double w_steps = static_cast<double>(w / laws.sum_step);
  const double shift_steps = static_cast<double>(mu * laws.count_step / laws.sum_step);
  double p = 0;
  for (long k = -laws.count_radius; k <= laws.count_radius; ++k) {
    const double shift = shift_steps * static_cast<double>(k);
    const double pmf = laws.count_pmf[static_cast<std::size_t>(k + laws.count_radius)];
    p += pmf *
         (laws.sum_tail(std::ceil(w_steps + shift)) + laws.sum_tail(std::ceil(w_steps - shift)));
  }
  return std::min<LD>(1, p + laws.count_omitted + laws.tail_error + 1e-13L);
}

inline double RoundDownDouble(LD x) {
  const double d = static_cast<double>(x);
  return static_cast<LD>(d) > x ? std::nextafter(d, -HUGE_VAL) : d;
}
inline double RoundUpDouble(LD x) {
  const double d = static_cast<double>(x);
  return static_cast<LD>(d) < x ? std::nextafter(d, HUGE_VAL) : d;
}

inline ConfidenceInterval InvertTest(const NoiseLaws& laws, const Releases& r, double confidence) {
  ValidateConfidence(confidence);
  const LD alpha = 1 - static_cast<LD>(confidence);
  const LD h = r.half_range;
  ConfidenceInterval whole{RoundDownDouble(r.lower), RoundUpDouble(r.upper)};
  if (!(h > 0)) return whole;
  auto accepted = [&](LD mu) { return PValue(laws, r, mu) > alpha; };
  LD center = r.count > 0 ? std::clamp(r.centred_sum / r.count, -h, h) : 0;
  if (!accepted(center)) {
    bool found = false;
    for (int i = 0; i <= 256 && !found; ++i) {
      const LD mu = -h + 2 * h * i / 256;
      if (accepted(mu)) {
        center = mu;
        found = true;
      }
    }
    if (!found) return whole;
  }
  // A scale for the search: the normal approximation of the half-width,
  // z * sqrt(Var Z_s + mu^2 Var Z_c) / C~ with z ~ 2, from the laws' own
  // moments (only a starting step; correctness does not depend on it).
  LD var_count = 0, var_sum_steps = 0;
  for (long k = -laws.count_radius; k <= laws.count_radius; ++k)
    var_count +=
        laws.count_pmf[static_cast<std::size_t>(k + laws.count_radius)] * static_cast<LD>(k) * k;
  for (long k = 1; k < 1L << 20; k = k * 2 + 1) {  // rough tail-based spread of Z_s
    if (laws.sum_tail(static_cast<double>(k)) < 0.16) {
      var_sum_steps = static_cast<LD>(k) * k;
      break;
    }
  }
  const LD spread = std::sqrt(var_sum_steps * laws.sum_step * laws.sum_step +
                              center * center * var_count * laws.count_step * laws.count_step) /
                    std::max<LD>(1, std::fabs(r.count));
  const LD first_step = std::max(std::ldexp(2 * h, -50), std::min(2 * h, spread) / 64);
  // One side: points center + direction * first_step * 2^j until the first
  // rejected one (or the end of the range), bisection between the last
  // accepted and that one, and the end of the range checked on its own (the
  // set may reach it again when C~ is not clearly positive, as Fieller's).
  auto edge = [&](int direction) {
    const LD limit = direction > 0 ? h : -h;
    LD in = center;
    LD out = limit;
    bool rejected = false;
    for (LD step = first_step;; step *= 2) {
      LD mu = center + direction * step;
      if (direction > 0 ? mu >= h : mu <= -h) mu = limit;
      if (!accepted(mu)) {
        out = mu;
        rejected = true;
        break;
      }
      in = mu;
      if (mu == limit) break;
    }
    if (!rejected) return limit;
    if (out != limit && accepted(limit)) return limit;
    for (int i = 0; i < 40 && std::fabs(out - in) > std::ldexp(2 * h, -60); ++i) {
      const LD middle = (in + out) / 2;
      if (accepted(middle)) {
        in = middle;
      } else {
        out = middle;
      }
    }
    return out;  // the rejected side: the hull is never cut short
  };
  const LD low = edge(-1), high = edge(+1);
  const LD pad = std::ldexp(1.0L, -58) * (std::fabs(r.mid) + h);
  ConfidenceInterval result;
  result.low = RoundDownDouble(std::clamp(r.mid + low - pad, r.lower, r.upper));
  result.high = RoundUpDouble(std::clamp(r.mid + high + pad, r.lower, r.upper));
  return result;
}

inline double LaplaceMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                                std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                                double centred_mean) {
  return static_cast<double>(PValue(LaplaceLaws(plans, unit_exponent),
                                    ReadReleases(release, lower_units, upper_units, unit_exponent),
                                    centred_mean));
}

inline double GaussianMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                                 std::int64_t upper_units, int unit_exponent,
                                 const GaussianMeanPlans& plans, double centred_mean) {
  return static_cast<double>(PValue(GaussianLaws(plans, unit_exponent),
                                    ReadReleases(release, lower_units, upper_units, unit_exponent),
                                    centred_mean));
}

inline ConfidenceInterval LaplaceMeanTestInterval(const MeanRelease& release,
                                                  std::int64_t lower_units,
                                                  std::int64_t upper_units, int unit_exponent,
                                                  const MeanPlans& plans, double confidence) {
  return InvertTest(LaplaceLaws(plans, unit_exponent),
                    ReadReleases(release, lower_units, upper_units, unit_exponent), confidence);
}

inline ConfidenceInterval GaussianMeanTestInterval(const MeanRelease& release,
                                                   std::int64_t lower_units,
                                                   std::int64_t upper_units, int unit_exponent,
                                                   const GaussianMeanPlans& plans,
                                                   double confidence) {
  return InvertTest(GaussianLaws(plans, unit_exponent),
                    ReadReleases(release, lower_units, upper_units, unit_exponent), confidence);
}

}  // namespace dp_reference

#endif  // DP_AGG_TEST_UNIT_MEAN_INTERVAL_REFERENCE_H
