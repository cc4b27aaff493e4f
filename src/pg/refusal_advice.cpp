#include "refusal_advice.h"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/fmgroids.h"
}

#include <cstring>

namespace dp_pg {

namespace {

bool NameIs(const char* name, const char* const* names) {
  for (; *names != nullptr; ++names)
    if (strcmp(name, *names) == 0) return true;
  return false;
}

const char* const kGenericAdvice =
    "Write the condition with comparisons, arithmetic, CASE, COALESCE, LIKE, lower/upper, "
    "length, substring, date_trunc, extract or casts to text and to numbers, or compute this "
    "from the released answers in an outer query (README \"Restricted analysts\" lists what "
    "runs on protected rows).";

}  // namespace

const char* PlainAggregateAdvice(const Aggref* aggref) {
  const char* name = get_func_name(aggref->aggfnoid);
  if (name == nullptr) return kGenericAdvice;
  if (strcmp(name, "count") == 0) {
    if (aggref->aggstar || aggref->args == NIL)
      return "Write dp_count(1.0) for count(*): 1.0 is epsilon, the privacy cost of the answer. "
             "For a BI tool's own count(*), an administrator sets dp_agg.plain_aggregate_epsilon "
             "for your role.";
    if (aggref->aggdistinct != NIL)
      return "Write dp_count(DISTINCT x, 1.0) for count(DISTINCT x): 1.0 is epsilon, the "
             "privacy cost of the answer. For a BI tool's own count, an administrator sets "
             "dp_agg.plain_aggregate_epsilon for your role.";
    return "Write dp_count(x, 1.0) for count(x): 1.0 is epsilon, the privacy cost of the answer. "
           "For a BI tool's own count, an administrator sets dp_agg.plain_aggregate_epsilon for "
           "your role.";
  }
  if (strcmp(name, "sum") == 0)
    return "Write dp_sum(x, lower, upper, 1.0) for sum(x), with public bounds that you choose "
           "without looking at the data (values outside are clamped) and epsilon 1.0. For a BI "
           "tool's own sum, an administrator sets dp_agg.plain_aggregate_epsilon for your role "
           "and the column's bounds (dp_agg.set_column_bounds).";
  if (strcmp(name, "avg") == 0)
    return "Write dp_avg(x, lower, upper, 1.0) for avg(x), with public bounds that you choose "
           "without looking at the data (values outside are clamped) and epsilon 1.0. For a BI "
           "tool's own avg, an administrator sets dp_agg.plain_aggregate_epsilon for your role "
           "and the column's bounds (dp_agg.set_column_bounds).";
  if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
    return "min and max are decided by a single row and have no private version: write "
           "dp_percentile(x, 0.05, lower, upper, 1.0) (or 0.95), or dp_median(x, lower, upper, "
           "1.0), with public bounds.";
  if (strcmp(name, "var_pop") == 0 || strcmp(name, "var_samp") == 0 ||
      strcmp(name, "variance") == 0 || strcmp(name, "stddev") == 0 ||
      strcmp(name, "stddev_pop") == 0 || strcmp(name, "stddev_samp") == 0)
    return "Write dp_variance(x, lower, upper, 1.0) for the variance of x, or dp_stddev(x, "
           "lower, upper, 1.0) for its standard deviation (population forms, like var_pop and "
           "stddev_pop), with public bounds that you choose without looking at the data (values "
           "outside are clamped) and epsilon 1.0.";
  return "Only dp_agg's private aggregates (dp_count, dp_sum, dp_avg, dp_variance, dp_stddev, "
         "dp_median, dp_percentile, dp_select) read protected rows; compute other statistics "
         "from their answers in an outer query.";
}

const char* NonTotalCallAdvice(Oid function, const Node* call) {
  switch (function) {
    case F_TEXTCAT:
    case F_ANYTEXTCAT:
    case F_TEXTANYCAT:
    case F_CONCAT:
    case F_CONCAT_WS:
      return "Concatenation is not run on protected rows: compare the parts one by one (a = 'x' "
             "AND b = 'y'), or concatenate the released keys in an outer query.";
    case F_DATE_MI:
    case F_TIMESTAMP_MI:
    case F_TIMESTAMPTZ_MI:
    case F_AGE_TIMESTAMP_TIMESTAMP:
    case F_AGE_TIMESTAMP:
    case F_AGE_TIMESTAMPTZ_TIMESTAMPTZ:
    case F_AGE_TIMESTAMPTZ:
      return "Differences of dates and times raise for infinite values: compare instead (d >= "
             "CURRENT_DATE - 30, ts >= now() - interval '1 year').";
    case F_INTERVAL_MUL:
    case F_MUL_D_INTERVAL:
      return "interval * number can overflow: for seconds since 1970 write to_timestamp(x), "
             "and compare with constant intervals (ts >= now() - interval '30 days').";
    case F_INT2ABS:
    case F_INT4ABS:
    case F_INT8ABS:
    case F_ABS_INT2:
    case F_ABS_INT4:
    case F_ABS_INT8:
      return "abs() overflows for the smallest integer: write CASE WHEN x < 0 THEN -x ELSE x END.";
    case F_STRPOS:
      return "Write x LIKE '%part%' instead of strpos(x, 'part') > 0.";
    case F_NUMERIC_NUMERIC_INT4:
      return "CAST(x AS numeric(p, s)) raises when x needs more than p digits: cast to numeric "
             "without a precision, or write round(x, s).";
    case F_VARCHAR_VARCHAR_INT4_BOOL:
    case F_BPCHAR_BPCHAR_INT4_BOOL:
      return "A cast to varchar(n) or char(n) raises for longer values: cast to text, or write "
             "substring(x FROM 1 FOR n).";
    default:
      break;
  }
  const char* name = get_func_name(function);
  if (name == nullptr) return kGenericAdvice;
  static const char* const kTrims[] = {"btrim", "ltrim", "rtrim", "trim", nullptr};
  static const char* const kMath[] = {"sqrt", "dsqrt", "ln",  "dlog1", "log",  "dlog10", "exp",
                                      "dexp", "power", "pow", "dpow",  "cbrt", "dcbrt",  nullptr};
  static const char* const kText[] = {"replace", "split_part", "left", "right",
                                      "reverse", "repeat",     "lpad", "rpad",
                                      "initcap", "translate",  nullptr};
  if (NameIs(name, kTrims))
    return "trim() is not run on protected rows: match with LIKE (x LIKE '%north%'), or trim the "
           "released keys in an outer query.";
  if (NameIs(name, kMath))
    return "This function raises for some inputs (negative, zero or overflowing values): apply "
           "it to the released answers in an outer query.";
  if (NameIs(name, kText))
    return "This text function is not run on protected rows: match with LIKE, substring or "
           "lower/upper, or transform the released keys in an outer query.";
  if (call != nullptr && CastSpelling(call)[0] != '\0')
    return "This cast can fail for some values: compare with a constant of the column's own "
           "type instead (x = '42' for a text column, not x::int = 42).";
  return kGenericAdvice;
}

const char* ExpressionAdvice(const Node* node) {
  switch (nodeTag(node)) {
    case T_CoerceViaIO:
      return "A cast from text parses every value and fails on some: compare with a constant "
             "of the column's own type instead (x = '42', not x::int = 42).";
    case T_CoerceToDomain:
      return "A domain's check can fail on some values: cast the column to the domain's base "
             "type, or compare it with constants directly.";
    case T_MinMaxExpr:
      return "Write CASE WHEN a > b THEN a ELSE b END instead of GREATEST(a, b) (LEAST "
             "likewise).";
    case T_ArrayExpr:
    case T_ArrayCoerceExpr:
    case T_SubscriptingRef:
      return "Arrays built from protected rows can exceed the size limit: compare the columns "
             "one by one, or use IN with a constant list (x IN (1, 2, 3)).";
    default:
      return kGenericAdvice;
  }
}

const char* CastSpelling(const Node* call) {
  if (call == nullptr || !IsA(call, FuncExpr)) return "";
  const auto* cast = reinterpret_cast<const FuncExpr*>(call);
  if (cast->funcformat != COERCE_EXPLICIT_CAST && cast->funcformat != COERCE_IMPLICIT_CAST)
    return "";
  if (cast->args == NIL) return "";
  const Oid source = exprType(static_cast<Node*>(linitial(cast->args)));
  const char* implicit = cast->funcformat == COERCE_IMPLICIT_CAST ? "implicit " : "";
  char* spelling = psprintf("%scast from %s to %s", implicit, format_type_be(source),
                            format_type_with_typemod(cast->funcresulttype, exprTypmod(call)));
  return spelling;
}

}  // namespace dp_pg
