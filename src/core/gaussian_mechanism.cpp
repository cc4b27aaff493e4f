#include "gaussian_mechanism.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "calibration_cache.h"
#include "exact_sampler.h"
#include "parameters.h"

namespace dp {

namespace {

// All privacy-curve arithmetic is done in x87 extended precision (64-bit
// significand, exponent range +-16382): log-deltas down to -1e4900 and
// terms like exp(x^2/2) for |x| <= 100 are representable without scaling.
using LD = long double;

constexpr LD kSqrt2Pi = 2.506628274631000502415765284811045253L;
constexpr LD kLogSqrt2Pi = 0.918938533204672741780329736405617639L;
constexpr LD kSqrtHalf = 0.707106781186547524400844362104849039L;
constexpr LD kPi = 3.141592653589793238462643383279502884L;

// ---------------------------------------------------------------------------
// The Mills ratio M(x) = Phi(-x) / phi(x) and C(x) = 1 - x M(x) = -M'(x).
//
// Both Gaussian privacy curves are written through M so that e^epsilon and
// tiny tail probabilities never appear on their own: with u < v and
// v^2 - u^2 = 2 epsilon,
//   Phi(-u) - e^epsilon Phi(-v) = phi(u) (M(u) - M(v)),
// a positive difference of two numbers of moderate size.

struct Mills {
  LD ratio;  // M(x) > 0
  LD complement;  // 1 - x M(x) > 0
};

Mills MillsRatio(LD x) {
  Mills m;
  if (x >= 3) {
    // Laplace's continued fraction M = 1/(x + 1/(x + 2/(x + 3/(x + ...)))),
    // evaluated bottom-up from depth 100 (relative error < 2e-21 at x = 3,
    // smaller beyond). With T = 1/(x + 2/(x + ...)), M = 1/(x + T) and
    // 1 - x M = T M, free of the cancellation of 1 - x M ~ 1/x^2.
    LD tail = 0;
    for (int j = 100; j >= 1; --j) tail = j / (x + tail);
    m.ratio = 1 / (x + tail);
    m.complement = tail * m.ratio;
  } else {
    // Callers keep x >= -100, where exp(x^2/2) < 1e2172 is representable.
    m.ratio = kSqrt2Pi / 2 * std::erfc(x * kSqrtHalf) * std::exp(x * x / 2);
    m.complement = 1 - x * m.ratio;  // at most a factor 7 of cancellation (x < 3)
  }
  return m;
}

// 20-point Gauss-Legendre rule on [-1, 1], by Newton's method on P_20.
constexpr int kQuadraturePoints = 20;
struct Quadrature {
  LD node[kQuadraturePoints];
  LD weight[kQuadraturePoints];
};

const Quadrature& GaussLegendre() {
  static const Quadrature rule = [] {
    Quadrature q{};
    const int n = kQuadraturePoints;
    for (int i = 0; i < n; ++i) {
      LD x = std::cos(kPi * (i + 0.75L) / (n + 0.5L));
      LD derivative = 1;
      for (int iteration = 0; iteration < 100; ++iteration) {
        LD p0 = 1;
        LD p1 = x;
        for (int k = 2; k <= n; ++k) {
          const LD p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        derivative = n * (x * p1 - p0) / (x * x - 1);
        const LD step = p1 / derivative;
        x -= step;
        if (std::fabs(step) < 1e-22L) break;
      }
      q.node[i] = x;
      q.weight[i] = 2 / ((1 - x * x) * derivative * derivative);
    }
    return q;
  }();
  return rule;
}

// M(u) - M(u + h) for h > 0, u >= -100, to a few ulps relative. When the two
// differ by less than a factor 2, the difference is the integral of
// C = -M' over [u, u + h], by Gauss-Legendre: C is entire, and over such an
// interval the rule's error is below 1e-25 (the interval is narrow compared
// with the scale on which C varies: ~|u| for u > 3, ~1 near 0, ~1/|u| for
// u < 0). Integrating over [u, u + h] with h given (rather than subtracting
// a rounded v - u) keeps v^2 - u^2 = 2 epsilon to full relative precision.
LD MillsDifference(LD u, LD h) {
  const LD mu = MillsRatio(u).ratio;
  const LD mv = MillsRatio(u + h).ratio;
  if (mv <= mu / 2) return mu - mv;
  const Quadrature& q = GaussLegendre();
  const LD half = h / 2;
  const LD middle = u + half;
  LD sum = 0;
  for (int i = 0; i < kQuadraturePoints; ++i)
    sum += q.weight[i] * MillsRatio(middle + half * q.node[i]).complement;
  return sum * half;
}

// ---------------------------------------------------------------------------
// Continuous privacy curve (Balle & Wang 2018, Theorem 8), for s = sigma / D:
// with a = 1/(2s), b = epsilon s, u = b - a, v = b + a (v^2 - u^2 = 2 epsilon):
//   delta = Phi(-u) - e^epsilon Phi(-v) = phi(0) e^(-u^2/2) (M(u) - M(v)).
LD ContinuousLogDelta(LD s, LD epsilon) {
  const LD a = 1 / (2 * s);
  const LD b = epsilon * s;
  const LD u = b - a;
  if (u < -30) {
    // delta = 1 - Phi(u) - e^eps Phi(-v) = 1 - phi(u) (M(-u) + M(v)), and
    // phi(u) < e^-450: no cancellation.
    const LD rest =
        std::exp(-u * u / 2 - kLogSqrt2Pi) * (MillsRatio(-u).ratio + MillsRatio(u + 2 * a).ratio);
    return std::log1p(-rest);
  }
  return -kLogSqrt2Pi - u * u / 2 + std::log(MillsDifference(u, 2 * a));
}

// The smallest s = sigma / D with ContinuousLogDelta(s) <= log_target, to
// ~1e-19 relative (bisection keeps `hi` on the satisfying side).
LD NormalizedAnalyticSigma(LD epsilon, LD log_target) {
  auto ok = [&](LD s) { return ContinuousLogDelta(s, epsilon) <= log_target; };
  // Starting point: b - a = z with z^2 / 2 = -log(delta) and a b = eps / 2.
  const LD z = std::sqrt(std::max<LD>(0, -2 * log_target));
  const LD guess = (z + std::sqrt(z * z + 2 * epsilon)) / (2 * epsilon);
  LD lo;
  LD hi;
  if (ok(guess)) {
    hi = guess;
    lo = guess / 2;
    while (ok(lo)) {
      hi = lo;
      lo /= 2;
      if (!(lo > 1e-4000L)) throw std::overflow_error("analytic Gaussian: sigma underflows");
    }
  } else {
    lo = guess;
    hi = guess * 2;
    while (!ok(hi)) {
      lo = hi;
      hi *= 2;
      if (!(hi < 1e4000L)) throw std::overflow_error("analytic Gaussian: sigma overflows");
    }
  }
  for (int i = 0; i < 200 && hi - lo > hi * 1e-19L; ++i) {
    const LD middle = lo + (hi - lo) / 2;
    if (ok(middle)) {
      hi = middle;
    } else {
      lo = middle;
    }
  }
  return hi;
}

void CheckEpsilonDelta(double epsilon, double delta) {
  if (!std::isfinite(epsilon) || !(epsilon > 0))
    throw std::invalid_argument("epsilon must be finite and positive");
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1))
    throw std::invalid_argument("delta must lie strictly between 0 and 1");
}

LD LogTarget(double delta) {
  return std::log(static_cast<LD>(delta)) + std::log1p(-static_cast<LD>(kDeltaSafetyMargin));
}

// ---------------------------------------------------------------------------
// Discrete Gaussian sums.

// log Z, Z = sum over all integers k of exp(-k^2 / (2 sigma^2)).
LD LogNormalizer(LD sigma2, LD sigma) {
  if (sigma >= 8) {
    // Poisson summation: Z = sigma sqrt(2 pi) (1 + 2 sum_j exp(-2 pi^2 sigma^2 j^2)),
    // and the sum is below exp(-1263) here.
    return std::log(sigma) + kLogSqrt2Pi;
  }
  LD sum = 0;
  for (LD k = 1;; k += 1) {
    const LD term = std::exp(-k * k / (2 * sigma2));
    if (term < 1e-40L) break;
    sum += term;
  }
  return std::log1p(2 * sum);
}

// Weight of term k in the sums below: 1 for a tail probability, or
// 1 - exp(-D (k - c) / sigma^2) = 1 - exp(-D ((k - m) + theta) / sigma^2)
// for the privacy curve (m = floor(c) + 1, theta = m - c in (0, 1]).
struct Weight {
  bool privacy = false;
  LD sensitivity = 0;
  LD theta = 0;
};

// Euler-Maclaurin coefficients B_2j / (2j)!.
constexpr LD kEulerMaclaurin[] = {1.0L / 12,       -1.0L / 720,     1.0L / 30240,
                                  -1.0L / 1209600, 1.0L / 47900160, -691.0L / 1307674368000};

// Terms below exp(-kCutoff) times the largest are left out of direct sums.
constexpr LD kCutoff = 100;
// Direct summation up to this many terms, Euler-Maclaurin beyond.
constexpr LD kMaxDirectTerms = 4096;

// An upper bound on the log of sum_{k >= m} exp(-k^2 / (2 sigma^2)), m > 0:
// f(k+1)/f(k) <= exp(-m/sigma^2) for k >= m, a geometric series.
LD LogTailUpperBound(LD sigma2, LD m) {
  return -(m * m) / (2 * sigma2) - std::log(-std::expm1(-m / sigma2));
}

// log of sum_{k >= m} exp(-k^2 / (2 sigma^2)) w(k), m an integer; an upper
// bound (never an underestimate) in the degenerate cases noted below.
LD LogWeightedSum(LD sigma2, LD sigma, LD m, const Weight& w) {
  if (m > std::ldexp(1.0L, 60)) {
    // Beyond the range where k + 1 is exact in a long double (only for
    // astronomically small tails, e.g. epsilon ~ 1e300): weights are <= 1,
    // and m, rounded from c, is shrunk by 2^-60 to stay below the true m.
    return LogTailUpperBound(sigma2, m * (1 - std::ldexp(1.0L, -60)));
  }
  const LD k0 = m > 0 ? m : 0;  // the largest exp(-k^2/(2 sigma^2)) for k >= m
  const LD k_hi = std::ceil(std::sqrt(k0 * k0 + 2 * kCutoff * sigma2)) + 1;
  const LD k_lo = std::max(m, -(std::ceil(std::sqrt(2 * kCutoff) * sigma) + 1));
  if (k_hi - k_lo < kMaxDirectTerms) {
    LD sum = 0;
    for (LD k = k_lo; k <= k_hi; k += 1) {
      const LD weight = w.privacy ? -std::expm1(-w.sensitivity * ((k - m) + w.theta) / sigma2) : 1;
      sum += std::exp(-((k - k0) * (k + k0)) / (2 * sigma2)) * weight;
    }
    // Every term is at most 1 (relative to f(k0)); if all underflowed, say
    // so conservatively rather than report a zero.
    if (!(sum > 0)) sum = k_hi - k_lo + 1;
    return -(k0 * k0) / (2 * sigma2) + std::log(sum);
  }
  // Euler-Maclaurin: sum_{k>=m} g(k) = int_m^inf g + g(m)/2
  //   - sum_j B_2j/(2j)! g^(2j-1)(m) + R.
  // Here more than kMaxDirectTerms terms matter, so sigma > 145 and
  // sigma^2 / m > 40: g varies on a scale of >= 40 integers, and with six
  // corrections |R| is below ~12! / (2 pi 40)^12 ~ 1e-20 relative.
  // For the privacy weight g(x) = f(x) - e^eps f(x + D), f(x) = exp(-x^2/(2 sigma^2)),
  // and with u = m/sigma, v = u + D/sigma, eta = D theta / sigma^2
  // (so that e^eps f(m + D) = f(m) e^-eta):
  //   int_m^inf g = sigma f(m) (M(u) - e^-eta M(v)),
  //   g^(n)(m) = (-1)^n sigma^-n f(m) (He_n(u) - e^-eta He_n(v)),
  // He_n the probabilists' Hermite polynomials; e^-eta = 0 for a plain tail.
  const LD u = m / sigma;
  if (u < -30) {
    // Only for the privacy curve with c < -30 sigma: there delta > 1 - 1e-190,
    // and 0 = log 1 is an upper bound.
    return 0;
  }
  const LD h = w.privacy ? w.sensitivity / sigma : 0;
  const LD v = u + h;
  const LD one_minus_keep = w.privacy ? -std::expm1(-w.sensitivity * w.theta / sigma2) : 1;
  LD total = w.privacy ? sigma * (MillsDifference(u, h) + one_minus_keep * MillsRatio(v).ratio)
                       : sigma * MillsRatio(u).ratio;
  total += one_minus_keep / 2;
  // He_n(v) and d_n = He_n(u) - He_n(v) by the three-term recurrence
  // He_{n+1}(x) = x He_n(x) - n He_{n-1}(x), i.e.
  // d_{n+1} = u d_n - h He_n(v) - n d_{n-1}: no cancellation when u ~ v.
  LD he_v_prev = 1, he_v = v;  // He_0(v), He_1(v)
  LD he_u_prev = 1, he_u = u;
  LD d_prev = 0, d = -h;
  LD power = 1 / sigma;  // sigma^(1 - 2j)
  const LD inverse_sigma2 = 1 / sigma2;
  for (int n = 1, j = 0; j < 6; ++n) {
    if (n % 2 == 1) {
      const LD difference = w.privacy ? d + one_minus_keep * he_v : he_u;
      total += kEulerMaclaurin[j] * power * difference;
      power *= inverse_sigma2;
      ++j;
    }
    const LD next_v = v * he_v - n * he_v_prev;
    const LD next_u = u * he_u - n * he_u_prev;
    const LD next_d = u * d - h * he_v - n * d_prev;
    he_v_prev = he_v;
    he_v = next_v;
    he_u_prev = he_u;
    he_u = next_u;
    d_prev = d;
    d = next_d;
  }
  if (!(total > 0) || !std::isfinite(total)) {
    // Cannot happen in the regime used (the integral term dominates); fall
    // back to an upper bound: the plain tail, f(m) + integral, or 1 (m <= 0).
    if (u < 0) return LogNormalizer(sigma2, sigma);
    return -(u * u) / 2 + std::log1p(sigma * MillsRatio(u).ratio);
  }
  return -(u * u) / 2 + std::log(total);
}

LD ToLongDouble(uint128 value) { return static_cast<LD>(value); }

LD DiscreteLogDelta(LD sigma2, LD epsilon, LD sensitivity) {
  const LD sigma = std::sqrt(sigma2);
  const LD c = epsilon * sigma2 / sensitivity - sensitivity / 2;
  const LD m = std::floor(c) + 1;
  Weight w;
  w.privacy = true;
  w.sensitivity = sensitivity;
  w.theta = m - c;
  return LogWeightedSum(sigma2, sigma, m, w) - LogNormalizer(sigma2, sigma);
}

// Range of sigma^2 handled by DiscreteGaussianSigma2.
const LD kMinSigma2 = std::ldexp(1.0L, -120);
const LD kMaxSigma2 = std::ldexp(1.0L, 62);

// Rounds x in [kMinSigma2, kMaxSigma2) UP to num / 2^k. 56 significant bits
// (fewer below 1, so that 2 num den t^2 stays below 2^127: for
// x in [2^e, 2^(e+1)), e < 0, num <= 2^bits, den = 2^(bits - e - 1) and
// t = 1, so 2 num den <= 2^(2 bits - e) <= 2^126 with bits = (126 + e) / 2).
DyadicSigma2 RoundUpToDyadic(LD x) {
  int exponent = 0;
  const LD fraction = std::frexp(x, &exponent);  // x = fraction 2^exponent, fraction in [1/2, 1)
  const int e = exponent - 1;
  const int bits = e < 0 ? std::min(56, (126 + e) / 2) : 56;
  const uint128 numerator = static_cast<uint128>(std::ceil(std::ldexp(fraction, bits)));
  const int k = bits - exponent;  // x <= numerator * 2^-k
  DyadicSigma2 result;
  if (k >= 0) {
    result.numerator = numerator;
    result.denominator = uint128{1} << k;
  } else {
    result.numerator = numerator << (-k);
    result.denominator = 1;
  }
  return result;
}

LD DyadicValue(const DyadicSigma2& value) {
  return ToLongDouble(value.numerator) / ToLongDouble(value.denominator);
}

DyadicSigma2 CalibrateDiscrete(LD sensitivity, LD epsilon, LD log_target, LD normalized_sigma) {
  auto ok = [&](LD sigma2) { return DiscreteLogDelta(sigma2, epsilon, sensitivity) <= log_target; };
  const LD continuous = sensitivity * normalized_sigma;
  LD guess = std::min(std::max(continuous * continuous, kMinSigma2), kMaxSigma2 / 2);
  LD lo;
  LD hi;
  LD step = 1.001L;
  if (ok(guess)) {
    hi = guess;
    for (;;) {
      lo = std::max(hi / step, kMinSigma2);
      if (!ok(lo)) break;
      hi = lo;
      if (lo == kMinSigma2) break;  // even the smallest supported value will do
      step *= step;
    }
  } else {
    lo = guess;
    for (;;) {
      hi = lo * step;
      if (!(hi < kMaxSigma2)) {
        hi = kMaxSigma2;
        if (!ok(hi))
          throw InvalidParameter(
              "epsilon and delta are too small together for the Gaussian mechanism: its noise "
              "would exceed 2^31 grid steps",
              "Use a larger epsilon or a larger delta (for example epsilon >= 1e-6 with delta "
              ">= 1e-30), or the Laplace form without delta.");
        break;
      }
      if (ok(hi)) break;
      lo = hi;
      step *= step;
    }
  }
  // hi satisfies the condition, lo (< hi) does not, unless lo == hi.
  for (int i = 0; i < 100 && hi > lo * (1 + 1e-13L); ++i) {
    const LD middle = std::sqrt(lo * hi);
    if (ok(middle)) {
      hi = middle;
    } else {
      lo = middle;
    }
  }
  DyadicSigma2 result = RoundUpToDyadic(hi);
  // Verified at the exact value used (the curve is not monotone for small
  // sigma, so rounding up needs checking too).
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (DiscreteGaussianSupported(result.numerator, result.denominator) && ok(DyadicValue(result)))
      return result;
    result.numerator += std::max<uint128>(1, result.numerator >> 40);
  }
  throw std::invalid_argument("discrete Gaussian: no supported sigma^2 satisfies the condition");
}

}  // namespace

// ---------------------------------------------------------------------------

void ValidateDelta(double delta) {
  if (!std::isfinite(delta) || !(delta > 0) || !(delta < 1)) {
    char buffer[120];
    std::snprintf(buffer, sizeof buffer, "delta must lie strictly between 0 and 1, not %g", delta);
    throw InvalidParameter(buffer,
                           "delta is the probability that the epsilon guarantee fails: use a "
                           "number much smaller than one over the number of rows, such as 1e-9.");
  }
}

double AnalyticGaussianLogDelta(double sensitivity, double sigma, double epsilon) {
  if (!std::isfinite(sensitivity) || !(sensitivity > 0) || !std::isfinite(sigma) || !(sigma > 0) ||
      !std::isfinite(epsilon) || !(epsilon > 0))
    throw std::invalid_argument("AnalyticGaussianLogDelta: arguments must be finite and positive");
  return static_cast<double>(
      ContinuousLogDelta(static_cast<LD>(sigma) / static_cast<LD>(sensitivity), epsilon));
}

double AnalyticGaussianDelta(double sensitivity, double sigma, double epsilon) {
  return std::exp(AnalyticGaussianLogDelta(sensitivity, sigma, epsilon));
}

double AnalyticGaussianSigma(double sensitivity, double epsilon, double delta) {
  CheckEpsilonDelta(epsilon, delta);
  if (!std::isfinite(sensitivity) || sensitivity < 0)
    throw std::invalid_argument("sensitivity must be finite and non-negative");
  if (sensitivity == 0) return 0;
  const LD log_target = LogTarget(delta);
  const LD d = sensitivity;
  const LD exact = d * NormalizedAnalyticSigma(epsilon, log_target);
  if (!(exact < static_cast<LD>(std::numeric_limits<double>::max())))
    throw std::overflow_error("analytic Gaussian: sigma exceeds the double range");
  double sigma = static_cast<double>(exact);
  if (static_cast<LD>(sigma) < exact) sigma = std::nextafter(sigma, HUGE_VAL);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (sigma > 0 && std::isfinite(sigma) &&
        ContinuousLogDelta(static_cast<LD>(sigma) / d, epsilon) <= log_target)
      return sigma;
    sigma = std::nextafter(sigma * (1 + 0x1p-40), HUGE_VAL);
  }
  throw std::logic_error("analytic Gaussian: calibration could not be verified");
}

double DiscreteGaussianLogDelta(uint128 sensitivity, uint128 sigma2_numerator,
                                uint128 sigma2_denominator, double epsilon) {
  if (sensitivity == 0 || sigma2_numerator == 0 || sigma2_denominator == 0 ||
      !std::isfinite(epsilon) || !(epsilon > 0))
    throw std::invalid_argument("DiscreteGaussianLogDelta: arguments must be positive");
  return static_cast<double>(
      DiscreteLogDelta(ToLongDouble(sigma2_numerator) / ToLongDouble(sigma2_denominator), epsilon,
                       ToLongDouble(sensitivity)));
}

DyadicSigma2 DiscreteGaussianSigma2(uint128 sensitivity, double epsilon, double delta) {
  CheckEpsilonDelta(epsilon, delta);
  if (sensitivity == 0) return DyadicSigma2{};
  const LD log_target = LogTarget(delta);
  return CalibrateDiscrete(ToLongDouble(sensitivity), epsilon, log_target,
                           NormalizedAnalyticSigma(epsilon, log_target));
}

double DiscreteGaussianLogUpperTail(uint128 sigma2_numerator, uint128 sigma2_denominator,
                                    int128 k) {
  if (sigma2_numerator == 0 || sigma2_denominator == 0 || k < 1)
    throw std::invalid_argument("DiscreteGaussianLogUpperTail: need sigma^2 > 0 and k >= 1");
  const LD sigma2 = ToLongDouble(sigma2_numerator) / ToLongDouble(sigma2_denominator);
  const LD sigma = std::sqrt(sigma2);
  return static_cast<double>(LogWeightedSum(sigma2, sigma, static_cast<LD>(k), Weight{}) -
                             LogNormalizer(sigma2, sigma));
}

double DiscreteGaussianVariance(uint128 sigma2_numerator, uint128 sigma2_denominator) {
  if (sigma2_denominator == 0) throw std::invalid_argument("zero denominator");
  if (sigma2_numerator == 0) return 0;
  const LD sigma2 = ToLongDouble(sigma2_numerator) / ToLongDouble(sigma2_denominator);
  if (sigma2 >= 64) return static_cast<double>(sigma2);
  LD normalizer = 0;
  LD second = 0;
  for (LD k = 1;; k += 1) {
    const LD term = std::exp(-k * k / (2 * sigma2));
    if (term < 1e-40L) break;
    normalizer += term;
    second += k * k * term;
  }
  return static_cast<double>(2 * second / (1 + 2 * normalizer));
}

GaussianPlan PlanGaussian(uint128 sensitivity_units, double epsilon, double delta) {
  CheckEpsilonDelta(epsilon, delta);
  if (sensitivity_units == 0) return GaussianPlan{};
  internal::GaussianPlanKey key;
  key.sensitivity_units = sensitivity_units;
  key.epsilon_bits = internal::DoubleBits(epsilon);
  key.delta_bits = internal::DoubleBits(delta);
  return internal::GaussianPlans().Get(
      key, [&] { return internal::PlanGaussianUncached(sensitivity_units, epsilon, delta); });
}

GaussianPlan internal::PlanGaussianUncached(uint128 sensitivity_units, double epsilon,
                                            double delta) {
  CheckEpsilonDelta(epsilon, delta);
  GaussianPlan plan;
  if (sensitivity_units == 0) return plan;  // a constant statistic needs no noise
  const LD log_target = LogTarget(delta);
  const LD normalized = NormalizedAnalyticSigma(epsilon, log_target);
  // The finest grid R = 2^shift with ceil(D / R) * s <= 2^30 (s = sigma per
  // unit of sensitivity of the continuous calibration): for counts and
  // integer sums at ordinary parameters that is R = 1.
  const LD limit = std::ldexp(1.0L, kGaussianGridBitsBelowSigma);
  int shift = 0;
  while (CeilShift(sensitivity_units, shift) > 1 &&
         ToLongDouble(CeilShift(sensitivity_units, shift)) * normalized > limit)
    ++shift;
  plan.grid_shift = shift;
  plan.sensitivity = CeilShift(sensitivity_units, shift);
  const DyadicSigma2 sigma2 =
      CalibrateDiscrete(ToLongDouble(plan.sensitivity), epsilon, log_target, normalized);
  plan.sigma2_numerator = sigma2.numerator;
  plan.sigma2_denominator = sigma2.denominator;
  return plan;
}

void PrepareGaussian(const GaussianPlan& plan) {
  if (plan.sensitivity != 0 && plan.sigma2_numerator != 0)
    PrepareDiscreteGaussian(plan.sigma2_numerator, plan.sigma2_denominator);
}

GridValue ReleaseGaussian(int128 value, int unit_exponent, const GaussianPlan& plan,
                          RandomSource& rng) {
  GridValue result;
  result.exponent = unit_exponent + plan.grid_shift;
  result.mantissa = RoundToGrid(value, plan.grid_shift);
  if (plan.sensitivity != 0 && plan.sigma2_numerator != 0)
    result.mantissa += SampleDiscreteGaussian(rng, plan.sigma2_numerator, plan.sigma2_denominator);
  return result;
}

double GaussianNoiseStddev(const GaussianPlan& plan, int unit_exponent) {
  if (plan.sensitivity == 0 || plan.sigma2_numerator == 0) return 0.0;
  const double steps =
      std::sqrt(DiscreteGaussianVariance(plan.sigma2_numerator, plan.sigma2_denominator));
  return std::ldexp(steps, unit_exponent + plan.grid_shift);
}

GaussianPlan PlanGaussianCount(double epsilon, double delta) {
  return PlanGaussian(1, epsilon, delta);
}

GaussianPlan PlanGaussianSum(std::int64_t lower_units, std::int64_t upper_units, double epsilon,
                             double delta) {
  return PlanGaussian(SumSensitivity(lower_units, upper_units), epsilon, delta);
}

GaussianMeanPlans PlanGaussianMean(std::int64_t lower_units, std::int64_t upper_units,
                                   double epsilon, double delta) {
  // Centred half-unit values 2v - (lower + upper) lie in [-(upper - lower), upper - lower].
  const uint128 width = static_cast<uint128>(int128{upper_units} - int128{lower_units});
  const MeanPartBudget part = SplitMeanBudget(epsilon, delta);
  return GaussianMeanPlans{PlanGaussian(1, part.epsilon, part.delta),
                           PlanGaussian(width, part.epsilon, part.delta)};
}

MeanRelease ReleaseGaussianMeanParts(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                                     std::int64_t upper_units, int unit_exponent,
                                     const GaussianMeanPlans& plans, RandomSource& rng) {
  const int128 centred_sum = CentredSumHalfUnits(count, sum_units, lower_units, upper_units);
  const GridValue noisy_count = ReleaseGaussian(count, 0, plans.count, rng);
  const GridValue noisy_centred_sum =
      ReleaseGaussian(centred_sum, unit_exponent - 1, plans.centred_sum, rng);
  return MeanFromReleases(noisy_count, noisy_centred_sum, lower_units, upper_units, unit_exponent);
}

double ReleaseGaussianMean(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                           std::int64_t upper_units, int unit_exponent,
                           const GaussianMeanPlans& plans, RandomSource& rng) {
  return ReleaseGaussianMeanParts(count, sum_units, lower_units, upper_units, unit_exponent, plans,
                                  rng)
      .mean;
}

}  // namespace dp
