#include "constant_arguments.h"

extern "C" {
#include "parser/scansup.h"
#include "utils/datetime.h"
#include "mb/pg_wchar.h"
#include "utils/fmgroids.h"
}

#include <cmath>
#include <cstring>
#include <cstdlib>

#include "refusal.h"

namespace dp_pg {

namespace {

// At most this many '%' in a LIKE pattern: MatchText recurses once per '%'
// that the text reaches (check_stack_depth), so the depth is bounded by the
// pattern, never by the data.
constexpr int kMaxLikeWildcards = 64;

// At most this many bytes in a LIKE/ILIKE pattern (and so in a simple
// regular expression run as LIKE). Matching takes time up to the product of
// the text's and the pattern's lengths, and ILIKE lowers the pattern for
// every row: an 8 MiB pattern made each row that reached it cost seconds
// (issue 26, finding 3). At runtime the total versions also return NULL when
// text bytes times pattern bytes pass 2^20 (total_functions.cpp), so a
// pattern at this cap still matches texts of up to 4 KiB.
constexpr int kMaxLikePatternBytes = 256;

enum class FieldOf { kDate, kTimestamp, kTimestampTz };

const Const* ConstantArgument(List* arguments, int position) {
  if (list_length(arguments) <= position) return nullptr;
  Node* argument = static_cast<Node*>(list_nth(arguments, position));
  while (argument != nullptr && IsA(argument, RelabelType))
    argument = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(argument)->arg);
  return argument != nullptr && IsA(argument, Const) ? reinterpret_cast<const Const*>(argument)
                                                     : nullptr;
}

// The field decoded as PostgreSQL 15's timestamp_part_common, extract_date
// and timestamp[tz]_trunc decode it: downcased, then DecodeUnits, then
// DecodeSpecial (for 'epoch').
bool DecodeField(const Const* field, int* type, int* value) {
  if (field == nullptr || field->constisnull) return false;
  text* units = DatumGetTextPP(field->constvalue);
  char* lowered = downcase_truncate_identifier(VARDATA_ANY(units), VARSIZE_ANY_EXHDR(units), false);
  *type = DecodeUnits(0, lowered, value);
  if (*type == UNKNOWN_FIELD) *type = DecodeSpecial(0, lowered, value);
  return true;
}

// extract/date_part fields that PostgreSQL 15 accepts both for finite values
// (timestamp_part_common, timestamptz_part_common, extract_date) and for
// infinite ones (NonFiniteTimestampTzPart and extract_date's infinite
// branch), so the call cannot raise for any value of the type.
bool IsTotalPartField(int type, int value, FieldOf of) {
  if (type == RESERV) return value == DTK_EPOCH;
  if (type != UNITS) return false;
  switch (value) {
    case DTK_DAY:
    case DTK_MONTH:
    case DTK_QUARTER:
    case DTK_WEEK:
    case DTK_YEAR:
    case DTK_DECADE:
    case DTK_CENTURY:
    case DTK_MILLENNIUM:
    case DTK_JULIAN:
    case DTK_ISOYEAR:
    case DTK_DOW:
    case DTK_ISODOW:
    case DTK_DOY:
      return true;
    case DTK_MICROSEC:
    case DTK_MILLISEC:
    case DTK_SECOND:
    case DTK_MINUTE:
    case DTK_HOUR:
      return of != FieldOf::kDate;
    case DTK_TZ:
    case DTK_TZ_MINUTE:
    case DTK_TZ_HOUR:
      return of == FieldOf::kTimestampTz;
    default:
      return false;
  }
}

// date_trunc units of timestamp[tz]_trunc (PostgreSQL 15); others raise.
bool IsTruncField(int type, int value) {
  if (type != UNITS) return false;
  switch (value) {
    case DTK_MICROSEC:
    case DTK_MILLISEC:
    case DTK_SECOND:
    case DTK_MINUTE:
    case DTK_HOUR:
    case DTK_DAY:
    case DTK_WEEK:
    case DTK_MONTH:
    case DTK_QUARTER:
    case DTK_YEAR:
    case DTK_DECADE:
    case DTK_CENTURY:
    case DTK_MILLENNIUM:
      return true;
    default:
      return false;
  }
}

bool IsPartFunction(Oid function, FieldOf* of) {
  switch (function) {
    case F_EXTRACT_TEXT_DATE:
      *of = FieldOf::kDate;
      return true;
    case F_EXTRACT_TEXT_TIMESTAMP:
    case F_DATE_PART_TEXT_TIMESTAMP:
      *of = FieldOf::kTimestamp;
      return true;
    case F_EXTRACT_TEXT_TIMESTAMPTZ:
    case F_DATE_PART_TEXT_TIMESTAMPTZ:
      *of = FieldOf::kTimestampTz;
      return true;
    default:
      return false;
  }
}

// Why LIKE pattern `pattern` could make textlike raise for some text, or
// nullptr. Stepped by characters, as MatchText steps (NextChar).
const char* LikePatternProblem(const Const* pattern) {
  if (pattern == nullptr) return "its pattern is not a constant";
  if (pattern->constisnull) return nullptr;  // strict: NULL for every row
  text* value = DatumGetTextPP(pattern->constvalue);
  const char* p = VARDATA_ANY(value);
  int length = VARSIZE_ANY_EXHDR(value);
  if (length > kMaxLikePatternBytes) return "its pattern is longer than 256 bytes";
  int wildcards = 0;
  while (length > 0) {
    if (*p == '\\') {
      if (length < 2) return "its pattern ends with the escape character \\";
      p++;
      length--;
    } else if (*p == '%') {
      wildcards++;
    }
    const int step = pg_mblen(p);
    p += step;
    length -= step;
  }
  if (wildcards > kMaxLikeWildcards) return "its pattern has more than 64 % wildcards";
  return nullptr;
}

bool IsLikeFunction(Oid function) {
  switch (function) {
    case F_TEXTLIKE:
    case F_TEXTNLIKE:
    case F_TEXTICLIKE:
    case F_TEXTICNLIKE:
    case F_BPCHARICLIKE:
    case F_BPCHARICNLIKE:
      return true;
    default:
      return false;
  }
}

// A constant int4 argument's value; false if it is not a non-NULL constant.
bool ConstantInt32(const Const* argument, int32* value) {
  if (argument == nullptr || argument->constisnull || argument->consttype != INT4OID) return false;
  *value = DatumGetInt32(argument->constvalue);
  return true;
}

// width_bucket's bounds as doubles, if both are finite constants within
// +-1e15 (so that the built-in's arithmetic on them, and on any operand
// between them, stays far from overflow) and differ.
constexpr double kMaxBucketBound = 1e15;
constexpr int32 kMaxBucketCount = 100000;

bool BucketBound(const Const* bound, double* value) {
  if (bound == nullptr || bound->constisnull) return false;
  if (bound->consttype == FLOAT8OID) {
    *value = DatumGetFloat8(bound->constvalue);
  } else if (bound->consttype == NUMERICOID) {
    Numeric number = DatumGetNumeric(bound->constvalue);
    if (numeric_is_nan(number) || numeric_is_inf(number)) return false;
    char* text = DatumGetCString(DirectFunctionCall1(numeric_out, bound->constvalue));
    *value = strtod(text, nullptr);
  } else {
    return false;
  }
  return std::isfinite(*value) && std::fabs(*value) <= kMaxBucketBound;
}

bool BucketsAreTotal(List* arguments) {
  double lower = 0;
  double upper = 0;
  int32 count = 0;
  if (!BucketBound(ConstantArgument(arguments, 1), &lower) ||
      !BucketBound(ConstantArgument(arguments, 2), &upper) ||
      !ConstantInt32(ConstantArgument(arguments, 3), &count))
    return false;
  if (count < 1 || count > kMaxBucketCount) return false;
  const Const* low = ConstantArgument(arguments, 1);
  const Const* high = ConstantArgument(arguments, 2);
  // Distinct as the built-in compares them (numeric: exactly).
  if (low->consttype == NUMERICOID)
    return DatumGetInt32(DirectFunctionCall2(numeric_cmp, low->constvalue, high->constvalue)) != 0;
  return lower != upper;
}

// Why to_char format `format` could make timestamp[tz]_to_char raise or
// depend on lc_time, or nullptr. TM (translation mode) takes month and day
// names from the server's locale (cache_locale_time), which can raise
// ("localized string format value too long") and whose spelling is not
// dp_agg's to audit: any "TM", in any case, anywhere, is refused (also in a
// quoted literal, which is harmless but rare). The result buffer is
// format length x DCH_MAX_ITEM_SIZ bytes: the format is bounded.
constexpr int kMaxFormatBytes = 256;

const char* ToCharFormatProblem(const Const* format) {
  if (format == nullptr) return "its format is not a constant";
  if (format->constisnull) return nullptr;  // strict: NULL for every row
  text* value = DatumGetTextPP(format->constvalue);
  const char* p = VARDATA_ANY(value);
  const int length = VARSIZE_ANY_EXHDR(value);
  if (length > kMaxFormatBytes) return "its format is longer than 256 bytes";
  for (int i = 0; i + 1 < length; i++) {
    if ((p[i] == 't' || p[i] == 'T') && (p[i + 1] == 'm' || p[i + 1] == 'M'))
      return "its format uses TM (localized names)";
    // TZ/tz prints the zone abbreviation of the row's timestamp under the
    // session's TimeZone, which the analyst may SET to a POSIX zone with an
    // abbreviation of any length: to_char raises "time zone format value too
    // long" past 24 bytes, and in a zone with daylight saving time only for
    // the rows in one season (review of issue 13, sql/review_surface.sql).
    // Refused, with TZH and TZM, like TM; OF gives the offset instead.
    if ((p[i] == 't' || p[i] == 'T') && (p[i + 1] == 'z' || p[i + 1] == 'Z'))
      return "its format uses TZ (zone abbreviations)";
  }
  return nullptr;
}

// `consequence`: what the call can do for some rows only with this argument.
[[noreturn]] void RefuseConstant(const Node* call, const char* what, const char* why,
                                 const char* instead, const char* place,
                                 const char* consequence = "raise an error") {
  char rule[256];
  snprintf(rule, sizeof rule, "%s over protected rows needs %s", what, why);
  char detail[512];
  snprintf(detail, sizeof detail,
           "It would run for protected rows in %s, and with this argument it can %s for some "
           "rows only, which would reveal them.",
           place, consequence);
  RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, detail, instead, exprLocation(call), nullptr);
}

}  // namespace

void CheckConstantArguments(Oid function, List* arguments, const Node* call, const char* place) {
  FieldOf of;
  int type = 0;
  int value = 0;
  if (IsLikeFunction(function)) {
    // ILIKE matches the lowered pattern: lower() maps no character to % or
    // \, so the constant's checks hold for it too.
    const char* problem = LikePatternProblem(ConstantArgument(arguments, 1));
    if (problem != nullptr)
      RefuseConstant(
          call, "LIKE/ILIKE",
          "a constant pattern of at most 256 bytes with at most 64 % and no escape "
          "character at its end",
          "Write LIKE or ILIKE with a constant pattern (not a parameter or column) of at "
          "most 256 bytes, at most 64 % wildcards, and no \\ at its end (write \\\\ "
          "for a backslash).",
          place,
          strncmp(problem, "its pattern is longer", 21) == 0
              ? "take time that grows with the pattern's length times the text's"
              : "raise an error");
    return;
  }
  if (function == F_SUBSTR_TEXT_INT4_INT4 || function == F_SUBSTRING_TEXT_INT4_INT4) {
    const Const* length = ConstantArgument(arguments, 2);
    int32 count = 0;
    if (length == nullptr ||
        (!length->constisnull && (!ConstantInt32(length, &count) || count < 0)))
      RefuseConstant(call, "substring", "a constant, non-negative length",
                     "Write substring(column FROM start FOR length) or substr(column, start, "
                     "length) with a constant length of 0 or more (a negative length raises an "
                     "error); or substring(column FROM start) without a length.",
                     place);
    return;
  }
  if (function == F_WIDTH_BUCKET_NUMERIC_NUMERIC_NUMERIC_INT4 ||
      function == F_WIDTH_BUCKET_FLOAT8_FLOAT8_FLOAT8_INT4) {
    if (!BucketsAreTotal(arguments))
      RefuseConstant(call, "width_bucket",
                     "constant, finite, different bounds within +-1e15 and a constant count "
                     "from 1 to 100000",
                     "Write width_bucket(column, low, high, count) with constant numbers low <> "
                     "high, both within -1e15 and 1e15, and a constant count from 1 to 100000.",
                     place);
    return;
  }
  if (function == F_TO_CHAR_TIMESTAMP_TEXT || function == F_TO_CHAR_TIMESTAMPTZ_TEXT) {
    const char* problem = ToCharFormatProblem(ConstantArgument(arguments, 1));
    if (problem != nullptr)
      RefuseConstant(call, "to_char", "a constant format of at most 256 bytes without TM or TZ",
                     "Write to_char(column, 'YYYY-MM') with a constant format of date and time "
                     "fields (YYYY, MM, DD, HH24, MI, SS, Q, IW, Month, Day, OF, ...) without the "
                     "TM prefix (localized names depend on the server's lc_time) and without "
                     "TZ, TZH or TZM (a zone abbreviation can be too long for some rows; OF "
                     "prints the offset).",
                     place);
    return;
  }
  if (IsPartFunction(function, &of)) {
    if (!DecodeField(ConstantArgument(arguments, 0), &type, &value) ||
        !IsTotalPartField(type, value, of))
      RefuseConstant(call, "extract/date_part", "a constant, supported field",
                     "Write extract(field FROM column) or date_part('field', column) with a "
                     "constant field among year, quarter, month, week, day, dow, isodow, doy, "
                     "isoyear, decade, century, millennium, julian, epoch (and hour, minute, "
                     "second, milliseconds, microseconds for timestamps; timezone, "
                     "timezone_hour, timezone_minute for timestamptz).",
                     place);
    return;
  }
  if (function == F_TO_TIMESTAMP_TEXT_TEXT || function == F_TO_DATE) {
    // Run once while planning (verified_calls.h): both arguments must be
    // known then.
    if (ConstantArgument(arguments, 0) == nullptr || ConstantArgument(arguments, 1) == nullptr)
      RefuseConstant(call, function == F_TO_DATE ? "to_date" : "to_timestamp",
                     "a constant text and format",
                     function == F_TO_DATE
                         ? "Write the date and its format as literals, as Superset does: "
                           "to_date('2026-01-01', 'YYYY-MM-DD'), or write DATE '2026-01-01'."
                         : "Write the time and its format as literals, as Superset does: "
                           "to_timestamp('2026-01-01 00:00:00', 'YYYY-MM-DD HH24:MI:SS'), or "
                           "write TIMESTAMP '2026-01-01 00:00:00'.",
                     place);
    return;
  }
  if (function == F_DATE_TRUNC_TEXT_TIMESTAMP || function == F_DATE_TRUNC_TEXT_TIMESTAMPTZ) {
    if (!DecodeField(ConstantArgument(arguments, 0), &type, &value) || !IsTruncField(type, value))
      RefuseConstant(call, "date_trunc", "a constant, supported field",
                     "Write date_trunc('field', column) with a constant field among "
                     "microseconds, milliseconds, second, minute, hour, day, week, month, "
                     "quarter, year, decade, century, millennium.",
                     place);
    return;
  }
}

bool IsExactRoundingKey(Node* key) {
  if (key == nullptr || !IsA(key, FuncExpr)) return false;
  auto* call = reinterpret_cast<FuncExpr*>(key);
  switch (call->funcid) {
    // dscale 0 for every value (floor_var, ceil_var; round(x) and trunc(x)
    // are round(x, 0) and trunc(x, 0)).
    case F_FLOOR_NUMERIC:
    case F_CEIL_NUMERIC:
    case F_CEILING_NUMERIC:
    case F_ROUND_NUMERIC:
    case F_TRUNC_NUMERIC:
      return true;
    // dscale max(scale, 0) for every value (numeric_round, numeric_trunc).
    case F_ROUND_NUMERIC_INT4:
    case F_TRUNC_NUMERIC_INT4: {
      int32 scale = 0;
      return ConstantInt32(ConstantArgument(call->args, 1), &scale);
    }
    default:
      return false;
  }
}

bool IsExactDatePartKey(Node* key) {
  if (key == nullptr || !IsA(key, FuncExpr)) return false;
  auto* call = reinterpret_cast<FuncExpr*>(key);
  FieldOf of;
  int type = 0;
  int value = 0;
  if (!IsPartFunction(call->funcid, &of)) return false;
  if (!DecodeField(ConstantArgument(call->args, 0), &type, &value)) return false;
  return IsTotalPartField(type, value, of) && !(type == UNITS && value == DTK_JULIAN);
}

}  // namespace dp_pg
