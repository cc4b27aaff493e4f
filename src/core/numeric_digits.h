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

#include <cstdint>

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

}  // namespace dp

#endif  // DP_AGG_CORE_NUMERIC_DIGITS_H
