// The exact discrete Gaussian sampler of gaussian_mechanism.h (Canonne,
// Kamath & Steinke 2020, Algorithm 3, in exact integer arithmetic): which
// sigma^2 it supports and the draws. The calibration of sigma^2 (privacy
// curves) is gaussian_mechanism.cpp.
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "exact_sampler.h"
#include "gaussian_mechanism.h"

namespace dp {

namespace {

using LD = long double;

LD ToLongDouble(uint128 value) { return static_cast<LD>(value); }

// ---------------------------------------------------------------------------
// Exact integer arithmetic for the sampler.

// floor(sqrt(n)).
uint128 IntegerSqrt(uint128 n) {
  constexpr uint128 kMax64 = ~std::uint64_t{0};
  uint128 r = static_cast<uint128>(std::sqrt(ToLongDouble(n)));
  if (r > kMax64) r = kMax64;
  while (r > 0 && r * r > n) --r;
  while (r < kMax64 && (r + 1) * (r + 1) <= n) ++r;
  return r;
}

struct U256 {
  uint128 high = 0;
  uint128 low = 0;
};

U256 Square(uint128 z) {
  const uint128 a = z >> 64;
  const uint128 b = z & ~std::uint64_t{0};
  const uint128 ab = a * b;  // z^2 = a^2 2^128 + ab 2^65 + b^2
  U256 result;
  result.high = a * a + (ab >> 63);
  result.low = b * b;
  const uint128 add = ab << 65;
  const uint128 low = result.low;
  result.low = low + add;
  // The carry as arithmetic, not a branch (z is a candidate's value).
  result.high += ((low & add) | ((low | add) & ~result.low)) >> 127;
  return result;
}

// floor(n / d) and n mod d for d < 2^127; false if the quotient needs more
// than 128 bits.
bool DivMod(const U256& n, uint128 d, uint128* quotient, uint128* remainder) {
  if (n.high == 0) {
    *quotient = n.low / d;
    *remainder = n.low % d;
    return true;
  }
  if (n.high >= d) return false;
  uint128 r = n.high;
  uint128 q = 0;
  for (int i = 127; i >= 0; --i) {
    r = (r << 1) | ((n.low >> i) & 1);  // r < 2d < 2^128
    if (r >= d) {
      r -= d;
      q |= uint128{1} << i;
    }
  }
  *quotient = q;
  *remainder = r;
  return true;
}

struct SamplerSetup {
  uint128 t = 0;  // floor(sigma) + 1
  uint128 t_den = 0;  // t * den
  uint128 divisor = 0;  // 2 num den t^2 < 2^127
};

bool Setup(uint128 num, uint128 den, SamplerSetup* setup) {
  if (den == 0 || num == 0) return false;
  setup->t = IntegerSqrt(num / den) + 1;  // floor(sqrt(x)) = floor(sqrt(floor(x)))
  uint128 t2 = 0;
  uint128 product = 0;
  if (__builtin_mul_overflow(setup->t, setup->t, &t2)) return false;
  if (__builtin_mul_overflow(num, den, &product)) return false;
  if (__builtin_mul_overflow(product, t2, &product)) return false;
  if ((product >> 126) != 0) return false;
  setup->divisor = 2 * product;
  setup->t_den = setup->t * den;  // <= divisor
  return true;
}

// Bernoulli(exp(-gamma)) when all that is known is gamma >= 2^127: false at
// the first failed Bernoulli(1/e) trial. Exact: reaching the end needs 2^127
// successes in a row (probability e^(-2^127)), and then it refuses to guess.
bool BernoulliExpMinusHuge(RandomSource& rng) {
  const uint128 kTrials = uint128{1} << 127;
  for (uint128 i = 0; i < kTrials; ++i) {
    if (!SampleBernoulliExpMinus(rng, 1, 1)) return false;
  }
  throw std::logic_error("discrete Gaussian: 2^127 consecutive Bernoulli(1/e) successes");
}

// Branch-free arithmetic for the acceptance test (a mispredicted jump on a
// candidate's value would make the time depend on it): comparisons are the
// borrows of subtractions, selections are masks.

// The borrow out of a - b (1 if a < b), for any 128-bit a, b.
uint128 Borrow(uint128 a, uint128 b, uint128 difference) {
  return ((~a & b) | (~(a ^ b) & difference)) >> 127;
}

// 1 if a < b, for any 256-bit a, b (the borrow out of the top half).
// 1 if x == 0.
uint128 IsZeroBit(uint128 x) { return ((x | (uint128{0} - x)) >> 127) ^ 1; }

uint128 LessBit(const U256& a, const U256& b) {
  const uint128 low = a.low - b.low;
  const uint128 borrow = Borrow(a.low, b.low, low);
  const uint128 high_minus = a.high - b.high;
  // Borrow out of a.high - b.high - borrow: of the first subtraction, or of
  // subtracting the borrow from 0.
  return Borrow(a.high, b.high, high_minus) | (borrow & IsZeroBit(high_minus));
}

// a - (bit ? b : 0) for bit in {0, 1}, where a >= b if bit; branch-free.
U256 SubtractIf(const U256& a, const U256& b, uint128 bit) {
  const uint128 m = uint128{0} - bit;
  const uint128 bl = b.low & m;
  U256 r;
  r.low = a.low - bl;
  r.high = a.high - (b.high & m) - Borrow(a.low, bl, r.low);
  return r;
}

// Accept |Y| = x with probability exp(-(x t den - num)^2 / (2 num den t^2)).
//
// Fixed work (the accepted candidate must not reveal |Y| through timing):
// the exponent Z^2 / divisor is split as whole + remainder / divisor with
// whole capped at 63 by six branch-free steps of long division, and passed
// to SampleBernoulliExpMinusSmall, whose work does not depend on its
// arguments. If the exponent is 64 or more (Z^2 >= 64 divisor, or x t den
// overflowing), the fixed part samples exp(-63) and only when that succeeds
// (probability exp(-63) < 2^-90) is the rest of the exponent sampled.
bool Accept(RandomSource& rng, uint128 x, uint128 num, const SamplerSetup& setup) {
  uint128 product = 0;
  const bool overflow = __builtin_mul_overflow(x, setup.t_den, &product);
  // z = |product - num| with a mask instead of a branch.
  const uint128 difference = product - num;
  const uint128 negative = Borrow(product, num, difference);
  const uint128 z = (difference ^ (uint128{0} - negative)) + negative;
  const U256 z2 = Square(z);
  // divisor < 2^127, so divisor 2^j fits in 256 bits for j <= 6.
  auto shifted = [&](int j) {
    U256 d;
    d.high = j == 0 ? uint128{0} : setup.divisor >> (128 - j);
    d.low = setup.divisor << j;
    return d;
  };
  const uint128 big = uint128{overflow} | (LessBit(z2, shifted(6)) ^ 1);
  U256 r = z2;
  uint128 whole = 0;
  for (int j = 5; j >= 0; --j) {
    const U256 d = shifted(j);
    const uint128 ge = LessBit(r, d) ^ 1;
    r = SubtractIf(r, d, ge);
    whole |= ge << j;
  }
  // When big, the division above is meaningless: use exp(-63) and no
  // fraction (masks), and settle the rest below.
  const uint128 big_mask = uint128{0} - big;
  const unsigned fixed_whole = static_cast<unsigned>((whole & ~big_mask) | (63 & big_mask));
  const uint128 fixed_remainder = r.low & ~big_mask;
  const bool accepted =
      internal::SampleBernoulliExpMinusSmall(rng, fixed_whole, fixed_remainder, setup.divisor);
  if ((big & uint128{accepted}) == 0) return accepted;
  // exp(-(Z^2 / divisor)) = exp(-63) exp(-(whole' - 63)) exp(-remainder' / divisor).
  if (overflow) return BernoulliExpMinusHuge(rng);
  uint128 full_whole = 0;
  uint128 remainder = 0;
  if (!DivMod(z2, setup.divisor, &full_whole, &remainder)) return BernoulliExpMinusHuge(rng);
  return SampleBernoulliExpMinus(rng, full_whole - 63, 1) &&
         SampleBernoulliExpMinus(rng, remainder, setup.divisor);
}

}  // namespace

bool DiscreteGaussianSupported(uint128 sigma2_numerator, uint128 sigma2_denominator) {
  if (sigma2_denominator == 0) return false;
  if (sigma2_numerator == 0) return true;
  SamplerSetup setup;
  return Setup(sigma2_numerator, sigma2_denominator, &setup);
}

void PrepareDiscreteGaussian(uint128 sigma2_numerator, uint128 sigma2_denominator) {
  SamplerSetup setup;
  if (sigma2_numerator == 0 || !Setup(sigma2_numerator, sigma2_denominator, &setup)) return;
  PrepareDiscreteLaplace(setup.t, 1);
}

int128 SampleDiscreteGaussian(RandomSource& rng, uint128 sigma2_numerator,
                              uint128 sigma2_denominator) {
  if (sigma2_denominator == 0) throw std::invalid_argument("discrete Gaussian: zero denominator");
  if (sigma2_numerator == 0) return 0;
  SamplerSetup setup;
  if (!Setup(sigma2_numerator, sigma2_denominator, &setup))
    throw std::invalid_argument("discrete Gaussian: sigma^2 outside the supported range");
  for (;;) {
    // Y with P[Y = y] proportional to exp(-|y| / t).
    const int128 y = SampleDiscreteLaplace(rng, setup.t, 1);
    // |y| with a mask: no branch on the candidate's sign.
    const uint128 sign = static_cast<uint128>(y) >> 127;
    const uint128 x = (static_cast<uint128>(y) ^ (uint128{0} - sign)) + sign;
    if (Accept(rng, x, sigma2_numerator, setup)) return y;
  }
}

}  // namespace dp
