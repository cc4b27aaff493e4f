// Sources of uniformly random bits for the samplers.
//
// Production noise comes only from OpenSSL's CSPRNG (RAND_bytes). A seeded,
// predictable generator exists for tests: unit tests inject it directly, and in
// the database it can be selected only through a superuser-only setting.
#ifndef DP_AGG_CORE_RANDOM_SOURCE_H
#define DP_AGG_CORE_RANDOM_SOURCE_H

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace dp {

using uint128 = unsigned __int128;
using int128 = __int128;

// Raised when the operating system or OpenSSL cannot deliver random bytes.
// The PostgreSQL layer turns it into an ERROR: no answer without fresh noise.
class RandomnessFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RandomSource {
 public:
  virtual ~RandomSource() = default;

  // Fills `out` with `length` uniformly random bytes or throws RandomnessFailure.
  virtual void Fill(unsigned char* out, std::size_t length) = 0;

  std::uint64_t NextUint64();

  // Uniform integer in [0, bound), bound >= 1, by rejection sampling so that
  // every value has exactly the same probability (no modulo bias).
  std::uint64_t UniformBelow(std::uint64_t bound);
  uint128 UniformBelow128(uint128 bound);

  // One fair coin.
  bool FairBit();
};

// OpenSSL RAND_bytes, read in blocks to keep the per-draw cost low (64 KiB:
// OpenSSL 3's DRBG costs ~0.75 ns/byte in 4 KiB requests and ~0.2 ns/byte in
// 64 KiB ones, and a discrete Laplace draw reads 80..500 bytes). Every byte is
// handed out once and erased. The buffer lives in the backend process that
// created it (never in the postmaster); should a process holding unread bytes
// fork all the same, the child discards them before its first draw (a
// pthread_atfork handler advances a fork generation that every Fill checks,
// one load instead of a getpid() system call per draw), and OpenSSL reseeds
// its own generator in the child, so parent and child never share noise.
class OpenSslRandomSource final : public RandomSource {
 public:
  OpenSslRandomSource();
  void Fill(unsigned char* out, std::size_t length) override;

  // Unread bytes in the buffer (for tests).
  std::size_t BufferedBytes() const noexcept { return available_; }

 private:
  static constexpr std::size_t kBlock = 65536;
  void DiscardBuffer() noexcept;
  unsigned char buffer_[kBlock];
  std::size_t available_ = 0;
  unsigned long fork_generation_ = 0;  // the process's generation when buffer_ was filled
};

// xoshiro256** seeded through splitmix64 (Blackman & Vigna). Predictable by
// design: for tests only.
class SeededTestRandomSource final : public RandomSource {
 public:
  explicit SeededTestRandomSource(std::uint64_t seed) noexcept;
  void Fill(unsigned char* out, std::size_t length) override;

 private:
  std::uint64_t Next();
  std::uint64_t state_[4];
};

}  // namespace dp

#endif  // DP_AGG_CORE_RANDOM_SOURCE_H
