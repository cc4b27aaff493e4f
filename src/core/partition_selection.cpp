#include "partition_selection.h"

#include <cmath>
#include <stdexcept>

#include "bounded_memo.h"
#include "exact_sampler.h"
#include "laplace_mechanism.h"

namespace dp {

namespace {

// log P[Z >= k] = k log q - log(1 + q), with log q = -epsilon.
long double LogTail(long double epsilon, std::int64_t k) {
  return -epsilon * static_cast<long double>(k) - std::log1p(std::exp(-epsilon));
}

constexpr uint128 kOne = uint128{1} << 64;  // probability 1 in units of 2^-64
// e^epsilon is capped here: a lower bound for larger epsilons too.
constexpr long double kMaxExponent = 40.0L;
// delta' 2^64 must be at least this for the optimal table (delta' >= ~3.6e-15).
constexpr std::uint64_t kMinDeltaUnits = std::uint64_t{1} << 16;

// A dyadic lower bound Em / 2^es of e^epsilon, Em in [2^59, 2^60), es in [2, 59].
struct DyadicLowerBound {
  std::uint64_t mantissa = 0;
  int shift = 0;
};

DyadicLowerBound ExpLowerBound(long double epsilon) {
  const long double x = std::fmin(epsilon, kMaxExponent);
  // expl is accurate to a few ulps (2^-63 relative); 2^-32 leaves ~2^31 of them.
  // 1 <= e^epsilon is a lower bound too: used when the margin takes the
  // bound below 1 (epsilon' below ~2^-32).
  const long double bound = std::fmax(1.0L, std::exp(x) * (1.0L - std::ldexp(1.0L, -32)));
  int exponent = 0;
  std::frexp(bound, &exponent);  // bound = f 2^exponent, f in [0.5, 1)
  if (!(bound >= 1.0L) || exponent < 1 || exponent > 58) {
    throw std::logic_error("partition selection: e^epsilon out of range");
  }
  DyadicLowerBound result;
  result.shift = 60 - exponent;
  result.mantissa = static_cast<std::uint64_t>(std::floor(std::ldexp(bound, result.shift)));
  return result;
}

// Checks (1)-(4) of the header for every n in long double against
// e^epsilon' (1 - 2^-40) >= the E used and delta' (see the header); throws
// std::logic_error if one fails.
void VerifyTable(const std::vector<std::uint64_t>& table, long double epsilon, long double delta,
                 bool one_sided) {
  // <= e^epsilon', and >= the E of the construction (equal only when both are 1,
  // where the checks hold exactly: rounding to nearest is monotone).
  const long double e =
      std::fmax(1.0L, std::exp(std::fmin(epsilon, kMaxExponent)) * (1.0L - std::ldexp(1.0L, -40)));
  const long double unit = std::ldexp(1.0L, -64);
  for (std::size_t n = 1; n <= table.size(); ++n) {
    const std::uint64_t before = table[n - 1];
    const bool last = n == table.size();
    const long double p = static_cast<long double>(before) * unit;
    const long double q = last ? 1.0L : static_cast<long double>(table[n]) * unit;
    // 1 - p and 1 - q exactly: 2^64 - M fits 65 bits, its long double is exact
    // (M has at most 64 significant bits and so has 2^64 - M).
    const long double one_minus_p = static_cast<long double>(kOne - before) * unit;
    const long double one_minus_q = last ? 0.0L : static_cast<long double>(kOne - table[n]) * unit;
    const bool monotone = last || table[n] >= before;
    const bool released_ok = q - delta <= e * p;  // (1)
    const bool withheld_ok = one_sided || one_minus_p - delta <= e * one_minus_q;  // (2)
    if (!monotone || !released_ok || !withheld_ok) {
      throw std::logic_error("partition selection: table fails its DP inequalities");
    }
  }
}

// The tables already built in this process (bounded_memo.h), keyed by the
// effective (epsilon, delta) as used and the rule; null: the fallback.
struct TableKey {
  std::uint64_t epsilon_bits = 0;
  std::uint64_t delta_bits = 0;
  bool one_sided = false;
  bool operator==(const TableKey& other) const {
    return epsilon_bits == other.epsilon_bits && delta_bits == other.delta_bits &&
           one_sided == other.one_sided;
  }
};
using OptimalTablePtr = std::shared_ptr<const std::vector<std::uint64_t>>;
constexpr std::size_t kCachedTables = 8;

internal::BoundedMemo<TableKey, OptimalTablePtr, kCachedTables>& CachedTables() {
  static internal::BoundedMemo<TableKey, OptimalTablePtr, kCachedTables> memo;
  return memo;
}

}  // namespace

namespace partition_selection_internal {

std::vector<std::uint64_t> OptimalTable(double epsilon, double delta, bool insecure_one_sided) {
  const double delta_units = std::floor(std::ldexp(delta, 64));  // exact: delta' is dyadic
  if (!(epsilon > 0) || !(delta_units >= static_cast<double>(kMinDeltaUnits)) ||
      !(delta_units <= std::ldexp(1.0, 63))) {
    return {};
  }
  const uint128 d = static_cast<std::uint64_t>(delta_units);
  const DyadicLowerBound e = ExpLowerBound(epsilon);
  std::vector<std::uint64_t> table;
  table.push_back(0);  // M_0
  while (true) {
    const uint128 m = table.back();
    uint128 next;
    if (m + d >= kOne) {
      next = kOne;
    } else {
      // floor(E M) + D; Em M < 2^60 2^64.
      const uint128 grown = ((uint128{e.mantissa} * m) >> e.shift) + d;
      // 2^64 - ceil((2^64 - M - D) / E) = 2^64 - ceil(X 2^es / Em); X 2^es < 2^123.
      const uint128 x = kOne - m - d;
      const uint128 kept = kOne - ((x << e.shift) + e.mantissa - 1) / e.mantissa;
      next = grown < kept || insecure_one_sided ? grown : kept;
      if (next > kOne) next = kOne;
    }
    if (next == kOne) break;
    if (table.size() >= kMaxOptimalTableSize) return {};
    table.push_back(static_cast<std::uint64_t>(next));
  }
  VerifyTable(table, epsilon, delta, insecure_one_sided);
  return table;
}

PartitionSelectionPlan LaplaceThresholdPlan(double epsilon, double delta) {
  PartitionSelectionPlan plan;
  const DyadicEpsilon eps = RoundEpsilonDown(epsilon);
  plan.epsilon = EffectivePrivacyParameter(epsilon);
  plan.delta = EffectivePrivacyParameter(delta);
  // 1/epsilon' = 2^-e / m (e <= 0) or 1 / (m 2^e), as in PlanLaplace.
  if (eps.exponent <= 0) {
    if (-eps.exponent >= 96) throw std::invalid_argument("epsilon too small");
    plan.scale_numerator = uint128{1} << -eps.exponent;
    plan.scale_denominator = eps.mantissa;
  } else {
    if (eps.exponent >= 64) throw std::invalid_argument("epsilon too large");
    plan.scale_numerator = 1;
    plan.scale_denominator = uint128{eps.mantissa} << eps.exponent;
  }
  // Smallest k >= 1 with q^k / (1 + q) <= delta', then T = k + 1. The
  // estimate from logarithms is corrected in both directions with a margin
  // of 1e-9 in log space: the k chosen satisfies the inequality with room to
  // spare for the rounding of exp/log (errors ~1e-18 in long double), so a
  // rounding error can only make T larger, never smaller.
  const long double e = plan.epsilon;
  const long double log_delta = std::log(static_cast<long double>(plan.delta));
  const long double margin = 1e-9L;
  // The estimate includes the margin: the loops below then move k by a few
  // steps at most. Without it, they walked 1e-9 / epsilon steps (1e6 at the
  // smallest epsilon, 2^-50) to cross the margin one k at a time. The result
  // is the same: the smallest k >= 1 with LogTail <= log_delta - margin.
  long double estimate = std::ceil((margin - log_delta - std::log1p(std::exp(-e))) / e);
  if (!(estimate < 4e18L)) throw std::invalid_argument("epsilon too small for a threshold");
  std::int64_t k = estimate < 1 ? 1 : static_cast<std::int64_t>(estimate);
  while (LogTail(e, k) > log_delta - margin) ++k;
  while (k > 1 && LogTail(e, k - 1) <= log_delta - margin) --k;
  plan.threshold = k + 1;
  return plan;
}

}  // namespace partition_selection_internal

PartitionSelectionPlan PlanPartitionSelection(double epsilon, double delta,
                                              bool insecure_one_sided) {
  if (!(delta > 0) || !(delta <= 0.5)) throw std::invalid_argument("delta must be in (0, 0.5]");
  // The fallback's plan is always computed: it validates epsilon the same
  // way whichever rule runs, and is cheap.
  PartitionSelectionPlan plan = partition_selection_internal::LaplaceThresholdPlan(epsilon, delta);
  TableKey key;
  key.epsilon_bits = internal::DoubleBits(plan.epsilon);
  key.delta_bits = internal::DoubleBits(plan.delta);
  key.one_sided = insecure_one_sided;
  plan.table = CachedTables().Get(key, [&]() -> OptimalTablePtr {
    std::vector<std::uint64_t> table =
        partition_selection_internal::OptimalTable(plan.epsilon, plan.delta, insecure_one_sided);
    if (table.empty()) return nullptr;
    return std::make_shared<const std::vector<std::uint64_t>>(std::move(table));
  });
  return plan;
}

double NoiseTailProbability(const PartitionSelectionPlan& plan, std::int64_t k) {
  return static_cast<double>(std::exp(LogTail(plan.epsilon, k)));
}

long double ReleaseProbability(const PartitionSelectionPlan& plan, std::int64_t count) {
  if (plan.optimal()) {
    if (count <= 0) return 0.0L;
    if (count >= plan.always_released()) return 1.0L;
    return std::ldexp(static_cast<long double>((*plan.table)[count]), -64);
  }
  const std::int64_t j = plan.threshold - count;
  if (j >= 1) return std::exp(LogTail(plan.epsilon, j));
  return 1.0L - std::exp(LogTail(plan.epsilon, 1 - j));
}

std::int64_t HalfReleasePoint(const PartitionSelectionPlan& plan) {
  if (!plan.optimal()) return plan.threshold;  // P[Z >= 0] > 1/2 > P[Z >= 1]
  const std::vector<std::uint64_t>& table = *plan.table;
  for (std::size_t n = 1; n < table.size(); ++n) {
    if (table[n] >= (std::uint64_t{1} << 63)) return static_cast<std::int64_t>(n);
  }
  return plan.always_released();
}

namespace {

// The fallback's decision: the noise is always drawn, so the time taken does
// not depend on count.
bool ReleaseAboveThreshold(std::int64_t count, const uint128& scale_numerator,
                           const uint128& scale_denominator, std::int64_t threshold,
                           RandomSource& rng) {
  const int128 noise = SampleDiscreteLaplace(rng, scale_numerator, scale_denominator);
  return int128{count} + noise >= int128{threshold};
}

// The optimal rule's decision: one 64-bit draw; every table word is read and
// the one at min(count, n*) kept by masks, so neither the work nor the
// memory touched depends on the count.
bool ReleaseFromTable(std::int64_t count, const std::uint64_t* table, std::uint64_t size,
                      RandomSource& rng) {
  const std::uint64_t u = rng.NextUint64();
  const std::uint64_t clamped = count < 0 ? 0 : static_cast<std::uint64_t>(count);
  const std::uint64_t index = clamped < size ? clamped : size;
  std::uint64_t m = 0;
  for (std::uint64_t i = 0; i < size; ++i) {
    m |= table[i] & (std::uint64_t{0} - static_cast<std::uint64_t>(i == index));
  }
  const bool always = index == size;
  return (u < m) | always;
}

}  // namespace

bool ReleasePartition(std::int64_t count, const PartitionSelectionPlan& plan, RandomSource& rng) {
  if (!plan.optimal())
    return ReleaseAboveThreshold(count, plan.scale_numerator, plan.scale_denominator,
                                 plan.threshold, rng);
  return ReleaseFromTable(count, plan.table->data(), plan.table->size(), rng);
}

void CopyPartitionSelectionPlan(const PartitionSelectionPlan& plan, PartitionSelectionWords* out) {
  out->epsilon = plan.epsilon;
  out->delta = plan.delta;
  out->scale_numerator = plan.scale_numerator;
  out->scale_denominator = plan.scale_denominator;
  out->threshold = plan.threshold;
  out->size = 0;
  if (!plan.optimal()) return;
  const std::vector<std::uint64_t>& table = *plan.table;
  if (table.size() > kMaxOptimalTableSize)
    throw std::logic_error("partition selection table too long");
  for (std::size_t i = 0; i < table.size(); ++i) out->words[i] = table[i];
  out->size = table.size();
}

void PreparePartitionSampling(const PartitionSelectionWords& plan) {
  if (plan.size == 0) PrepareDiscreteLaplace(plan.scale_numerator, plan.scale_denominator);
}

bool ReleasePartition(std::int64_t count, const PartitionSelectionWords& plan, RandomSource& rng) {
  if (plan.size == 0)
    return ReleaseAboveThreshold(count, plan.scale_numerator, plan.scale_denominator,
                                 plan.threshold, rng);
  return ReleaseFromTable(count, plan.words, plan.size, rng);
}

}  // namespace dp
