// Differentially private partition selection: which GROUP BY groups of a
// protected table may appear in an answer at all.
//
// A group's key is itself data: a group that holds one person's row reveals
// that person by appearing. The mechanism (Korolova, Kenthapadi, Mishra,
// Ntoulas, "Releasing search queries and clicks privately", WWW 2009; as used
// by Wilson et al., "Differentially Private SQL with Bounded User
// Contribution", PoPETs 2020, section 3) releases a group only if its row
// count plus discrete Laplace noise reaches a threshold T:
//
//   release  <=>  count + Z >= T,   P[Z = z] = (1 - q) / (1 + q) q^|z|,
//                                     q = exp(-epsilon).
//
// Privacy, under add/remove-one-row neighbours where every row lies in exactly
// one group: the groups other than the changed row's are decided identically.
// The changed row's group either exists in both datasets, where its count
// moves by 1 and the noisy count is epsilon-DP (geometric mechanism, Ghosh,
// Roughgarden, Sundararajan 2009), or exists only in the larger one with
// count 1, where it is released with probability
//   P[1 + Z >= T] = P[Z >= T - 1] = q^(T-1) / (1 + q)      (T >= 2),
// which T is chosen to keep at most delta. Together (epsilon, delta)-DP.
#ifndef DP_AGG_CORE_PARTITION_SELECTION_H
#define DP_AGG_CORE_PARTITION_SELECTION_H

#include <cstdint>

#include "random_source.h"

namespace dp {

struct PartitionSelectionPlan {
  // Noise scale t/s = 1/epsilon' exactly, epsilon' the request rounded down
  // to 24 bits (EffectivePrivacyParameter).
  uint128 scale_numerator = 1;
  uint128 scale_denominator = 1;
  double epsilon = 0;  // epsilon' as used
  double delta = 0;  // delta' (rounded down to 24 bits) as used
  // A group is released iff count + Z >= threshold; threshold >= 2.
  std::int64_t threshold = 2;
};

// epsilon and delta must be validated (parameters.h); delta in (0, 0.5].
PartitionSelectionPlan PlanPartitionSelection(double epsilon, double delta);

// P[Z >= k] for the plan's noise, k >= 1: q^k / (1 + q). For tests and docs.
double NoiseTailProbability(const PartitionSelectionPlan& plan, std::int64_t k);

// Whether a group of `count` rows is released.
bool ReleasePartition(std::int64_t count, const PartitionSelectionPlan& plan, RandomSource& rng);

}  // namespace dp

#endif  // DP_AGG_CORE_PARTITION_SELECTION_H
