// RoundedDecimalText (numeric_digits.h) against the path it replaces in
// dp_avg's numeric result: the exact decimal expansion of the double
// (ToExactDecimal, what numeric_in reads) rounded to `places` decimal places
// half away from zero on its decimal digits, as numeric_round does. Wherever
// the fast path answers, its text must be that rounded value with exactly
// `places` fraction digits (numeric_round's display scale).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "grid_value.h"
#include "numeric_digits.h"

namespace {

// numeric_round(numeric_in(exact text), places), written back as text.
std::string ReferenceRounded(double value, int places) {
  std::string exact = dp::ToExactDecimal(dp::FromDouble(value));
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

void ExpectSame(double value, int places) {
  char buffer[64];
  if (!dp::RoundedDecimalText(value, places, buffer, sizeof buffer)) return;  // declined
  ASSERT_EQ(std::string(buffer), ReferenceRounded(value, places))
      << "value " << value << " (" << std::hexfloat << value << std::defaultfloat
      << "), places " << places;
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
  const double bases[] = {0.0, 1.0, 9.0, 99.0, 999999.0, 1000000.0, 2147483647.0,
                          -2147483648.0, 4503599627370496.0, 9007199254740991.0,
                          1.7014118346046923e38 /* 2^127 */, 1e-300, 5e-324,
                          2.2250738585072014e-308};
  const double offsets[] = {0.0, 0.5, 0.25, 0.125, 0.0625, 0.75, 0.375, 0.95, 0.05,
                            0.005, 0.0005, 1e-20, 0.49999999999999994};
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

}  // namespace
