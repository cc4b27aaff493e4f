// Budgets that renew (README "Budgets that renew"): the SQL-callable period
// arithmetic of src/sql/38_budget_periods.sql. The periods are fixed by a
// public clock (core/renewal_period.h): an administrator's period length and
// anchor, never the role's activity. The renewal itself (lazy: at the first
// charge after a boundary, under the budget row's lock, by the ledger
// writer) is dp_agg.renew_budget_if_due in src/sql/48_budget_renewal.sql.
#include <cinttypes>

#include "../core/renewal_period.h"
#include "pg_includes.h"

extern "C" {
#include "datatype/timestamp.h"
#include "utils/timestamp.h"
}

namespace dp_pg {

namespace {

// The exact length of `every` in microseconds: a day counts 24 hours (the
// periods are on the UTC line, where no day has 23 or 25). Months have no
// fixed length and are refused, as are lengths under a second (22023).
std::int64_t RenewalLength(const Interval* every) {
  if (every->month != 0)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("a budget cannot renew every %d month(s)", every->month),
                    errdetail("A renewal period is a fixed length of time (days, hours, minutes, "
                              "seconds); a month has no fixed length."),
                    errhint("Use a length such as interval '30 days' or interval '7 days', with "
                            "renew_from => a timestamptz to choose where the periods start.")));
  std::int64_t days = 0;
  std::int64_t length = 0;
  if (__builtin_mul_overflow(static_cast<std::int64_t>(every->day), USECS_PER_DAY, &days) ||
      __builtin_add_overflow(days, every->time, &length) || length < dp::kShortestRenewalMicros)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("a budget cannot renew every %s",
                           DatumGetCString(DirectFunctionCall1(
                               interval_out, PointerGetDatum(const_cast<Interval*>(every))))),
                    errdetail("A renewal period is at least one second long."),
                    errhint("Use renew_every => interval '1 day' (or any length of at least "
                            "1 second); interval '0' makes the budget stop renewing.")));
  return length;
}

void RequireFinite(TimestampTz stamp, const char* what) {
  if (TIMESTAMP_NOT_FINITE(stamp))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("the %s of a renewing budget must be a finite timestamp", what),
                    errhint("renew_from => timestamptz '2026-01-01 00:00:00+00', for example "
                            "(the default is 1970-01-01 00:00:00 UTC).")));
}

// The start (end == false) or end of the period of `at`.
TimestampTz PeriodBound(const Interval* every, TimestampTz anchor, TimestampTz at, bool end) {
  const std::int64_t length = RenewalLength(every);
  RequireFinite(anchor, "anchor (renew_from)");
  RequireFinite(at, "time");
  std::int64_t bound = 0;
  const bool ok = end ? dp::RenewalPeriodEnd(at, anchor, length, &bound)
                      : dp::RenewalPeriodStart(at, anchor, length, &bound);
  if (!ok || !IS_VALID_TIMESTAMP(bound))
    ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                    errmsg("the renewal period is out of the range of timestamps"),
                    errhint("Choose an anchor (renew_from) nearer to the present.")));
  return bound;
}

// "HH:MM:SS[.ffffff]" of a length under a day, or with "N day(s) " before.
// Depends on no setting (unlike interval_out and IntervalStyle).
char* LengthText(std::int64_t micros) {
  const std::int64_t days = micros / USECS_PER_DAY;
  std::int64_t rest = micros % USECS_PER_DAY;
  const std::int64_t hours = rest / USECS_PER_HOUR;
  rest %= USECS_PER_HOUR;
  const std::int64_t minutes = rest / USECS_PER_MINUTE;
  rest %= USECS_PER_MINUTE;
  const std::int64_t seconds = rest / USECS_PER_SEC;
  const std::int64_t fraction = rest % USECS_PER_SEC;
  char clock[64];
  if (fraction != 0)
    snprintf(clock, sizeof clock, "%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%06" PRId64, hours,
             minutes, seconds, fraction);
  else
    snprintf(clock, sizeof clock, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, hours, minutes,
             seconds);
  if (days == 0) return pstrdup(clock);
  if (hours == 0 && minutes == 0 && seconds == 0 && fraction == 0)
    return psprintf("%" PRId64 " %s", days, days == 1 ? "day" : "days");
  return psprintf("%" PRId64 " %s %s", days, days == 1 ? "day" : "days", clock);
}

// "YYYY-MM-DD HH:MM:SS[.ffffff] UTC", whatever DateStyle and TimeZone are.
char* UtcText(TimestampTz stamp) {
  struct pg_tm tm;
  fsec_t fraction = 0;
  if (timestamp2tm(stamp, nullptr, &tm, &fraction, nullptr, nullptr) != 0)
    ereport(ERROR,
            (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE), errmsg("timestamp out of range")));
  if (fraction != 0)
    return psprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d UTC", tm.tm_year, tm.tm_mon, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(fraction));
  return psprintf("%04d-%02d-%02d %02d:%02d:%02d UTC", tm.tm_year, tm.tm_mon, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
}

}  // namespace

}  // namespace dp_pg

extern "C" {

// dp_agg.renewal_period_start(every, anchor, at): the start of the period of
// `at` of a budget that renews every `every` from `anchor`.
PG_FUNCTION_INFO_V1(dp_agg_renewal_period_start);
Datum dp_agg_renewal_period_start(PG_FUNCTION_ARGS) {
  PG_RETURN_TIMESTAMPTZ(dp_pg::PeriodBound(PG_GETARG_INTERVAL_P(0), PG_GETARG_TIMESTAMPTZ(1),
                                           PG_GETARG_TIMESTAMPTZ(2), false));
}

// dp_agg.renewal_period_end(every, anchor, at): its end, the next renewal.
PG_FUNCTION_INFO_V1(dp_agg_renewal_period_end);
Datum dp_agg_renewal_period_end(PG_FUNCTION_ARGS) {
  PG_RETURN_TIMESTAMPTZ(dp_pg::PeriodBound(PG_GETARG_INTERVAL_P(0), PG_GETARG_TIMESTAMPTZ(1),
                                           PG_GETARG_TIMESTAMPTZ(2), true));
}

// dp_agg.renewal_text(every, anchor): "every 1 day from 1970-01-01 00:00:00
// UTC", the same in every session (recorded in the ledger).
PG_FUNCTION_INFO_V1(dp_agg_renewal_text);
Datum dp_agg_renewal_text(PG_FUNCTION_ARGS) {
  const Interval* every = PG_GETARG_INTERVAL_P(0);
  const TimestampTz anchor = PG_GETARG_TIMESTAMPTZ(1);
  const std::int64_t length = dp_pg::RenewalLength(every);
  dp_pg::RequireFinite(anchor, "anchor (renew_from)");
  PG_RETURN_TEXT_P(cstring_to_text(
      psprintf("every %s from %s", dp_pg::LengthText(length), dp_pg::UtcText(anchor))));
}

}  // extern "C"
