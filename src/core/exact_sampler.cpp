#include "exact_sampler.h"

#include <gmp.h>
#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dp {

namespace {

constexpr uint128 kTwoTo80 = uint128{1} << kComparisonBits;

// ---------------------------------------------------------------------------
// 256-bit helpers (high, low halves).

struct U256 {
  uint128 high = 0;
  uint128 low = 0;
};

U256 Mul(uint128 a, uint128 b) {
  const uint128 a0 = static_cast<std::uint64_t>(a), a1 = a >> 64;
  const uint128 b0 = static_cast<std::uint64_t>(b), b1 = b >> 64;
  const uint128 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint128 mid =
      (p00 >> 64) + static_cast<std::uint64_t>(p01) + static_cast<std::uint64_t>(p10);
  U256 r;
  r.low = (mid << 64) | static_cast<std::uint64_t>(p00);
  r.high = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
  return r;
}

// Branch-free comparisons. The compiler turns `bool` selections into
// conditional jumps when it likes, and a mispredicted jump costs time that
// depends on the data (the bench measured it: ~10 ns between |x| buckets).
// These are computed as borrows of subtractions, i.e. by plain arithmetic.

// The borrow out of a - b (1 if a < b), for any 128-bit a, b.
inline uint128 Borrow(uint128 a, uint128 b, uint128 difference) {
  return ((~a & b) | (~(a ^ b) & difference)) >> 127;
}

// 1 if a < b else 0, for any 128-bit a, b.
inline uint128 LessBit(uint128 a, uint128 b) { return Borrow(a, b, a - b); }

// 1 if a < b else 0, for a, b < 2^127 (80-bit draws and thresholds <= 2^80):
// the sign bit of a - b, one subtraction and a shift. The per-digit loops
// below spend most of their time here.
inline uint128 LessBitSmall(uint128 a, uint128 b) { return (a - b) >> 127; }

// 1 if a < b else 0, for a, b < 2^255.
inline uint128 LessBit(const U256& a, const U256& b) {
  const uint128 low = a.low - b.low;
  const uint128 borrow = Borrow(a.low, b.low, low);
  return (a.high - b.high - borrow) >> 127;
}

bool Less(const U256& a, const U256& b) { return LessBit(a, b) != 0; }

U256 Sub(const U256& a, const U256& b) {  // a >= b
  U256 r;
  r.low = a.low - b.low;
  r.high = a.high - b.high - (a.low < b.low ? 1 : 0);
  return r;
}

U256 ShiftLeft(uint128 a, int bits) {  // 0 < bits < 128
  U256 r;
  r.high = a >> (128 - bits);
  r.low = a << bits;
  return r;
}

U256 Double(const U256& a) {
  U256 r;
  r.high = (a.high << 1) | (a.low >> 127);
  r.low = a.low << 1;
  return r;
}

bool IsZero(const U256& a) { return a.high == 0 && a.low == 0; }

// The 80-bit little-endian integer at p.
uint128 Read80(const unsigned char* p) {
  std::uint64_t low;
  std::uint16_t high;
  std::memcpy(&low, p, sizeof low);
  std::memcpy(&high, p + 8, sizeof high);
  return (uint128{high} << 64) | low;
}

uint128 FreshU80(RandomSource& rng) {
  unsigned char bytes[kComparisonBytes];
  rng.Fill(bytes, sizeof bytes);
  return Read80(bytes);
}

// ---------------------------------------------------------------------------
// Exact comparison of V in [u, u + 1) 2^-80 with the rational a / b.

struct RationalDecision {
  bool less;  // V < a / b, if not ambiguous
  bool ambiguous;  // u b < a 2^80 < (u + 1) b
};

// a <= b, b = multiplier * denominator with multiplier (u + 1) < 2^86 after
// multiplying; a 2^80 and (u + 1) multiplier denominator fit in 256 bits.
// Same operations whatever the operands.
// Bits (0/1) rather than bools, so that callers can combine them with
// arithmetic only.
struct RationalBits {
  uint128 less;
  uint128 ambiguous;
};
RationalBits CompareRationalBits(uint128 u, uint128 a, uint128 multiplier, uint128 denominator) {
  const U256 scaled_a = ShiftLeft(a, kComparisonBits);
  const U256 upper = Mul((u + 1) * multiplier, denominator);
  const U256 lower = Mul(u * multiplier, denominator);
  RationalBits d;
  d.less = 1 ^ LessBit(scaled_a, upper);  // (u + 1) b <= a 2^80: V < (u+1) 2^-80 <= a/b
  const uint128 greater = 1 ^ LessBit(lower, scaled_a);  // u b >= a 2^80: V >= a / b
  d.ambiguous = (1 ^ d.less) & (1 ^ greater);
  return d;
}

RationalDecision CompareRational(uint128 u, uint128 a, uint128 multiplier, uint128 denominator) {
  const RationalBits bits = CompareRationalBits(u, a, multiplier, denominator);
  return RationalDecision{bits.less != 0, bits.ambiguous != 0};
}

bool ExactRational(RandomSource& rng, uint128 u, uint128 a, uint128 multiplier,
                   uint128 denominator) {
  const RationalDecision d = CompareRational(u, a, multiplier, denominator);
  if (!d.ambiguous) return d.less;
  const U256 scaled_a = ShiftLeft(a, kComparisonBits);
  const U256 b = Mul(multiplier, denominator);
  return internal::RefineRational(rng, scaled_a.high, scaled_a.low, b.high, b.low, u);
}

// ---------------------------------------------------------------------------
// Certified bounds of the transcendental constants (MPFR, directed rounding).

class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t precision) { mpfr_init2(value_, precision); }
  ~Mpfr() { mpfr_clear(value_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return value_; }

 private:
  mpfr_t value_;
};

// Exactly `value` (precision >= 128).
void SetUint128(mpfr_ptr out, uint128 value) {
  mpfr_set_uj(out, static_cast<std::uint64_t>(value >> 64), MPFR_RNDN);
  mpfr_mul_2ui(out, out, 64, MPFR_RNDN);
  mpfr_add_ui(out, out, static_cast<unsigned long>(static_cast<std::uint64_t>(value)), MPFR_RNDN);
}

// lo <= c <= hi at working precision `precision` (>= 128).
void Bounds(const internal::ConstantSpec& spec, mpfr_prec_t precision, mpfr_ptr lo, mpfr_ptr hi) {
  Mpfr s(precision), t(precision), gamma_lo(precision), gamma_hi(precision);
  SetUint128(s.get(), spec.s);
  SetUint128(t.get(), spec.t);
  mpfr_mul_2si(s.get(), s.get(), spec.k, MPFR_RNDN);  // exact
  mpfr_div(gamma_lo.get(), s.get(), t.get(), MPFR_RNDD);
  mpfr_div(gamma_hi.get(), s.get(), t.get(), MPFR_RNDU);
  switch (spec.kind) {
    case internal::ConstantKind::kExpMinus:
      mpfr_neg(gamma_hi.get(), gamma_hi.get(), MPFR_RNDN);
      mpfr_neg(gamma_lo.get(), gamma_lo.get(), MPFR_RNDN);
      mpfr_exp(lo, gamma_hi.get(), MPFR_RNDD);  // exp(-gamma_hi) <= exp(-gamma)
      mpfr_exp(hi, gamma_lo.get(), MPFR_RNDU);
      return;
    case internal::ConstantKind::kLogistic:
    case internal::ConstantKind::kTwiceLogistic: {
      // c = numerator / (1 + exp(gamma)) is decreasing in gamma.
      const unsigned long numerator = spec.kind == internal::ConstantKind::kLogistic ? 1UL : 2UL;
      Mpfr e(precision);
      mpfr_exp(e.get(), gamma_hi.get(), MPFR_RNDU);
      mpfr_add_ui(e.get(), e.get(), 1, MPFR_RNDU);
      mpfr_ui_div(lo, numerator, e.get(), MPFR_RNDD);
      mpfr_exp(e.get(), gamma_lo.get(), MPFR_RNDD);
      mpfr_add_ui(e.get(), e.get(), 1, MPFR_RNDD);
      mpfr_ui_div(hi, numerator, e.get(), MPFR_RNDU);
      return;
    }
  }
}

uint128 MpzToUint128(mpz_srcptr z) {  // 0 <= z < 2^128
  uint128 result = 0;
  const size_t limbs = mpz_size(z);
  for (size_t i = limbs; i-- > 0;)
    result = (result << 64) | mpz_getlimbn(z, static_cast<mp_size_t>(i));
  return result;
}

// ---------------------------------------------------------------------------
// Comparisons with a constant given its thresholds.

bool ExactConstant(RandomSource& rng, uint128 u, const internal::Thresholds& thresholds,
                   const internal::ConstantSpec& spec) {
  if (u < thresholds.below) return true;
  if (u >= thresholds.above) return false;
  return internal::RefineConstant(rng, spec, u);
}

// Bernoulli(c) from fresh randomness (used only in fallbacks).
bool FreshConstant(RandomSource& rng, const internal::Thresholds& thresholds,
                   const internal::ConstantSpec& spec) {
  return ExactConstant(rng, FreshU80(rng), thresholds, spec);
}

// exp(-2^j), j = 0..5: the digits of the whole part of an exponent.
constexpr int kWholeDigits = 6;
static_assert((1 << kWholeDigits) - 1 == kMaxFixedWorkWholePart, "whole part digits");

struct ExpPow2Table {
  internal::ConstantSpec spec[kWholeDigits];
  internal::Thresholds thresholds[kWholeDigits];
  ExpPow2Table() {
    for (int j = 0; j < kWholeDigits; ++j) {
      spec[j].kind = internal::ConstantKind::kExpMinus;
      spec[j].k = j;
      thresholds[j] = internal::ComputeThresholds(spec[j]);
    }
  }
};

const ExpPow2Table& ExpPow2() {
  static const ExpPow2Table table;  // computed once per process, on first use
  return table;
}

// ---------------------------------------------------------------------------
// Discrete Laplace constants, cached per (t, s).

constexpr int kMaxDigits = 104;  // t < 2^96, s >= 1: s/t > 2^-96, K <= 96 + 6
constexpr std::size_t kMaxLaplaceBytes = kComparisonBytes * (kMaxDigits + 2) + 1;

struct LaplaceConstants {
  bool valid = false;
  uint128 t = 0;
  uint128 s = 0;
  int digits = 0;  // K
  internal::Thresholds digit[kMaxDigits];
  internal::Thresholds tail;  // q^(2^K) <= 2^-80
  internal::Thresholds nonzero;  // 2q / (1 + q)
};

internal::ConstantSpec LaplaceSpec(uint128 t, uint128 s, internal::ConstantKind kind, int k) {
  internal::ConstantSpec spec;
  spec.kind = kind;
  spec.t = t;
  spec.s = s;
  spec.k = k;
  return spec;
}

void BuildLaplaceConstants(uint128 t, uint128 s, LaplaceConstants* c) {
  c->valid = false;
  c->t = t;
  c->s = s;
  // The least K with q^(2^K) <= 2^-80, i.e. threshold `above` <= 1. The
  // floating-point estimate only chooses where to start; the certified
  // bounds decide.
  const double rate = static_cast<double>(s) / static_cast<double>(t);
  int k = rate >= 56.0 ? 0 : static_cast<int>(std::ceil(std::log2(56.0 / rate))) - 2;
  if (k < 0) k = 0;
  while (k > 0 &&
         internal::ComputeThresholds(LaplaceSpec(t, s, internal::ConstantKind::kExpMinus, k - 1))
                 .above <= 1)
    --k;
  // Capped inside the loop, not after it: q^(2^K) falls doubly exponentially
  // so K stays small for every supported scale, and the cap makes that a
  // bound the code enforces rather than one the analysis promises.
  for (;;) {
    if (k > kMaxDigits) throw std::logic_error("discrete Laplace: too many digits");
    c->tail = internal::ComputeThresholds(LaplaceSpec(t, s, internal::ConstantKind::kExpMinus, k));
    if (c->tail.above <= 1) break;
    ++k;
  }
  c->digits = k;
  for (int i = 0; i < k; ++i)
    c->digit[i] =
        internal::ComputeThresholds(LaplaceSpec(t, s, internal::ConstantKind::kLogistic, i));
  c->nonzero =
      internal::ComputeThresholds(LaplaceSpec(t, s, internal::ConstantKind::kTwiceLogistic, 0));
  c->valid = true;
}

// A query uses a handful of (t, s) pairs (one per aggregate and plan), each
// for many draws: the most recent pair is checked first, then the others.
// The least recently used pair is replaced, so that the pairs a query
// prepared when it started (PrepareDiscreteLaplace) stay while it runs if
// they are at most kCacheEntries (replacing in rotation instead evicted a
// pair prepared earlier by one inserted after it: the first group then paid
// for its constants again). More than kCacheEntries pairs used in rotation
// recompute constants (~0.1-0.4 ms) on every draw: slow, but still exact and
// fixed-work.
constexpr int kCacheEntries = 32;  // about 110 KB per process
struct LaplaceCache {
  LaplaceConstants entries[kCacheEntries];
  std::uint64_t used[kCacheEntries] = {};  // when each was last looked up (0: never)
  std::uint64_t clock = 0;
  int last = 0;
};
thread_local LaplaceCache laplace_cache;
thread_local std::uint64_t laplace_constants_built = 0;

const LaplaceConstants& LookupLaplace(uint128 t, uint128 s) {
  LaplaceCache& cache = laplace_cache;
  const LaplaceConstants& recent = cache.entries[cache.last];
  if (recent.valid && recent.t == t && recent.s == s) {
    cache.used[cache.last] = ++cache.clock;
    return recent;
  }
  int slot = 0;
  for (int i = 0; i < kCacheEntries; ++i) {
    const LaplaceConstants& e = cache.entries[i];
    if (e.valid && e.t == t && e.s == s) {
      cache.last = i;
      cache.used[i] = ++cache.clock;
      return e;
    }
    if (cache.used[i] < cache.used[slot]) slot = i;
  }
  cache.used[slot] = ++cache.clock;
  BuildLaplaceConstants(t, s, &cache.entries[slot]);
  ++laplace_constants_built;
  cache.last = slot;
  return cache.entries[slot];
}

// The slow path of SampleDiscreteLaplace, taken with probability < 2^-72:
// the same decisions from the same bytes, each settled exactly, then the
// high part H of the geometric variable.
uint128 SettleGeometric(RandomSource& rng, const LaplaceConstants& c, const unsigned char* bytes,
                        bool* nonzero) {
  uint128 g = 0;
  for (int k = 0; k < c.digits; ++k) {
    const bool bit = ExactConstant(rng, Read80(bytes + kComparisonBytes * k), c.digit[k],
                                   LaplaceSpec(c.t, c.s, internal::ConstantKind::kLogistic, k));
    g |= uint128{bit} << k;
  }
  const internal::ConstantSpec tail_spec =
      LaplaceSpec(c.t, c.s, internal::ConstantKind::kExpMinus, c.digits);
  const unsigned char* rest = bytes + kComparisonBytes * c.digits;
  if (ExactConstant(rng, Read80(rest), c.tail, tail_spec)) {
    // H ~ Geometric(q^(2^K)) with H >= 1: memoryless, one more success per
    // further Bernoulli(q^(2^K)) success.
    uint128 h = 1;
    while (FreshConstant(rng, c.tail, tail_spec)) ++h;
    g += h << c.digits;
  }
  *nonzero = ExactConstant(rng, Read80(rest + kComparisonBytes), c.nonzero,
                           LaplaceSpec(c.t, c.s, internal::ConstantKind::kTwiceLogistic, 0));
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------

namespace internal {

Thresholds ComputeThresholds(const ConstantSpec& spec) {
  constexpr mpfr_prec_t kPrecision = 192;
  Mpfr lo(kPrecision), hi(kPrecision);
  Bounds(spec, kPrecision, lo.get(), hi.get());
  mpfr_mul_2ui(lo.get(), lo.get(), kComparisonBits, MPFR_RNDN);  // exact
  mpfr_mul_2ui(hi.get(), hi.get(), kComparisonBits, MPFR_RNDN);
  mpz_t z;
  mpz_init(z);
  Thresholds result;
  mpfr_get_z(z, lo.get(), MPFR_RNDD);
  if (mpz_sgn(z) < 0) mpz_set_ui(z, 0);
  result.below = mpz_sizeinbase(z, 2) > kComparisonBits ? kTwoTo80 : MpzToUint128(z);
  mpfr_get_z(z, hi.get(), MPFR_RNDU);
  result.above = mpz_sizeinbase(z, 2) > kComparisonBits ? kTwoTo80 : MpzToUint128(z);
  if (result.above > kTwoTo80) result.above = kTwoTo80;
  if (result.below > result.above) result.below = result.above;
  mpz_clear(z);
  return result;
}

bool RefineConstant(RandomSource& rng, const ConstantSpec& spec, uint128 u) {
  // V = (U + W) 2^-n with U the first n bits and W uniform in [0, 1). Each
  // round appends 64 bits and recomputes the bounds 64 bits more precisely
  // than the prefix: decided as soon as [U, U + 1) 2^-n avoids [lo, hi].
  // c is irrational (exp of a nonzero rational is transcendental, and
  // gamma > 0 here), so this ends with probability 1.
  mpz_t prefix, next;
  mpz_init(prefix);
  mpz_init(next);
  mpz_set_ui(prefix, static_cast<unsigned long>(static_cast<std::uint64_t>(u >> 64)));
  mpz_mul_2exp(prefix, prefix, 64);
  mpz_add_ui(prefix, prefix, static_cast<unsigned long>(static_cast<std::uint64_t>(u)));
  unsigned long bits = kComparisonBits;
  bool result = false;
  for (;;) {
    const std::uint64_t word = rng.NextUint64();
    mpz_mul_2exp(prefix, prefix, 64);
    mpz_add_ui(prefix, prefix, static_cast<unsigned long>(word));
    bits += 64;
    const mpfr_prec_t precision = static_cast<mpfr_prec_t>(bits + 64);
    Mpfr lo(precision), hi(precision), v(precision);
    Bounds(spec, precision, lo.get(), hi.get());
    mpz_add_ui(next, prefix, 1);
    mpfr_set_z(v.get(), next, MPFR_RNDN);  // exact: bits + 1 <= precision
    mpfr_div_2ui(v.get(), v.get(), bits, MPFR_RNDN);
    if (mpfr_lessequal_p(v.get(), lo.get())) {
      result = true;
      break;
    }
    mpfr_set_z(v.get(), prefix, MPFR_RNDN);
    mpfr_div_2ui(v.get(), v.get(), bits, MPFR_RNDN);
    if (mpfr_greaterequal_p(v.get(), hi.get())) {
      result = false;
      break;
    }
  }
  mpz_clear(prefix);
  mpz_clear(next);
  return result;
}

bool RefineRational(RandomSource& rng, uint128 a_high, uint128 a_low, uint128 b_high, uint128 b_low,
                    uint128 u) {
  // r = a 2^80 - u b, 0 < r < b: the binary digits of a/b after the first 80
  // are those of r / b, produced by long division and compared one by one
  // with fresh bits of V (the first difference decides).
  U256 a{a_high, a_low};
  const U256 b{b_high, b_low};
  U256 ub;
  {
    // u < 2^80 and b < 2^133: u b < 2^213.
    const U256 low_part = Mul(u, b.low);
    const U256 high_part = Mul(u, b.high);  // < 2^85: shifted by 128 it lands in .high
    ub.low = low_part.low;
    ub.high = low_part.high + high_part.low;
  }
  U256 r = Sub(a, ub);
  for (;;) {
    const std::uint64_t word = rng.NextUint64();
    for (int i = 63; i >= 0; --i) {
      r = Double(r);
      const bool digit = !Less(r, b);
      if (digit) r = Sub(r, b);
      const bool v = ((word >> i) & 1U) != 0;
      if (v != digit) return digit;  // V's digit 0 where c's is 1: V < c
      if (IsZero(r)) return false;  // c ends here and V >= c
    }
  }
}

bool SampleBernoulliExpMinusSmall(RandomSource& rng, unsigned whole, uint128 numerator,
                                  uint128 denominator) {
  if (denominator == 0 || numerator > denominator || whole > kMaxFixedWorkWholePart)
    throw std::invalid_argument("Bernoulli(exp(-x)): argument out of range");
  const ExpPow2Table& table = ExpPow2();
  constexpr int kComparisons = kWholeDigits + kBernoulliExpLoopTrials;
  unsigned char bytes[kComparisonBytes * kComparisons];
  rng.Fill(bytes, sizeof bytes);

  // exp(-whole) = product over the digits j of whole of exp(-2^j): one
  // Bernoulli(exp(-2^j)) per digit, drawn for every j and ignored (masked)
  // where the digit is 0. All outcomes are combined as 0/1 integers.
  uint128 accept_bit = 1;
  uint128 ambiguous_bits = 0;
  for (int j = 0; j < kWholeDigits; ++j) {
    const uint128 u = Read80(bytes + kComparisonBytes * j);
    const uint128 less = LessBitSmall(u, table.thresholds[j].below);
    ambiguous_bits |= (1 ^ less) & LessBitSmall(u, table.thresholds[j].above);
    accept_bit &= less | (1 ^ ((whole >> j) & 1U));
  }
  // exp(-f), f = numerator / denominator in [0, 1], by CKS20 Algorithm 1:
  // A_k ~ Bernoulli(f / k) for k = 1, 2, ... until the first failure at K;
  // P[K odd] = exp(-f). All kBernoulliExpLoopTrials trials are drawn, and
  // the number of leading successes (K - 1) is counted with a mask.
  uint128 alive_bit = 1;
  uint128 leading_bits = 0;
  for (int k = 1; k <= kBernoulliExpLoopTrials; ++k) {
    const uint128 u = Read80(bytes + kComparisonBytes * (kWholeDigits + k - 1));
    const RationalBits d = CompareRationalBits(u, numerator, static_cast<uint128>(k), denominator);
    ambiguous_bits |= d.ambiguous;
    alive_bit &= d.less;
    leading_bits += alive_bit;
  }
  bool accept = accept_bit != 0;
  bool alive = alive_bit != 0;
  unsigned leading = static_cast<unsigned>(leading_bits);
  const bool ambiguous = ambiguous_bits != 0;
  if (ambiguous) {
    // Probability <= 27 * 2^-79: settle every decision exactly from the
    // same bytes (plus more randomness for the ambiguous ones).
    accept = true;
    for (int j = 0; j < kWholeDigits; ++j) {
      const bool less = ExactConstant(rng, Read80(bytes + kComparisonBytes * j),
                                      table.thresholds[j], table.spec[j]);
      accept &= less | (((whole >> j) & 1U) == 0);
    }
    alive = true;
    leading = 0;
    for (int k = 1; k <= kBernoulliExpLoopTrials; ++k) {
      alive &= ExactRational(rng, Read80(bytes + kComparisonBytes * (kWholeDigits + k - 1)),
                             numerator, static_cast<uint128>(k), denominator);
      leading += alive ? 1U : 0U;
    }
  }
  // All padded trials succeeded (probability <= 1/21! < 2^-65): continue
  // the loop exactly.
  for (std::uint64_t k = kBernoulliExpLoopTrials + 1; alive; ++k) {
    alive = ExactRational(rng, FreshU80(rng), numerator, uint128{k}, denominator);
    leading += alive ? 1U : 0U;
  }
  return (static_cast<unsigned>(accept) & (1U ^ (leading & 1U))) != 0;
}

std::size_t DiscreteLaplaceBytes(uint128 t, uint128 s) {
  return kComparisonBytes * static_cast<std::size_t>(LookupLaplace(t, s).digits + 2) + 1;
}

}  // namespace internal

// ---------------------------------------------------------------------------

bool SampleBernoulliRational(RandomSource& rng, uint128 numerator, uint128 denominator) {
  if (denominator == 0 || numerator > denominator)
    throw std::invalid_argument("Bernoulli probability must lie in [0, 1]");
  return ExactRational(rng, FreshU80(rng), numerator, 1, denominator);
}

bool SampleBernoulliExpMinus(RandomSource& rng, uint128 numerator, uint128 denominator) {
  if (denominator == 0) throw std::invalid_argument("Bernoulli(exp(-x)): zero denominator");
  const uint128 whole = numerator / denominator;
  const uint128 remainder = numerator % denominator;
  if (whole <= kMaxFixedWorkWholePart)
    return internal::SampleBernoulliExpMinusSmall(rng, static_cast<unsigned>(whole), remainder,
                                                  denominator);
  // exp(-g) = exp(-63 - f) exp(-(whole - 63)); the second factor, one
  // Bernoulli(exp(-1)) per unit, is reached with probability exp(-63) only.
  if (!internal::SampleBernoulliExpMinusSmall(rng, kMaxFixedWorkWholePart, remainder, denominator))
    return false;
  for (uint128 rest = whole - kMaxFixedWorkWholePart; rest > 0; --rest) {
    if (!internal::SampleBernoulliExpMinusSmall(rng, 1, 0, 1)) return false;
  }
  return true;
}

void PrepareDiscreteLaplace(uint128 t, uint128 s) {
  ExpPow2();
  if (t == 0 || s == 0 || (t >> 96) != 0) return;  // refused when drawn
  LookupLaplace(t, s);
}

std::uint64_t DiscreteLaplaceConstantsBuilt() noexcept { return laplace_constants_built; }

int128 SampleDiscreteLaplace(RandomSource& rng, uint128 t, uint128 s) {
  if (t == 0 || s == 0) throw std::invalid_argument("discrete Laplace: scale must be positive");
  if ((t >> 96) != 0) throw std::invalid_argument("discrete Laplace: scale numerator too large");
  const LaplaceConstants& c = LookupLaplace(t, s);
  const std::size_t length = kComparisonBytes * static_cast<std::size_t>(c.digits + 2) + 1;
  unsigned char bytes[kMaxLaplaceBytes];
  rng.Fill(bytes, length);

  // Fixed work: K digit comparisons, the tail and the zero test, all drawn
  // and evaluated by arithmetic on 0/1 integers (no branch on any outcome).
  // G is assembled from its top digit down.
  uint128 g = 0;
  uint128 ambiguous_bits = 0;
  for (int k = c.digits - 1; k >= 0; --k) {
    const uint128 u = Read80(bytes + kComparisonBytes * k);
    const uint128 less = LessBitSmall(u, c.digit[k].below);
    g = (g << 1) | less;
    ambiguous_bits |= (1 ^ less) & LessBitSmall(u, c.digit[k].above);
  }
  const unsigned char* rest = bytes + kComparisonBytes * c.digits;
  const uint128 tail_u = Read80(rest);
  // tail.below == 0: never "less" on the fast path; u < tail.above (u == 0)
  // is the ambiguous case, and H != 0 is possible only there.
  ambiguous_bits |= LessBitSmall(tail_u, c.tail.above);
  const uint128 nonzero_u = Read80(rest + kComparisonBytes);
  uint128 nonzero_bit = LessBitSmall(nonzero_u, c.nonzero.below);
  ambiguous_bits |= (1 ^ nonzero_bit) & LessBitSmall(nonzero_u, c.nonzero.above);
  const uint128 negative_bit = rest[2 * kComparisonBytes] & 1U;
  const bool ambiguous = ambiguous_bits != 0;
  bool nonzero = false;
  if (ambiguous) {  // probability < 2^-72
    g = SettleGeometric(rng, c, bytes, &nonzero);
    nonzero_bit = nonzero ? 1 : 0;
  }

  // X = N S (1 + G), computed with masks.
  const uint128 magnitude = (g + 1) & (uint128{0} - nonzero_bit);
  const uint128 sign_mask = uint128{0} - negative_bit;
  return static_cast<int128>((magnitude ^ sign_mask) - sign_mask);
}

}  // namespace dp
