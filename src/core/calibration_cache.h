// Per-process memo of the Gaussian calibrations, which cost milliseconds
// each (the analytic sigma by bisection, the discrete sigma^2 by bracketing
// with verified delta, the zCDP rho of an (epsilon, delta) pair by a
// bisection over the Renyi orders) while a query's noise takes microseconds.
//
// A calibration is a pure function of its public arguments (no randomness,
// no data, no global state), so a memoized value is the value a fresh
// calibration returns, bit for bit (calibration_cache_test.cpp checks it).
// Keys are the exact arguments as used: doubles compared by bit pattern,
// the sensitivity in units before the grid is chosen (the grid is a
// function of the key). Whether a call hits depends only on the arguments of
// the calls before it in the same process, never on rows.
//
// Bounded: kCalibrationCacheEntries per kind, replaced oldest first
// (bounded_memo.h). Entries are trivially copyable values in a fixed array:
// no allocation, nothing with a destructor. A calibration that throws stores
// nothing.
#ifndef DP_AGG_CORE_CALIBRATION_CACHE_H
#define DP_AGG_CORE_CALIBRATION_CACHE_H

#include <cstddef>
#include <cstdint>

#include "bounded_memo.h"
#include "gaussian_mechanism.h"

namespace dp {

inline constexpr std::size_t kCalibrationCacheEntries = 64;

using CalibrationCacheStats = MemoStats;

namespace internal {

// PlanGaussian(sensitivity_units, epsilon, delta).
struct GaussianPlanKey {
  uint128 sensitivity_units = 0;
  std::uint64_t epsilon_bits = 0;
  std::uint64_t delta_bits = 0;
  bool operator==(const GaussianPlanKey& other) const {
    return sensitivity_units == other.sensitivity_units && epsilon_bits == other.epsilon_bits &&
           delta_bits == other.delta_bits;
  }
};

// RhoForEpsilonDelta(epsilon, delta).
struct EpsilonDeltaKey {
  std::uint64_t epsilon_bits = 0;
  std::uint64_t delta_bits = 0;
  bool operator==(const EpsilonDeltaKey& other) const {
    return epsilon_bits == other.epsilon_bits && delta_bits == other.delta_bits;
  }
};

using GaussianPlanMemo = BoundedMemo<GaussianPlanKey, GaussianPlan, kCalibrationCacheEntries>;
using RhoMemo = BoundedMemo<EpsilonDeltaKey, double, kCalibrationCacheEntries>;

// The process's memos (function-local statics, constant-initialized).
GaussianPlanMemo& GaussianPlans();
RhoMemo& RhosForEpsilonDelta();

}  // namespace internal

// Counters of both memos together, and forgetting every entry (for tests and
// benchmarks: a cold calibration).
CalibrationCacheStats GaussianCalibrationCacheStats();
void ClearGaussianCalibrationCache();

}  // namespace dp

#endif  // DP_AGG_CORE_CALIBRATION_CACHE_H
