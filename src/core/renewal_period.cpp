#include "renewal_period.h"

namespace dp {

namespace {

// floor(a / b) for b > 0, exact in 64 bits.
std::int64_t FloorDivide(std::int64_t a, std::int64_t b) noexcept {
  const std::int64_t quotient = a / b;
  return (a % b != 0 && a < 0) ? quotient - 1 : quotient;
}

}  // namespace

bool RenewalPeriodStart(std::int64_t at, std::int64_t anchor, std::int64_t length,
                        std::int64_t* start) noexcept {
  if (length <= 0) return false;
  std::int64_t offset = 0;
  if (__builtin_sub_overflow(at, anchor, &offset)) return false;
  // offset - floor(offset / length) * length is in [0, length): the start is
  // `at` less that remainder, which never overflows unless it goes below the
  // smallest 64-bit value.
  const std::int64_t remainder = offset - FloorDivide(offset, length) * length;
  std::int64_t result = 0;
  if (__builtin_sub_overflow(at, remainder, &result)) return false;
  *start = result;
  return true;
}

bool RenewalPeriodEnd(std::int64_t at, std::int64_t anchor, std::int64_t length,
                      std::int64_t* end) noexcept {
  std::int64_t start = 0;
  if (!RenewalPeriodStart(at, anchor, length, &start)) return false;
  std::int64_t result = 0;
  if (__builtin_add_overflow(start, length, &result)) return false;
  *end = result;
  return true;
}

}  // namespace dp
