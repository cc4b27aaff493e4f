#include "grid_value.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace dp {

int BitLength(uint128 value) noexcept {
  int bits = 0;
  while (value != 0) {
    ++bits;
    value >>= 1;
  }
  return bits;
}

uint128 CeilShift(uint128 value, int shift) noexcept {
  if (shift == 0) return value;
  if (shift >= 128) return value == 0 ? 0 : 1;
  const uint128 quotient = value >> shift;
  const uint128 remainder = value & ((uint128{1} << shift) - 1);
  return quotient + (remainder != 0 ? 1 : 0);
}

int128 RoundToGrid(int128 value, int shift) noexcept {
  if (shift >= 127) return 0;  // |value| < 2^126: |value / 2^shift| < 1/2
  if (shift <= 0) return value;
  return (value + (int128{1} << (shift - 1))) >> shift;
}

namespace {
// value / 2^shift rounded to nearest, ties to even (value >= 0, shift >= 1).
uint128 ShiftRoundHalfEven(uint128 value, int shift) {
  if (shift >= 128) return 0;
  const uint128 quotient = value >> shift;
  const uint128 remainder = value & ((uint128{1} << shift) - 1);
  const uint128 half = uint128{1} << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1) != 0)) return quotient + 1;
  return quotient;
}
}  // namespace

GridValue FromDouble(double value) {
  int exponent = 0;
  const double fraction = std::frexp(value, &exponent);  // value = fraction * 2^exponent
  // fraction * 2^53 is an integer below 2^53 in magnitude: exact.
  return GridValue{static_cast<int128>(std::ldexp(fraction, 53)), exponent - 53};
}

double ToDouble(const GridValue& value) noexcept {
  const bool negative = value.mantissa < 0;
  uint128 magnitude =
      negative ? -static_cast<uint128>(value.mantissa) : static_cast<uint128>(value.mantissa);
  int exponent = value.exponent;
  // Below 2^-1022 doubles are spaced 2^-1074 apart. Round to that spacing in
  // integer arithmetic first, so that the result is rounded exactly once.
  constexpr int kSmallestExponent = -1074;
  if (exponent < kSmallestExponent && BitLength(magnitude) + exponent - 1 < -1022) {
    magnitude = ShiftRoundHalfEven(magnitude, kSmallestExponent - exponent);
    exponent = kSmallestExponent;
  }
  // The uint128 -> double conversion rounds once, to nearest even; scaling by
  // a power of two is then exact (a subnormal result is already on its grid)
  // unless the result overflows to infinity.
  const double result = std::ldexp(static_cast<double>(magnitude), exponent);
  return negative ? -result : result;
}

std::int64_t ToInt64Saturating(const GridValue& value) noexcept {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  int128 integer = value.mantissa;
  if (value.exponent < 0) {
    const int shift = -value.exponent;
    if (shift >= 128) return 0;
    const bool negative = integer < 0;
    const uint128 magnitude =
        negative ? -static_cast<uint128>(integer) : static_cast<uint128>(integer);
    const int128 truncated = static_cast<int128>(magnitude >> shift);
    integer = negative ? -truncated : truncated;
  } else {
    for (int i = 0; i < value.exponent && integer != 0; ++i) {
      if (integer > kMax || integer < kMin) break;
      integer *= 2;
    }
  }
  if (integer > kMax) return kMax;
  if (integer < kMin) return kMin;
  return static_cast<std::int64_t>(integer);
}

namespace {

// Non-negative big integer in base 10^9, least significant limb first.
class DecimalBigInt {
 public:
  explicit DecimalBigInt(uint128 value) {
    do {
      limbs_.push_back(static_cast<std::uint32_t>(value % kBase));
      value /= kBase;
    } while (value != 0);
  }

  void MultiplySmall(std::uint32_t factor) {
    std::uint64_t carry = 0;
    for (auto& limb : limbs_) {
      const std::uint64_t product = std::uint64_t{limb} * factor + carry;
      limb = static_cast<std::uint32_t>(product % kBase);
      carry = product / kBase;
    }
    while (carry != 0) {
      limbs_.push_back(static_cast<std::uint32_t>(carry % kBase));
      carry /= kBase;
    }
  }

  std::string Digits() const {
    std::string text = std::to_string(limbs_.back());
    for (auto it = limbs_.rbegin() + 1; it != limbs_.rend(); ++it) {
      const std::string part = std::to_string(*it);
      text.append(9 - part.size(), '0');
      text += part;
    }
    return text;
  }

 private:
  static constexpr std::uint32_t kBase = 1000000000U;
  std::vector<std::uint32_t> limbs_;
};

}  // namespace

std::string Int128ToString(int128 value) {
  const bool negative = value < 0;
  const uint128 magnitude = negative ? -static_cast<uint128>(value) : static_cast<uint128>(value);
  std::string digits = DecimalBigInt(magnitude).Digits();
  return negative ? "-" + digits : digits;
}

bool ParseInt128(const char* text, int128* out) {
  bool negative = false;
  if (*text == '-') {
    negative = true;
    ++text;
  }
  if (*text == '\0') return false;
  const uint128 limit = negative ? (uint128{1} << 127) : (uint128{1} << 127) - 1;
  uint128 magnitude = 0;
  for (; *text != '\0'; ++text) {
    if (*text < '0' || *text > '9') return false;
    const unsigned digit = static_cast<unsigned>(*text - '0');
    if (magnitude > (limit - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  *out = negative ? static_cast<int128>(-magnitude) : static_cast<int128>(magnitude);
  return true;
}

std::string ToExactDecimal(const GridValue& value) {
  const bool negative = value.mantissa < 0;
  const uint128 magnitude =
      negative ? -static_cast<uint128>(value.mantissa) : static_cast<uint128>(value.mantissa);
  if (magnitude == 0) return "0";
  // Factors of two in the mantissa only add trailing zeros (erased below):
  // dropping them first shortens the multiplications. Powers of 2 and 5 are
  // applied 29 and 13 at a time (2^29, 5^13 < 2^32, so limb * factor + carry
  // stays below 2^64).
  uint128 odd = magnitude;
  int exponent = value.exponent;
  while (exponent < 0 && (odd & 1) == 0) {
    odd >>= 1;
    ++exponent;
  }
  DecimalBigInt number(odd);
  std::string text;
  if (exponent >= 0) {
    int left = exponent;
    for (; left >= 29; left -= 29) number.MultiplySmall(std::uint32_t{1} << 29);
    if (left > 0) number.MultiplySmall(std::uint32_t{1} << left);
    text = number.Digits();
  } else {
    // m * 2^-k = m * 5^k / 10^k: the digits of m * 5^k with the decimal point
    // k places from the right.
    const int places = -exponent;
    constexpr std::uint32_t kFiveTo13 = 1220703125U;
    int left = places;
    for (; left >= 13; left -= 13) number.MultiplySmall(kFiveTo13);
    std::uint32_t rest = 1;
    for (; left > 0; --left) rest *= 5;
    if (rest > 1) number.MultiplySmall(rest);
    std::string digits = number.Digits();
    if (digits.size() <= static_cast<std::size_t>(places))
      digits.insert(0, static_cast<std::size_t>(places) + 1 - digits.size(), '0');
    text = digits.substr(0, digits.size() - places) + "." + digits.substr(digits.size() - places);
    // Drop trailing zeros of the fraction (and the point if nothing remains).
    const std::size_t last = text.find_last_not_of('0');
    text.erase(text[last] == '.' ? last : last + 1);
  }
  return negative ? "-" + text : text;
}

int ChooseUnitExponent(double lower, double upper) noexcept {
  const double largest = std::max(std::fabs(lower), std::fabs(upper));
  if (largest == 0.0) return 0;
  int exponent = 0;
  std::frexp(largest, &exponent);  // largest < 2^exponent
  return exponent - 62;
}

double UnitScale(int unit_exponent) noexcept {
  if (unit_exponent < -1020 || unit_exponent > 1020) return 0.0;
  return std::ldexp(1.0, -unit_exponent);
}

std::int64_t ToUnitsSlow(double value, int unit_exponent) noexcept {
  return RoundToInt64(std::ldexp(value, -unit_exponent));
}

int MeaningfulDecimalPlaces(double noise_stddev) noexcept {
  constexpr int kExact = 1100;
  if (!(noise_stddev > 0) || !std::isfinite(noise_stddev)) return kExact;
  const double exponent = std::floor(std::log10(noise_stddev / 10));
  if (exponent >= 0) return 0;
  if (-exponent >= kExact) return kExact;
  return static_cast<int>(-exponent);
}

}  // namespace dp
