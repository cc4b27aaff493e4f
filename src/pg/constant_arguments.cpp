#include "constant_arguments.h"

extern "C" {
#include "parser/scansup.h"
#include "utils/datetime.h"
#include "mb/pg_wchar.h"
#include "utils/fmgroids.h"
}

#include "refusal.h"

namespace dp_pg {

namespace {

// At most this many '%' in a LIKE pattern: MatchText recurses once per '%'
// that the text reaches (check_stack_depth), so the depth is bounded by the
// pattern, never by the data.
constexpr int kMaxLikeWildcards = 64;

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

[[noreturn]] void RefuseConstant(const Node* call, const char* what, const char* why,
                                 const char* instead, const char* place) {
  char rule[256];
  snprintf(rule, sizeof rule, "%s over protected rows needs %s", what, why);
  char detail[512];
  snprintf(detail, sizeof detail,
           "It would run for protected rows in %s, and with this argument it can raise an "
           "error for some rows only, which would reveal them.",
           place);
  RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, detail, instead, exprLocation(call), nullptr);
}

}  // namespace

void CheckConstantArguments(Oid function, List* arguments, const Node* call, const char* place) {
  FieldOf of;
  int type = 0;
  int value = 0;
  if (function == F_TEXTLIKE || function == F_TEXTNLIKE) {
    const char* problem = LikePatternProblem(ConstantArgument(arguments, 1));
    if (problem != nullptr)
      RefuseConstant(call, "LIKE",
                     "a constant pattern with at most 64 % and no escape character at its end",
                     "Write LIKE with a constant pattern (not a parameter or column), at most 64 "
                     "% wildcards, and no \\ at its end (write \\\\ for a backslash).",
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
