#include "numeric_digits.h"

#include <cmath>

namespace dp {

namespace {

// 10^0 .. 10^22: every one is a double exactly (10^22 = 2^22 5^22, and
// 5^22 < 2^53).
constexpr double kExactPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kMaxExactPower = 22;
constexpr std::uint64_t kTwoTo53 = std::uint64_t{1} << 53;

// More significant base-10000 digits than this make M >= 10^20 before its
// trailing decimal zeros are removed; 5 digits (< 10^20) fit in 128 bits.
constexpr int kMaxSignificantDigits = 5;
// 4 base-10000 digits make M < 10^16, well within 64 bits.
constexpr int kMaxDigitsIn64Bits = 4;

}  // namespace

bool Base10000ToDouble(const std::uint16_t* digits, int count, int weight, bool negative,
                       double* out) noexcept {
  if (count < 0) return false;
  for (int i = 0; i < count; ++i)
    if (digits[i] >= kNumericDigitBase) return false;
  // Leading and trailing zero digits do not change the value (PostgreSQL
  // strips them, but a value built otherwise still converts exactly).
  int first = 0;
  while (first < count && digits[first] == 0) ++first;
  int end = count;
  while (end > first && digits[end - 1] == 0) --end;
  if (first == end) {
    *out = negative ? -0.0 : 0.0;
    return true;
  }
  // The common case first, in 64-bit arithmetic only (the general path below
  // divides 128-bit integers by 10, a library call that cost more than the
  // rest of a dp_sum(numeric) row): up to 4 digits make M < 10^16 < 2^64,
  // and when M < 2^53 and |exponent| <= 22 the single IEEE operation rounds
  // the same exact value M * 10^exponent that the general path would reach
  // after moving trailing zeros, so both give the same correctly rounded
  // double.
  if (end - first <= kMaxDigitsIn64Bits) {
    std::uint64_t small_mantissa = 0;
    for (int i = first; i < end; ++i)
      small_mantissa = small_mantissa * kNumericDigitBase + digits[i];
    const long small_exponent = 4L * (static_cast<long>(weight) - (end - 1));
    if (small_mantissa < kTwoTo53 && small_exponent >= -kMaxExactPower &&
        small_exponent <= kMaxExactPower) {
      double magnitude = static_cast<double>(small_mantissa);  // exact
      if (small_exponent >= 0) {
        magnitude *= kExactPowersOfTen[small_exponent];
      } else {
        magnitude /= kExactPowersOfTen[-small_exponent];
      }
      *out = negative ? -magnitude : magnitude;
      return true;
    }
  }
  if (end - first > kMaxSignificantDigits) return false;
  // value = M * 10^exponent, M the digits first..end-1 read as one integer.
  unsigned __int128 mantissa = 0;
  for (int i = first; i < end; ++i) mantissa = mantissa * kNumericDigitBase + digits[i];
  long exponent = 4L * (static_cast<long>(weight) - (end - 1));
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  if (mantissa >= kTwoTo53) return false;
  double magnitude = static_cast<double>(static_cast<std::uint64_t>(mantissa));  // exact
  if (exponent > kMaxExactPower) {
    // M 10^(exponent - 22) may still be an integer below 2^53 (exact), and
    // then one multiplication by 10^22 rounds once.
    const long extra = exponent - kMaxExactPower;
    if (extra > kMaxExactPower) return false;
    for (long k = 0; k < extra; ++k) {
      mantissa *= 10;
      if (mantissa >= kTwoTo53) return false;
    }
    magnitude = static_cast<double>(static_cast<std::uint64_t>(mantissa));
    exponent = kMaxExactPower;
  }
  if (exponent < -kMaxExactPower) return false;
  // One correctly rounded IEEE operation on exact operands.
  if (exponent >= 0) {
    magnitude *= kExactPowersOfTen[exponent];
  } else {
    magnitude /= kExactPowersOfTen[-exponent];
  }
  *out = negative ? -magnitude : magnitude;
  return true;
}

namespace {

using Uint128 = unsigned __int128;

int BitLength128(Uint128 value) noexcept {
  int bits = 0;
  while (value != 0) {
    value >>= 1;
    ++bits;
  }
  return bits;
}

}  // namespace

bool RoundedDecimalText(double value, int places, char* buffer, std::size_t size) noexcept {
  if (!std::isfinite(value)) return false;
  int exponent = 0;
  // |value| = fraction * 2^exponent, fraction in [0.5, 1): m = fraction * 2^53
  // is an integer below 2^53 (exact), |value| = m * 2^(exponent - 53).
  const double fraction = std::frexp(std::fabs(value), &exponent);
  const auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
  return RoundedDecimalText(std::signbit(value), mantissa, exponent - 53, places, buffer, size);
}

bool RoundedDecimalText(const GridValue& value, int places, char* buffer,
                        std::size_t size) noexcept {
  const bool negative = value.mantissa < 0;
  const Uint128 magnitude =
      negative ? -static_cast<Uint128>(value.mantissa) : static_cast<Uint128>(value.mantissa);
  return RoundedDecimalText(negative, magnitude, value.exponent, places, buffer, size);
}

bool RoundedDecimalText(bool negative, unsigned __int128 magnitude, int exponent, int places,
                        char* buffer, std::size_t size) noexcept {
  if (places < 0 || places > kMaxRoundedPlaces) return false;
  // m * 5^places, kept below 2^127 (declined otherwise).
  constexpr Uint128 kBelow = ((static_cast<Uint128>(1) << 127) - 1) / 5;
  Uint128 scaled = magnitude;
  for (int i = 0; i < places; ++i) {
    if (scaled > kBelow) return false;
    scaled *= 5;
  }
  // |value| * 10^places = scaled * 2^shift_left, exactly.
  const long shift_left = static_cast<long>(exponent) + places;
  Uint128 rounded;
  if (scaled == 0) {
    rounded = 0;
  } else if (shift_left >= 0) {
    if (BitLength128(scaled) + shift_left > 127) return false;
    rounded = scaled << shift_left;
  } else {
    const long shift = -shift_left;
    if (shift >= 128) {
      rounded = 0;  // scaled < 2^127 <= 2^(shift - 1): below one half
    } else {
      // Half away from zero on the magnitude: the dropped bits decide, one
      // half rounds up.
      const Uint128 one = 1;
      const Uint128 remainder = scaled & ((one << shift) - 1);
      rounded = (scaled >> shift) + (remainder >= (one << (shift - 1)) ? 1 : 0);
    }
  }
  // The digits of `rounded`, least significant first, at least places + 1.
  char digits[48];
  int count = 0;
  Uint128 rest = rounded;
  for (; rest > UINT64_MAX; rest /= 10)
    digits[count++] = static_cast<char>('0' + static_cast<int>(rest % 10));
  for (auto small = static_cast<std::uint64_t>(rest); small != 0; small /= 10)
    digits[count++] = static_cast<char>('0' + static_cast<int>(small % 10));
  while (count < places + 1) digits[count++] = '0';
  const bool minus = negative && rounded != 0;
  const std::size_t length =
      static_cast<std::size_t>(count) + (minus ? 1 : 0) + (places > 0 ? 1 : 0);
  if (length + 1 > size) return false;
  char* out = buffer;
  if (minus) *out++ = '-';
  for (int i = count - 1; i >= 0; --i) {
    *out++ = digits[i];
    if (i == places && places > 0) *out++ = '.';
  }
  *out = '\0';
  return true;
}

}  // namespace dp
