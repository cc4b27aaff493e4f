#include "privacy_accountant.h"

#include <gmp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include "calibration_cache.h"
#include "parameters.h"

namespace dp {

namespace {

using LD = long double;

// Relative margin by which every reported bound is rounded up: far above the
// long double error of the evaluations below (~1e-16 relative), far below
// anything visible.
const LD kUpMargin = 1.0L + std::ldexp(1.0L, -40);

double RoundUp(LD x) {
  if (!(x > 0)) return 0.0;
  const LD widened = x * kUpMargin;
  double d = static_cast<double>(widened);
  if (static_cast<LD>(d) < widened) d = std::nextafter(d, HUGE_VAL);
  if (d == 0) d = std::numeric_limits<double>::denorm_min();
  return d;
}

double RoundDown(LD x) {
  if (!(x > 0)) return 0.0;
  const LD narrowed = x / kUpMargin;
  double d = static_cast<double>(narrowed);
  if (static_cast<LD>(d) > narrowed) d = std::nextafter(d, 0.0);
  return d;
}

// a + b rounded up (TwoSum: the exact error of the double addition).
double AddUp(double a, double b) {
  const double sum = a + b;
  const double b_virtual = sum - a;
  const double a_virtual = sum - b_virtual;
  const double error = (a - a_virtual) + (b - b_virtual);
  return error > 0 ? std::nextafter(sum, HUGE_VAL) : sum;
}

double SquareUp(double x) {
  const double p = x * x;
  return std::fma(x, x, -p) > 0 ? std::nextafter(p, HUGE_VAL) : p;
}

void CheckAmount(double x, const char* what) {
  if (!std::isfinite(x) || x < 0)
    throw std::invalid_argument(std::string("privacy accountant: ") + what +
                                " must be finite and non-negative");
}

// Renyi divergence bound of order alpha of everything but the approximate
// releases: alpha rho + min(E1, alpha E2 / 2).
struct RenyiCurve {
  LD rho = 0;
  LD pure = 0;  // E1
  LD pure_squared = 0;  // E2
  LD Tau(LD alpha) const { return alpha * rho + std::min(pure, alpha * pure_squared / 2); }
  bool Empty() const { return rho == 0 && pure == 0; }
};

// log delta at order alpha (CKS20 Proposition 12), alpha = 1 + exp(t).
LD LogDeltaAt(const RenyiCurve& curve, LD epsilon, LD t) {
  const LD alpha_minus_1 = std::exp(t);
  const LD alpha = 1 + alpha_minus_1;
  return alpha_minus_1 * (curve.Tau(alpha) - epsilon) + alpha * std::log1p(-1 / alpha) - t;
}

// epsilon at order alpha for a given log delta (Proposition 12 solved for epsilon).
LD EpsilonAt(const RenyiCurve& curve, LD log_delta, LD t) {
  const LD alpha_minus_1 = std::exp(t);
  const LD alpha = 1 + alpha_minus_1;
  return curve.Tau(alpha) + (alpha * std::log1p(-1 / alpha) - t - log_delta) / alpha_minus_1;
}

// The minimum over t of f found by a scan over t in [-30, 45] and golden-section
// refinement around the best grid point. Any t gives a valid bound, so this
// only has to be good, not exact.
LD MinimizeOverOrder(const std::function<LD(LD)>& f) {
  constexpr int kGrid = 600;
  constexpr LD kLow = -30, kHigh = 45;
  const LD step = (kHigh - kLow) / kGrid;
  int best_index = 0;
  LD best = f(kLow);
  for (int i = 1; i <= kGrid; ++i) {
    const LD value = f(kLow + i * step);
    if (value < best) {
      best = value;
      best_index = i;
    }
  }
  LD a = kLow + (best_index - 1) * step, b = kLow + (best_index + 1) * step;
  const LD golden = (std::sqrt(5.0L) - 1) / 2;
  LD c = b - golden * (b - a), d = a + golden * (b - a);
  LD fc = f(c), fd = f(d);
  for (int i = 0; i < 80; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - golden * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + golden * (b - a);
      fd = f(d);
    }
  }
  return std::min({best, fc, fd});
}

LD CurveLogDelta(const RenyiCurve& curve, LD epsilon) {
  return MinimizeOverOrder([&](LD t) { return LogDeltaAt(curve, epsilon, t); });
}

LD CurveEpsilon(const RenyiCurve& curve, LD log_delta) {
  return MinimizeOverOrder([&](LD t) { return EpsilonAt(curve, log_delta, t); });
}

// A finite log delta is a positive delta, however small: a value below the
// long double range is reported as the smallest positive double, never as 0
// (which would certify (epsilon, 0)-DP for a Gaussian release).
double DeltaFromLog(LD log_delta) {
  if (log_delta >= 0) return 1.0;
  if (std::isnan(log_delta)) return 1.0;
  const double delta = RoundUp(std::exp(log_delta));
  if (!(delta > 0)) return std::numeric_limits<double>::denorm_min();
  return std::min(1.0, delta);
}

}  // namespace

double GaussianRho(double sensitivity, double sigma) {
  if (!std::isfinite(sensitivity) || sensitivity < 0 || !std::isfinite(sigma) || !(sigma > 0))
    throw std::invalid_argument("GaussianRho: sensitivity >= 0 and sigma > 0, both finite");
  const LD s = sensitivity;
  const LD g = sigma;
  return RoundUp(s * s / (2 * g * g));
}

double GaussianPlanRho(const GaussianPlan& plan) {
  if (plan.sensitivity == 0 || plan.sigma2_numerator == 0) return 0.0;
  const LD d = static_cast<LD>(plan.sensitivity);
  return RoundUp(d * d * static_cast<LD>(plan.sigma2_denominator) /
                 (2 * static_cast<LD>(plan.sigma2_numerator)));
}

double ZcdpDelta(double rho, double epsilon) {
  CheckAmount(rho, "rho");
  CheckAmount(epsilon, "epsilon");
  if (rho == 0) return 0.0;
  RenyiCurve curve;
  curve.rho = rho;
  return DeltaFromLog(CurveLogDelta(curve, epsilon));
}

double ZcdpEpsilon(double rho, double delta) {
  CheckAmount(rho, "rho");
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("ZcdpEpsilon: delta in (0, 1)");
  if (rho == 0) return 0.0;
  RenyiCurve curve;
  curve.rho = rho;
  return RoundUp(std::max<LD>(0, CurveEpsilon(curve, std::log(static_cast<LD>(delta)))));
}

double RhoForEpsilonDelta(double epsilon, double delta) {
  if (!std::isfinite(epsilon) || !(epsilon > 0) || !(delta > 0 && delta < 1))
    throw std::invalid_argument("RhoForEpsilonDelta: epsilon > 0 and delta in (0, 1)");
  internal::EpsilonDeltaKey key;
  key.epsilon_bits = internal::DoubleBits(epsilon);
  key.delta_bits = internal::DoubleBits(delta);
  return internal::RhosForEpsilonDelta().Get(
      key, [&] { return internal::RhoForEpsilonDeltaUncached(epsilon, delta); });
}

double internal::RhoForEpsilonDeltaUncached(double epsilon, double delta) {
  if (!std::isfinite(epsilon) || !(epsilon > 0) || !(delta > 0 && delta < 1))
    throw std::invalid_argument("RhoForEpsilonDelta: epsilon > 0 and delta in (0, 1)");
  // Bisection over the bit patterns of the non-negative doubles, which are
  // ordered like their values: at most 63 halvings of [0, +inf), whatever
  // epsilon and delta are (issue 26: the former search stepped down one
  // double at a time and never ended when no positive rho fits). Invariant:
  // `low` fits (ZcdpDelta(low) <= delta; rho 0 always does) and `high` does
  // not (+inf is not a rho). It ends with high the double right above low,
  // so the result fits and the next double up does not: the largest rho at
  // double resolution (exactly the largest wherever ZcdpDelta is monotone in
  // rho; its grid minimum over the order is, its golden-section refinement
  // only lowers delta by a little).
  std::uint64_t low = 0;  // bits of 0.0
  std::uint64_t high = 0x7ff0000000000000ULL;  // bits of +infinity
  auto value = [](std::uint64_t bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  };
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (ZcdpDelta(value(middle), epsilon) <= delta) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return value(low);
}

PrivacyAccountant::PrivacyAccountant(const PrivacySpend& spend) {
  CheckAmount(spend.pure_epsilon, "pure epsilon");
  CheckAmount(spend.pure_epsilon_squared, "pure epsilon squared");
  CheckAmount(spend.rho, "rho");
  CheckAmount(spend.approx_epsilon, "approximate epsilon");
  CheckAmount(spend.approx_delta, "approximate delta");
  spend_ = spend;
}

double GaussianCountEpsilonForRho(double rho, double delta) {
  if (!std::isfinite(rho) || !(rho > 0) || !(delta > 0 && delta < 1))
    throw std::invalid_argument("GaussianCountEpsilonForRho: rho > 0 and delta in (0, 1)");
  auto fits = [&](double epsilon) {
    if (epsilon <= 0) return true;
    try {
      // Uncached: the search's many epsilons would only flush the memo.
      return GaussianPlanRho(internal::PlanGaussianUncached(1, epsilon, delta)) <= rho;
    } catch (const std::invalid_argument&) {
      return false;  // too wide for the sampler: treated as not fitting
    }
  };
  // The plan's rho grows with epsilon (less noise); the bisection keeps a
  // value at which fits() held.
  double low = 0;
  double high = 1;
  while (fits(high)) {
    low = high;
    high *= 2;
    if (high > 1e6) return low;
  }
  if (low == 0) {
    low = high;
    // Down to kMinEpsilon (2^-50), the smallest epsilon dp_count accepts, not
    // to 1e-300: below it no answer is usable, and the ~1000 calibrations of
    // the old bound took seconds without a check for interrupts (issue 26's
    // all-functions fuzz pass: gaussian_count_epsilon(0.5, 0.5), where no
    // epsilon fits). At most 51 halvings.
    while (low > kMinEpsilon && !fits(low)) low /= 2;
    if (!fits(low)) return 0.0;
    high = low * 2;
  }
  for (int i = 0; i < 200 && high - low > 1e-9 * low; ++i) {
    const double middle = low + (high - low) / 2;
    if (fits(middle)) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

void PrivacyAccountant::AddPure(double epsilon) {
  CheckAmount(epsilon, "epsilon");
  spend_.pure_epsilon = AddUp(spend_.pure_epsilon, epsilon);
  spend_.pure_epsilon_squared = AddUp(spend_.pure_epsilon_squared, SquareUp(epsilon));
}

void PrivacyAccountant::AddZcdp(double rho) {
  CheckAmount(rho, "rho");
  spend_.rho = AddUp(spend_.rho, rho);
}

void PrivacyAccountant::AddApproximate(double epsilon, double delta) {
  CheckAmount(epsilon, "epsilon");
  CheckAmount(delta, "delta");
  spend_.approx_epsilon = AddUp(spend_.approx_epsilon, epsilon);
  spend_.approx_delta = AddUp(spend_.approx_delta, delta);
}

double PrivacyAccountant::Delta(double epsilon) const {
  CheckAmount(epsilon, "epsilon");
  const LD remaining = static_cast<LD>(epsilon) - spend_.approx_epsilon;
  if (remaining < 0) return 1.0;
  RenyiCurve curve{spend_.rho, spend_.pure_epsilon, spend_.pure_epsilon_squared};
  double delta = 1.0;
  if (curve.Empty()) {
    delta = 0.0;
  } else {
    delta = DeltaFromLog(CurveLogDelta(curve, remaining));
    // Basic composition of the pure part with the converted zCDP part.
    if (remaining >= curve.pure) {
      const double rest = static_cast<double>(remaining - curve.pure);
      delta = std::min(delta, spend_.rho == 0 ? 0.0 : ZcdpDelta(spend_.rho, rest));
    }
  }
  return std::min(1.0, AddUp(delta, spend_.approx_delta));
}

double PrivacyAccountant::Epsilon(double delta) const {
  if (!(delta >= 0 && delta < 1)) throw std::invalid_argument("Epsilon: delta in [0, 1)");
  const LD remaining = static_cast<LD>(delta) - spend_.approx_delta;
  RenyiCurve curve{spend_.rho, spend_.pure_epsilon, spend_.pure_epsilon_squared};
  // Pure composition with delta 0 (exact: no conversion involved).
  const bool pure_only = spend_.rho == 0 && remaining >= 0;
  LD best = std::numeric_limits<LD>::infinity();
  if (remaining > 0 && !curve.Empty()) {
    const double rest = static_cast<double>(remaining);
    best = std::min<LD>(best, std::max<LD>(0, CurveEpsilon(curve, std::log(remaining))));
    if (spend_.rho > 0) best = std::min<LD>(best, curve.pure + ZcdpEpsilon(spend_.rho, rest));
  }
  double result = std::isfinite(static_cast<double>(best)) ? RoundUp(best) : HUGE_VAL;
  if (pure_only) result = std::min(result, spend_.pure_epsilon);
  if (!std::isfinite(result)) return HUGE_VAL;
  return AddUp(result, spend_.approx_epsilon);
}

DyadicSigma2 Sigma2ForRho(uint128 sensitivity, double rho) {
  if (sensitivity == 0 || !std::isfinite(rho) || !(rho > 0))
    throw std::invalid_argument("Sigma2ForRho: sensitivity >= 1 and rho > 0");
  const LD d = static_cast<LD>(sensitivity);
  const LD target = d * d / (2 * static_cast<LD>(rho)) * kUpMargin;
  // Round up to numerator / 2^k with 56 significant bits.
  int exponent = 0;
  const LD fraction = std::frexp(target, &exponent);
  constexpr int kBits = 56;
  int k = kBits - exponent;
  uint128 numerator = static_cast<uint128>(std::ceil(std::ldexp(fraction, kBits)));
  if (k < 0) {
    numerator <<= -k;
    k = 0;
  }
  if (k > 126) throw std::invalid_argument("Sigma2ForRho: sigma is too small");
  // Exact check: 2 rho sigma^2 >= D^2, rho = m 2^e: m N 2^(e + 1) >= D^2 2^k.
  int rho_exponent = 0;
  const double rho_fraction = std::frexp(rho, &rho_exponent);
  const std::uint64_t m = static_cast<std::uint64_t>(std::ldexp(rho_fraction, 53));
  const int e = rho_exponent - 53;
  auto holds = [&](uint128 n) {
    mpz_t left, right, tmp;
    mpz_inits(left, right, tmp, nullptr);
    mpz_set_ui(left, static_cast<unsigned long>(n >> 64));
    mpz_mul_2exp(left, left, 64);
    mpz_add_ui(left, left, static_cast<unsigned long>(static_cast<std::uint64_t>(n)));
    mpz_mul_ui(left, left, m);
    mpz_set_ui(right, static_cast<unsigned long>(sensitivity >> 64));
    mpz_mul_2exp(right, right, 64);
    mpz_add_ui(right, right, static_cast<unsigned long>(static_cast<std::uint64_t>(sensitivity)));
    mpz_mul(right, right, right);
    // left 2^(e + 1) >= right 2^k
    const long shift = static_cast<long>(e) + 1 - k;
    if (shift >= 0) {
      mpz_mul_2exp(left, left, static_cast<mp_bitcnt_t>(shift));
    } else {
      mpz_mul_2exp(right, right, static_cast<mp_bitcnt_t>(-shift));
    }
    const bool ok = mpz_cmp(left, right) >= 0;
    mpz_clears(left, right, tmp, nullptr);
    return ok;
  };
  while (!holds(numerator)) numerator += std::max<uint128>(1, numerator >> 50);
  DyadicSigma2 result;
  result.numerator = numerator;
  result.denominator = uint128{1} << k;
  return result;
}

GaussianPlan PlanGaussianForRho(uint128 sensitivity_units, double rho) {
  if (!std::isfinite(rho) || !(rho > 0))
    throw InvalidParameter("rho must be a finite positive number",
                           "rho is the zero-concentrated DP cost of the release (e.g. 0.01).");
  GaussianPlan plan;
  if (sensitivity_units == 0) return plan;
  const LD normalized = 1 / std::sqrt(2 * static_cast<LD>(rho));
  const LD limit = std::ldexp(1.0L, kGaussianGridBitsBelowSigma);
  int shift = 0;
  while (CeilShift(sensitivity_units, shift) > 1 &&
         static_cast<LD>(CeilShift(sensitivity_units, shift)) * normalized > limit)
    ++shift;
  plan.grid_shift = shift;
  plan.sensitivity = CeilShift(sensitivity_units, shift);
  const DyadicSigma2 sigma2 = Sigma2ForRho(plan.sensitivity, rho);
  if (!DiscreteGaussianSupported(sigma2.numerator, sigma2.denominator))
    throw std::invalid_argument("rho is too small for the discrete Gaussian sampler");
  plan.sigma2_numerator = sigma2.numerator;
  plan.sigma2_denominator = sigma2.denominator;
  return plan;
}

GaussianMeanPlans PlanGaussianMeanForRho(std::int64_t lower_units, std::int64_t upper_units,
                                         double rho) {
  const uint128 width = static_cast<uint128>(int128{upper_units} - int128{lower_units});
  const double half = RoundDown(static_cast<LD>(rho) / 2);
  return GaussianMeanPlans{PlanGaussianForRho(1, half), PlanGaussianForRho(width, half)};
}

GaussianMeanPlans PlanGaussianMeanJoint(std::int64_t lower_units, std::int64_t upper_units,
                                        double epsilon, double delta) {
  const GaussianMeanPlans halved = PlanGaussianMean(lower_units, upper_units, epsilon, delta);
  const double rho = RhoForEpsilonDelta(epsilon, delta);
  // No positive half of rho (the accountant certifies none at this epsilon
  // and delta): PlanGaussianMeanForRho would refuse rho 0 with a message
  // about rho, which the caller never gave. The halved plan stands alone.
  if (!(RoundDown(static_cast<LD>(rho) / 2) > 0)) return halved;
  const GaussianMeanPlans joint = PlanGaussianMeanForRho(lower_units, upper_units, rho);
  // Worst-case variance of the numerator S - mu C (|mu| <= h, in half-units
  // h = upper - lower): sigma_s^2 + h^2 sigma_c^2.
  const LD h = static_cast<LD>(int128{upper_units} - int128{lower_units});
  auto worst = [&](const GaussianMeanPlans& p) {
    const LD c = GaussianNoiseStddev(p.count, 0);
    const LD s = GaussianNoiseStddev(p.centred_sum, 0);
    return s * s + h * h * c * c;
  };
  return worst(joint) <= worst(halved) ? joint : halved;
}

}  // namespace dp
