// Decimal numbers given as base-10000 digits (the layout of PostgreSQL's
// numeric, decoded by the PostgreSQL layer) converted to double without going
// through text.
//
// dp_sum and dp_avg over numeric clamp and accumulate the double nearest to
// each value (round to nearest, ties to even), which is what the text path
// numeric_out + strtod yields. The conversion here returns exactly that double
// whenever it can prove it cheaply, and otherwise declines, so that the caller
// falls back to the text path: results are the same bit for bit either way.
#ifndef DP_AGG_CORE_NUMERIC_DIGITS_H
#define DP_AGG_CORE_NUMERIC_DIGITS_H

#include <cstddef>
#include <cstdint>

#include "grid_value.h"

namespace dp {

// Base of one digit of PostgreSQL's numeric (NBASE, DEC_DIGITS = 4).
inline constexpr int kNumericDigitBase = 10000;

// The value (-1)^negative * sum_i digits[i] * 10000^(weight - i), i < count,
// digits in [0, 9999]. Sets *out to the double nearest to it and returns true
// when that double is certain; returns false (leaving *out alone) otherwise:
// a digit out of range, or a value outside the fast path below.
//
// Fast path (W. D. Clinger, "How to read floating point numbers accurately",
// PLDI 1990): the value is M * 10^e with M an integer. If M < 2^53 and
// |e| <= 22, both M and 10^|e| are doubles exactly, so a single IEEE
// multiplication or division rounds the exact value once, to nearest: the
// correctly rounded result. Trailing decimal zeros of M are moved into e
// first, which widens the path; values with up to 15 significant digits and a
// decimal exponent within +-22 always take it. Zero keeps the sign, as
// strtod("-0") would.
bool Base10000ToDouble(const std::uint16_t* digits, int count, int weight, bool negative,
                       double* out) noexcept;

// The decimal text of `value` rounded to `places` decimal places, half away
// from zero, as PostgreSQL's numeric_round does on the value's exact decimal
// expansion (the text is numeric_in's input: the same numeric, digit for
// digit and with display scale `places`). Written as [-]digits[.fraction]
// with exactly `places` fraction digits; no sign when the rounded value is
// zero. Returns false (writing nothing) when it cannot answer cheaply: a
// value that is not finite, places outside [0, kMaxRoundedPlaces], or a
// result that needs more than 128 bits; the caller then rounds in numeric.
//
// dp_avg's numeric result is rounded once per group to the places its noise
// leaves meaningful: this replaces the exact expansion of the double (up to
// 1,074 digits), numeric_in of it and numeric_round by integer arithmetic:
// |value| = m * 2^e (m < 2^53), so |value| * 10^places = m * 5^places *
// 2^(e + places), an exact integer shifted right with the remainder deciding
// the rounding.
inline constexpr int kMaxRoundedPlaces = 27;  // 5^27 < 2^63: m * 5^27 < 2^116
// 10^-places for places in [0, kMaxRoundedPlaces], each the double nearest
// to it (decimal literals are rounded correctly).
inline constexpr double kNegativePowersOfTen[kMaxRoundedPlaces + 1] = {
    1e-0,  1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,
    1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19,
    1e-20, 1e-21, 1e-22, 1e-23, 1e-24, 1e-25, 1e-26, 1e-27};
bool RoundedDecimalText(double value, int places, char* buffer, std::size_t size) noexcept;
// The same for a grid value (dp_sum's numeric result), and for
// (-1)^negative * magnitude * 2^exponent; these also decline when
// magnitude * 5^places reaches 2^127.
bool RoundedDecimalText(const GridValue& value, int places, char* buffer,
                        std::size_t size) noexcept;
bool RoundedDecimalText(bool negative, unsigned __int128 magnitude, int exponent, int places,
                        char* buffer, std::size_t size) noexcept;

}  // namespace dp

#endif  // DP_AGG_CORE_NUMERIC_DIGITS_H
