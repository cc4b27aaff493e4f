// Exact binary fixed-point numbers: the values that the mechanisms accumulate
// and release.
//
// Sums are accumulated as integers in units of 2^unit_exponent (a power of two
// chosen from the public bounds alone), in 128-bit arithmetic: exact, free of
// overflow for any number of rows a table can hold, and associative, so that a
// serial and a parallel plan compute the same true value (Casacuberta et al.,
// "Widespread underestimation of sensitivity in differentially private
// libraries and how to fix it", CCS 2022, on why float sums are not enough).
#ifndef DP_AGG_CORE_GRID_VALUE_H
#define DP_AGG_CORE_GRID_VALUE_H

#include <cstdint>
#include <string>

#include "random_source.h"

namespace dp {

// mantissa * 2^exponent, exactly.
struct GridValue {
  int128 mantissa = 0;
  int exponent = 0;
};

// A finite double exactly, as mantissa * 2^exponent.
GridValue FromDouble(double value);

// Nearest double (round to nearest even); +-infinity beyond the double range.
double ToDouble(const GridValue& value) noexcept;

// The integer value rounded toward zero, saturated to the int64 range.
std::int64_t ToInt64Saturating(const GridValue& value) noexcept;

// The exact decimal expansion, e.g. "-12.375" for {-99, -3}. Every binary
// fraction has a finite decimal expansion, so nothing is rounded.
std::string ToExactDecimal(const GridValue& value);

// How many decimal places of a released value mean something, given the
// standard deviation of its noise: the digits down to
// 10^floor(log10(noise_stddev / 10)), one decimal place finer than the
// noise's order of magnitude, and never fewer than 0 (integer digits are
// kept). Depends only on the public noise scale, so rounding a released
// value to it is post-processing (Dwork & Roth 2014, Proposition 2.1) and
// reveals nothing beyond the released value. Capped at 1100 (beyond every
// exact binary fraction a double can hold); 1100 also for a scale that is
// not a positive finite number (then nothing is rounded away).
int MeaningfulDecimalPlaces(double noise_stddev) noexcept;

// Number of significant bits of `value` (0 for 0).
int BitLength(uint128 value) noexcept;

// ceil(value / 2^shift) for shift >= 0.
uint128 CeilShift(uint128 value, int shift) noexcept;

// value / 2^shift rounded half up, for |value| < 2^126 and shift >= 0: the
// rounding of a true statistic to its release grid (an arithmetic shift).
int128 RoundToGrid(int128 value, int shift) noexcept;

// Decimal digits of a 128-bit integer.
std::string Int128ToString(int128 value);
// Parses what Int128ToString writes; false on malformed input or overflow.
bool ParseInt128(const char* text, int128* out);

// Values of a fixed-point format are integers ("units") times 2^unit_exponent.
// The exponent is chosen from the public bounds so that every clamped value
// needs at most 62 bits: then 2^63 rows sum to less than 2^126 in an int128.
int ChooseUnitExponent(double lower, double upper) noexcept;

// 2^-unit_exponent as a double, or 0 when that power of two is outside the
// normal double range (then ToUnits falls back to ldexp).
double UnitScale(int unit_exponent) noexcept;

// Rounds to the nearest integer, ties to even, for |x| <= 2^62. Inline and
// branch-light because it runs once per row: adding and subtracting 2^52
// leaves exactly the rounded integer part of any |x| < 2^52 (IEEE round to
// nearest even); larger doubles are integers already.
inline std::int64_t RoundToInt64(double x) noexcept {
  constexpr double kTwoTo52 = 4503599627370496.0;
  if (x < kTwoTo52 && x > -kTwoTo52) {
    const double magic = x < 0 ? -kTwoTo52 : kTwoTo52;
    x = (x + magic) - magic;  // not folded: compiled without -ffast-math
  }
  return static_cast<std::int64_t>(x);
}

// A finite double in units of 2^unit_exponent, rounded to nearest (ties to
// even): round(value * unit_scale), with unit_scale = UnitScale(unit_exponent).
// Multiplying by a power of two is exact, so the mapping is monotone in
// `value` and clamped values stay between the bounds' units.
// Requires |value| < 2^(unit_exponent + 62).
std::int64_t ToUnitsSlow(double value, int unit_exponent) noexcept;
inline std::int64_t ToUnits(double value, int unit_exponent, double unit_scale) noexcept {
  if (unit_scale == 0.0) return ToUnitsSlow(value, unit_exponent);
  return RoundToInt64(value * unit_scale);
}
inline std::int64_t ToUnits(double value, int unit_exponent) noexcept {
  return ToUnits(value, unit_exponent, UnitScale(unit_exponent));
}

}  // namespace dp

#endif  // DP_AGG_CORE_GRID_VALUE_H
