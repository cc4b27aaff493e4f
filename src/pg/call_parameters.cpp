// Parameters must be the same for every row and in every process that
// evaluates them: the leader charges what it evaluates, while parallel
// workers evaluate the parameters again for the states they build. They are
// evaluated in ExecutorStart, before any row is read, so that an error never
// depends on the data.
#include "call_parameters.h"

#include <cmath>

#include "../core/quantile.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "settings.h"

namespace dp_pg {

namespace {

// So only constants, query parameters ($1, PL/pgSQL variables; copied to
// workers as they are) and built-in IMMUTABLE functions and operators of
// those are accepted. A user-defined function (whatever its volatility
// label) or a stable function could give different values to different
// processes or depend on data: true for those (the refused ones).
bool IsRowVaryingFunction(Oid function, void*) {
  return function >= FirstNormalObjectId || func_volatile(function) != PROVOLATILE_IMMUTABLE;
}

bool VariesByRow(Node* node, void* context) {
  if (node == nullptr) return false;
  switch (nodeTag(node)) {
    case T_Const:
    case T_RelabelType:
    case T_CoerceViaIO:
    case T_ArrayCoerceExpr:
    case T_ArrayExpr:
    case T_RowExpr:
    case T_CollateExpr:
    case T_CaseExpr:
    case T_CaseWhen:
    case T_CaseTestExpr:
    case T_CoalesceExpr:
    case T_MinMaxExpr:
    case T_NullTest:
    case T_BoolExpr:
    case T_FuncExpr:
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr:
    case T_ScalarArrayOpExpr:
    case T_List:
    case T_TargetEntry:
      break;
    case T_Param:
      return reinterpret_cast<Param*>(node)->paramkind != PARAM_EXTERN;
    default:
      return true;  // columns, subqueries, aggregates, anything not listed
  }
  if (check_functions_in_node(node, IsRowVaryingFunction, nullptr)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(VariesByRow), context);
}

// Argument `position` of `aggref` must have type `type` in the aggregate's
// signature: a Datum is read only as the type the catalog gives it.
void RequireArgumentType(Aggref* aggref, int position, Oid type, const char* role) {
  if (position < 0 || position >= DeclaredArgumentCount(aggref) ||
      list_nth_oid(aggref->aggargtypes, position) != type)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("%s of %s must be of type %s", role, AggregateName(aggref->aggfnoid),
                           format_type_be(type))));
}

void RequireNotNull(bool is_null, const char* role, Aggref* aggref) {
  if (is_null)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s must not be NULL", role, AggregateName(aggref->aggfnoid)),
                    errhint("Every private aggregate needs a non-NULL epsilon, and dp_sum and "
                            "dp_avg also need non-NULL lower and upper bounds.")));
}

// A bound as a double. Numeric bounds are rounded inward (a lower bound up,
// an upper bound down) when not exactly representable, so that clamping to
// the doubles keeps every value, and the mean, within the bounds given.
double BoundAsDouble(Datum value, Oid type, bool is_lower) {
  switch (type) {
    case FLOAT4OID:
      return DatumGetFloat4(value);
    case FLOAT8OID:
      return DatumGetFloat8(value);
    case NUMERICOID: {
      double bound = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value));
      if (!std::isfinite(bound)) return bound;
      const int order =
          DatumGetInt32(DirectFunctionCall2(numeric_cmp, ExactNumericFromDouble(bound), value));
      if (is_lower && order < 0) bound = std::nextafter(bound, HUGE_VAL);
      if (!is_lower && order > 0) bound = std::nextafter(bound, -HUGE_VAL);
      return bound;
    }
    default:
      ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                      errmsg("dp_agg: bounds of type %s are not supported", format_type_be(type))));
  }
  return 0.0;
}

std::int64_t BoundAsInteger(Datum value, Oid type) {
  switch (type) {
    case INT2OID:
      return DatumGetInt16(value);
    case INT4OID:
      return DatumGetInt32(value);
    case INT8OID:
      return DatumGetInt64(value);
    default:
      ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                      errmsg("dp_agg: bounds of type %s are not supported", format_type_be(type))));
  }
  return 0;
}

void ReadBounds(Aggref* aggref, const PrivateAggregateKind& kind, const ArgumentLayout& layout,
                EState* estate, dp::PublicParameters* values) {
  const char* const roles[2] = {"lower bound", "upper bound"};
  const int positions[2] = {layout.lower, layout.upper};
  Datum bounds[2];
  for (int i = 0; i < 2; ++i) {
    bool is_null = false;
    RequireArgumentType(aggref, positions[i], kind.bound_type, roles[i]);
    bounds[i] = EvaluateParameter(aggref, positions[i], roles[i], estate, &is_null);
    RequireNotNull(is_null, roles[i], aggref);
  }
  values->has_bounds = true;
  if (kind.value_kind == ValueKind::kInteger) {
    values->integer_bounds = true;
    values->lower_integer = BoundAsInteger(bounds[0], kind.bound_type);
    values->upper_integer = BoundAsInteger(bounds[1], kind.bound_type);
    values->lower = static_cast<double>(values->lower_integer);
    values->upper = static_cast<double>(values->upper_integer);
    return;
  }
  values->lower = BoundAsDouble(bounds[0], kind.bound_type, true);
  values->upper = BoundAsDouble(bounds[1], kind.bound_type, false);
  // Equal numeric bounds between two doubles cross when rounded inward:
  // use the nearest double for both (the answer is then that constant).
  if (values->lower > values->upper && kind.bound_type == NUMERICOID &&
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, bounds[0], bounds[1])) == 0)
    values->lower = values->upper =
        DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, bounds[0]));
}

Datum ReadCandidates(Aggref* aggref, int position, EState* estate) {
  if (!OidIsValid(get_element_type(list_nth_oid(aggref->aggargtypes, position))))
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("candidates of dp_select must be an array")));
  bool is_null = false;
  const Datum candidates = EvaluateParameter(aggref, position, "candidates", estate, &is_null);
  if (is_null)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("candidates of dp_select must not be NULL"),
                    errhint("Pass an array of the values the answer may take, e.g. "
                            "ARRAY['a', 'b', 'c'].")));
  return candidates;
}

}  // namespace

bool IsRowInvariant(Node* expression) { return !VariesByRow(expression, nullptr); }

Datum EvaluateParameter(Aggref* aggref, int position, const char* role, EState* estate,
                        bool* is_null) {
  if (position < 0 || position >= DeclaredArgumentCount(aggref))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s has no %s argument", AggregateName(aggref->aggfnoid), role)));
  auto* entry = static_cast<TargetEntry*>(list_nth(aggref->args, position));
  Expr* expression = entry->expr;
  if (VariesByRow(reinterpret_cast<Node*>(expression), nullptr))
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
         errmsg("%s of %s must be the same for every row", role, AggregateName(aggref->aggfnoid)),
         errhint("Pass a constant or a query parameter such as $1, or built-in immutable "
                 "functions of those: not a column, a subquery or a user-defined, stable or "
                 "volatile function.")));
  if (IsA(expression, Const)) {
    auto* constant = reinterpret_cast<Const*>(expression);
    *is_null = constant->constisnull;
    return constant->constvalue;
  }
  ExprState* state = ExecInitExprWithParams(expression, estate->es_param_list_info);
  ExprContext* context = GetPerTupleExprContext(estate);
  return ExecEvalExprSwitchContext(state, context, is_null);
}

double EvaluateDoubleParameter(Aggref* aggref, int position, const char* role, EState* estate) {
  RequireArgumentType(aggref, position, FLOAT8OID, role);
  bool is_null = false;
  const Datum value = EvaluateParameter(aggref, position, role, estate, &is_null);
  RequireNotNull(is_null, role, aggref);
  return DatumGetFloat8(value);
}

CallParameters ReadCallParameters(Aggref* aggref, const PrivateAggregateKind& kind,
                                  const ArgumentLayout& layout, EState* estate) {
  CallParameters call;
  dp::PublicParameters& values = call.values;
  values.epsilon = EvaluateDoubleParameter(aggref, layout.epsilon, "epsilon", estate);
  if (layout.delta >= 0) {
    values.has_delta = true;
    values.delta = EvaluateDoubleParameter(aggref, layout.delta, "delta", estate);
  }
  if (layout.confidence >= 0) {
    values.has_confidence = true;
    values.confidence = EvaluateDoubleParameter(aggref, layout.confidence, "confidence", estate);
  }
  if (kind.family == Family::kQuantile) {
    values.has_fraction = true;
    values.fraction = layout.fraction >= 0
                          ? EvaluateDoubleParameter(aggref, layout.fraction, "fraction", estate)
                          : dp::kMedianFraction;
  }
  if (layout.lower >= 0) ReadBounds(aggref, kind, layout, estate, &values);
  if (layout.candidates >= 0) call.candidates = ReadCandidates(aggref, layout.candidates, estate);
  return call;
}

void ValidateUnitLevelLimits(double epsilon, double delta) {
  // epsilon and delta are m times the per-group values the rewrite divided
  // by m: allowed a few ulps above the limits for the division's and the
  // product's rounding, so that a call at exactly the limit is not refused.
  constexpr double kRounding = 1.0 + 0x1p-48;
  CallCore([&] {
    dp::ValidateEpsilon(epsilon, max_epsilon * kRounding);
    dp::ValidateDeltaAtMost(delta, max_delta * kRounding);
    return 0;
  });
}

dp::PrivacyParameters ValidateCallParameters(const dp::PublicParameters& parameters) {
  dp::PrivacyLimits limits;
  limits.max_epsilon = max_epsilon;
  limits.max_delta = max_delta;
  return CallCore([&] { return dp::ValidatePublicParameters(parameters, limits); });
}

}  // namespace dp_pg
