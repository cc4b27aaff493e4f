// Differentially private partition selection: which GROUP BY groups of a
// protected table may appear in an answer at all.
//
// A group's key is itself data: a group that holds one person's row reveals
// that person by appearing. Every group is released or not independently, a
// group of n rows (or n units) with probability p_n, p_0 = 0 (a group with no
// rows does not exist). Under add/remove-one-row neighbours where every row
// lies in exactly one group, only the changed row's group differs, from n - 1
// to n rows (n >= 1; n = 1 is "no group" against a group of one row), and its
// one-bit output is (epsilon, delta)-DP iff, for n >= 1,
//   (1)  p_n           <= e^eps p_{n-1}       + delta   (event "released"),
//   (2)  1 - p_{n-1}   <= e^eps (1 - p_n)     + delta   (event "not released"),
//   (3)  p_{n-1}       <= e^eps p_n           + delta,
//   (4)  1 - p_n       <= e^eps (1 - p_{n-1}) + delta,
// the other events (nothing, everything) being trivial; the other groups'
// independent decisions have the same law in both datasets, so any event of
// the whole output is a mixture of these and keeps the bound.
//
// THE OPTIMAL RULE (the default). Desfontaines, Voss, Gipson and Mandayam,
// "Differentially private partition selection", PoPETs 2022 (1), pp. 339-352
// (arXiv 2006.03684), section 3, the optimal mechanism for users in one
// partition and its optimality theorem: among all (epsilon, delta)-DP rules,
// the one with the largest release probability for every n is
//   pi(0) = 0,  pi(n) = min(1, e^eps pi(n-1) + delta,
//                              1 - e^-eps (1 - pi(n-1) - delta)),
// i.e. (1) and (2) with equality until 1 is reached. For units that reach up
// to m groups, the caller passes epsilon / m and delta / m: the paper's
// extension to users in up to Delta partitions runs the per-partition rule
// at (eps / Delta, delta / Delta), (eps, delta)-DP by basic composition (not
// optimal there, as the paper notes; the analyst guide's "Privacy units").
//
// Exactness. p_n is a dyadic M_n / 2^64 (M_n an integer in [0, 2^64]) and
// the decision is "one uniform 64-bit word U < M_n" (U from the RandomSource,
// i.e. OpenSSL's CSPRNG): P[release] = M_n / 2^64 exactly. M_n is computed in
// integers from a dyadic LOWER bound E = Em / 2^es <= e^epsilon' (epsilon'
// the request rounded down to 24 bits, EffectivePrivacyParameter; Em < 2^60;
// E from expl with a relative margin of 2^-32, i.e. about 2^31 ulps of the
// long double result, of e^min(epsilon', 40), and never below 1) and
// D = floor(delta' 2^64)
// (delta' the request rounded down to 24 bits):
//   M_0 = 0,
//   M_n = 2^64                                if M_{n-1} + D >= 2^64,
//   M_n = min(floor(E M_{n-1}) + D,
//             2^64 - ceil((2^64 - M_{n-1} - D) / E))   otherwise.
// Proof of (1)-(4) for p_n = M_n / 2^64, with e^eps >= e^eps' >= E and
// delta >= delta' >= D / 2^64:
//   (1) M_n <= E M_{n-1} + D, divide by 2^64 (when M_n = 2^64:
//       M_{n-1} + D >= 2^64 gives 1 <= p_{n-1} + delta <= e^eps p_{n-1} + delta).
//   (2) If M_n = 2^64, 1 - p_{n-1} <= D / 2^64 <= delta. Otherwise
//       2^64 - M_n >= (2^64 - M_{n-1} - D) / E, so
//       E (1 - p_n) + D / 2^64 >= 1 - p_{n-1}.
//   (3), (4): M is non-decreasing (E >= 1: floor(E M) + D >= M;
//       ceil(X / E) <= X for an integer X >= 0, so the second term is
//       >= M_{n-1} + D), and for a non-decreasing sequence (3) and (4)
//       hold with e^eps >= 1 and delta >= 0.
// Integer ranges: Em M < 2^60 2^64 and X 2^es <= 2^64 2^59 fit in 128 bits.
// The only floating-point step is E's lower bound; PlanPartitionSelection
// then VERIFIES (1)-(4) for every n in long double against e^eps' (1 - 2^-40)
// and delta' and throws if any fails (never seen; a guard against a coding
// error, checked again by the unit tests with independent arithmetic).
// Compared with the exact pi, flooring E M and delta loses at most a few
// 2^-64 per step and E's margin ~2^-32 relative: the release point moves by
// no group size in any setting tried (partition_selection_test.cpp).
//
// p_n reaches 1 at a finite n* (the table's size): groups of n* or more rows
// are always released. The table depends only on (epsilon', delta') and is
// cached per process (a few recent settings). The decision reads every
// table entry and keeps the one at min(count, n*) with masks, so the work and
// the memory touched do not depend on the count (one 64-bit draw per group,
// a scan of n* <= kMaxOptimalTableSize words: measured on a loaded 2-core VM
// ~0.1-0.8 us at n* = 28 .. 218, ~5 us at n* = 1705; the fallback's discrete
// Laplace ~0.3 us; test/bench/bench_accuracy.sh --group-selection).
//
// FALLBACK: when p_n has not reached 1 by n = kMaxOptimalTableSize (epsilon'
// below ~0.0036 at delta 1e-6) or D < 2^16 (delta' below ~3.6e-15), the rule
// is the thresholded discrete Laplace (Korolova, Kenthapadi, Mishra, Ntoulas,
// WWW 2009; Wilson et al., PoPETs 2020, section 3), valid but not optimal:
//   release  <=>  count + Z >= T,   P[Z = z] = (1 - q) / (1 + q) q^|z|,
//                                     q = exp(-epsilon').
// A group in both datasets moves its count by 1 and the noisy count is
// epsilon-DP (geometric mechanism); a one-row group absent from the other
// dataset is released with P[Z >= T - 1] = q^(T-1) / (1 + q) (T >= 2), which
// T is chosen to keep at most delta'. Together (epsilon, delta)-DP.
#ifndef DP_AGG_CORE_PARTITION_SELECTION_H
#define DP_AGG_CORE_PARTITION_SELECTION_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "random_source.h"

namespace dp {

// Largest n* of the optimal rule's table (32 KiB of words).
constexpr std::size_t kMaxOptimalTableSize = 4096;

struct PartitionSelectionPlan {
  double epsilon = 0;  // epsilon' (rounded down to 24 bits) as used
  double delta = 0;  // delta' (rounded down to 24 bits) as used
  // The optimal rule: (*table)[n] = M_n for n < n* = table->size(), M_0 = 0;
  // a group of n >= n* rows is always released. Null: the fallback.
  std::shared_ptr<const std::vector<std::uint64_t>> table;
  // The fallback: noise scale t/s = 1/epsilon' exactly, and a group is
  // released iff count + Z >= threshold; threshold >= 2.
  uint128 scale_numerator = 1;
  uint128 scale_denominator = 1;
  std::int64_t threshold = 2;

  bool optimal() const noexcept { return table != nullptr; }
  // n*: the smallest group size released with probability 1 (optimal rule).
  std::int64_t always_released() const noexcept {
    return table ? static_cast<std::int64_t>(table->size()) : 0;
  }
};

// epsilon and delta must be validated (parameters.h); delta in (0, 0.5].
// Tables are cached per process by (epsilon', delta'). insecure_one_sided
// (the test fault optimal_one_sided only) drops inequality (2) from the
// table: NOT differentially private.
PartitionSelectionPlan PlanPartitionSelection(double epsilon, double delta,
                                              bool insecure_one_sided = false);

// The probability that a group of `count` rows is released under the plan
// (M_n / 2^64 exactly as a long double for the optimal rule; for the
// fallback P[Z >= T - count] from exp). For tests, docs and benches.
long double ReleaseProbability(const PartitionSelectionPlan& plan, std::int64_t count);

// The smallest group size released with probability at least 1/2.
std::int64_t HalfReleasePoint(const PartitionSelectionPlan& plan);

// P[Z >= k] for the fallback's noise, k >= 1: q^k / (1 + q).
double NoiseTailProbability(const PartitionSelectionPlan& plan, std::int64_t k);

// Whether a group of `count` rows is released.
bool ReleasePartition(std::int64_t count, const PartitionSelectionPlan& plan, RandomSource& rng);

// A plan as plain data, for a call site's own cache (fn_extra): the final
// function decides every group from it, so that its work per group never
// depends on the per-process cache above (a query with more distinct
// parameters than that cache holds would otherwise recompute a table of up
// to kMaxOptimalTableSize words for every group, only when groups exist).
struct PartitionSelectionWords {
  double epsilon = 0;  // the plan's epsilon' and delta'
  double delta = 0;
  std::uint64_t size = 0;  // n*: words used; 0 for the fallback
  uint128 scale_numerator = 1;
  uint128 scale_denominator = 1;
  std::int64_t threshold = 2;
  std::uint64_t words[kMaxOptimalTableSize] = {};
};
static_assert(std::is_trivially_destructible_v<PartitionSelectionWords>,
              "PartitionSelectionWords lives in fn_extra");

void CopyPartitionSelectionPlan(const PartitionSelectionPlan& plan, PartitionSelectionWords* out);
// The same decision as ReleasePartition on the plan it was copied from.
bool ReleasePartition(std::int64_t count, const PartitionSelectionWords& plan, RandomSource& rng);
// Caches what that decision's first draw would compute (the fallback's
// discrete Laplace constants: exact_sampler.h PrepareDiscreteLaplace).
void PreparePartitionSampling(const PartitionSelectionWords& plan);

namespace partition_selection_internal {
// The table of the optimal rule for (epsilon', delta') as used (already
// rounded), or an empty vector when it does not reach 1 within
// kMaxOptimalTableSize entries or delta' is too small. Uncached, verified.
std::vector<std::uint64_t> OptimalTable(double epsilon, double delta,
                                        bool insecure_one_sided = false);
// The fallback's threshold plan (always valid).
PartitionSelectionPlan LaplaceThresholdPlan(double epsilon, double delta);
}  // namespace partition_selection_internal

}  // namespace dp

#endif  // DP_AGG_CORE_PARTITION_SELECTION_H
