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
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "grid_value.h"
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

// RoundedDecimalText against the path it replaces in dp_avg's numeric result:
// the exact decimal expansion of the double (ToExactDecimal, what numeric_in
// reads) rounded to `places` decimal places half away from zero on its decimal
// digits, as numeric_round does. Wherever the fast path answers, its text must
// be that rounded value with exactly `places` fraction digits (numeric_round's
// display scale).
namespace {

// numeric_round(numeric_in(exact text), places), written back as text.
std::string ReferenceRounded(const dp::GridValue& value, int places) {
  std::string exact = dp::ToExactDecimal(value);
  bool negative = false;
  if (!exact.empty() && exact[0] == '-') {
    negative = true;
    exact.erase(0, 1);
  }
  const std::size_t point = exact.find('.');
  std::string integer_part = point == std::string::npos ? exact : exact.substr(0, point);
  std::string fraction = point == std::string::npos ? "" : exact.substr(point + 1);
  // The first dropped digit decides (round_var: >= 5 rounds the magnitude up).
  const bool round_up = fraction.size() > static_cast<std::size_t>(places) &&
                        fraction[static_cast<std::size_t>(places)] >= '5';
  fraction.resize(static_cast<std::size_t>(places), '0');
  std::string digits = integer_part + fraction;
  if (round_up) {
    int i = static_cast<int>(digits.size()) - 1;
    for (; i >= 0 && digits[static_cast<std::size_t>(i)] == '9'; --i)
      digits[static_cast<std::size_t>(i)] = '0';
    if (i < 0)
      digits.insert(0, "1");
    else
      ++digits[static_cast<std::size_t>(i)];
  }
  // Leading zeros of the integer part go, one stays.
  std::size_t first = digits.find_first_not_of('0');
  const std::size_t integer_digits = digits.size() - static_cast<std::size_t>(places);
  if (first == std::string::npos || first > integer_digits - 1) first = integer_digits - 1;
  digits.erase(0, first);
  const bool zero = digits.find_first_not_of("0") == std::string::npos;
  std::string text = (negative && !zero) ? "-" : "";
  const std::size_t whole = digits.size() - static_cast<std::size_t>(places);
  text += digits.substr(0, whole);
  if (places > 0) text += "." + digits.substr(whole);
  return text;
}

void ExpectSameGrid(const dp::GridValue& value, int places) {
  char buffer[64];
  if (!dp::RoundedDecimalText(value, places, buffer, sizeof buffer)) return;  // declined
  ASSERT_EQ(std::string(buffer), ReferenceRounded(value, places))
      << "mantissa " << dp::Int128ToString(value.mantissa) << ", exponent " << value.exponent
      << ", places " << places;
}

void ExpectSame(double value, int places) {
  char buffer[64];
  if (!dp::RoundedDecimalText(value, places, buffer, sizeof buffer)) return;  // declined
  ASSERT_EQ(std::string(buffer), ReferenceRounded(dp::FromDouble(value), places))
      << "value " << value << " (" << std::hexfloat << value << std::defaultfloat << "), places "
      << places;
}

TEST(RoundedDecimalTextTest, SmallExamples) {
  char buffer[64];
  ASSERT_TRUE(dp::RoundedDecimalText(2.5, 0, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "3");
  ASSERT_TRUE(dp::RoundedDecimalText(-2.5, 0, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "-3");
  ASSERT_TRUE(dp::RoundedDecimalText(0.125, 2, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "0.13");
  ASSERT_TRUE(dp::RoundedDecimalText(-0.4, 0, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "0");
  ASSERT_TRUE(dp::RoundedDecimalText(-0.0, 3, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "0.000");
  ASSERT_TRUE(dp::RoundedDecimalText(1234.5, 3, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "1234.500");
  // 0.1 is a little above one tenth: rounds to 0.1 at one place, its exact
  // expansion 0.1000000000000000055511151231257827... at 20 places.
  ASSERT_TRUE(dp::RoundedDecimalText(0.1, 20, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "0.10000000000000000555");
  ASSERT_TRUE(dp::RoundedDecimalText(0.95, 1, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "0.9");  // 0.95 is 0.9499999999999999555910790149937...
  ASSERT_TRUE(dp::RoundedDecimalText(999.5, 0, buffer, sizeof buffer));
  EXPECT_STREQ(buffer, "1000");
}

TEST(RoundedDecimalTextTest, DeclinesWhatItCannotAnswer) {
  char buffer[64];
  EXPECT_FALSE(dp::RoundedDecimalText(std::nan(""), 0, buffer, sizeof buffer));
  EXPECT_FALSE(dp::RoundedDecimalText(INFINITY, 0, buffer, sizeof buffer));
  EXPECT_FALSE(dp::RoundedDecimalText(-INFINITY, 2, buffer, sizeof buffer));
  EXPECT_FALSE(dp::RoundedDecimalText(1.0, -1, buffer, sizeof buffer));
  EXPECT_FALSE(dp::RoundedDecimalText(1.0, dp::kMaxRoundedPlaces + 1, buffer, sizeof buffer));
  EXPECT_FALSE(dp::RoundedDecimalText(1e300, 0, buffer, sizeof buffer));  // > 2^127
  EXPECT_FALSE(dp::RoundedDecimalText(12345.0, 0, buffer, 5));  // no room for the NUL
  EXPECT_TRUE(dp::RoundedDecimalText(12345.0, 0, buffer, 6));
  EXPECT_STREQ(buffer, "12345");
}

// Every double that is a tie at some place (k/2 * 10^-p for small p is not
// binary, but n + 0.5, n + 0.25, n + 0.125 ... are), around the bounds an
// average lives between, at every place.
TEST(RoundedDecimalTextTest, TiesAndBoundaries) {
  const double bases[] = {0.0,
                          1.0,
                          9.0,
                          99.0,
                          999999.0,
                          1000000.0,
                          2147483647.0,
                          -2147483648.0,
                          4503599627370496.0,
                          9007199254740991.0,
                          1.7014118346046923e38 /* 2^127 */,
                          1e-300,
                          5e-324,
                          2.2250738585072014e-308};
  const double offsets[] = {0.0,
                            0.5,
                            0.25,
                            0.125,
                            0.0625,
                            0.75,
                            0.375,
                            0.95,
                            0.05,
                            0.005,
                            0.0005,
                            1e-20,
                            0.49999999999999994};
  for (double base : bases)
    for (double offset : offsets)
      for (int sign = -1; sign <= 1; sign += 2)
        for (int places = 0; places <= dp::kMaxRoundedPlaces; ++places) {
          const double value = sign * (base + offset);
          ExpectSame(value, places);
          ExpectSame(std::nextafter(value, INFINITY), places);
          ExpectSame(std::nextafter(value, -INFINITY), places);
        }
}

TEST(RoundedDecimalTextTest, RandomDoublesAgreeWithTheExactPath) {
  std::mt19937_64 random(31);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  std::uniform_int_distribution<int> places_of(0, dp::kMaxRoundedPlaces);
  std::uniform_int_distribution<int> exponent_of(-200, 130);
  for (int i = 0; i < 200000; ++i) {
    ExpectSame(uniform(random), places_of(random));
    // Any magnitude: random mantissa bits and exponent.
    const double scaled = std::ldexp(uniform(random) / 1e6, exponent_of(random));
    ExpectSame(scaled, places_of(random));
    // Random bit patterns (NaN and infinities are declined).
    const std::uint64_t bits = random();
    double raw;
    std::memcpy(&raw, &bits, sizeof raw);
    ExpectSame(raw, places_of(random));
  }
}

// It answers for the usual averages: any finite double below 2^64 in
// magnitude at up to kMaxRoundedPlaces places... as long as the result fits.
TEST(RoundedDecimalTextTest, AnswersForOrdinaryAverages) {
  char buffer[64];
  for (int places = 0; places <= dp::kMaxRoundedPlaces; ++places) {
    EXPECT_TRUE(dp::RoundedDecimalText(123456.789, places, buffer, sizeof buffer)) << places;
    EXPECT_TRUE(dp::RoundedDecimalText(-0.001, places, buffer, sizeof buffer)) << places;
  }
}

// Grid values (dp_sum's numeric result): 128-bit mantissas, any exponent a
// fixed-point format can have, ties at every place.
TEST(RoundedDecimalTextTest, GridValuesAgreeWithTheExactPath) {
  std::mt19937_64 random(3131);
  std::uniform_int_distribution<int> places_of(0, dp::kMaxRoundedPlaces);
  std::uniform_int_distribution<int> exponent_of(-140, 60);
  std::uniform_int_distribution<int> bits_of(0, 127);
  for (int i = 0; i < 200000; ++i) {
    const int bits = bits_of(random);
    dp::uint128 magnitude = (static_cast<dp::uint128>(random()) << 64) | random();
    magnitude = bits == 0 ? 0 : magnitude >> (128 - bits);
    const bool negative = (random() & 1) != 0;
    dp::GridValue value{
        negative ? -static_cast<dp::int128>(magnitude) : static_cast<dp::int128>(magnitude),
        exponent_of(random)};
    ExpectSameGrid(value, places_of(random));
  }
  // Exact ties: an odd multiple of 2^(e - 1) at the place where it is one half.
  for (int places = 0; places <= dp::kMaxRoundedPlaces; ++places)
    for (int exponent = -80; exponent <= 0; ++exponent)
      for (dp::int128 mantissa : {dp::int128{1}, dp::int128{-1}, dp::int128{3}, dp::int128{-5},
                                  dp::int128{999999}, dp::int128{-1000001}})
        ExpectSameGrid(dp::GridValue{mantissa, exponent}, places);
  // The most negative mantissa is declined or answered, never misread.
  const dp::int128 most_negative = -static_cast<dp::int128>(dp::uint128{1} << 126) * 2;
  for (int places = 0; places <= 3; ++places)
    ExpectSameGrid(dp::GridValue{most_negative, -130}, places);
}

}  // namespace
