// A RandomSource that counts the bytes drawn through it: the deterministic
// measure of a sampler's work used to show that it does not depend on the
// value drawn.
#ifndef DP_AGG_TEST_UNIT_COUNTING_SOURCE_H
#define DP_AGG_TEST_UNIT_COUNTING_SOURCE_H

#include <cstddef>
#include <cstdint>

#include "random_source.h"

namespace dp_test {

class CountingSource final : public dp::RandomSource {
 public:
  explicit CountingSource(dp::RandomSource& inner) : inner_(inner) {}
  void Fill(unsigned char* out, std::size_t length) override {
    bytes_ += length;
    inner_.Fill(out, length);
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  dp::RandomSource& inner_;
  std::uint64_t bytes_ = 0;
};

}  // namespace dp_test

#endif  // DP_AGG_TEST_UNIT_COUNTING_SOURCE_H
