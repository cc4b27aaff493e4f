// The (epsilon, delta) Gaussian mechanism on a binary grid, with discrete
// Gaussian noise sampled exactly.
//
// Three layers:
//
// 1. Analytic calibration of the continuous Gaussian mechanism (Balle & Wang,
//    "Improving the Gaussian Mechanism for Differential Privacy: Analytical
//    Calibration and Optimal Denoising", ICML 2018, Theorem 8 / Algorithm 1):
//    f(x) + N(0, sigma^2), f of L2 sensitivity D, is (epsilon, delta)-DP iff
//      Phi(D / (2 sigma) - epsilon sigma / D)
//        - e^epsilon Phi(-D / (2 sigma) - epsilon sigma / D) <= delta.
//    Evaluated in log space through the Mills ratio, so that neither e^epsilon
//    (epsilon up to 1e6 and beyond) nor a tiny delta (down to the smallest
//    subnormal) overflows, underflows or cancels.
//
// 2. The discrete Gaussian N_Z(0, sigma^2), P[X = x] proportional to
//    exp(-x^2 / (2 sigma^2)) on the integers (Canonne, Kamath, Steinke, "The
//    Discrete Gaussian for Differential Privacy", NeurIPS 2020,
//    arXiv:2004.00010; "CKS20"), sampled exactly by rejection from the
//    discrete Laplace (CKS20 Algorithm 3) with a rational sigma^2: integer
//    arithmetic only, no floating point (Mironov, CCS 2012).
//
//    Privacy of the discrete version. It is NOT true that N_Z(0, sigma^2)
//    inherits the continuous guarantee for the same sigma: for sensitivity 1,
//    sigma^2 = 100, epsilon = 1 the continuous delta is 1.231e-25 but the
//    discrete one 1.279e-25 (+4%); at epsilon = 3, +17%; at sigma^2 = 0.1,
//    epsilon = 1: 0.819 vs 0.975. So the discrete noise is calibrated on its
//    own exact privacy curve (CKS20 Theorem 7): for an integer-valued query
//    whose value changes by at most D (an integer) between neighbours,
//    q(x) + N_Z(0, sigma^2) is (epsilon, delta)-DP with
//      delta = P[Y > epsilon sigma^2 / D - D / 2]
//                - e^epsilon P[Y > epsilon sigma^2 / D + D / 2],  Y ~ N_Z(0, sigma^2),
//    and this is the smallest such delta. (Derivation, which this code relies
//    on: the privacy loss between N_Z(0, s^2) and N_Z(d, s^2) is
//    d (d - 2y) / (2 s^2), the hockey-stick divergence is
//    sum over y of max(0, P(y) - e^eps P(y - d)); the likelihood ratio is
//    monotone in y, so the supremum is over half-lines, on each of which the
//    objective grows with d; hence shifts d < D are no worse than D.)
//    The curve is not monotone in sigma^2 for small sigma (e.g. epsilon = 3,
//    D = 1: delta(0.50) = 0.0090 < delta(0.65) = 0.0135), so the calibration
//    verifies the condition at exactly the sigma^2 it returns.
//
// 3. The grid release (same construction as laplace_mechanism.h): the
//    statistic is rounded to a multiple of R = 2^grid_shift units, which
//    gives sensitivity ceil(D / R) grid steps, and an integer number of grid
//    steps of discrete Gaussian noise is added.
#ifndef DP_AGG_CORE_GAUSSIAN_MECHANISM_H
#define DP_AGG_CORE_GAUSSIAN_MECHANISM_H

#include <cstdint>

#include "grid_value.h"
#include "private_statistics.h"
#include "random_source.h"

namespace dp {

// delta must be a finite number in (0, 1); throws InvalidParameter (see
// parameters.h) with a hint otherwise.
void ValidateDelta(double delta);

// ---------------------------------------------------------------------------
// Continuous analytic Gaussian mechanism (Balle & Wang 2018).

// Natural log of the smallest delta for which N(0, sigma^2) noise on a
// statistic of L2 sensitivity `sensitivity` is (epsilon, delta)-DP
// (Theorem 8). Computed in long double, so it does not underflow for
// log-deltas down to about -1e4900 (beyond the double range it returns
// -inf). Accuracy: within 1e-14 of 200-digit arithmetic over epsilon in
// [1e-15, 1e6] (i.e. delta to ~1e-14 relative).
double AnalyticGaussianLogDelta(double sensitivity, double sigma, double epsilon);
// exp of the above (underflows to 0 below ~1e-308).
double AnalyticGaussianDelta(double sensitivity, double sigma, double epsilon);

// The smallest sigma with AnalyticGaussianLogDelta <= log(delta), found by
// doubling then bisection (Algorithm 1 computes the same quantity), then
// rounded UP to a double at which the condition is verified with a relative
// safety margin kDeltaSafetyMargin on delta. sensitivity >= 0 (0 gives 0),
// epsilon > 0, delta in (0, 1), all finite. Throws std::invalid_argument on
// bad input and std::overflow_error if sigma exceeds the double range (only
// for absurd inputs such as epsilon = delta = 1e-300).
double AnalyticGaussianSigma(double sensitivity, double epsilon, double delta);

// The calibrations demand delta(sigma) <= delta * (1 - kDeltaSafetyMargin),
// which absorbs the floating-point error of evaluating the privacy curves
// (measured below 1e-13 relative against mpmath at 200 digits for the
// continuous and 40 digits for the discrete curve) at a cost in sigma below
// 1e-9 relative.
inline constexpr double kDeltaSafetyMargin = 1.0 / (1u << 30);  // ~9.3e-10

// ---------------------------------------------------------------------------
// Discrete Gaussian.

// N_Z(0, sigma^2) with sigma^2 = numerator / denominator exactly (CKS20
// Algorithm 3; numerator 0 gives 0). With t = floor(sigma) + 1 it draws
// Y ~ DiscreteLaplace(t) and accepts with probability
// exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-Z^2 / Den),
// Z = |Y| t den - num, Den = 2 num den t^2, computed in 256-bit integer
// arithmetic and passed to SampleBernoulliExpMinus as
// exp(-floor(Z^2/Den)) * exp(-(Z^2 mod Den)/Den).
// Supported range: denominator >= 1 and Den < 2^127 (else
// std::invalid_argument); see DiscreteGaussianSupported. Every value of
// |Y| is handled exactly: if |Y| t den overflows 128 bits, the acceptance
// exponent exceeds 2^127 and the candidate is rejected unless 2^127
// consecutive Bernoulli(1/e) trials succeed (never; it would then throw
// rather than return a wrong sample).
// Timing: the number of rejected candidates is independent of the returned
// value (as in any rejection sampler), and every round does the same work
// whatever it proposes or decides: a fixed-work discrete Laplace proposal
// and a fixed-work acceptance test (the exponent's whole part capped at 63 by
// branch-free long division, then internal::SampleBernoulliExpMinusSmall).
// Extra work happens only with probability < 2^-64 per draw (see
// exact_sampler.h), e.g. when an exponent >= 64 passes its exp(-63) factor.
int128 SampleDiscreteGaussian(RandomSource& rng, uint128 sigma2_numerator,
                              uint128 sigma2_denominator);

// Whether SampleDiscreteGaussian accepts these parameters.
bool DiscreteGaussianSupported(uint128 sigma2_numerator, uint128 sigma2_denominator);

// Caches what the first draw with these parameters would compute (the
// discrete Laplace constants of its proposal: exact_sampler.h
// PrepareDiscreteLaplace).
void PrepareDiscreteGaussian(uint128 sigma2_numerator, uint128 sigma2_denominator);

// sigma^2 = numerator / denominator, denominator a power of two.
struct DyadicSigma2 {
  uint128 numerator = 0;
  uint128 denominator = 1;
};

// Natural log of CKS20 Theorem 7's delta for integer sensitivity D >= 1
// (grid steps), sigma^2 = numerator / denominator > 0 and epsilon > 0.
// Computed as (1/Z) sum_{k > c} exp(-k^2 / (2 sigma^2)) (1 - exp(-D (k - c) / sigma^2)),
// c = epsilon sigma^2 / D - D / 2, a sum of positive terms (no
// cancellation), summed directly when that takes at most 4096 terms and
// otherwise by Euler-Maclaurin with 6 correction terms, whose remainder is
// then below 1e-18 relative (the summand varies on a scale of at least ~40
// integers in that case). Returns -inf below the double range, and a
// rigorous upper bound (never an underestimate) when c > 2^60.
double DiscreteGaussianLogDelta(uint128 sensitivity, uint128 sigma2_numerator,
                                uint128 sigma2_denominator, double epsilon);

// A sigma^2 (dyadic, <= 56 significant bits, >= 2^-120) at which
// DiscreteGaussianLogDelta <= log(delta (1 - kDeltaSafetyMargin)) is
// verified, found by bracketing around the continuous calibration and
// bisection, so that it is within ~1e-12 of a boundary point of the region
// where the condition holds (the smallest such sigma^2 whenever the curve
// is monotone, which it is except for small sigma). sensitivity >= 1.
// Throws std::invalid_argument for sigma^2 >= 2^62 (sigma >= 2^31), beyond
// what the sampler supports.
DyadicSigma2 DiscreteGaussianSigma2(uint128 sensitivity, double epsilon, double delta);

// Natural log of P[X >= k] for X ~ N_Z(0, num/den), k >= 1 (same
// summation methods as DiscreteGaussianLogDelta; for k > 2^60, where the
// tail is below exp(-2^57), a geometric-series upper bound).
double DiscreteGaussianLogUpperTail(uint128 sigma2_numerator, uint128 sigma2_denominator, int128 k);

// Var[X] for X ~ N_Z(0, num/den): a direct sum for sigma < 8, and sigma^2
// itself above, where the difference (CKS20: Var < sigma^2, with relative
// gap < 4 pi^2 sigma^2 exp(-2 pi^2 sigma^2)) is below 1e-500.
double DiscreteGaussianVariance(uint128 sigma2_numerator, uint128 sigma2_denominator);

// ---------------------------------------------------------------------------
// Grid release.

// Derived from public parameters only.
struct GaussianPlan {
  int grid_shift = 0;  // R = 2^grid_shift units per grid step
  uint128 sensitivity = 0;  // in grid steps: ceil(D / R); 0 means no noise
  // Variance parameter of the discrete Gaussian noise, in grid steps^2:
  // sigma2_numerator / sigma2_denominator exactly (a dyadic rational).
  uint128 sigma2_numerator = 0;
  uint128 sigma2_denominator = 1;
};

// The grid is chosen as the finest with sigma <= 2^kGaussianGridBitsBelowSigma
// grid steps (estimated with the continuous calibration, sigma_disc is
// within a factor 1 + 1e-6 of it there), or sensitivity 1 grid step. Lower
// than Laplace's 2^40 because the sampler's exact arithmetic needs
// sigma^4 < 2^125; a grid of 2^-30 sigma is still invisible in any answer.
inline constexpr int kGaussianGridBitsBelowSigma = 30;

// sensitivity_units: the largest change of the statistic (in units) between
// neighbouring datasets (L2 = L1 for a scalar). epsilon > 0 and delta in
// (0, 1), finite. Throws std::invalid_argument if even the coarsest grid
// (sensitivity 1 step) needs sigma >= 2^31 steps, i.e. for tiny epsilon and
// delta together (e.g. epsilon < 1e-8 with delta < 1e-10).
//
// Memoized per process (calibration_cache.h): a repeated call returns the
// first call's plan, which is what internal::PlanGaussianUncached returns.
GaussianPlan PlanGaussian(uint128 sensitivity_units, double epsilon, double delta);

namespace internal {
// The calibration itself, without the memo (tests; searches over many
// epsilons, which would only flush the memo).
GaussianPlan PlanGaussianUncached(uint128 sensitivity_units, double epsilon, double delta);
}  // namespace internal

// Releases `value` (in units of 2^unit_exponent; |value| < 2^126) under
// `plan`: value rounded half up to the grid 2^(unit_exponent + grid_shift),
// plus discrete Gaussian noise. The result is on that grid.
// Caches what ReleaseGaussian's first draw with `plan` would compute.
void PrepareGaussian(const GaussianPlan& plan);

GridValue ReleaseGaussian(int128 value, int unit_exponent, const GaussianPlan& plan,
                          RandomSource& rng);

// Standard deviation of the released value's noise in value units (exact
// for the discrete distribution, slightly below sigma for sigma < 1).
double GaussianNoiseStddev(const GaussianPlan& plan, int unit_exponent);

// ---------------------------------------------------------------------------
// Statistics (as in private_statistics.h, with (epsilon, delta)).

GaussianPlan PlanGaussianCount(double epsilon, double delta);
GaussianPlan PlanGaussianSum(std::int64_t lower_units, std::int64_t upper_units, double epsilon,
                             double delta);

// Bounded mean: a noisy count and a noisy sum of values re-centred on the
// midpoint (kept in half-units, sensitivity upper - lower half-units), each
// with (epsilon / 2, delta / 2): (epsilon, delta)-DP by basic composition.
struct GaussianMeanPlans {
  GaussianPlan count;
  GaussianPlan centred_sum;  // in half-units
};
GaussianMeanPlans PlanGaussianMean(std::int64_t lower_units, std::int64_t upper_units,
                                   double epsilon, double delta);

// sum_units: the exact sum of the `count` clamped values, in units.
MeanRelease ReleaseGaussianMeanParts(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                                     std::int64_t upper_units, int unit_exponent,
                                     const GaussianMeanPlans& plans, RandomSource& rng);
double ReleaseGaussianMean(std::int64_t count, int128 sum_units, std::int64_t lower_units,
                           std::int64_t upper_units, int unit_exponent,
                           const GaussianMeanPlans& plans, RandomSource& rng);

}  // namespace dp

#endif  // DP_AGG_CORE_GAUSSIAN_MECHANISM_H
