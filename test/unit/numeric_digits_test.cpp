// Base10000ToDouble against the text path it replaces: PostgreSQL's numeric_out
// (all digits of the value in plain decimal) read back by strtod, the
// correctly rounded conversion behind numeric_float8_no_overflow. Wherever
// the fast path answers, the double must be the same bit for bit.
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "numeric_digits.h"

namespace {

// The text numeric_out prints for these digits (sign, integer part, and every
// fractional digit the digits hold).
std::string NumericText(const std::vector<std::uint16_t>& digits, int weight, bool negative) {
  std::string integer_part;
  std::string fraction;
  const int count = static_cast<int>(digits.size());
  for (int place = std::max(weight, 0); place >= 0; --place) {
    const int i = weight - place;
    const int digit = (i >= 0 && i < count) ? digits[i] : 0;
    char group[8];
    std::snprintf(group, sizeof group, "%04d", digit);
    integer_part += group;
  }
  // Fractional places -1, -2, ... down to the last digit's place.
  const int last_place = weight - (count - 1);
  for (int place = -1; place >= last_place; --place) {
    const int i = weight - place;
    const int digit = (i >= 0 && i < count) ? digits[i] : 0;
    char group[8];
    std::snprintf(group, sizeof group, "%04d", digit);
    fraction += group;
  }
  const std::size_t nonzero = integer_part.find_first_not_of('0');
  integer_part = nonzero == std::string::npos ? "0" : integer_part.substr(nonzero);
  std::string text = negative ? "-" : "";
  text += integer_part;
  if (!fraction.empty()) text += "." + fraction;
  return text;
}

double TextPath(const std::vector<std::uint16_t>& digits, int weight, bool negative) {
  const std::string text = NumericText(digits, weight, negative);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);  // ERANGE ignored, as in PostgreSQL
  EXPECT_EQ(*end, '\0') << text;
  return value;
}

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Checks one input; returns whether the fast path answered.
bool Check(const std::vector<std::uint16_t>& digits, int weight, bool negative) {
  double fast = 12345.0;
  const bool answered = dp::Base10000ToDouble(digits.data(), static_cast<int>(digits.size()),
                                              weight, negative, &fast);
  if (!answered) {
    EXPECT_EQ(fast, 12345.0) << "a declined conversion must not write";
    return false;
  }
  const double text = TextPath(digits, weight, negative);
  EXPECT_EQ(Bits(fast), Bits(text))
      << NumericText(digits, weight, negative) << " fast " << fast << " text " << text;
  return true;
}

TEST(NumericDigits, TextHelperPrintsLikeNumericOut) {
  EXPECT_EQ(NumericText({123, 4500}, 0, false), "123.4500");
  EXPECT_EQ(NumericText({12, 3456}, 1, true), "-123456");
  EXPECT_EQ(NumericText({5}, -2, false), "0.00000005");
  EXPECT_EQ(NumericText({}, 0, false), "0");
}

TEST(NumericDigits, EdgeCasesMatchTheTextPath) {
  int answered = 0;
  const std::vector<std::pair<std::vector<std::uint16_t>, int>> cases = {
      {{}, 0},  // zero
      {{1}, 0},  // 1
      {{123, 4500}, 0},  // 123.45 (the benchmark's shape)
      {{999, 9900}, 0},  // 999.99
      {{1000}, 0},  // 1000
      {{1}, -1},  // 0.0001
      {{1000}, -1},  // 0.1 (not a binary fraction)
      {{3333, 3333, 3333, 3333}, -1},  // 0.3333333333333333
      {{90, 719, 9254, 7409, 9100}, 4},  // 2^53 - 1 = 9007199254740991, spread
      {{9007, 1992, 5474, 991}, 3},  // 2^53 - 1
      {{9007, 1992, 5474, 992}, 3},  // 2^53: declined (M >= 2^53)
      {{9007, 1992, 5474, 993}, 3},  // 2^53 + 1: declined
      {{1}, 5},  // 1e20
      {{1}, 6},  // 1e24: 1e2 * 1e22
      {{10}, 5},  // 1e21
      {{1}, 9},  // 1e36: 10^14 * 1e22
      {{1}, 10},  // 1e40: declined
      {{1}, -6},  // 1e-24: declined
      {{100}, -5},  // 1e-18
      {{1}, -5},  // 1e-20
      {{1, 0, 0, 0, 1}, 0},  // 1.0000000000000001 (17 digits): declined
      {{1, 2345, 6789, 123, 4500}, 0},  // 1.23456789012345 (15 significant digits)
      {{1, 2345, 6789, 123, 4567}, 0},  // 17 significant digits: declined
      {{0, 0, 5}, 0},  // leading zero digits (not canonical)
      {{5, 0, 0}, 0},  // trailing zero digits (not canonical)
      {{9999, 9999, 9999}, 300},  // beyond the double range: declined
      {{1}, -300},  // below it: declined
  };
  for (const auto& c : cases) {
    for (const bool negative : {false, true}) answered += Check(c.first, c.second, negative);
  }
  EXPECT_GE(answered, 30);
  // A digit out of range is refused.
  const std::uint16_t bad[] = {10000};
  double out = 1;
  EXPECT_FALSE(dp::Base10000ToDouble(bad, 1, 0, false, &out));
  EXPECT_EQ(out, 1);
  // Negative zero keeps its sign like strtod("-0").
  ASSERT_TRUE(dp::Base10000ToDouble(nullptr, 0, 0, true, &out));
  EXPECT_TRUE(std::signbit(out));
}

// Many random values of every shape: digit counts 1..7, weights -9..9, digits
// biased towards 0 and 9999 (carries, trailing zeros, 2^53 neighbourhoods).
TEST(NumericDigits, RandomValuesMatchTheTextPath) {
  std::mt19937_64 gen(20261124);
  int answered = 0;
  int declined = 0;
  constexpr int kCases = 300000;
  for (int n = 0; n < kCases; ++n) {
    const int count = 1 + static_cast<int>(gen() % 7);
    const int weight = static_cast<int>(gen() % 19) - 9;
    std::vector<std::uint16_t> digits(count);
    for (auto& d : digits) {
      switch (gen() % 4) {
        case 0:
          d = 0;
          break;
        case 1:
          d = 9999;
          break;
        case 2:
          d = static_cast<std::uint16_t>((gen() % 10) * 1000);
          break;
        default:
          d = static_cast<std::uint16_t>(gen() % 10000);
      }
    }
    if (Check(digits, weight, (gen() & 1) != 0)) {
      ++answered;
    } else {
      ++declined;
    }
  }
  // Both paths are exercised in earnest.
  EXPECT_GT(answered, kCases / 4);
  EXPECT_GT(declined, kCases / 20);
}

// Values with two decimals between -1e6 and 1e6, the shape of money columns:
// all of them take the fast path.
TEST(NumericDigits, TwoDecimalValuesAlwaysTakeTheFastPath) {
  std::mt19937_64 gen(7);
  for (int n = 0; n < 200000; ++n) {
    const std::int64_t cents = static_cast<std::int64_t>(gen() % 200000001) - 100000000;
    const std::uint64_t magnitude = static_cast<std::uint64_t>(cents < 0 ? -cents : cents);
    // cents = integer * 100 + fraction: digits {integer / 10^4, integer % 10^4, fraction * 100}
    const std::uint64_t integer = magnitude / 100;
    const std::vector<std::uint16_t> digits = {static_cast<std::uint16_t>(integer / 10000),
                                               static_cast<std::uint16_t>(integer % 10000),
                                               static_cast<std::uint16_t>(magnitude % 100 * 100)};
    ASSERT_TRUE(Check(digits, 1, cents < 0)) << cents;
  }
}

}  // namespace
