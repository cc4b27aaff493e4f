// Tests of the validation of user-supplied parameters (epsilon and bounds).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "parameters.h"

namespace {

using dp::InvalidParameter;
using dp::kMinEpsilon;
using dp::ValidateBounds;
using dp::ValidateEpsilon;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxEpsilon = 10.0;

TEST(ValidateEpsilonTest, MinimumIsTwoToTheMinus50) {
  EXPECT_EQ(kMinEpsilon, std::ldexp(1.0, -50));
}

TEST(ValidateEpsilonTest, RejectsUnusableValues) {
  const double rejected[] = {0.0,
                             -0.0,
                             -1.0,
                             -kInf,
                             kInf,
                             std::numeric_limits<double>::quiet_NaN(),
                             -std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::denorm_min(),
                             std::nextafter(kMinEpsilon, 0.0),
                             kMinEpsilon / 2,
                             std::nextafter(kMaxEpsilon, kInf),
                             11.0,
                             1e300};
  for (double epsilon : rejected) {
    EXPECT_THROW(ValidateEpsilon(epsilon, kMaxEpsilon), InvalidParameter) << epsilon;
  }
}

TEST(ValidateEpsilonTest, AcceptsTheEdgesAndOrdinaryValues) {
  for (double epsilon : {kMinEpsilon, std::nextafter(kMinEpsilon, 1.0), 1e-10, 0.1, 1.0,
                         std::nextafter(kMaxEpsilon, 0.0), kMaxEpsilon}) {
    EXPECT_NO_THROW(ValidateEpsilon(epsilon, kMaxEpsilon)) << epsilon;
  }
  EXPECT_NO_THROW(ValidateEpsilon(1e6, 1e6));
}

TEST(ValidateEpsilonTest, ErrorsCarryAMessageAndAHint) {
  for (double epsilon : {0.0, kMinEpsilon / 2, 100.0, std::nan("")}) {
    try {
      ValidateEpsilon(epsilon, kMaxEpsilon);
      ADD_FAILURE() << "no exception for " << epsilon;
    } catch (const InvalidParameter& e) {
      EXPECT_FALSE(std::string(e.what()).empty()) << epsilon;
      EXPECT_FALSE(e.hint().empty()) << epsilon;
    }
  }
  // Usable wherever std::invalid_argument is caught.
  EXPECT_THROW(ValidateEpsilon(-1.0, kMaxEpsilon), std::invalid_argument);
}

TEST(ValidateBoundsTest, RejectsNonFiniteAndReversedBounds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::pair<double, double> rejected[] = {
      {nan, 1},      {0, nan},     {nan, nan}, {-kInf, 0},     {0, kInf},
      {-kInf, kInf}, {kInf, kInf}, {2, 1},     {0.0, -1e-300}, {std::nextafter(1.0, 2.0), 1.0}};
  for (const auto& [lower, upper] : rejected) {
    EXPECT_THROW(ValidateBounds(lower, upper), InvalidParameter) << lower << " " << upper;
  }
  EXPECT_THROW(ValidateBounds(std::int64_t{5}, std::int64_t{4}), InvalidParameter);
  EXPECT_THROW(ValidateBounds(std::numeric_limits<std::int64_t>::max(),
                              std::numeric_limits<std::int64_t>::min()),
               InvalidParameter);
}

TEST(ValidateBoundsTest, AcceptsOrderedAndEqualBounds) {
  const double max = std::numeric_limits<double>::max();
  const std::pair<double, double> accepted[] = {{0, 0},      {1, 1},           {-0.0, 0.0},
                                                {0.0, -0.0}, {-5, 3},          {-max, max},
                                                {max, max},  {-1e-300, 1e-300}};
  for (const auto& [lower, upper] : accepted) {
    EXPECT_NO_THROW(ValidateBounds(lower, upper)) << lower << " " << upper;
  }
  EXPECT_NO_THROW(ValidateBounds(std::int64_t{4}, std::int64_t{4}));
  EXPECT_NO_THROW(ValidateBounds(std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max()));
}

TEST(ValidateBoundsTest, ErrorsCarryAHint) {
  try {
    ValidateBounds(2.0, 1.0);
    ADD_FAILURE() << "no exception";
  } catch (const InvalidParameter& e) {
    EXPECT_FALSE(e.hint().empty());
    EXPECT_NE(std::string(e.what()).find('2'), std::string::npos);  // mentions the values
  }
  try {
    ValidateBounds(std::nan(""), 1.0);
    ADD_FAILURE() << "no exception";
  } catch (const InvalidParameter& e) {
    EXPECT_FALSE(e.hint().empty());
  }
  try {
    ValidateBounds(std::int64_t{9}, std::int64_t{-9});
    ADD_FAILURE() << "no exception";
  } catch (const InvalidParameter& e) {
    EXPECT_FALSE(e.hint().empty());
    EXPECT_NE(std::string(e.what()).find("-9"), std::string::npos);
  }
}

}  // namespace
