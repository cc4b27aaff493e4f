#include "mean_interval.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace dp {

namespace {

using LD = long double;

// The count's law is summed over |k| <= K with P[|Z_c| > K] < e^-28 ~ 7e-13
// (that mass is added to the p-value, which is compared with alpha >= 1e-9
// or so in practice: the interval gets at most that much wider).
constexpr LD kTruncationNats = 28;

// The Gaussian sum's tail from a table when sigma < 1024 grid steps: P[Z >=
// k], k = 0..M, M = ceil(sqrt(2 * 46) sigma) + 1; beyond M below e^-46.
constexpr LD kGaussianTableSigma = 1024;
constexpr LD kTableNats = 46;

long LaplaceCountRadius(const LaplacePlan& count) {
  if (count.sensitivity == 0) return 0;
  const LD rate = static_cast<LD>(count.scale_denominator) / static_cast<LD>(count.scale_numerator);
  return static_cast<long>(std::ceil(kTruncationNats / rate));
}

long GaussianCountRadius(const GaussianPlan& count) {
  if (count.sensitivity == 0 || count.sigma2_numerator == 0) return 0;
  const LD sigma2 =
      static_cast<LD>(count.sigma2_numerator) / static_cast<LD>(count.sigma2_denominator);
  return static_cast<long>(std::ceil(std::sqrt(2 * kTruncationNats * sigma2))) + 1;
}

// M + 2 table entries, or 0 when the sum's tail is not tabulated.
std::size_t GaussianTailTableDoubles(const GaussianPlan& sum) {
  if (sum.sensitivity == 0 || sum.sigma2_numerator == 0) return 0;
  const LD sigma =
      std::sqrt(static_cast<LD>(sum.sigma2_numerator) / static_cast<LD>(sum.sigma2_denominator));
  if (!(sigma < kGaussianTableSigma)) return 0;
  const LD sigma2 = sigma * sigma;
  const long m = static_cast<long>(std::ceil(std::sqrt(2 * kTableNats * sigma2))) + 1;
  return static_cast<std::size_t>(m) + 2;
}

void RequireStorage(std::size_t needed, std::size_t doubles) {
  if (doubles < needed)
    throw std::invalid_argument("mean interval: storage for the noise tables is too small");
}

// P[Z_s >= k], k an integer (as a double), for each kind of law.
struct ConstantTail {
  double operator()(double k) const { return k <= 0 ? 1.0 : 0.0; }
};
struct LaplaceTail {
  double rate;
  double log_one_plus_q;
  // P[Z >= k] = q^k / (1 + q) for k >= 1; by symmetry 1 - q^(1-k) / (1 + q) for k <= 0.
  double operator()(double k) const {
    if (k >= 1) return std::exp(-rate * k - log_one_plus_q);
    return 1 - std::exp(-rate * (1 - k) - log_one_plus_q);
  }
};
struct TableTail {
  const double* table;
  long m;
  double Upper(double j) const {  // j >= 1
    return j > static_cast<double>(m) ? 0.0 : table[static_cast<std::size_t>(j)];
  }
  double operator()(double k) const {
    if (k >= 1) return Upper(k);
    return 1 - Upper(1 - k);
  }
};
struct ErfcTail {
  double scale;
  double operator()(double k) const { return 0.5 * std::erfc((k - 0.5) / scale); }
};

template <typename Visit>
auto WithSumTail(const MeanTestLaws& laws, Visit visit) {
  switch (laws.sum_tail) {
    case MeanTestSumTail::kLaplace:
      return visit(LaplaceTail{laws.laplace_rate, laws.laplace_log_one_plus_q});
    case MeanTestSumTail::kGaussianTable:
      return visit(TableTail{laws.tail_table, laws.tail_table_max});
    case MeanTestSumTail::kGaussianErfc:
      return visit(ErfcTail{laws.erfc_scale});
    case MeanTestSumTail::kConstant:
      break;
  }
  return visit(ConstantTail{});
}

// The search's scale, from the laws alone: Var Z_c, and a rough spread of
// Z_s from its tail (the first k = 2^j - 1 with P[Z_s >= k] < 0.16, squared).
void SetSearchScale(MeanTestLaws* laws) {
  LD var_count = 0;
  for (long k = -laws->count_radius; k <= laws->count_radius; ++k)
    var_count +=
        laws->count_pmf[static_cast<std::size_t>(k + laws->count_radius)] * static_cast<LD>(k) * k;
  laws->var_count = var_count;
  laws->var_sum_steps = WithSumTail(*laws, [](const auto& tail) {
    for (long k = 1; k < (1L << 62); k = k * 2 + 1)
      if (tail(static_cast<double>(k)) < 0.16) return static_cast<LD>(k) * k;
    return LD{0};
  });
}

}  // namespace

std::size_t LaplaceMeanTestStorageDoubles(const MeanPlans& plans) {
  return 2 * static_cast<std::size_t>(LaplaceCountRadius(plans.count)) + 1;
}

std::size_t GaussianMeanTestStorageDoubles(const GaussianMeanPlans& plans) {
  return 2 * static_cast<std::size_t>(GaussianCountRadius(plans.count)) + 1 +
         GaussianTailTableDoubles(plans.centred_sum);
}

MeanTestLaws LaplaceMeanTestLaws(const MeanPlans& plans, int unit_exponent, double* storage,
                                 std::size_t doubles) {
  RequireStorage(LaplaceMeanTestStorageDoubles(plans), doubles);
  MeanTestLaws laws;
  laws.count_step = std::ldexp(1.0L, plans.count.grid_shift);
  laws.slack_count = plans.count.grid_shift > 0 ? laws.count_step / 2 : 0;
  laws.sum_step = std::ldexp(1.0L, unit_exponent - 1 + plans.centred_sum.grid_shift);
  laws.slack_sum = plans.centred_sum.grid_shift > 0 ? laws.sum_step / 2 : 0;
  laws.count_pmf = storage;
  if (plans.count.sensitivity == 0) {
    storage[0] = 1;
  } else {
    const LD rate = static_cast<LD>(plans.count.scale_denominator) /
                    static_cast<LD>(plans.count.scale_numerator);
    const LD q = std::exp(-rate);
    laws.count_radius = LaplaceCountRadius(plans.count);
    for (long k = -laws.count_radius; k <= laws.count_radius; ++k)
      storage[static_cast<std::size_t>(k + laws.count_radius)] =
          static_cast<double>((1 - q) / (1 + q) * std::exp(-rate * std::labs(k)));
    laws.count_omitted = 2 * std::exp(-rate * (laws.count_radius + 1)) / (1 + q);
  }
  if (plans.centred_sum.sensitivity != 0) {
    const LD rate = static_cast<LD>(plans.centred_sum.scale_denominator) /
                    static_cast<LD>(plans.centred_sum.scale_numerator);
    laws.sum_tail = MeanTestSumTail::kLaplace;
    laws.laplace_rate = static_cast<double>(rate);
    laws.laplace_log_one_plus_q = static_cast<double>(std::log1p(std::exp(-rate)));
    laws.tail_error = 1e-15L;
  }
  SetSearchScale(&laws);
  return laws;
}

MeanTestLaws GaussianMeanTestLaws(const GaussianMeanPlans& plans, int unit_exponent,
                                  double* storage, std::size_t doubles) {
  RequireStorage(GaussianMeanTestStorageDoubles(plans), doubles);
  MeanTestLaws laws;
  laws.count_step = std::ldexp(1.0L, plans.count.grid_shift);
  laws.slack_count = plans.count.grid_shift > 0 ? laws.count_step / 2 : 0;
  laws.sum_step = std::ldexp(1.0L, unit_exponent - 1 + plans.centred_sum.grid_shift);
  laws.slack_sum = plans.centred_sum.grid_shift > 0 ? laws.sum_step / 2 : 0;
  laws.count_pmf = storage;
  if (plans.count.sensitivity == 0 || plans.count.sigma2_numerator == 0) {
    storage[0] = 1;
  } else {
    const uint128 num = plans.count.sigma2_numerator, den = plans.count.sigma2_denominator;
    const LD sigma2 = static_cast<LD>(num) / static_cast<LD>(den);
    const LD p0 = 1 - 2 * std::exp(static_cast<LD>(DiscreteGaussianLogUpperTail(num, den, 1)));
    laws.count_radius = GaussianCountRadius(plans.count);
    for (long k = -laws.count_radius; k <= laws.count_radius; ++k)
      storage[static_cast<std::size_t>(k + laws.count_radius)] =
          static_cast<double>(p0 * std::exp(-static_cast<LD>(k) * k / (2 * sigma2)));
    laws.count_omitted =
        2 *
        std::exp(static_cast<LD>(DiscreteGaussianLogUpperTail(num, den, laws.count_radius + 1)));
  }
  if (plans.centred_sum.sensitivity != 0 && plans.centred_sum.sigma2_numerator != 0) {
    const uint128 num = plans.centred_sum.sigma2_numerator,
                  den = plans.centred_sum.sigma2_denominator;
    const LD sigma = std::sqrt(static_cast<LD>(num) / static_cast<LD>(den));
    const std::size_t table_doubles = GaussianTailTableDoubles(plans.centred_sum);
    if (table_doubles > 0) {
      // Exact tail of the discrete Gaussian from a table of P[Z >= k],
      // k = 0..M, summed backwards from the pmf; beyond M the tail is below
      // e^-46 (added as the tail error).
      const LD sigma2 = sigma * sigma;
      const long m = static_cast<long>(table_doubles) - 2;
      const LD p0 = 1 - 2 * std::exp(static_cast<LD>(DiscreteGaussianLogUpperTail(num, den, 1)));
      double* table = storage + 2 * laws.count_radius + 1;
      table[m + 1] = 0;
      LD running = 0;
      for (long k = m; k >= 0; --k) {
        running += p0 * std::exp(-static_cast<LD>(k) * k / (2 * sigma2));
        table[static_cast<std::size_t>(k)] = static_cast<double>(running);
      }
      laws.sum_tail = MeanTestSumTail::kGaussianTable;
      laws.tail_table = table;
      laws.tail_table_max = m;
      laws.tail_error = 1e-13L + 2 * std::exp(-kTableNats);
    } else {
      // sigma >= 1024 steps: the discrete tail equals the continuous one
      // with a continuity correction, P[Z >= k] = Q((k - 1/2) / sigma), up
      // to an absolute error below 1e-7 (Euler-Maclaurin: the correction
      // terms are O(phi / sigma^2)); that bound is added to the p-value.
      laws.sum_tail = MeanTestSumTail::kGaussianErfc;
      laws.erfc_scale = static_cast<double>(sigma * std::sqrt(2.0L));
      laws.tail_error = 1e-7L;
    }
  }
  SetSearchScale(&laws);
  return laws;
}

namespace {

struct Releases {
  LD count = 0;  // C~ in value units (rows)
  LD centred_sum = 0;  // S~ in value units
  LD half_range = 0;  // h = (upper - lower) / 2
  LD mid = 0;
  LD lower = 0;
  LD upper = 0;
};

Releases ReadReleases(const MeanRelease& release, std::int64_t lower_units,
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

// Sum over the count noise, k = -K..K, of
//     P[Z_c = k] (P[Z_s >= ceil(w + k shift)] + P[Z_s >= ceil(w - k shift)]).
// The terms of k and -k are equal bit for bit (the pmf is symmetric, k shift
// only changes sign, and the two tails swap), so each is computed once and
// added twice, in the order of the plain loop: the same double.
template <typename Tail>
double SumOverCount(const MeanTestLaws& laws, const Tail& tail, double w_steps,
                    double shift_steps) {
  const long radius = laws.count_radius;
  const double* pmf = laws.count_pmf + radius;  // pmf[k], k in [-K, K]
  auto term = [&](long k) {
    const double shift = shift_steps * static_cast<double>(k);
    return pmf[k] * (tail(std::ceil(w_steps + shift)) + tail(std::ceil(w_steps - shift)));
  };
  double p = 0;
  if (radius > kMaxMeanTestCountRadius) {  // never for tractable plans
    for (long k = -radius; k <= radius; ++k) p += term(k);
    return p;
  }
  double terms[kMaxMeanTestCountRadius + 1];
  for (long k = 0; k <= radius; ++k) terms[k] = term(k);
  for (long k = radius; k >= 1; --k) p += terms[k];
  for (long k = 0; k <= radius; ++k) p += terms[k];
  return p;
}

// Summed in double (exp in double is ~10x faster than in long double); the
// rounding error of the sum, < 1e-13 absolute, is covered by tail_error.
LD PValue(const MeanTestLaws& laws, const Releases& r, LD mu) {
  const LD observed = std::fabs(r.centred_sum - mu * r.count);
  const LD w = std::max<LD>(0, observed - laws.slack_sum - std::fabs(mu) * laws.slack_count);
  const double w_steps = static_cast<double>(w / laws.sum_step);
  const double shift_steps = static_cast<double>(mu * laws.count_step / laws.sum_step);
  const double p = WithSumTail(
      laws, [&](const auto& tail) { return SumOverCount(laws, tail, w_steps, shift_steps); });
  return std::min<LD>(1, p + laws.count_omitted + laws.tail_error + 1e-13L);
}

double RoundDownDouble(LD x) {
  const double d = static_cast<double>(x);
  return static_cast<LD>(d) > x ? std::nextafter(d, -HUGE_VAL) : d;
}
double RoundUpDouble(LD x) {
  const double d = static_cast<double>(x);
  return static_cast<LD>(d) < x ? std::nextafter(d, HUGE_VAL) : d;
}

// ITP (Oliveira and Takahashi 2020) between an accepted point `in` and a
// rejected point `out` (either order on the line), on f(mu) = alpha - p(mu):
// f(in) < 0 <= f(out). Keeps one point of each kind and returns the
// rejected one once the bracket is at most `tolerance` wide or `done(in,
// out)` holds. At most ceil(log2(width / tolerance)) + 1 p-values (n0 = 1);
// superlinear where p is smooth. kappa1 = 0.2 / width, kappa2 = 2.
template <typename Evaluate, typename Done>
LD RefineEdge(LD in, LD f_in, LD out, LD f_out, LD tolerance, Evaluate f, Done done) {
  const LD width0 = std::fabs(out - in);
  if (!(width0 > tolerance)) return out;
  const int n_half = static_cast<int>(std::ceil(std::log2(width0 / tolerance)));
  const int n_max = n_half + 1;
  const LD epsilon = tolerance / 2;
  for (int j = 0; j <= n_max + 2; ++j) {
    const LD width = std::fabs(out - in);
    if (!(width > tolerance) || done(in, out)) break;
    const LD half = (in + out) / 2;
    // Regula falsi: in + (out - in) f_in / (f_in - f_out), f_in < 0 <= f_out.
    const LD falsi = in + (out - in) * (f_in / (f_in - f_out));
    const LD delta = LD{0.2} * width * width / width0;
    const LD sigma = half > falsi ? 1 : (half < falsi ? -1 : 0);
    const LD truncated = delta <= std::fabs(half - falsi) ? falsi + sigma * delta : half;
    const LD radius = epsilon * std::ldexp(1.0L, n_max - j) - width / 2;
    LD next = std::fabs(truncated - half) <= radius ? truncated : half - sigma * radius;
    const bool inside = in < out ? (next > in && next < out) : (next < in && next > out);
    if (!inside) {
      next = half;
      if (next == in || next == out) break;  // the bracket is at the precision's end
    }
    const LD value = f(next);
    if (value < 0) {
      in = next;
      f_in = value;
    } else {
      out = next;
      f_out = value;
    }
  }
  return out;
}

ConfidenceInterval InvertTest(const MeanTestLaws& laws, const Releases& r, double confidence) {
  ValidateConfidence(confidence);
  const LD alpha = 1 - static_cast<LD>(confidence);
  const LD h = r.half_range;
  ConfidenceInterval whole{RoundDownDouble(r.lower), RoundUpDouble(r.upper)};
  if (!(h > 0)) return whole;
  // f < 0: accepted.
  auto f = [&](LD mu) { return alpha - PValue(laws, r, mu); };
  LD center = r.count > 0 ? std::clamp(r.centred_sum / r.count, -h, h) : 0;
  LD f_center = f(center);
  if (!(f_center < 0)) {
    bool found = false;
    for (int i = 0; i <= 256 && !found; ++i) {
      const LD mu = -h + 2 * h * i / 256;
      const LD value = f(mu);
      if (value < 0) {
        center = mu;
        f_center = value;
        found = true;
      }
    }
    if (!found) return whole;
  }
  // A scale for the search: the normal approximation of the half-width,
  // z * sqrt(Var Z_s + mu^2 Var Z_c) / C~ with z ~ 2, from the laws' own
  // moments (only a starting step; correctness does not depend on it).
  const LD spread =
      std::sqrt(laws.var_sum_steps * laws.sum_step * laws.sum_step +
                center * center * laws.var_count * laws.count_step * laws.count_step) /
      std::max<LD>(1, std::fabs(r.count));
  const LD first_step = std::max(std::ldexp(2 * h, -50), std::min(2 * h, spread) / 64);
  const LD pad = std::ldexp(1.0L, -58) * (std::fabs(r.mid) + h);
  // The value returned for an edge at mu, rounded outward.
  auto rounded = [&](int direction, LD mu) {
    return direction > 0 ? RoundUpDouble(std::clamp(r.mid + mu + pad, r.lower, r.upper))
                         : RoundDownDouble(std::clamp(r.mid + mu - pad, r.lower, r.upper));
  };
  // One side: points center + direction * first_step * 2^j until the first
  // rejected one (or the end of the range), the end of the range checked on
  // its own (the set may reach it again when C~ is not clearly positive, as
  // Fieller's), and the edge between the last accepted point and the first
  // rejected one located by RefineEdge.
  auto edge = [&](int direction) {
    const LD limit = direction > 0 ? h : -h;
    LD in = center, f_in = f_center;
    LD out = limit, f_out = 0;
    bool rejected = false;
    for (LD step = first_step;; step *= 2) {
      LD mu = center + direction * step;
      if (direction > 0 ? mu >= h : mu <= -h) mu = limit;
      const LD value = f(mu);
      if (!(value < 0)) {
        out = mu;
        f_out = value;
        rejected = true;
        break;
      }
      in = mu;
      f_in = value;
      if (mu == limit) break;
    }
    if (!rejected) return limit;
    if (out != limit && f(limit) < 0) return limit;
    // Bisection's precision after 40 steps, or 2^-60 of the range.
    const LD tolerance =
        std::max(std::fabs(out - in) * std::ldexp(1.0L, -40), std::ldexp(2 * h, -60));
    return RefineEdge(in, f_in, out, f_out, tolerance, f,
                      [&](LD a, LD b) { return rounded(direction, a) == rounded(direction, b); });
  };
  const LD low = edge(-1), high = edge(+1);
  ConfidenceInterval result;
  result.low = rounded(-1, low);
  result.high = rounded(+1, high);
  return result;
}

}  // namespace

namespace {

// Laws with tables in a vector of this call (the one-off entry points).
struct OwnedLaws {
  std::vector<double> storage;
  MeanTestLaws laws;
};

OwnedLaws OwnLaplaceLaws(const MeanPlans& plans, int unit_exponent) {
  OwnedLaws owned;
  owned.storage.resize(LaplaceMeanTestStorageDoubles(plans));
  owned.laws =
      LaplaceMeanTestLaws(plans, unit_exponent, owned.storage.data(), owned.storage.size());
  return owned;
}

OwnedLaws OwnGaussianLaws(const GaussianMeanPlans& plans, int unit_exponent) {
  OwnedLaws owned;
  owned.storage.resize(GaussianMeanTestStorageDoubles(plans));
  owned.laws =
      GaussianMeanTestLaws(plans, unit_exponent, owned.storage.data(), owned.storage.size());
  return owned;
}

}  // namespace

double LaplaceMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                         std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                         double centred_mean) {
  const OwnedLaws owned = OwnLaplaceLaws(plans, unit_exponent);
  return static_cast<double>(PValue(
      owned.laws, ReadReleases(release, lower_units, upper_units, unit_exponent), centred_mean));
}

double GaussianMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                          std::int64_t upper_units, int unit_exponent,
                          const GaussianMeanPlans& plans, double centred_mean) {
  const OwnedLaws owned = OwnGaussianLaws(plans, unit_exponent);
  return static_cast<double>(PValue(
      owned.laws, ReadReleases(release, lower_units, upper_units, unit_exponent), centred_mean));
}

bool LaplaceMeanTestIsTractable(const MeanPlans& plans) noexcept {
  if (plans.count.sensitivity == 0) return true;
  const LD rate =
      static_cast<LD>(plans.count.scale_denominator) / static_cast<LD>(plans.count.scale_numerator);
  return std::ceil(kTruncationNats / rate) <= static_cast<LD>(kMaxMeanTestCountRadius);
}

bool GaussianMeanTestIsTractable(const GaussianMeanPlans& plans) noexcept {
  if (plans.count.sensitivity == 0 || plans.count.sigma2_numerator == 0) return true;
  const LD sigma2 = static_cast<LD>(plans.count.sigma2_numerator) /
                    static_cast<LD>(plans.count.sigma2_denominator);
  return std::ceil(std::sqrt(2 * kTruncationNats * sigma2)) + 1 <=
         static_cast<LD>(kMaxMeanTestCountRadius);
}

ConfidenceInterval LaplaceMeanTestInterval(const MeanRelease& release, std::int64_t lower_units,
                                           std::int64_t upper_units, int unit_exponent,
                                           const MeanPlans& plans, double confidence) {
  const OwnedLaws owned = OwnLaplaceLaws(plans, unit_exponent);
  return InvertTest(owned.laws, ReadReleases(release, lower_units, upper_units, unit_exponent),
                    confidence);
}

ConfidenceInterval GaussianMeanTestInterval(const MeanRelease& release, std::int64_t lower_units,
                                            std::int64_t upper_units, int unit_exponent,
                                            const GaussianMeanPlans& plans, double confidence) {
  const OwnedLaws owned = OwnGaussianLaws(plans, unit_exponent);
  return InvertTest(owned.laws, ReadReleases(release, lower_units, upper_units, unit_exponent),
                    confidence);
}

ConfidenceInterval MeanTestInterval(const MeanTestLaws& laws, const MeanRelease& release,
                                    std::int64_t lower_units, std::int64_t upper_units,
                                    int unit_exponent, double confidence) {
  return InvertTest(laws, ReadReleases(release, lower_units, upper_units, unit_exponent),
                    confidence);
}

}  // namespace dp
