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
// Bounded: kCalibrationCacheEntries per kind, replaced oldest first. Entries
// are trivially copyable values in a fixed array: no allocation, nothing
// with a destructor. A calibration that throws stores nothing. A mutex makes
// it safe to use from several threads (PostgreSQL backends have one).
#ifndef DP_AGG_CORE_CALIBRATION_CACHE_H
#define DP_AGG_CORE_CALIBRATION_CACHE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "gaussian_mechanism.h"

namespace dp {

inline constexpr std::size_t kCalibrationCacheEntries = 64;

struct CalibrationCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::size_t entries = 0;
};

namespace internal {

inline std::uint64_t DoubleBits(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

template <typename Key, typename Value, std::size_t kCapacity>
class BoundedMemo {
  static_assert(std::is_trivially_copyable<Key>::value, "keys are plain values");
  static_assert(std::is_trivially_copyable<Value>::value, "values are plain values");

 public:
  // The value for `key`, computing it with compute() (outside the lock) on a
  // miss. Exceptions from compute() propagate and store nothing.
  template <typename Compute>
  Value Get(const Key& key, Compute compute) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i < size_; ++i) {
        if (entries_[i].key == key) {
          ++hits_;
          return entries_[i].value;
        }
      }
    }
    const Value value = compute();
    std::lock_guard<std::mutex> lock(mutex_);
    ++misses_;
    for (std::size_t i = 0; i < size_; ++i)
      if (entries_[i].key == key) return value;  // another thread stored it meanwhile
    entries_[next_] = Entry{key, value};
    next_ = (next_ + 1) % kCapacity;
    if (size_ < kCapacity) ++size_;
    return value;
  }

  void Clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    size_ = next_ = 0;
    hits_ = misses_ = 0;
  }

  CalibrationCacheStats Stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    CalibrationCacheStats stats;
    stats.hits = hits_;
    stats.misses = misses_;
    stats.entries = size_;
    return stats;
  }

 private:
  struct Entry {
    Key key;
    Value value;
  };
  std::mutex mutex_;
  Entry entries_[kCapacity] = {};
  std::size_t size_ = 0;
  std::size_t next_ = 0;  // the slot replaced next (the oldest when full)
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

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
