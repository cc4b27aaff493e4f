// Confidence intervals for the bounded mean that keep their nominal coverage
// without the union bound: inversion of an exact test on the two releases.
//
// Released: C~ = n + Z_c (count noise, grid steps of 1 unless its grid is
// coarser) and S~ = S + Z_s (the sum of values centred on the midpoint m of the
// bounds, in value units), with Z_c and Z_s independent, of known laws
// (discrete Laplace or discrete Gaussian on their grids, public parameters).
// For the centred mean mu = S / n (true mean of the clamped values minus m),
//     W(mu) = S~ - mu C~ = Z_s - mu Z_c      (exactly, when mu is the truth),
// whose law is known for every mu: a pivot in the manner of Fieller's
// theorem (Fieller 1954, for a ratio of normal means). The interval is
//     { mu in [lower - m, upper - m] : P[|Z_s - mu Z_c| >= |W(mu)| - r(mu)] > alpha },
// alpha = 1 - confidence, r(mu) the rounding of the true statistics to their
// grids (half a step of each, zero on unit grids). At the true mu the event
// "rejected" has probability <= alpha (a p-value of a continuous-or-discrete
// statistic computed from its exact law is super-uniform), so the set covers
// the true mean with probability >= confidence, with no union bound and no
// asymptotics: coverage is the nominal level up to the discreteness of the
// noise. The tail probabilities are computed from the exact discrete laws:
//     P[|Z_s R_s - mu Z_c R_c| >= w] = sum_k P[Z_c = k] (P[Z_s >= ceil((w + mu k R_c) / R_s)]
//                                                   + P[Z_s >= ceil((w - mu k R_c) / R_s)]),
// truncated where P[|Z_c| > K] < 7e-13 (the omitted mass is added, so the
// p-value is never underestimated).
//
// Shape. The test statistic is linear in mu and the noise grows with |mu|,
// so the accepted set is an interval around S~ / C~, possibly together with
// pieces reaching the ends of the range when C~ is not clearly positive (as
// Fieller's set, which is then unbounded). The returned interval runs, on
// each side of the estimate, to the first rejected point of a geometric
// sequence of steps, or to the end of the range if that end is accepted;
// between the last accepted point and that rejected one the edge is located
// by an ITP search (interpolate, truncate, project: Oliveira and Takahashi,
// ACM TOMS 2020), which keeps an accepted and a rejected point around the
// edge and returns the rejected one: the hull is never cut short. It stops
// when the bracket is down to 2^-40 of its first width (or 2^-60 of the
// range), which bisection, its worst case plus one step, would reach in 40
// steps, or earlier when both ends of the bracket round outward to the same
// double, so that no further step could change the answer; the result is
// rounded outward. With no accepted point it is the whole range
// [lower, upper]. (An accepted island strictly between a rejected point and
// a rejected end would be missed; the coverage tests and the benchmark
// measure the result.)
//
// Cost (issue 31): the tables of the noise laws depend on public parameters
// only and are built once per call site (MeanTestLaws) and shared by its
// groups; a p-value sums K + 1 distinct terms (the terms of k and -k are
// equal bit for bit and added twice in the original order, so the value is
// that of the plain sum over [-K, K]); an interval takes about 30 p-values.
// The work depends on the releases and public parameters only.
//
// Everything is post-processing of the releases and public parameters:
// publishing the interval costs no privacy.
#ifndef DP_AGG_CORE_MEAN_INTERVAL_H
#define DP_AGG_CORE_MEAN_INTERVAL_H

#include <cstddef>
#include <cstdint>

#include "confidence.h"
#include "gaussian_mechanism.h"
#include "private_statistics.h"

namespace dp {

ConfidenceInterval LaplaceMeanTestInterval(const MeanRelease& release, std::int64_t lower_units,
                                           std::int64_t upper_units, int unit_exponent,
                                           const MeanPlans& plans, double confidence);
ConfidenceInterval GaussianMeanTestInterval(const MeanRelease& release, std::int64_t lower_units,
                                            std::int64_t upper_units, int unit_exponent,
                                            const GaussianMeanPlans& plans, double confidence);

// The noise laws of the test, from the public plans and unit exponent only:
// built once and shared by every interval of the same parameters (a
// PostgreSQL call site keeps them across its groups). Trivially
// destructible: the tables live in storage the caller provides, of
// MeanTestStorageDoubles doubles (at most 2 kMaxMeanTestCountRadius + 1 +
// about 10,000 for tractable plans). Fields are read by mean_interval.cpp
// only.
enum class MeanTestSumTail : std::uint8_t { kConstant, kLaplace, kGaussianTable, kGaussianErfc };
struct MeanTestLaws {
  const double* count_pmf = nullptr;  // P[Z_c = k], index k + K for k in [-K, K]
  long count_radius = 0;  // K
  long double count_omitted = 0;  // P[|Z_c| > K], bounded above
  long double count_step = 1;  // R_c in value units
  long double sum_step = 1;  // R_s in value units
  long double slack_sum = 0;  // half a sum step if the sum was rounded to its grid
  long double slack_count = 0;  // half a count step if the count was rounded
  long double tail_error = 0;  // absolute error bound of the sum's tail (added to p)
  MeanTestSumTail sum_tail = MeanTestSumTail::kConstant;  // P[Z_s >= k]:
  double laplace_rate = 0, laplace_log_one_plus_q = 0;  // kLaplace
  const double* tail_table = nullptr;  // kGaussianTable: P[Z_s >= j], j = 0..M
  long tail_table_max = 0;  // M
  double erfc_scale = 0;  // kGaussianErfc: sigma sqrt(2)
  long double var_count = 0;  // the search's scale: Var Z_c (grid steps^2)
  long double var_sum_steps = 0;  // and a rough Var Z_s (grid steps^2)
};
std::size_t LaplaceMeanTestStorageDoubles(const MeanPlans& plans);
std::size_t GaussianMeanTestStorageDoubles(const GaussianMeanPlans& plans);
// storage: at least the doubles above (std::invalid_argument otherwise); it
// must outlive the returned laws.
MeanTestLaws LaplaceMeanTestLaws(const MeanPlans& plans, int unit_exponent, double* storage,
                                 std::size_t doubles);
MeanTestLaws GaussianMeanTestLaws(const GaussianMeanPlans& plans, int unit_exponent,
                                  double* storage, std::size_t doubles);
// The interval from laws built with the same unit_exponent: the same value
// as Laplace/GaussianMeanTestInterval.
ConfidenceInterval MeanTestInterval(const MeanTestLaws& laws, const MeanRelease& release,
                                    std::int64_t lower_units, std::int64_t upper_units,
                                    int unit_exponent, double confidence);

// Whether the test inversion's sum over the count noise stays small (at most
// kMaxMeanTestCountRadius grid steps each side): a function of the public
// plans only. When it does not (tiny epsilon: the count noise spans up to
// 2^40 grid steps), callers use the union-bound interval (confidence.h
// MeanConfidenceInterval), which is conservative and costs O(1).
inline constexpr long kMaxMeanTestCountRadius = 1L << 12;
bool LaplaceMeanTestIsTractable(const MeanPlans& plans) noexcept;
bool GaussianMeanTestIsTractable(const GaussianMeanPlans& plans) noexcept;

// The p-value above at a centred mean mu (value units), for tests and the
// benchmark.
double LaplaceMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                         std::int64_t upper_units, int unit_exponent, const MeanPlans& plans,
                         double centred_mean);
double GaussianMeanPValue(const MeanRelease& release, std::int64_t lower_units,
                          std::int64_t upper_units, int unit_exponent,
                          const GaussianMeanPlans& plans, double centred_mean);

}  // namespace dp

#endif  // DP_AGG_CORE_MEAN_INTERVAL_H
