#include "selection.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "exact_sampler.h"
#include "laplace_mechanism.h"
#include "parameters.h"

namespace dp {

namespace {

// log2(kMaxSelectionExponent): the cap test below compares bit lengths.
constexpr int kLogMaxExponent = 6;
static_assert(kMaxSelectionExponent == (1U << kLogMaxExponent), "cap must be a power of two");

int SignificantBits(uint128 value) {
  int bits = 0;
  while (value != 0) {
    ++bits;
    value >>= 1;
  }
  return bits;
}

// A 256-bit unsigned integer, least significant 64-bit limb first: just
// enough arithmetic for multiplier * gap < 2^65 * 2^128.
struct U256 {
  std::uint64_t limb[4] = {0, 0, 0, 0};
};

U256 Multiply(uint128 a, uint128 b) {
  const std::uint64_t x[2] = {static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(a >> 64)};
  const std::uint64_t y[2] = {static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(b >> 64)};
  U256 product;
  for (int i = 0; i < 2; ++i) {
    uint128 carry = 0;
    for (int j = 0; j < 2; ++j) {
      // (2^64 - 1)^2 + 2 (2^64 - 1) = 2^128 - 1: no overflow.
      const uint128 t = uint128{x[i]} * y[j] + product.limb[i + j] + carry;
      product.limb[i + j] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    product.limb[i + 2] = static_cast<std::uint64_t>(carry);
  }
  return product;
}

int SignificantBits(const U256& value) {
  for (int i = 3; i >= 0; --i) {
    if (value.limb[i] != 0) return 64 * i + SignificantBits(uint128{value.limb[i]});
  }
  return 0;
}

// Bits [low, low + width) of value, 0 <= low, 1 <= width <= 64.
std::uint64_t Bits(const U256& value, int low, int width) {
  if (low >= 256) return 0;
  const int index = low / 64;
  const int offset = low % 64;
  std::uint64_t bits = value.limb[index] >> offset;
  if (offset != 0 && index + 1 < 4) bits |= value.limb[index + 1] << (64 - offset);
  return width == 64 ? bits : bits & ((std::uint64_t{1} << width) - 1);
}

// Is any of the bits [0, count) of value set?
bool AnyBitBelow(const U256& value, int count) {
  for (int i = 0; i < 4 && count > 0; ++i, count -= 64) {
    const std::uint64_t limb =
        count >= 64 ? value.limb[i] : value.limb[i] & ((std::uint64_t{1} << count) - 1);
    if (limb != 0) return true;
  }
  return false;
}

// True with probability (value mod 2^bits) / 2^bits, bits >= 1: a uniform
// integer U in [0, 2^bits) is compared with value mod 2^bits from the most
// significant bit down, 64 bits at a time, stopping at the first chunk that
// differs (after one chunk with probability 1 - 2^-64). Exact for any number
// of bits, so denominators far beyond 2^128 need no rounding.
bool SampleBernoulliDyadic(RandomSource& rng, const U256& value, int bits) {
  int high = bits;
  while (high > 0) {
    const int width = high >= 64 ? 64 : high;
    const int low = high - width;
    const std::uint64_t mask = width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
    const std::uint64_t u = rng.NextUint64() & mask;
    const std::uint64_t v = Bits(value, low, width);
    if (u != v) return u < v;
    high = low;
  }
  return false;  // U equals the value: not below it
}

// True with probability exp(-g), g = (value mod 2^bits) / 2^bits in [0, 1),
// bits >= 1: CKS20 Algorithm 1, as in SampleBernoulliExpMinus, with the
// Bernoulli(g) trials drawn by SampleBernoulliDyadic.
bool SampleExpMinusDyadicFraction(RandomSource& rng, const U256& value, int bits) {
  if (!AnyBitBelow(value, bits)) return true;  // g = 0
  std::uint64_t k = 1;
  for (;;) {
    const bool success = SampleBernoulliDyadic(rng, value, bits) && rng.UniformBelow(k) == 0;
    if (!success) break;
    ++k;
  }
  return (k & 1U) == 1U;
}

}  // namespace

SelectionScale PlanSelection(uint128 sensitivity, double epsilon, bool monotonic) {
  ValidateEpsilonIsPositive(epsilon);
  if (sensitivity == 0) throw std::invalid_argument("selection: sensitivity must be positive");
  const DyadicEpsilon eps = RoundEpsilonDown(epsilon);  // m 2^e, m in [2^23, 2^24)
  // Round Delta UP to d 2^k with d <= 2^64 (relative change < 2^-63): a
  // larger Delta only lowers the rate.
  int k = 0;
  uint128 d = sensitivity;
  const int bits = SignificantBits(sensitivity);
  if (bits > 64) {
    k = bits - 64;
    const bool inexact = (sensitivity & ((uint128{1} << k) - 1)) != 0;
    d = (sensitivity >> k) + (inexact ? 1 : 0);
    if (d == (uint128{1} << 64)) {  // the carry reached bit 64: 2^64 2^k = 2^63 2^(k+1)
      d >>= 1;
      ++k;
    }
  }
  // multiplier = floor(m 2^a / d) with a = 40 + bitlength(d), so that
  // multiplier lies in (2^63, 2^65): m 2^a / d > 2^23 2^(40 + b) / 2^b and
  // < 2^24 2^(40 + b) / 2^(b - 1). m 2^a < 2^24 2^104 fits in 128 bits.
  const int a = 40 + SignificantBits(d);
  SelectionScale scale;
  scale.multiplier = (uint128{eps.mantissa} << a) / d;
  // lambda = multiplier 2^-shift <= m 2^e / (d 2^k c) <= epsilon' / (c Delta),
  // with c = 2 (one more halving) unless the scores are monotonic.
  scale.shift = a + k - eps.exponent + (monotonic ? 0 : 1);
  return scale;
}

long double SelectionExponent(uint128 gap, const SelectionScale& scale) {
  if (gap == 0) return 0.0L;
  const long double x = std::ldexp(static_cast<long double>(scale.multiplier), -scale.shift) *
                        static_cast<long double>(gap);
  return x < kMaxSelectionExponent ? x : static_cast<long double>(kMaxSelectionExponent);
}

bool SampleSelectionAcceptance(RandomSource& rng, uint128 gap, const SelectionScale& scale) {
  if (gap == 0) return true;  // the best candidates are always accepted
  // x = n / 2^t exactly, n = multiplier * gap < 2^193.
  const U256 n = Multiply(scale.multiplier, gap);
  const int t = scale.shift;
  // Capped iff x >= 2^6, i.e. n >= 2^(t + 6).
  const int cap_bits = t + kLogMaxExponent;
  bool capped;
  if (cap_bits <= 0) {
    capped = true;  // n >= 1 >= 2^(t + 6)
  } else if (cap_bits >= 256) {
    capped = false;
  } else {
    capped = SignificantBits(n) > cap_bits;
  }
  if (capped) return SampleBernoulliExpMinus(rng, kMaxSelectionExponent, 1);
  // Here x < 64. exp(-x) = exp(-floor(x)) * exp(-frac(x)): independent
  // trials, stopping at the first failure.
  std::uint64_t whole;
  if (t <= 0) {
    whole = n.limb[0] << -t;  // n < 2^(t + 6) <= 64, so x = n 2^-t < 64 is an integer
  } else {
    whole = Bits(n, t, kLogMaxExponent);
  }
  // One fixed-work Bernoulli(exp(-whole)) (whole < 64), whatever whole is.
  if (!internal::SampleBernoulliExpMinusSmall(rng, static_cast<unsigned>(whole), 0, 1))
    return false;
  if (t <= 0) return true;
  return SampleExpMinusDyadicFraction(rng, n, t);
}

std::size_t PermuteAndFlip(const std::vector<int128>& scores, const SelectionScale& scale,
                           RandomSource& rng) {
  if (scores.empty())
    throw InvalidParameter("there are no candidates to select from",
                           "The private selection needs at least one candidate.");
  int128 best = scores[0];
  for (const int128 score : scores) best = score > best ? score : best;
  const std::size_t n = scores.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::size_t chosen = n;
  // Fisher-Yates, one position at a time: after step i, order[0..i] is a
  // uniformly random ordered selection, so the visit order is a uniformly
  // random permutation.
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(rng.UniformBelow(n - i));
    std::swap(order[i], order[j]);
    const std::size_t candidate = order[i];
    // 0 <= best - score < 2^128: exact in unsigned arithmetic.
    const uint128 gap = static_cast<uint128>(best) - static_cast<uint128>(scores[candidate]);
    const bool accepted = SampleSelectionAcceptance(rng, gap, scale);
    // The pass continues after the first acceptance (see "Timing" in the
    // header); later trials are independent and do not change the outcome.
    if (accepted && chosen == n) chosen = candidate;
  }
  if (chosen == n) throw std::logic_error("permute-and-flip accepted no candidate");
  return chosen;
}

std::size_t PermuteAndFlip(const std::vector<int128>& scores, uint128 sensitivity, double epsilon,
                           bool monotonic, RandomSource& rng) {
  if (scores.empty())
    throw InvalidParameter("there are no candidates to select from",
                           "The private selection needs at least one candidate.");
  return PermuteAndFlip(scores, PlanSelection(sensitivity, epsilon, monotonic), rng);
}

}  // namespace dp
