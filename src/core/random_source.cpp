#include "random_source.h"

#include <openssl/rand.h>
#include <pthread.h>

#include <cstring>

namespace dp {

std::uint64_t RandomSource::NextUint64() {
  unsigned char bytes[8];
  Fill(bytes, sizeof bytes);
  std::uint64_t value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

std::uint64_t RandomSource::UniformBelow(std::uint64_t bound) {
  if (bound == 0) throw std::invalid_argument("UniformBelow: empty range");
  if ((bound & (bound - 1)) == 0) return NextUint64() & (bound - 1);
  // 2^64 - threshold is a multiple of `bound`, so draws at or above the
  // threshold reduce to each residue equally often.
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t draw = NextUint64();
    if (draw >= threshold) return draw % bound;
  }
}

uint128 RandomSource::UniformBelow128(uint128 bound) {
  if (bound == 0) throw std::invalid_argument("UniformBelow128: empty range");
  if ((bound >> 64) == 0) return UniformBelow(static_cast<std::uint64_t>(bound));
  // Draw only as many bits as `bound` needs, then reject: at most 2 tries on
  // average, and exactly uniform.
  int bits = 128;
  while (bits > 0 && ((bound - 1) >> (bits - 1)) == 0) --bits;
  const uint128 mask = bits == 128 ? ~uint128{0} : ((uint128{1} << bits) - 1);
  for (;;) {
    const uint128 draw = ((uint128{NextUint64()} << 64) | NextUint64()) & mask;
    if (draw < bound) return draw;
  }
}

bool RandomSource::FairBit() { return (NextUint64() & 1U) != 0; }

namespace {

// Advanced in the child of every fork() (pthread_atfork runs the handler in
// the child before fork returns there), so it differs from the value seen
// when a buffer inherited from the parent was filled. Only the single thread
// of a PostgreSQL backend reads and writes it.
volatile unsigned long fork_generation = 0;
void AdvanceForkGeneration() { fork_generation = fork_generation + 1; }
pthread_once_t fork_handler_once = PTHREAD_ONCE_INIT;
// Without the handler (registration can fail only for lack of memory) no
// byte is buffered: each Fill asks OpenSSL directly.
bool fork_handler_missing = false;
void RegisterForkHandler() {
  fork_handler_missing = pthread_atfork(nullptr, nullptr, AdvanceForkGeneration) != 0;
}

}  // namespace

OpenSslRandomSource::OpenSslRandomSource() {
  pthread_once(&fork_handler_once, RegisterForkHandler);
  fork_generation_ = fork_generation;
}

void OpenSslRandomSource::DiscardBuffer() noexcept {
  std::memset(buffer_, 0, kBlock);
  available_ = 0;
}

void OpenSslRandomSource::Fill(unsigned char* out, std::size_t length) {
  if (fork_handler_missing) {
    if (length > 0 && RAND_bytes(out, static_cast<int>(length)) != 1)
      throw RandomnessFailure("OpenSSL RAND_bytes failed to deliver random bytes");
    return;
  }
  if (fork_generation_ != fork_generation) {
    // Inherited through fork: the parent may hand out the same bytes.
    DiscardBuffer();
    fork_generation_ = fork_generation;
  }
  while (length > 0) {
    if (available_ == 0) {
      if (RAND_bytes(buffer_, static_cast<int>(kBlock)) != 1)
        throw RandomnessFailure("OpenSSL RAND_bytes failed to deliver random bytes");
      available_ = kBlock;
    }
    const std::size_t take = length < available_ ? length : available_;
    unsigned char* source = buffer_ + (kBlock - available_);
    std::memcpy(out, source, take);
    // Bytes handed out are erased so that they cannot be read again later.
    std::memset(source, 0, take);
    available_ -= take;
    out += take;
    length -= take;
  }
}

namespace {
std::uint64_t SplitMix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

SeededTestRandomSource::SeededTestRandomSource(std::uint64_t seed) noexcept {
  for (auto& word : state_) word = SplitMix64(seed);
}

std::uint64_t SeededTestRandomSource::Next() {
  const std::uint64_t result = Rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = Rotl(state_[3], 45);
  return result;
}

void SeededTestRandomSource::Fill(unsigned char* out, std::size_t length) {
  while (length > 0) {
    const std::uint64_t word = Next();
    const std::size_t take = length < 8 ? length : 8;
    std::memcpy(out, &word, take);
    out += take;
    length -= take;
  }
}

}  // namespace dp
