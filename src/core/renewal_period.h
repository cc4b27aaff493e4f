// The periods of a budget that renews (README "Budgets that renew").
//
// A renewing budget's periods are fixed by a public clock, never by the
// role's activity: with a period length L > 0 and an anchor A (both chosen by
// an administrator; A defaults to 1970-01-01 00:00 UTC), the boundaries are
// A + k L for every integer k, and the period of an instant t is
// [A + k L, A + (k + 1) L) with k = floor((t - A) / L). Times are integer
// microseconds on one line (PostgreSQL's timestamptz): no time zone, no
// daylight-saving change and no floating point enters, so every process
// computes the same period for the same instant.
#ifndef DP_AGG_CORE_RENEWAL_PERIOD_H
#define DP_AGG_CORE_RENEWAL_PERIOD_H

#include <cstdint>

namespace dp {

// The shortest period a budget may renew with: one second.
constexpr std::int64_t kShortestRenewalMicros = 1000000;

// The start of the period of `at` (period length `length` > 0, anchor
// `anchor`), into `start`. False if `length` <= 0 or the start is not
// representable in 64 bits (then `start` is unchanged).
bool RenewalPeriodStart(std::int64_t at, std::int64_t anchor, std::int64_t length,
                        std::int64_t* start) noexcept;

// The end of the period of `at` (the next boundary after `at`), likewise.
bool RenewalPeriodEnd(std::int64_t at, std::int64_t anchor, std::int64_t length,
                      std::int64_t* end) noexcept;

}  // namespace dp

#endif  // DP_AGG_CORE_RENEWAL_PERIOD_H
