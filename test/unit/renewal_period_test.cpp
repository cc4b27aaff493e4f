#include "renewal_period.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

constexpr std::int64_t kSecond = 1000000;
constexpr std::int64_t kDay = 86400 * kSecond;

std::int64_t Start(std::int64_t at, std::int64_t anchor, std::int64_t length) {
  std::int64_t start = -1;
  EXPECT_TRUE(dp::RenewalPeriodStart(at, anchor, length, &start));
  return start;
}

TEST(RenewalPeriod, AlignedToTheAnchorNotToActivity) {
  // Daily periods from the epoch: midnight UTC.
  EXPECT_EQ(Start(0, 0, kDay), 0);
  EXPECT_EQ(Start(kDay - 1, 0, kDay), 0);
  EXPECT_EQ(Start(kDay, 0, kDay), kDay);
  EXPECT_EQ(Start(10 * kDay + 5, 0, kDay), 10 * kDay);
  // An anchor in the future fixes the phase only.
  EXPECT_EQ(Start(5 * kSecond, 100 * kDay + 3 * kSecond, kDay), 3 * kSecond);
  EXPECT_EQ(Start(2 * kSecond, 100 * kDay + 3 * kSecond, kDay), 3 * kSecond - kDay);
}

TEST(RenewalPeriod, NegativeTimesFloor) {
  // Before the anchor: floor, not truncation toward zero.
  EXPECT_EQ(Start(-1, 0, kSecond), -kSecond);
  EXPECT_EQ(Start(-kSecond, 0, kSecond), -kSecond);
  EXPECT_EQ(Start(-kSecond - 1, 0, kSecond), -2 * kSecond);
}

TEST(RenewalPeriod, EveryInstantIsInExactlyOnePeriod) {
  const std::int64_t anchor = 7 * kSecond + 123;
  const std::int64_t length = 3 * kSecond;
  for (std::int64_t at = -10 * kSecond; at <= 10 * kSecond; at += 999983) {
    std::int64_t start = 0;
    std::int64_t end = 0;
    ASSERT_TRUE(dp::RenewalPeriodStart(at, anchor, length, &start));
    ASSERT_TRUE(dp::RenewalPeriodEnd(at, anchor, length, &end));
    EXPECT_LE(start, at);
    EXPECT_LT(at, end);
    EXPECT_EQ(end - start, length);
    EXPECT_EQ(((start - anchor) % length + length) % length, 0);
  }
}

TEST(RenewalPeriod, RefusesBadLengthsAndOverflow) {
  std::int64_t out = 42;
  EXPECT_FALSE(dp::RenewalPeriodStart(0, 0, 0, &out));
  EXPECT_FALSE(dp::RenewalPeriodStart(0, 0, -kSecond, &out));
  const std::int64_t most = std::numeric_limits<std::int64_t>::max();
  const std::int64_t least = std::numeric_limits<std::int64_t>::min();
  EXPECT_FALSE(dp::RenewalPeriodStart(most, least, kDay, &out));
  EXPECT_FALSE(dp::RenewalPeriodStart(least, 1, kDay, &out));
  EXPECT_FALSE(dp::RenewalPeriodEnd(most, 0, kDay, &out));
  EXPECT_EQ(out, 42);
}

}  // namespace
