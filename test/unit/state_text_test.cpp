// Tests of the text form of partial aggregate states (moved between nodes as
// text, so every field must round-trip exactly).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "grid_value.h"
#include "random_source.h"
#include "state_text.h"
#include "stats_util.h"

namespace {

using dp::FormatPartialState;
using dp::int128;
using dp::ParsePartialState;
using dp::PartialStateFields;
using dp::SeededTestRandomSource;
using dp::uint128;
using dp_test::kInt128Max;
using dp_test::kInt128Min;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void ExpectSameFields(const PartialStateFields& a, const PartialStateFields& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.count, b.count);
  EXPECT_TRUE(a.sum == b.sum) << dp::Int128ToString(a.sum) << " vs " << dp::Int128ToString(b.sum);
  EXPECT_TRUE(SameBits(a.epsilon, b.epsilon)) << a.epsilon << " vs " << b.epsilon;
  EXPECT_TRUE(SameBits(a.lower, b.lower)) << a.lower << " vs " << b.lower;
  EXPECT_TRUE(SameBits(a.upper, b.upper)) << a.upper << " vs " << b.upper;
  EXPECT_EQ(a.lower_units, b.lower_units);
  EXPECT_EQ(a.upper_units, b.upper_units);
  EXPECT_EQ(a.unit_exponent, b.unit_exponent);
}

PartialStateFields Example() {
  PartialStateFields f;
  f.kind = 2;
  f.count = 12345;
  f.sum = -(int128{1} << 100) - 7;
  f.epsilon = 0.1;
  f.lower = -2.5;
  f.upper = 1e300;
  f.lower_units = -(std::int64_t{1} << 40);
  f.upper_units = (std::int64_t{1} << 62) - 1;
  f.unit_exponent = 935;
  return f;
}

TEST(StateTextTest, FormatIsTheDocumentedLayout) {
  PartialStateFields f;
  f.kind = 1;
  f.count = 3;
  f.sum = -12;
  f.epsilon = 0.5;
  f.lower = -1;
  f.upper = 2;
  f.lower_units = -4;
  f.upper_units = 8;
  f.unit_exponent = -2;
  EXPECT_EQ(FormatPartialState(f),
            "v1 kind=1 count=3 sum=-12 epsilon=0x1p-1 lower=-0x1p+0 upper=0x1p+1 lower_units=-4 "
            "upper_units=8 unit_exponent=-2 delta=0x0p+0 confidence=0x0p+0");
}

TEST(StateTextTest, RoundTripsExtremeValuesExactly) {
  const double doubles[] = {0.0,
                            -0.0,
                            0.1,
                            1.0 / 3,
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::min(),
                            dp_test::kFalseFailureProbability};
  const int128 sums[] = {0, -1, kInt128Max, kInt128Min, int128{1} << 100};
  const std::int64_t int64s[] = {0, -1, std::numeric_limits<std::int64_t>::max(),
                                 std::numeric_limits<std::int64_t>::min()};
  for (double d : doubles) {
    for (int128 sum : sums) {
      for (std::int64_t units : int64s) {
        PartialStateFields f = Example();
        f.epsilon = d;
        f.lower = -d;
        f.upper = d;
        f.sum = sum;
        f.lower_units = units;
        f.upper_units = units;
        f.count = units < 0 ? 0 : units;
        f.unit_exponent = units < 0 ? -1135 : 962;
        const std::string text = FormatPartialState(f);
        PartialStateFields parsed;
        ASSERT_TRUE(ParsePartialState(text.c_str(), &parsed)) << text;
        ExpectSameFields(parsed, f);
        EXPECT_EQ(FormatPartialState(parsed), text);
      }
    }
  }
}

TEST(StateTextTest, RoundTripsRandomStates) {
  SeededTestRandomSource rng(51);
  for (int i = 0; i < 5000; ++i) {
    PartialStateFields f;
    f.kind = static_cast<unsigned>(rng.UniformBelow(4));
    f.count = static_cast<std::int64_t>(rng.NextUint64() >> 1);
    f.sum = static_cast<int128>(rng.UniformBelow128(~uint128{0}));  // any bit pattern but max
    std::uint64_t bits[3];
    for (auto& b : bits) {
      do {
        b = rng.NextUint64();
      } while (((b >> 52) & 0x7FF) == 0x7FF);  // finite doubles (any sign, subnormals too)
    }
    std::memcpy(&f.epsilon, &bits[0], 8);
    std::memcpy(&f.lower, &bits[1], 8);
    std::memcpy(&f.upper, &bits[2], 8);
    f.lower_units = static_cast<std::int64_t>(rng.NextUint64());
    f.upper_units = static_cast<std::int64_t>(rng.NextUint64());
    f.unit_exponent = static_cast<int>(rng.UniformBelow(2200)) - 1100;
    const std::string text = FormatPartialState(f);
    PartialStateFields parsed;
    ASSERT_TRUE(ParsePartialState(text.c_str(), &parsed)) << text;
    ExpectSameFields(parsed, f);
  }
}

TEST(StateTextTest, RejectsMalformedText) {
  const std::string good = FormatPartialState(Example());
  PartialStateFields parsed;
  ASSERT_TRUE(ParsePartialState(good.c_str(), &parsed));
  const std::string rejected[] = {
      "",
      "v1",
      "v2" + good.substr(2),  // unknown version
      good + " ",  // trailing space
      good + "x",  // trailing garbage
      good + " extra=1",  // extra field
      good.substr(0, good.size() - 4),  // truncated
      good.substr(0, good.find(" upper_units")),  // missing fields
      "v1 kind=1 count=-1 sum=0 epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 "
      "upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0",  // negative count
      "v1 kind=1 count=1 sum=12a epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 "
      "upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0",  // bad sum
      "v1 kind=1 count=1 sum=170141183460469231731687303715884105728 epsilon=0x1p+0 "
      "lower=0x0p+0 upper=0x1p+0 lower_units=0 upper_units=1 unit_exponent=0 delta=0x0p+0 "
      "confidence=0x0p+0",  // sum overflow
      "v1 kind=1 count=1 sum=" + std::string(70, '1') +
          " epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 upper_units=1 unit_exponent=0 "
          "delta=0x0p+0 confidence=0x0p+0",
      "v1 kind=1 count=1 sum=0 lower=0x0p+0 epsilon=0x1p+0 upper=0x1p+0 lower_units=0 "
      "upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0",  // fields out of order
      "v1 kind=1 count=1 sum=0 epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 "
      "upper_units=1 unit_exponent=0.5",  // non-integer exponent
  };
  for (const std::string& text : rejected) {
    EXPECT_FALSE(ParsePartialState(text.c_str(), &parsed)) << '"' << text << '"';
  }
}

// Disabled: documents a core defect (see the test report). The header says
// ParsePartialState returns false "when `text` is not exactly what
// FormatPartialState writes", but sscanf's matching is lenient: a space in
// the format matches any run of whitespace, including none; numbers may have
// a leading '+' or whitespace; %u accepts "-1" (wrapping); %la accepts
// decimal notation. None of these texts can come from FormatPartialState.
TEST(StateTextTest, RejectsTextThatFormatCannotProduce) {
  const std::string tail =
      " epsilon=0x1p+0 lower=0x0p+0 upper=0x1p+0 lower_units=0 upper_units=1 unit_exponent=0 "
      "delta=0x0p+0 confidence=0x0p+0";
  const std::string noncanonical[] = {
      "v1kind=1 count=1 sum=0" + tail,  // missing separator
      "v1  kind=1 count=1 sum=0" + tail,  // doubled separator
      "v1 kind=1 count=+1 sum=0" + tail,  // explicit plus sign
      "v1 kind=1 count= 1 sum=0" + tail,  // space inside a field
      "v1 kind=-1 count=1 sum=0" + tail,  // negative "unsigned" kind
      "v1 kind=1 count=1 sum=0 epsilon=1.0 lower=0x0p+0 upper=0x1p+0 lower_units=0 "
      "upper_units=1 unit_exponent=0 delta=0x0p+0 confidence=0x0p+0",  // decimal double
  };
  for (const std::string& text : noncanonical) {
    PartialStateFields parsed;
    EXPECT_FALSE(ParsePartialState(text.c_str(), &parsed)) << '"' << text << '"';
  }
}

}  // namespace

namespace {

// The quantile state's text form (rows as lattice points, in any order,
// possibly none) round-trips exactly and accepts only its canonical form.
TEST(QuantileStateTextTest, RoundTripsAndRejectsNonCanonicalText) {
  dp::QuantileStateFields fields;
  fields.epsilon = 0.1;
  fields.fraction = 0.3;
  fields.lower = -2.5;
  fields.upper = 1e300;
  fields.points = {
      5, -7, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
      0, 5};
  const std::string text = dp::FormatQuantileState(fields);
  dp::QuantileStateFields parsed;
  ASSERT_TRUE(dp::ParseQuantileState(text.c_str(), &parsed)) << text;
  EXPECT_EQ(parsed.points, fields.points);
  EXPECT_TRUE(SameBits(parsed.epsilon, fields.epsilon));
  EXPECT_TRUE(SameBits(parsed.fraction, fields.fraction));
  EXPECT_TRUE(SameBits(parsed.lower, fields.lower));
  EXPECT_TRUE(SameBits(parsed.upper, fields.upper));

  fields.points.clear();
  const std::string empty = dp::FormatQuantileState(fields);
  EXPECT_EQ(empty.substr(empty.size() - 7), "points=");
  ASSERT_TRUE(dp::ParseQuantileState(empty.c_str(), &parsed));
  EXPECT_TRUE(parsed.points.empty());

  const std::string head = empty;
  for (const char* tail : {"+1", "01", "1,,2", "1,", " 1", "1 ", "9223372036854775808", "x"})
    EXPECT_FALSE(dp::ParseQuantileState((head + tail).c_str(), &parsed)) << tail;
  EXPECT_FALSE(dp::ParseQuantileState(
      "q1 epsilon=0x1p+0 fraction=0x1p-1 lower=0x0p+0 upper=0x1p+0 counts=1,2,3", &parsed));
}

}  // namespace

namespace {

// Any double: finite (normal, subnormal, zero of either sign), infinite or NaN.
double AnyDouble(SeededTestRandomSource& rng) {
  std::uint64_t bits = rng.NextUint64();
  switch (rng.UniformBelow(8)) {
    case 0:
      bits &= (std::uint64_t{1} << 63) | ((std::uint64_t{1} << 52) - 1);  // subnormal or zero
      break;
    case 1:
      bits &= std::uint64_t{1} << 63;  // +0 or -0
      break;
    case 2:
      bits |= std::uint64_t{0x7ff} << 52;  // infinite or NaN
      break;
    case 3:
      bits &= ~((std::uint64_t{1} << 40) - 1);  // few fraction nibbles
      break;
    default:
      break;
  }
  double value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

PartialStateFields AnyState(SeededTestRandomSource& rng) {
  PartialStateFields f;
  f.kind = static_cast<unsigned>(rng.UniformBelow(4));
  f.count = static_cast<std::int64_t>(rng.NextUint64() >> rng.UniformBelow(64));
  f.sum = static_cast<int128>(rng.UniformBelow128(~uint128{0})) >> rng.UniformBelow(127);
  if (rng.UniformBelow(16) == 0) f.sum = rng.UniformBelow(2) == 0 ? kInt128Min : kInt128Max;
  f.epsilon = AnyDouble(rng);
  f.lower = AnyDouble(rng);
  f.upper = AnyDouble(rng);
  f.lower_units = static_cast<std::int64_t>(rng.NextUint64());
  f.upper_units = static_cast<std::int64_t>(rng.NextUint64() >> rng.UniformBelow(64));
  f.unit_exponent = static_cast<int>(rng.NextUint64());
  f.delta = AnyDouble(rng);
  f.confidence = AnyDouble(rng);
  return f;
}

}  // namespace

// The hand-written form (issue 31: Citus's coordinator parses one state per
// group and shard) is byte for byte snprintf's, for every kind of double.
TEST(StateTextTest, FastFormatIsPrintfsFormat) {
  SeededTestRandomSource rng(71);
  for (int i = 0; i < 200000; ++i) {
    const PartialStateFields f = AnyState(rng);
    ASSERT_EQ(FormatPartialState(f), dp::FormatPartialStateForTest(f));
  }
}

// Whatever text the parser accepts is the canonical text of what it read
// (as snprintf writes it), and every state's text reads back exactly; texts
// mutated at random (a character replaced, inserted or removed) are accepted
// only when they are canonical too.
TEST(StateTextTest, FastParserAcceptsOnlyCanonicalText) {
  SeededTestRandomSource rng(72);
  const char alphabet[] = "0123456789abcdefpx+-. =ilnv";
  int accepted_mutations = 0;
  for (int i = 0; i < 100000; ++i) {
    const PartialStateFields f = AnyState(rng);
    const std::string text = FormatPartialState(f);
    PartialStateFields parsed;
    ASSERT_EQ(ParsePartialState(text.c_str(), &parsed), f.count >= 0) << text;
    const bool any_nan = std::isnan(f.epsilon) || std::isnan(f.lower) || std::isnan(f.upper) ||
                         std::isnan(f.delta) || std::isnan(f.confidence);
    if (f.count >= 0 && !any_nan) {  // a NaN's payload is not in its text
      ExpectSameFields(parsed, f);
      EXPECT_TRUE(SameBits(parsed.delta, f.delta));
      EXPECT_TRUE(SameBits(parsed.confidence, f.confidence));
    } else if (f.count >= 0) {
      EXPECT_EQ(dp::FormatPartialStateForTest(parsed), text);
    }
    std::string mutated = text;
    const std::size_t at = rng.UniformBelow(mutated.size());
    const char c = alphabet[rng.UniformBelow(sizeof alphabet - 1)];
    switch (rng.UniformBelow(3)) {
      case 0:
        mutated[at] = c;
        break;
      case 1:
        mutated.insert(at, 1, c);
        break;
      default:
        mutated.erase(at, 1);
        break;
    }
    PartialStateFields read;
    if (ParsePartialState(mutated.c_str(), &read)) {
      ++accepted_mutations;
      ASSERT_EQ(dp::FormatPartialStateForTest(read), mutated) << "from " << text;
    }
  }
  // Some mutations are canonical texts of other states (a digit changed).
  EXPECT_GT(accepted_mutations, 1000);
}
