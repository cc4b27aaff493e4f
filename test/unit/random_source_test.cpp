// Tests of the random sources: the seeded test generator (reproducibility and
// agreement with the published xoshiro256** algorithm), the OpenSSL source
// (sanity), and the exact uniform integer samplers built on top of them.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <vector>

#include "random_source.h"
#include "stats_util.h"

namespace {

using dp::OpenSslRandomSource;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::BinomialAcceptanceInterval;
using dp_test::ChiSquareFit;
using dp_test::FitResult;
using dp_test::kFalseFailureProbability;
using dp_test::kUint128Max;
using dp_test::NonCentrality;
using dp_test::PowerMarginInSigmas;

constexpr uint128 Pow2(int k) { return uint128{1} << k; }

// ---------------------------------------------------------------------------
// An independent transcription of splitmix64 and xoshiro256** (Blackman and
// Vigna, https://prng.di.unimi.it/), checked against published vectors below.

std::uint64_t ReferenceSplitMix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct ReferenceXoshiro256StarStar {
  std::uint64_t s[4];

  static std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t Next() {
    const std::uint64_t result = Rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = Rotl(s[3], 45);
    return result;
  }

  static ReferenceXoshiro256StarStar SeededBySplitMix(std::uint64_t seed) {
    ReferenceXoshiro256StarStar g{};
    for (auto& word : g.s) word = ReferenceSplitMix64(seed);
    return g;
  }
};

TEST(SeededTestRandomSourceTest, ReferenceTranscriptionMatchesPublishedVectors) {
  std::uint64_t x = 0;
  EXPECT_EQ(ReferenceSplitMix64(x), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(ReferenceSplitMix64(x), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(ReferenceSplitMix64(x), 0x06C45D188009454FULL);

  // State {1, 2, 3, 4}: the vector used by the rand_xoshiro crate and others.
  ReferenceXoshiro256StarStar g{{1, 2, 3, 4}};
  const std::uint64_t expected[] = {11520ULL,
                                    0ULL,
                                    1509978240ULL,
                                    1215971899390074240ULL,
                                    1216172134540287360ULL,
                                    607988272756665600ULL,
                                    16172922978634559625ULL,
                                    8476171486693032832ULL,
                                    10595114339597558777ULL,
                                    2904607092377533576ULL};
  for (std::uint64_t e : expected) EXPECT_EQ(g.Next(), e);
}

TEST(SeededTestRandomSourceTest, MatchesXoshiro256StarStarSeededBySplitMix64) {
  // Published first outputs for seed 42 with this seeding convention.
  SeededTestRandomSource rng42(42);
  EXPECT_EQ(rng42.NextUint64(), 1546998764402558742ULL);
  EXPECT_EQ(rng42.NextUint64(), 6990951692964543102ULL);
  EXPECT_EQ(rng42.NextUint64(), 12544586762248559009ULL);

  for (std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xFFFFFFFFFFFFFFFFULL}) {
    SeededTestRandomSource rng(seed);
    auto reference = ReferenceXoshiro256StarStar::SeededBySplitMix(seed);
    for (int i = 0; i < 1000; ++i)
      ASSERT_EQ(rng.NextUint64(), reference.Next()) << seed << " " << i;
  }
}

TEST(SeededTestRandomSourceTest, SameSeedGivesTheSameStream) {
  SeededTestRandomSource a(123456789);
  SeededTestRandomSource b(123456789);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(a.NextUint64(), b.NextUint64()) << i;
  std::vector<unsigned char> bytes_a(1001), bytes_b(1001);
  a.Fill(bytes_a.data(), bytes_a.size());
  b.Fill(bytes_b.data(), bytes_b.size());
  EXPECT_EQ(bytes_a, bytes_b);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.UniformBelow(1000003), b.UniformBelow(1000003));
}

TEST(SeededTestRandomSourceTest, DifferentSeedsGiveDifferentStreams) {
  // For an ideal generator, two of 200 first outputs coincide with
  // probability < 200^2 / 2^65 ~ 1e-15, and two streams agreeing anywhere in
  // their first 64 positions with probability 64 * 2^-64.
  std::set<std::uint64_t> first_outputs;
  for (std::uint64_t seed = 0; seed < 200; ++seed)
    first_outputs.insert(SeededTestRandomSource(seed).NextUint64());
  EXPECT_EQ(first_outputs.size(), 200U);

  SeededTestRandomSource a(1), b(2);
  for (int i = 0; i < 64; ++i) EXPECT_NE(a.NextUint64(), b.NextUint64()) << i;
}

TEST(SeededTestRandomSourceTest, FillDeliversTheWordStreamAsBytes) {
  SeededTestRandomSource a(7), b(7);
  unsigned char filled[24];
  a.Fill(filled, sizeof filled);
  for (int word = 0; word < 3; ++word) {
    const std::uint64_t value = b.NextUint64();
    EXPECT_EQ(std::memcmp(filled + 8 * word, &value, 8), 0) << word;
  }
}

// ---------------------------------------------------------------------------

TEST(OpenSslRandomSourceTest, BytesAreNotConstantAndDifferBetweenCalls) {
  OpenSslRandomSource rng;
  unsigned char a[64], b[64];
  rng.Fill(a, sizeof a);
  rng.Fill(b, sizeof b);
  // For a correct CSPRNG: 64 equal bytes with probability 2^-504, two equal
  // 64-byte blocks with probability 2^-512.
  bool all_equal = true;
  for (unsigned char byte : a) all_equal = all_equal && byte == a[0];
  EXPECT_FALSE(all_equal);
  EXPECT_NE(std::memcmp(a, b, sizeof a), 0);

  // A second instance (its own buffer) does not replay the first one's bytes.
  OpenSslRandomSource other;
  unsigned char c[64];
  other.Fill(c, sizeof c);
  EXPECT_NE(std::memcmp(a, c, sizeof a), 0);
  EXPECT_NE(std::memcmp(b, c, sizeof b), 0);

  rng.Fill(a, 0);  // an empty request is fine
}

TEST(OpenSslRandomSourceTest, ByteFrequenciesAreUniformAcrossBlockBoundaries) {
  // Requests of awkward sizes, so that many of them straddle the 65536-byte
  // refill boundary, and some exceed a whole block.
  OpenSslRandomSource rng;
  const std::size_t sizes[] = {1, 7, 4095, 65535, 65536, 65537, 100000, 13};
  std::vector<unsigned char> buffer(100000);
  std::vector<std::uint64_t> counts(256, 0);
  std::size_t total = 0;
  for (std::size_t i = 0; total < (1U << 22); ++i) {
    const std::size_t size = sizes[i % (sizeof sizes / sizeof sizes[0])];
    rng.Fill(buffer.data(), size);
    for (std::size_t j = 0; j < size; ++j) ++counts[buffer[j]];
    total += size;
  }
  // Chi-square with 255 df, false failure probability 1e-9 (expected count
  // per bin ~16400, where the chi-square approximation is excellent).
  const FitResult fit = ChiSquareFit(counts, std::vector<long double>(256, 1.0L / 256));
  EXPECT_LT(fit.statistic, fit.critical_value);
}

// The buffer hands out every byte once: no 16-byte window of the output
// stream (requests of awkward sizes across several 64 KiB refills) repeats.
// For a correct CSPRNG two given windows coincide with probability 2^-128;
// over the ~2^36 pairs here, a false failure has probability < 2^-90.
TEST(OpenSslRandomSourceTest, NeverHandsOutTheSameBytesTwice) {
  OpenSslRandomSource rng;
  const std::size_t sizes[] = {10, 81, 481, 65535, 3, 65536, 1000};
  std::vector<unsigned char> stream;
  for (std::size_t i = 0; stream.size() < 4 * 65536; ++i) {
    const std::size_t size = sizes[i % (sizeof sizes / sizeof sizes[0])];
    const std::size_t at = stream.size();
    stream.resize(at + size);
    rng.Fill(stream.data() + at, size);
  }
  std::set<std::vector<unsigned char>> windows;
  for (std::size_t at = 0; at + 16 <= stream.size(); at += 16)
    EXPECT_TRUE(windows.emplace(stream.begin() + at, stream.begin() + at + 16).second) << at;
}

// A process that forks while its source holds unread bytes: the child must
// discard them instead of handing out the bytes the parent hands out next.
TEST(OpenSslRandomSourceTest, ChildOfForkDiscardsTheInheritedBuffer) {
  OpenSslRandomSource rng;
  unsigned char first[16];
  rng.Fill(first, sizeof first);
  ASSERT_EQ(rng.BufferedBytes(), 65536U - sizeof first);
  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Child: draw 32 bytes; report them and how many buffered bytes remain
    // (a fresh block minus 32 if the inherited buffer was discarded).
    unsigned char drawn[32];
    rng.Fill(drawn, sizeof drawn);
    const std::size_t left = rng.BufferedBytes();
    const bool ok =
        write(pipe_ends[1], drawn, sizeof drawn) == static_cast<ssize_t>(sizeof drawn) &&
        write(pipe_ends[1], &left, sizeof left) == static_cast<ssize_t>(sizeof left);
    _exit(ok ? 0 : 1);
  }
  close(pipe_ends[1]);
  unsigned char parent_drawn[32];
  rng.Fill(parent_drawn, sizeof parent_drawn);
  unsigned char child_drawn[32];
  std::size_t child_left = 0;
  ASSERT_EQ(read(pipe_ends[0], child_drawn, sizeof child_drawn),
            static_cast<ssize_t>(sizeof child_drawn));
  ASSERT_EQ(read(pipe_ends[0], &child_left, sizeof child_left),
            static_cast<ssize_t>(sizeof child_left));
  close(pipe_ends[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // Equal 32-byte draws from independent streams: probability 2^-256.
  EXPECT_NE(std::memcmp(parent_drawn, child_drawn, sizeof parent_drawn), 0);
  EXPECT_EQ(child_left, 65536U - sizeof child_drawn);  // the child refilled
  EXPECT_EQ(rng.BufferedBytes(),
            65536U - sizeof first - sizeof parent_drawn);  // the parent did not
}

// ---------------------------------------------------------------------------

TEST(UniformBelowTest, ZeroBoundThrows) {
  SeededTestRandomSource rng(1);
  EXPECT_THROW(rng.UniformBelow(0), std::invalid_argument);
  EXPECT_THROW(rng.UniformBelow128(0), std::invalid_argument);
}

TEST(UniformBelowTest, BoundOneAlwaysGivesZero) {
  SeededTestRandomSource rng(2);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(rng.UniformBelow(1), 0U);
    ASSERT_EQ(rng.UniformBelow128(1), 0U);
  }
}

TEST(UniformBelowTest, StaysBelowTheBoundAndReachesItsUpperHalf) {
  SeededTestRandomSource rng(3);
  const std::uint64_t bounds[] = {
      2, 3, 5, 7, 1000, (1ULL << 32) + 1, 1ULL << 63, (1ULL << 63) + 1, 0xFFFFFFFFFFFFFFFFULL};
  for (std::uint64_t bound : bounds) {
    bool upper_half_seen = false;
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t x = rng.UniformBelow(bound);
      ASSERT_LT(x, bound) << bound;
      upper_half_seen = upper_half_seen || x >= bound / 2;
    }
    // Each draw lands in the upper half with probability >= 1/2: missing it
    // 2000 times has probability <= 2^-2000.
    EXPECT_TRUE(upper_half_seen) << bound;
  }
}

TEST(UniformBelowTest, SmallBoundsAreUniform) {
  SeededTestRandomSource rng(4);
  for (std::uint64_t bound : {2ULL, 3ULL, 7ULL, 10ULL, 1000ULL}) {
    const std::uint64_t n = 200000;
    std::vector<std::uint64_t> counts(bound, 0);
    for (std::uint64_t i = 0; i < n; ++i) ++counts[rng.UniformBelow(bound)];
    // False failure probability 1e-9 (chi-square, >= 200 expected per bin).
    const FitResult fit = ChiSquareFit(
        counts, std::vector<long double>(bound, 1.0L / static_cast<long double>(bound)));
    EXPECT_LT(fit.statistic, fit.critical_value) << "bound " << bound;
  }
}

TEST(UniformBelowTest, HasNoModuloBias) {
  // bound = 3 * 2^62: a plain `draw % bound` would make [0, 2^62) twice as
  // likely as each of the other two thirds. Bins by the top bits.
  SeededTestRandomSource rng(5);
  const std::uint64_t bound = 3ULL << 62;
  const std::uint64_t n = 30000;
  std::vector<std::uint64_t> counts(3, 0);
  for (std::uint64_t i = 0; i < n; ++i) ++counts[rng.UniformBelow(bound) >> 62];
  const std::vector<long double> uniform(3, 1.0L / 3);
  const FitResult fit = ChiSquareFit(counts, uniform);
  // False failure probability 1e-9.
  EXPECT_LT(fit.statistic, fit.critical_value);
  // The test has power against the modulo-biased sampler (~60 sigma).
  const std::vector<long double> biased = {0.5L, 0.25L, 0.25L};
  EXPECT_GE(PowerMarginInSigmas(NonCentrality(n, uniform, biased), fit.degrees_of_freedom,
                                fit.critical_value),
            10);

  // bound = 2^64 - 1, top four bits: the last bin holds one value fewer.
  const std::uint64_t big = 0xFFFFFFFFFFFFFFFFULL;
  std::vector<std::uint64_t> top(16, 0);
  for (std::uint64_t i = 0; i < 160000; ++i) ++top[rng.UniformBelow(big) >> 60];
  std::vector<long double> p(16, std::ldexp(1.0L, 60) / static_cast<long double>(big));
  p[15] = (std::ldexp(1.0L, 60) - 1) / static_cast<long double>(big);
  const FitResult top_fit = ChiSquareFit(top, p);
  EXPECT_LT(top_fit.statistic, top_fit.critical_value);  // false failure probability 1e-9
}

TEST(UniformBelow128Test, StaysBelowTheBoundAndReachesItsUpperHalf) {
  SeededTestRandomSource rng(6);
  const uint128 bounds[] = {1,
                            3,
                            0xFFFFFFFFFFFFFFFFULL,
                            Pow2(64),
                            Pow2(64) + 1,
                            Pow2(100) + 3,
                            3 * Pow2(100),
                            Pow2(127),
                            kUint128Max};
  for (uint128 bound : bounds) {
    bool upper_half_seen = bound == 1;
    for (int i = 0; i < 2000; ++i) {
      const uint128 x = rng.UniformBelow128(bound);
      ASSERT_TRUE(x < bound) << static_cast<double>(bound);
      upper_half_seen = upper_half_seen || x >= bound / 2;
    }
    // Missing the upper half 2000 times has probability <= 2^-2000.
    EXPECT_TRUE(upper_half_seen) << static_cast<double>(bound);
  }
}

// Fits the top bits (x >> shift, bins merged from `last_bin` up) of
// UniformBelow128(bound) against the exact bin probabilities.
FitResult FitTopBits(uint128 bound, int shift, std::size_t bins, std::uint64_t n,
                     std::uint64_t seed) {
  SeededTestRandomSource rng(seed);
  std::vector<std::uint64_t> counts(bins, 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const uint128 bin = rng.UniformBelow128(bound) >> shift;
    ++counts[bin < bins ? static_cast<std::size_t>(bin) : bins - 1];
  }
  std::vector<long double> p(bins);
  const long double width = std::ldexp(1.0L, shift);
  const long double total = static_cast<long double>(bound);
  for (std::size_t i = 0; i + 1 < bins; ++i) p[i] = width / total;
  p[bins - 1] = (total - width * static_cast<long double>(bins - 1)) / total;
  return ChiSquareFit(counts, p);
}

TEST(UniformBelow128Test, TopBitsAreUniform) {
  // False failure probability 1e-9 for each of the fits below.
  // 2^100 + 3: bits 96..100; the last bin also holds the 3 values >= 2^100.
  FitResult fit = FitTopBits(Pow2(100) + 3, 96, 16, 160000, 7);
  EXPECT_LT(fit.statistic, fit.critical_value);
  // 3 * 2^100: a mask computed from the wrong bit length would break this.
  fit = FitTopBits(3 * Pow2(100), 100, 3, 30000, 8);
  EXPECT_LT(fit.statistic, fit.critical_value);
  // The full 128-bit range minus one.
  fit = FitTopBits(kUint128Max, 124, 16, 160000, 9);
  EXPECT_LT(fit.statistic, fit.critical_value);
  // Just above 2^64: the high word is almost always 0, the value 2^64 rare.
  fit = FitTopBits(Pow2(64) + 1, 60, 16, 160000, 10);
  EXPECT_LT(fit.statistic, fit.critical_value);
}

TEST(UniformBelow128Test, LowBitsAreUniform) {
  // The low byte of UniformBelow128(2^100 + 3): residue r < 3 has 2^92 + 1
  // preimages, every other one 2^92. False failure probability 1e-9.
  SeededTestRandomSource rng(11);
  const uint128 bound = Pow2(100) + 3;
  const std::uint64_t n = 256 * 400;
  std::vector<std::uint64_t> counts(256, 0);
  for (std::uint64_t i = 0; i < n; ++i)
    ++counts[static_cast<std::size_t>(rng.UniformBelow128(bound) & 255)];
  std::vector<long double> p(256);
  for (int r = 0; r < 256; ++r)
    p[r] = (std::ldexp(1.0L, 92) + (r < 3 ? 1 : 0)) / static_cast<long double>(bound);
  const FitResult fit = ChiSquareFit(counts, p);
  EXPECT_LT(fit.statistic, fit.critical_value);
}

TEST(FairBitTest, IsFair) {
  SeededTestRandomSource rng(12);
  const std::uint64_t n = 200000;
  std::uint64_t ones = 0;
  for (std::uint64_t i = 0; i < n; ++i) ones += rng.FairBit() ? 1 : 0;
  // Chernoff-Hoeffding (KL) bound, false failure probability 1e-9.
  const auto interval = BinomialAcceptanceInterval(0.5, n, kFalseFailureProbability);
  EXPECT_TRUE(interval.Contains(static_cast<double>(ones) / n))
      << ones << " not in [" << interval.low << ", " << interval.high << "]";
}

}  // namespace
