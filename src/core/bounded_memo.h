// A small per-process memo of a pure function of public parameters: the
// value computed for a key is returned again for the same key, bit for bit,
// as a fresh computation would return it. Bounded: kCapacity entries in a
// fixed array, replaced oldest first; lookup is a linear scan (a handful of
// entries, keys of a few words). Whether a call hits depends only on the keys
// of the calls before it in the same process, never on rows.
//
// Keys are trivially copyable and compared with ==; doubles in keys go in by
// bit pattern (DoubleBits). Values are copied out; a value may own memory
// (partition selection's tables are shared_ptr to immutable vectors), then
// the memo keeps it until the entry is replaced or cleared. A computation
// that throws stores nothing. A mutex makes it safe from several threads
// (PostgreSQL backends have one; the unit tests may have more).
//
// Users: calibration_cache.h (Gaussian plans, zCDP rho of (epsilon, delta)),
// partition_selection.cpp (optimal partition selection tables).
#ifndef DP_AGG_CORE_BOUNDED_MEMO_H
#define DP_AGG_CORE_BOUNDED_MEMO_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

namespace dp {

struct MemoStats {
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
  static_assert(std::is_copy_constructible<Value>::value, "values are copied out");

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
    for (Entry& entry : entries_) entry = Entry{};  // releases what values own
    size_ = next_ = 0;
    hits_ = misses_ = 0;
  }

  MemoStats Stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoStats stats;
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

}  // namespace internal
}  // namespace dp

#endif  // DP_AGG_CORE_BOUNDED_MEMO_H
