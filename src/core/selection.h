// Differentially private selection: the permute-and-flip mechanism, sampled
// exactly.
//
// Source: R. McKenna and D. Sheldon, "Permute-and-Flip: A new mechanism for
// differentially private selection", NeurIPS 2020 (arXiv:2010.12603),
// Algorithm 1. Given candidates r with scores u_r and their maximum u*, visit
// the candidates in a uniformly random order and accept candidate r with
// probability
//     exp(-epsilon (u* - u_r) / (2 Delta)),
// returning the first one accepted. A best candidate is accepted with
// probability 1, so one pass always ends with an answer. Its expected score
// is never below that of the exponential mechanism (McKenna & Sheldon, their
// comparison with McSherry & Talwar 2007) at the same epsilon.
//
// Privacy theorem (McKenna & Sheldon 2020: permute-and-flip is epsilon-DP).
// Let every score change by at most Delta between neighbouring datasets:
// |u_r(D) - u_r(D')| <= Delta for all r. Then for every candidate r,
//     P[PF(D) = r] <= exp(epsilon) P[PF(D') = r].
// Monotonic scores: when between any two neighbours all scores move in the
// same direction (all up or all down, e.g. counts under add/remove), the
// factor 2 can be dropped, i.e. exp(-epsilon (u* - u_r) / Delta) is
// epsilon-DP. Proof: permute-and-flip is exactly report-noisy-max with
// exponential noise, argmax_r (u_r + Z_r) with Z_r i.i.d. Exponential of
// scale 2 Delta / epsilon (Ding, Kifer, Saghaian, Steinke, Wang, Xiao, Zhang,
// "The Permute-and-Flip Mechanism is Identical to Report-Noisy-Max with
// Exponential Noise", arXiv:2105.07260, 2021). Fix r and the other noises;
// r wins iff Z_r >= T = max_{s != r}(u_s + Z_s) - u_r. Between neighbours T
// moves by at most 2 Delta in general, but by at most Delta when all scores
// move in the same direction, and P[Z >= T - d] <= exp(d / scale) P[Z >= T]
// for the exponential distribution. OpenDP's make_noisy_top_k uses the same
// rule (its privacy map takes the range distance d_in for monotonic scores,
// 2 d_in otherwise; measurements/noisy_top_k, permute_and_flip.tex).
//
// Exactness. epsilon is rounded DOWN to a dyadic rational (RoundEpsilonDown),
// and the rate epsilon / (2 Delta) is rounded DOWN once more to a dyadic
// rational lambda = multiplier * 2^-shift with a 64-bit multiplier. Rounding
// the rate down runs permute-and-flip with some epsilon'' <= epsilon, so the
// guarantee stated for the requested epsilon holds. Each candidate's
// exponent lambda * (u* - u_r) is then an exact dyadic rational, and the
// acceptance Bernoulli(exp(-x)) is sampled exactly from uniform integers
// (Canonne, Kamath, Steinke 2020, Algorithm 1, as in exact_sampler.h): no
// exp(), log() or floating point decides anything.
//
// Huge score gaps. Exponents are capped at kMaxSelectionExponent:
// x_r = min(lambda (u* - u_r), kMaxSelectionExponent). This is exactly
// permute-and-flip run on the clamped scores
//     v_r = max(u_r, u* - T),  T = kMaxSelectionExponent / lambda,
// where T depends only on public parameters. The clamped scores are still a
// valid input, with the same sensitivity and monotonicity: u* changes by at
// most Delta, so u* - T does too, and a maximum of two quantities that each
// change by at most Delta (in the same direction, if monotonic) changes by at
// most Delta (in that direction); max_r v_r = u*. Hence the capped mechanism
// is epsilon-DP by the theorem above. The cap makes every candidate's
// probability at least exp(-kMaxSelectionExponent) / n > 0, however large its
// gap (a huge gap never rounds a probability to zero), and bounds the work of
// each acceptance test by kMaxSelectionExponent Bernoulli(exp(-1)) trials,
// each ending at its first failure, so the expected work is O(1). It changes
// the output distribution only for candidates whose true probability is below
// exp(-64) < 1.7e-28 per visit.
//
// Timing. Every candidate's acceptance test is drawn, also after the first
// acceptance, so the amount of work does not reveal the position of the chosen
// candidate in the random order (Jin et al., IEEE S&P 2022, on timing
// channels). The duration of each test still depends weakly on its exponent.
#ifndef DP_AGG_CORE_SELECTION_H
#define DP_AGG_CORE_SELECTION_H

#include <cstddef>
#include <vector>

#include "random_source.h"

namespace dp {

// Exponents (in nats) at or above this are sampled as this: see above.
inline constexpr unsigned kMaxSelectionExponent = 64;

// The rate lambda = multiplier * 2^-shift applied to score gaps: the largest
// such dyadic rational with a multiplier in [2^63, 2^65) that does not exceed
// epsilon' / (2 Delta) (epsilon' / Delta if monotonic), where epsilon' =
// RoundEpsilonDown(epsilon). Depends only on public parameters.
struct SelectionScale {
  uint128 multiplier = 0;
  int shift = 0;
};

// Throws InvalidParameter unless epsilon is finite and positive, and
// std::invalid_argument for sensitivity 0 (scores that cannot depend on the
// data need no mechanism). Delta is in the units of the scores.
SelectionScale PlanSelection(uint128 sensitivity, double epsilon, bool monotonic);

// min(lambda * gap, kMaxSelectionExponent) in long double: the exponent whose
// exp(-x) is the probability of accepting a candidate `gap` below the best.
// For tests and diagnostics only; the sampler uses the exact value.
long double SelectionExponent(uint128 gap, const SelectionScale& scale);

// True with probability exactly exp(-min(lambda * gap, kMaxSelectionExponent)).
bool SampleSelectionAcceptance(RandomSource& rng, uint128 gap, const SelectionScale& scale);

// Permute-and-flip over `scores` (exact rationals over a common positive
// denominator: integers in any fixed-point unit) with score sensitivity
// `sensitivity` in the same unit. Returns the index of the chosen candidate.
// Throws InvalidParameter for an empty candidate list or a bad epsilon.
std::size_t PermuteAndFlip(const std::vector<int128>& scores, uint128 sensitivity, double epsilon,
                           bool monotonic, RandomSource& rng);

// The same with a precomputed scale (e.g. for repeated releases).
std::size_t PermuteAndFlip(const std::vector<int128>& scores, const SelectionScale& scale,
                           RandomSource& rng);

}  // namespace dp

#endif  // DP_AGG_CORE_SELECTION_H
