// A privacy accountant that composes tightly: Gaussian releases in zero-
// concentrated DP (rho), pure releases in epsilon, and the total reported as
// (epsilon, delta) through the tight conversion of Canonne, Kamath and
// Steinke.
//
// Definitions and theorems used (neighbouring datasets: add/remove one row):
//
// zCDP (Bun & Steinke, "Concentrated Differential Privacy: Simplifications,
// Extensions, and Lower Bounds", TCC 2016, Def. 1.1): M is rho-zCDP if for
// every alpha > 1 the Renyi divergence of order alpha between M(D) and M(D')
// is at most alpha rho.
//  - Gaussian release (BS16 Prop. 1.6): f + N(0, sigma^2) with L2 sensitivity
//    Delta is Delta^2 / (2 sigma^2)-zCDP. The discrete Gaussian N_Z(0, sigma^2)
//    on an integer statistic with integer sensitivity Delta satisfies the same
//    (CKS20 below, Theorem 14), which is what dp_agg samples.
//  - Composition (BS16 Lemma 2.3): rho adds up.
//  - Pure epsilon-DP implies (epsilon^2 / 2)-zCDP (BS16 Prop. 1.4), and
//    trivially D_alpha <= D_infinity <= epsilon for every alpha. Hence a pure
//    release contributes to the order-alpha Renyi divergence at most
//    min(epsilon, alpha epsilon^2 / 2). Over several pure releases the sum of
//    the minima is at most min(sum epsilon_i, alpha sum epsilon_i^2 / 2), which
//    is what this accountant uses (it keeps only the two sums, so that a
//    ledger can store them as exact decimals). The epsilon^2/2 form is the
//    tighter one for many small epsilons (advanced-composition regime: 1000
//    releases of 0.01 are (1.72, 1e-6)-DP instead of (10, 0)), the epsilon
//    form for few large ones; the minimum is taken per order alpha, and the
//    result is in addition compared with plain sequential composition (the
//    pure part as sum epsilon_i, exactly, plus the converted zCDP part), so
//    adding pure releases never reports more than basic composition would.
//  - Conversion to (epsilon, delta)-DP (C. Canonne, G. Kamath, T. Steinke,
//    "The Discrete Gaussian for Differential Privacy", NeurIPS 2020,
//    Proposition 12 and Corollary 13): if D_alpha(M(D) || M(D')) <= tau, then M
//    is (epsilon, delta)-DP with
//        delta = exp((alpha - 1)(tau - epsilon)) / (alpha - 1) * (1 - 1/alpha)^alpha;
//    for rho-zCDP (tau = alpha rho) delta is the infimum of this over alpha > 1.
//    Every alpha gives a valid delta, so the accountant may use any alpha it
//    finds: it searches for the minimum numerically and reports the value at
//    the alpha it found, rounded UP by a relative margin that covers the
//    floating-point error of the evaluation (long double, error < 1e-15
//    relative; margin 2^-40). Hence it never reports less delta (or epsilon)
//    than the theorem gives for that alpha.
//  - Releases that are only (epsilon, delta)-DP (e.g. partition selection)
//    compose with the rest by basic composition: their epsilons and deltas
//    are added to the converted total.
//
// Everything here is a function of public parameters; no data is involved.
#ifndef DP_AGG_CORE_PRIVACY_ACCOUNTANT_H
#define DP_AGG_CORE_PRIVACY_ACCOUNTANT_H

#include <cstdint>

#include "gaussian_mechanism.h"

namespace dp {

// rho = sensitivity^2 / (2 sigma^2) of a Gaussian release, rounded up.
double GaussianRho(double sensitivity, double sigma);
// rho of a planned discrete Gaussian release: sensitivity^2 / (2 sigma^2) in
// grid steps, from the plan's exact sigma^2, rounded up. 0 for a plan
// without noise (a constant statistic).
double GaussianPlanRho(const GaussianPlan& plan);

// CKS20 Corollary 13 for rho-zCDP: the smallest delta found over alpha
// (rounded up; never below the bound at the alpha used). rho >= 0,
// epsilon >= 0. rho = 0 gives 0.
double ZcdpDelta(double rho, double epsilon);
// The smallest epsilon with (epsilon, delta)-DP by the same bound, delta in
// (0, 1) (rounded up).
double ZcdpEpsilon(double rho, double delta);
// The largest rho (rounded down) whose ZcdpDelta at epsilon is <= delta:
// the zCDP budget an (epsilon, delta) budget buys. epsilon > 0, delta in (0, 1).
// The result r has ZcdpDelta(r, epsilon) <= delta and ZcdpDelta of the next
// double above r > delta. 0 when no positive double fits, e.g. epsilon below
// about 2e-17 at delta 1e-300 (the accountant searches orders alpha up to
// 1 + e^45 only). At most 63 evaluations of ZcdpDelta, for every input.
// Memoized per process (calibration_cache.h).
double RhoForEpsilonDelta(double epsilon, double delta);
namespace internal {
// The same without the memo (tests).
double RhoForEpsilonDeltaUncached(double epsilon, double delta);
}  // namespace internal

// Totals of what a role (or a query) has spent, in the three currencies.
struct PrivacySpend {
  double pure_epsilon = 0;  // sum of the epsilons of pure releases
  double pure_epsilon_squared = 0;  // sum of their squares
  double rho = 0;  // sum of rho of zCDP (Gaussian) releases
  double approx_epsilon = 0;  // sum of (epsilon, delta) releases' epsilons
  double approx_delta = 0;  // ... and deltas
};

class PrivacyAccountant {
 public:
  PrivacyAccountant() = default;
  // An accountant that has already recorded `spend` (e.g. read from the
  // ledger, each sum rounded up). Throws std::invalid_argument for a
  // negative or non-finite sum.
  explicit PrivacyAccountant(const PrivacySpend& spend);

  // Each throws std::invalid_argument for a negative or non-finite amount.
  void AddPure(double epsilon);
  void AddZcdp(double rho);
  void AddGaussian(double sensitivity, double sigma) { AddZcdp(GaussianRho(sensitivity, sigma)); }
  void AddApproximate(double epsilon, double delta);

  const PrivacySpend& spend() const { return spend_; }

  // The total guarantee as (epsilon, delta)-DP: Delta(epsilon) is the
  // smallest delta this accountant certifies at epsilon (1 if none below 1),
  // Epsilon(delta) the smallest epsilon certified at delta (+infinity if
  // delta does not exceed the approximate releases' delta sum). Both are
  // upper bounds (rounded up), the best of the two compositions described in
  // the header.
  double Delta(double epsilon) const;
  double Epsilon(double delta) const;

  // Whether the total stays within an (epsilon, delta) budget.
  bool WithinBudget(double epsilon, double delta) const { return Delta(epsilon) <= delta; }

 private:
  PrivacySpend spend_;
};

// The largest epsilon (on a relative grid of 1e-9; 0 if none at or above
// kMinEpsilon, the smallest epsilon an aggregate accepts) at which
// the discrete Gaussian count dp_count(value, epsilon, delta) (PlanGaussianCount)
// costs at most rho: how an analyst shares a zCDP budget among Gaussian
// counts written in (epsilon, delta). Checked at the returned value:
// GaussianPlanRho(PlanGaussianCount(result, delta)) <= rho.
double GaussianCountEpsilonForRho(double rho, double delta);

// The smallest dyadic sigma^2 (56 significant bits) with
// sensitivity^2 / (2 sigma^2) <= rho, checked in exact integer arithmetic.
// sensitivity >= 1 (integer, in grid steps), rho > 0 finite.
DyadicSigma2 Sigma2ForRho(uint128 sensitivity, double rho);

// A discrete Gaussian grid release costing at most rho (zCDP): the finest
// grid with sigma <= 2^kGaussianGridBitsBelowSigma steps (as PlanGaussian),
// sigma^2 from Sigma2ForRho. Throws std::invalid_argument when sigma would
// exceed what the sampler supports.
GaussianPlan PlanGaussianForRho(uint128 sensitivity_units, double rho);

// The bounded mean with the count and the centred sum calibrated jointly:
// rho/2 each, which minimises the worst-case (over the mean) variance of the
// mean's numerator S - mu C, since Var = sigma_s^2 + mu^2 sigma_c^2 with
// sigma_c^2 = 1/(2 rho_c) and sigma_s^2 = h^2/(2 rho_s), |mu| <= h, is
// minimised at rho_c = rho_s under rho_c + rho_s = rho. Total cost rho.
GaussianMeanPlans PlanGaussianMeanForRho(std::int64_t lower_units, std::int64_t upper_units,
                                         double rho);
// The same under an (epsilon, delta) budget: rho = RhoForEpsilonDelta(epsilon,
// delta), then PlanGaussianMeanForRho; if PlanGaussianMean (each half at
// (epsilon/2, delta/2) by basic composition) gives less noise on both parts,
// that one is returned instead. Either is (epsilon, delta)-DP.
GaussianMeanPlans PlanGaussianMeanJoint(std::int64_t lower_units, std::int64_t upper_units,
                                        double epsilon, double delta);

}  // namespace dp

#endif  // DP_AGG_CORE_PRIVACY_ACCOUNTANT_H
