#include "column_bounds.h"

#include "security_labels.h"

extern "C" {
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "commands/seclabel.h"
#include "nodes/makefuncs.h"
}

namespace dp_pg {

namespace {

constexpr const char* kPrefix = "bounds [";

[[noreturn]] void RefuseBounds(const char* message, const char* detail) {
  ereport(ERROR,
          (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", message), errdetail("%s", detail),
           errhint("Declare bounds with dp_agg.set_column_bounds(table, column, lower, "
                   "upper), e.g. dp_agg.set_column_bounds('hr.patients', 'age', 0, 110).")));
}

bool IsBoundedType(Oid type) {
  return type == INT2OID || type == INT4OID || type == INT8OID || type == FLOAT4OID ||
         type == FLOAT8OID || type == NUMERICOID;
}

Datum NumericOf(const char* text) {
  return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

// Splits 'bounds [lower, upper]' into two numerics; false if malformed.
// The text between the brackets is checked character by character before
// numeric_in sees it, so a malformed label is refused with our message.
bool ParseBounds(const char* label, Datum* lower, Datum* upper) {
  const size_t prefix = strlen(kPrefix);
  if (strncmp(label, kPrefix, prefix) != 0) return false;
  const char* body = label + prefix;
  const char* comma = strchr(body, ',');
  const char* close = strrchr(body, ']');
  if (comma == nullptr || close == nullptr || close < comma || close[1] != '\0') return false;
  auto valid_number = [](const char* begin, const char* end) {
    while (begin < end && *begin == ' ') ++begin;
    while (end > begin && end[-1] == ' ') --end;
    if (begin == end || end - begin > 64) return static_cast<char*>(nullptr);
    for (const char* c = begin; c < end; ++c)
      if (strchr("0123456789.-+eE", *c) == nullptr) return static_cast<char*>(nullptr);
    return pnstrdup(begin, end - begin);
  };
  char* lower_text = valid_number(body, comma);
  char* upper_text = valid_number(comma + 1, close);
  if (lower_text == nullptr || upper_text == nullptr) return false;
  *lower = NumericOf(lower_text);
  *upper = NumericOf(upper_text);
  return true;
}

bool NumericIsIntegral(Datum value) {
  const Datum truncated = DirectFunctionCall2(numeric_trunc, value, Int32GetDatum(0));
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, value, truncated)) == 0;
}

int NumericCompare(Datum a, Datum b) {
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, a, b));
}

// The range of an integer type as numerics.
void IntegerRange(Oid type, Datum* minimum, Datum* maximum) {
  switch (type) {
    case INT2OID:
      *minimum = NumericOf("-32768");
      *maximum = NumericOf("32767");
      return;
    case INT4OID:
      *minimum = NumericOf("-2147483648");
      *maximum = NumericOf("2147483647");
      return;
    default:
      *minimum = NumericOf("-9223372036854775808");
      *maximum = NumericOf("9223372036854775807");
      return;
  }
}

Const* ConstOfType(Oid type, Datum numeric) {
  switch (type) {
    case INT2OID:
      return makeConst(INT2OID, -1, InvalidOid, sizeof(int16),
                       DirectFunctionCall1(numeric_int2, numeric), false, true);
    case INT4OID:
      return makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
                       DirectFunctionCall1(numeric_int4, numeric), false, true);
    case INT8OID:
      return makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
                       DirectFunctionCall1(numeric_int8, numeric), false, FLOAT8PASSBYVAL);
    case FLOAT4OID:
      return makeConst(FLOAT4OID, -1, InvalidOid, sizeof(float4),
                       DirectFunctionCall1(numeric_float4, numeric), false, true);
    case FLOAT8OID:
      return makeConst(FLOAT8OID, -1, InvalidOid, sizeof(float8),
                       DirectFunctionCall1(numeric_float8, numeric), false, FLOAT8PASSBYVAL);
    default:
      return makeConst(NUMERICOID, -1, InvalidOid, -1, numeric, false, false);
  }
}

}  // namespace

bool IsBoundsLabel(const char* label) {
  return label != nullptr && strncmp(label, "bounds", 6) == 0;
}

void CheckBoundsLabel(Oid relation, AttrNumber column, const char* label) {
  const Oid type = get_atttype(relation, column);
  const char* name = get_attname(relation, column, false);
  if (!IsBoundedType(type))
    RefuseBounds(
        psprintf("dp_agg: column \"%s\" of type %s cannot have bounds", name, format_type_be(type)),
        "Bounds clamp values that are summed or averaged: only smallint, integer, "
        "bigint, real, double precision and numeric columns have them.");
  Datum lower = 0;
  Datum upper = 0;
  if (!ParseBounds(label, &lower, &upper))
    RefuseBounds(psprintf("invalid dp_agg bounds label \"%s\"", label),
                 "A bounds label reads 'bounds [lower, upper]' with two numbers.");
  const bool lower_nan = numeric_is_nan(DatumGetNumeric(lower));
  const bool upper_nan = numeric_is_nan(DatumGetNumeric(upper));
  if (lower_nan || upper_nan || numeric_is_inf(DatumGetNumeric(lower)) ||
      numeric_is_inf(DatumGetNumeric(upper)))
    RefuseBounds("dp_agg: column bounds must be finite numbers",
                 "NaN and infinite bounds give no sensitivity to calibrate the noise to.");
  if (NumericCompare(lower, upper) > 0)
    RefuseBounds("dp_agg: the lower bound is above the upper bound",
                 "Bounds are a range [lower, upper] with lower <= upper.");
  if (type == INT2OID || type == INT4OID || type == INT8OID) {
    Datum minimum = 0;
    Datum maximum = 0;
    IntegerRange(type, &minimum, &maximum);
    if (!NumericIsIntegral(lower) || !NumericIsIntegral(upper) ||
        NumericCompare(lower, minimum) < 0 || NumericCompare(upper, maximum) > 0)
      RefuseBounds(psprintf("dp_agg: bounds of %s column \"%s\" must be %s values",
                            format_type_be(type), name, format_type_be(type)),
                   "dp_sum and dp_avg of an integer column take bounds of the column's type.");
  }
  // A real or double precision column's bounds must be values of its type:
  // converted here, when the label is set, so that the conversion of every
  // plain sum or avg over the column (DeclaredColumnBounds) cannot raise
  // (review 27, finding 3: 'bounds [0, 1e39]' on a real column made each
  // of them fail with 22003).
  if (type == FLOAT4OID || type == FLOAT8OID) {
    const char* type_name = type == FLOAT4OID ? "real" : "double precision";
    const Datum limit = NumericOf(type == FLOAT4OID ? "340282346638528859811704183484516925440"
                                                    : "1.7976931348623157e308");
    const Datum negative_limit = DirectFunctionCall1(numeric_uminus, limit);
    auto representable = [&](Datum value) {
      if (NumericCompare(value, limit) > 0 || NumericCompare(value, negative_limit) < 0)
        return false;
      // Nonzero values too small for the type (underflow) raise as well.
      const Datum smallest = NumericOf(type == FLOAT4OID ? "1.2e-38" : "2.3e-308");
      const Datum magnitude = DirectFunctionCall1(numeric_abs, value);
      return NumericCompare(magnitude, NumericOf("0")) == 0 ||
             NumericCompare(magnitude, smallest) >= 0;
    };
    if (!representable(lower) || !representable(upper))
      RefuseBounds(psprintf("dp_agg: bounds of %s column \"%s\" must be %s values", type_name, name,
                            type_name),
                   psprintf("Each bound must be zero or between %s and %s in magnitude.",
                            type == FLOAT4OID ? "1.2e-38" : "2.3e-308",
                            type == FLOAT4OID ? "3.4e38" : "1.7e308"));
  }
}

bool IsWideningCast(Oid from, Oid to) {
  auto integer_rank = [](Oid type) {
    return type == INT2OID ? 1 : type == INT4OID ? 2 : type == INT8OID ? 3 : 0;
  };
  if (integer_rank(from) > 0)
    return integer_rank(to) > integer_rank(from) || to == NUMERICOID || to == FLOAT4OID ||
           to == FLOAT8OID;
  return from == FLOAT4OID && to == FLOAT8OID;
}

bool DeclaredColumnBounds(Oid relation, AttrNumber column, Oid as, Const** lower, Const** upper) {
  ObjectAddress address;
  address.classId = RelationRelationId;
  address.objectId = relation;
  address.objectSubId = column;
  const char* label = GetSecurityLabel(&address, kLabelProvider);
  if (label == nullptr || !IsBoundsLabel(label)) return false;
  Datum lower_numeric = 0;
  Datum upper_numeric = 0;
  // The label provider checked it when it was set (CheckBoundsLabel).
  if (!ParseBounds(label, &lower_numeric, &upper_numeric)) return false;
  const Oid type = get_atttype(relation, column);
  if (!IsBoundedType(type)) return false;  // the column's type changed since
  if (as != type && !IsWideningCast(type, as)) return false;
  *lower = ConstOfType(as, lower_numeric);
  *upper = ConstOfType(as, upper_numeric);
  return true;
}

}  // namespace dp_pg
