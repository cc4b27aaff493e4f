// Statistical helpers for the unit tests: the chi-square distribution (via the
// regularized incomplete gamma function), exact discrete Laplace
// probabilities, Pearson goodness-of-fit with automatic binning, and
// rigorous binomial / Bernstein deviation bounds.
//
// Every statistical assertion in the tests is calibrated so that, for a
// random seed, it fails with probability at most kFalseFailureProbability
// when the code under test is correct. (The tests themselves use fixed seeds,
// so they are deterministic; the calibration is what makes them meaningful.)
#ifndef DP_AGG_TEST_UNIT_STATS_UTIL_H
#define DP_AGG_TEST_UNIT_STATS_UTIL_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "random_source.h"

namespace dp_test {

using dp::int128;
using dp::uint128;

inline constexpr double kFalseFailureProbability = 1e-9;

inline constexpr int128 kInt128Max = static_cast<int128>(~uint128{0} >> 1);
inline constexpr int128 kInt128Min = -kInt128Max - 1;
inline constexpr uint128 kUint128Max = ~uint128{0};

// ---------------------------------------------------------------------------
// Chi-square distribution.

// Q(a, x) = Gamma(a, x) / Gamma(a), the regularized upper incomplete gamma
// function: power series for P = 1 - Q when x < a + 1, Lentz's continued
// fraction for Q otherwise (Numerical Recipes, 6.2). Relative accuracy is
// about 1e-17 in the upper tail, which is where the tests need it.
inline long double RegularizedGammaQ(long double a, long double x) {
  if (!(a > 0)) throw std::invalid_argument("RegularizedGammaQ: a must be positive");
  if (x <= 0) return 1.0L;
  const long double log_prefactor = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    long double denominator = a;
    long double term = 1.0L / a;
    long double sum = term;
    for (int i = 0; i < 100000; ++i) {
      denominator += 1;
      term *= x / denominator;
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-20L) break;
    }
    return 1.0L - sum * std::exp(log_prefactor);
  }
  constexpr long double kTiny = 1e-300L;
  long double b = x + 1 - a;
  long double c = 1 / kTiny;
  long double d = 1 / b;
  long double h = d;
  for (int i = 1; i < 100000; ++i) {
    const long double an = -static_cast<long double>(i) * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const long double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-20L) break;
  }
  return std::exp(log_prefactor) * h;
}

// P[chi2(df) >= statistic].
inline long double ChiSquareSurvival(long double statistic, int degrees_of_freedom) {
  return RegularizedGammaQ(degrees_of_freedom / 2.0L, statistic / 2.0L);
}

// The x with P[chi2(df) >= x] = alpha, by bisection (the survival function
// is strictly decreasing).
inline double ChiSquareCriticalValue(int degrees_of_freedom, double alpha) {
  if (degrees_of_freedom < 1) throw std::invalid_argument("need at least one degree of freedom");
  long double low = 0;
  long double high = degrees_of_freedom + 10.0L;
  while (ChiSquareSurvival(high, degrees_of_freedom) > alpha) high *= 2;
  for (int i = 0; i < 200; ++i) {
    const long double middle = (low + high) / 2;
    if (ChiSquareSurvival(middle, degrees_of_freedom) > alpha) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return static_cast<double>(high);
}

// Pearson's statistic sum (O - E)^2 / E with E = n p.
inline double PearsonStatistic(const std::vector<std::uint64_t>& counts,
                               const std::vector<long double>& probabilities) {
  if (counts.size() != probabilities.size()) throw std::invalid_argument("size mismatch");
  long double n = 0;
  for (auto c : counts) n += c;
  long double statistic = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const long double expected = n * probabilities[i];
    const long double diff = counts[i] - expected;
    statistic += diff * diff / expected;
  }
  return static_cast<double>(statistic);
}

// Non-centrality n * sum (p_alt - p)^2 / p: the expected excess of Pearson's
// statistic when the samples really follow p_alt. Under the alternative the
// statistic is approximately non-central chi-square with mean df + lambda and
// standard deviation sqrt(2 (df + 2 lambda)).
inline double NonCentrality(std::uint64_t n, const std::vector<long double>& null_probabilities,
                            const std::vector<long double>& alt_probabilities) {
  long double sum = 0;
  for (std::size_t i = 0; i < null_probabilities.size(); ++i) {
    const long double diff = alt_probabilities[i] - null_probabilities[i];
    sum += diff * diff / null_probabilities[i];
  }
  return static_cast<double>(n * sum);
}

// How many standard deviations the mean of the statistic under an alternative
// lies above the critical value. Power tests demand >= 10, so that a random
// seed would miss the detection only in a >10-sigma event.
inline double PowerMarginInSigmas(double noncentrality, int degrees_of_freedom,
                                  double critical_value) {
  const double mean = degrees_of_freedom + noncentrality;
  const double sigma = std::sqrt(2.0 * (degrees_of_freedom + 2.0 * noncentrality));
  return (mean - critical_value) / sigma;
}

// ---------------------------------------------------------------------------
// The discrete Laplace distribution P[X = x] = (1-q)/(1+q) q^|x|,
// q = exp(-s/t), computed independently of the sampler.

inline long double ToLongDouble(uint128 value) { return static_cast<long double>(value); }
inline long double ToLongDouble(int128 value) { return static_cast<long double>(value); }

class DiscreteLaplace {
 public:
  DiscreteLaplace(uint128 t, uint128 s) : rate_(ToLongDouble(s) / ToLongDouble(t)) {}

  long double q() const { return std::exp(-rate_); }
  long double OneMinusQ() const { return -std::expm1(-rate_); }

  long double Pmf(int128 x) const {
    const long double magnitude = x < 0 ? -ToLongDouble(x) : ToLongDouble(x);
    return OneMinusQ() / (1 + q()) * std::exp(-rate_ * magnitude);
  }

  // P[X >= a]; a == kInt128Max stands for +infinity and gives 0,
  // a == kInt128Min gives 1.
  long double UpperTail(int128 a) const {
    if (a == kInt128Max) return 0;
    if (a == kInt128Min) return 1;
    if (a >= 1) return std::exp(-rate_ * ToLongDouble(a)) / (1 + q());
    // P[X >= a] = 1 - P[X <= a - 1] = 1 - P[X >= 1 - a] by symmetry.
    return 1 - std::exp(-rate_ * ToLongDouble(1 - a)) / (1 + q());
  }

  // P[low <= X <= high]; kInt128Min / kInt128Max stand for -inf / +inf.
  long double Interval(int128 low, int128 high) const {
    if (high != kInt128Max && high <= -1) {
      // Mirror into the positive half to avoid cancellation against 1.
      return Interval(-high, low == kInt128Min ? kInt128Max : -low);
    }
    return UpperTail(low) - UpperTail(high == kInt128Max ? kInt128Max : high + 1);
  }

  // E[X^2] = 2q / (1-q)^2.
  long double Variance() const {
    const long double omq = OneMinusQ();
    return 2 * q() / (omq * omq);
  }

 private:
  long double rate_;  // s / t
};

// floor(x / width) for width >= 1.
inline int128 FloorDiv(int128 x, int128 width) {
  return x >= 0 ? x / width : -((-x + width - 1) / width);
}

// Bins of the integers: a lower tail (-inf, lowest*width), central bins
// [k*width, (k+1)*width) for k in [lowest, highest], and an upper tail.
struct Binning {
  int128 width = 1;
  int128 lowest = 0;
  int128 highest = 0;

  std::size_t Count() const { return static_cast<std::size_t>(highest - lowest) + 3; }

  std::size_t Index(int128 x) const {
    const int128 k = FloorDiv(x, width);
    if (k < lowest) return 0;
    if (k > highest) return Count() - 1;
    return static_cast<std::size_t>(k - lowest) + 1;
  }

  std::vector<long double> Probabilities(const DiscreteLaplace& d) const {
    std::vector<long double> p;
    p.push_back(d.Interval(kInt128Min, lowest * width - 1));
    for (int128 k = lowest; k <= highest; ++k)
      p.push_back(d.Interval(k * width, (k + 1) * width - 1));
    p.push_back(d.Interval((highest + 1) * width, kInt128Max));
    return p;
  }
};

// Pearson's chi-square is compared with the chi-square distribution far out
// in its tail (alpha = 1e-9). That approximation is only trustworthy there if
// every bin expects many samples: with an expected count E the Poisson upper
// tail at E + sqrt(c E) approaches the Gaussian one as E grows, and at E = 50
// a single bin reaching a chi-square contribution of 80 (about the critical
// value for ~20 df) has probability ~1e-14, well below alpha; at E = 5 it
// would be ~1e-10, too close. Hence a minimum of 50 rather than the textbook 5.
inline constexpr double kMinExpectedPerBin = 50;

// The widest symmetric-ish binning in which every bin, tails included,
// expects at least kMinExpectedPerBin of n samples.
inline Binning ChooseBinning(const DiscreteLaplace& d, int128 width, std::uint64_t n) {
  Binning b;
  b.width = width;
  const long double min_p = kMinExpectedPerBin / static_cast<long double>(n);
  auto bin = [&](int128 k) { return d.Interval(k * width, (k + 1) * width - 1); };
  if (bin(0) < min_p || d.UpperTail(width) < min_p || d.Interval(kInt128Min, -1) < min_p)
    throw std::invalid_argument("ChooseBinning: too few samples for even three bins");
  while (bin(b.highest + 1) >= min_p && d.UpperTail((b.highest + 2) * width) >= min_p) ++b.highest;
  while (bin(b.lowest - 1) >= min_p && d.Interval(kInt128Min, (b.lowest - 1) * width - 1) >= min_p)
    --b.lowest;
  return b;
}

struct FitResult {
  double statistic = 0;
  int degrees_of_freedom = 0;
  double critical_value = 0;  // at kFalseFailureProbability
  std::vector<long double> probabilities;
};

inline FitResult ChiSquareFit(const std::vector<std::uint64_t>& counts,
                              const std::vector<long double>& probabilities) {
  FitResult r;
  r.statistic = PearsonStatistic(counts, probabilities);
  r.degrees_of_freedom = static_cast<int>(counts.size()) - 1;
  r.critical_value = ChiSquareCriticalValue(r.degrees_of_freedom, kFalseFailureProbability);
  r.probabilities = probabilities;
  return r;
}

// Draws n samples from `sample`, bins them and fits them against the discrete
// Laplace distribution `d`.
inline FitResult FitDiscreteLaplace(const DiscreteLaplace& d, const Binning& binning,
                                    std::uint64_t n, const std::function<int128()>& sample) {
  std::vector<std::uint64_t> counts(binning.Count(), 0);
  for (std::uint64_t i = 0; i < n; ++i) ++counts[binning.Index(sample())];
  return ChiSquareFit(counts, binning.Probabilities(d));
}

// ---------------------------------------------------------------------------
// Binomial and bounded-mean deviation bounds (rigorous, not asymptotic).

// Kullback-Leibler divergence between Bernoulli(a) and Bernoulli(p).
inline long double BernoulliKl(long double a, long double p) {
  long double kl = 0;
  if (a > 0) kl += a * std::log(a / p);
  if (a < 1) kl += (1 - a) * std::log((1 - a) / (1 - p));
  return kl;
}

struct AcceptanceInterval {
  double low;
  double high;
  bool Contains(double x) const { return low <= x && x <= high; }
};

// Acceptance interval for the empirical frequency of n Bernoulli(p) trials:
// by the Chernoff-Hoeffding bound P[p_hat >= a] <= exp(-n KL(a || p)) for
// a > p (and symmetrically below), so each side is exceeded with probability
// at most delta / 2. Tighter than Hoeffding's sqrt(ln(2/delta) / (2n)) for p
// near 0 or 1, and never wider.
inline AcceptanceInterval BinomialAcceptanceInterval(double p, std::uint64_t n, double delta) {
  if (p <= 0) return {0, 0};
  if (p >= 1) return {1, 1};
  const long double budget = std::log(2.0L / delta) / static_cast<long double>(n);
  auto edge = [&](long double inside, long double outside) {
    if (BernoulliKl(outside, p) < budget) return outside;  // even the extreme is acceptable
    for (int i = 0; i < 200; ++i) {
      const long double middle = (inside + outside) / 2;
      if (BernoulliKl(middle, p) < budget) {
        inside = middle;
      } else {
        outside = middle;
      }
    }
    return outside;  // the first value whose tail probability is <= delta / 2
  };
  return {static_cast<double>(edge(p, 0)), static_cast<double>(edge(p, 1))};
}

// Bernstein's inequality for the mean of n i.i.d. variables with variance at
// most `variance` and |X - E X| <= `range`: the deviation t with
// P[|mean - E X| >= t] <= delta, i.e. the solution of
// n t^2 = L (2 variance + 2 range t / 3), L = ln(2 / delta).
inline double BernsteinDeviation(std::uint64_t n, double variance, double range, double delta) {
  const double l = std::log(2.0 / delta);
  const double nn = static_cast<double>(n);
  const double b = 2.0 * l * range / 3.0;
  return (b + std::sqrt(b * b + 8.0 * nn * l * variance)) / (2.0 * nn);
}

// Chernoff bound for the mean of n i.i.d. discrete Laplace variables with
// parameter q (mean 0): the deviation a with P[|mean| >= a] <= delta, from
// E[exp(l Z)] = (1-q)^2 / ((1 - q e^l)(1 - q e^-l)) for 0 <= l < -ln q
// (Z is the difference of two i.i.d. geometric variables). The supremum over
// l is taken on a grid, which can only make the bound more conservative.
inline double DiscreteLaplaceMeanDeviation(long double q, std::uint64_t n, double delta) {
  const long double lambda_max = -std::log(q);
  auto log_mgf = [&](long double l) {
    return 2 * std::log1p(-q) - std::log1p(-q * std::exp(l)) - std::log1p(-q * std::exp(-l));
  };
  auto rate = [&](long double a) {  // sup_l (l a - ln E[exp(l Z)])
    long double best = 0;
    for (int i = 1; i < 4000; ++i) {
      const long double l = lambda_max * i / 4000;
      best = std::max(best, l * a - log_mgf(l));
    }
    return best;
  };
  const long double target = std::log(2.0L / delta) / static_cast<long double>(n);
  long double low = 0;
  long double high = 1;
  while (rate(high) < target) high *= 2;
  for (int i = 0; i < 100; ++i) {
    const long double middle = (low + high) / 2;
    if (rate(middle) < target) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return static_cast<double>(high);
}

}  // namespace dp_test

#endif  // DP_AGG_TEST_UNIT_STATS_UTIL_H
