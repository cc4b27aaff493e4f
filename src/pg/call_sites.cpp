// The executor hook: finds every private aggregate call in a plan before the
// first row is read, checks its public parameters, and writes them into the
// aggregate's initial state.
//
// Why here and not in the transition function:
//  * an error must not depend on the data. A GROUP BY over an empty table calls
//    no aggregate function at all, so a check made at the first row would
//    raise an error for a non-empty table only. ExecutorStart sees the query,
//    never the rows.
//  * a final function must produce a noisy answer for zero rows, and for that
//    it needs epsilon and the bounds, which no row delivered. Putting them in
//    the initial state gives every group, every parallel participant and every
//    Citus worker its parameters before any row is read.
//  * parameters must be the same for every row. Only expressions that cannot
//    vary between rows are accepted (constants, query parameters such as $1,
//    and stable functions of them); a column, a subquery or a volatile function
//    is refused before execution.
//  * window use is refused from the plan, whether or not any row exists.
#include "call_sites.h"

#include <cmath>
#include <cstring>

#include "../core/confidence.h"
#include "../core/gaussian_mechanism.h"
#include "../core/grid_value.h"
#include "../core/laplace_mechanism.h"
#include "../core/parameters.h"
#include "../core/partition_selection.h"
#include "../core/private_statistics.h"
#include "aggregate_functions.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "ledger.h"
#include "restriction.h"
#include "quantile_aggregates.h"
#include "selection_aggregates.h"
#include "settings.h"

namespace dp_pg {

// What the executor needs to know about one private aggregate signature.
enum class Family { kStatistic, kQuantile, kSelection, kGroupSelection };
struct PrivateAggregateKind {
  PGFunction transition;
  ValueKind value_kind;
  Oid bound_type;  // InvalidOid for dp_count and the quantiles
  Family family = Family::kStatistic;
};

namespace {

const PrivateAggregateKind kPrivateAggregates[] = {
    {dp_count_transfn, ValueKind::kNone, InvalidOid},
    {dp_int2_transfn, ValueKind::kInteger, INT2OID},
    {dp_int4_transfn, ValueKind::kInteger, INT4OID},
    {dp_int8_transfn, ValueKind::kInteger, INT8OID},
    {dp_float4_transfn, ValueKind::kFloat, FLOAT4OID},
    {dp_float8_transfn, ValueKind::kFloat, FLOAT8OID},
    {dp_numeric_transfn, ValueKind::kFloat, NUMERICOID},
    {dp_quantile_transfn, ValueKind::kFloat, FLOAT8OID, Family::kQuantile},
    {dp_select_transfn, ValueKind::kNone, InvalidOid, Family::kSelection},
    {dp_group_selection_transfn, ValueKind::kNone, InvalidOid, Family::kGroupSelection},
};

// Which release the final function makes (the Gaussian calibration differs).
enum class FinalKind : std::uint8_t { kCount, kSum, kMean, kOther };

struct AggregateCacheEntry {
  Oid aggregate;  // hash key: pg_proc OID of the aggregate
  const PrivateAggregateKind* kind;  // nullptr: not one of ours
  bool interval;  // its final function returns the value with a confidence interval
  FinalKind final_kind;
  int declared_arguments;  // pg_proc.pronargs of the aggregate
};

HTAB* aggregate_cache = nullptr;

void InvalidateAggregateCache(Datum, int, uint32) {
  if (aggregate_cache != nullptr) {
    hash_destroy(aggregate_cache);
    aggregate_cache = nullptr;
  }
}

// Recognises our aggregates by the address of their transition function:
// independent of names and schemas, and an aggregate that someone else builds
// on our transition function is treated as private too.
PGFunction FunctionAddress(Oid function) {
  if (!OidIsValid(function)) return nullptr;
  FmgrInfo info;
  fmgr_info(function, &info);
  return info.fn_addr;
}

AggregateCacheEntry ClassifyAggregate(Oid aggregate) {
  AggregateCacheEntry entry{aggregate, nullptr, false, FinalKind::kOther, 0};
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggregate));
  if (!HeapTupleIsValid(tuple)) return entry;
  const auto* form = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple));
  const Oid transition = form->aggtransfn;
  const Oid final_function = form->aggfinalfn;
  ReleaseSysCache(tuple);
  entry.declared_arguments = get_func_nargs(aggregate);
  const PGFunction transition_address = FunctionAddress(transition);
  for (const PrivateAggregateKind& kind : kPrivateAggregates) {
    if (transition_address == kind.transition) entry.kind = &kind;
  }
  if (entry.kind != nullptr) {
    const PGFunction final_address = FunctionAddress(final_function);
    entry.interval =
        final_address == dp_avg_interval_final || final_address == dp_sum_interval_final ||
        final_address == dp_count_interval_final;
    if (final_address == dp_count_final || final_address == dp_count_interval_final)
      entry.final_kind = FinalKind::kCount;
    else if (final_address == dp_sum_final_int8 || final_address == dp_sum_final_numeric ||
             final_address == dp_sum_final_float4 || final_address == dp_sum_final_float8 ||
             final_address == dp_sum_interval_final)
      entry.final_kind = FinalKind::kSum;
    else if (final_address == dp_avg_final_float8 || final_address == dp_avg_final_numeric ||
             final_address == dp_avg_interval_final)
      entry.final_kind = FinalKind::kMean;
  }
  return entry;
}

}  // namespace

namespace {
void EnsureAggregateCache() {
  if (aggregate_cache != nullptr) return;
  HASHCTL control;
  std::memset(&control, 0, sizeof control);
  control.keysize = sizeof(Oid);
  control.entrysize = sizeof(AggregateCacheEntry);
  control.hcxt = TopMemoryContext;
  aggregate_cache =
      hash_create("dp_agg aggregate kinds", 32, &control, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}
}  // namespace

const AggregateCacheEntry* LookupAggregate(Oid aggregate) {
  EnsureAggregateCache();
  bool found = false;
  auto* entry = static_cast<AggregateCacheEntry*>(
      hash_search(aggregate_cache, &aggregate, HASH_FIND, &found));
  if (found) return entry;
  // Catalog lookups may process invalidations that drop the cache, so the
  // entry is made only afterwards.
  const AggregateCacheEntry classified = ClassifyAggregate(aggregate);
  EnsureAggregateCache();
  entry = static_cast<AggregateCacheEntry*>(
      hash_search(aggregate_cache, &aggregate, HASH_ENTER, &found));
  *entry = classified;
  return entry;
}

const PrivateAggregateKind* LookupPrivateAggregate(Oid aggregate) {
  return LookupAggregate(aggregate)->kind;
}

int DeclaredArgumentCount(Aggref* aggref) {
  const int declared = LookupAggregate(aggref->aggfnoid)->declared_arguments;
  // aggargtypes has one entry per argument of the signature; args may have
  // more (resjunk ORDER BY keys), which are never parameters.
  if (declared != list_length(aggref->aggargtypes) || declared > list_length(aggref->args))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s is called with %d arguments, but its signature has %d",
                           get_func_name(aggref->aggfnoid), list_length(aggref->aggargtypes),
                           declared)));
  return declared;
}

int PerRowArgumentCount(Aggref* aggref) {
  const PrivateAggregateKind* kind = LookupPrivateAggregate(aggref->aggfnoid);
  if (kind == nullptr) return list_length(aggref->args);
  switch (kind->family) {
    case Family::kGroupSelection:
      return 0;
    case Family::kSelection:
      // the weighted form's weight is per row
      return DeclaredArgumentCount(aggref) == 6 ? 2 : 1;
    default:
      return 1;
  }
}

namespace {

// A parameter (epsilon, delta, bounds, fraction, candidates) must be the
// same for every row and in every process that evaluates it: the leader
// charges what it evaluates, while parallel workers evaluate the parameters
// again for the states they build. So only constants, query parameters ($1,
// PL/pgSQL variables; copied to workers as they are) and built-in IMMUTABLE
// functions and operators of those are accepted. A user-defined function
// (whatever its volatility label), a stable function, a column or a subquery
// could give different values to different processes or depend on data.
bool IsCheckableFunction(Oid function, void*) {
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
  if (check_functions_in_node(node, IsCheckableFunction, nullptr)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(VariesByRow), context);
}

const char* const kParameterNames[] = {"value", "lower bound", "upper bound", "epsilon"};

}  // namespace

bool IsRowInvariant(Node* expression) { return !VariesByRow(expression, nullptr); }

// Evaluates argument `position` of `aggref` once, before any row is read.
Datum EvaluateParameter(Aggref* aggref, int position, const char* role, EState* estate,
                        bool* is_null) {
  if (position < 0 || position >= DeclaredArgumentCount(aggref))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s has no %s argument", get_func_name(aggref->aggfnoid), role)));
  auto* entry = static_cast<TargetEntry*>(list_nth(aggref->args, position));
  Expr* expression = entry->expr;
  if (VariesByRow(reinterpret_cast<Node*>(expression), nullptr))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("%s of %s must be the same for every row", role,
                    get_func_name(aggref->aggfnoid)),
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

namespace {

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
      const int order = DatumGetInt32(
          DirectFunctionCall2(numeric_cmp, ExactNumericFromDouble(bound), value));
      if (is_lower && order < 0) bound = std::nextafter(bound, HUGE_VAL);
      if (!is_lower && order > 0) bound = std::nextafter(bound, -HUGE_VAL);
      return bound;
    }
    default:
      ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                      errmsg("dp_agg: bounds of type %s are not supported",
                             format_type_be(type))));
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
                      errmsg("dp_agg: bounds of type %s are not supported",
                             format_type_be(type))));
  }
  return 0;
}

void RequireNotNull(bool is_null, const char* role, Aggref* aggref) {
  if (is_null)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s of %s must not be NULL", role, get_func_name(aggref->aggfnoid)),
                    errhint("Every private aggregate needs a non-NULL epsilon, and dp_sum and "
                            "dp_avg also need non-NULL lower and upper bounds.")));
}

// Checks the call's parameters and returns its initial state (palloc'd in
// the query's memory context).
// Where the parameters are among an aggregate's arguments:
//   (value, epsilon [, delta] [, confidence])                  dp_count...
//   (value, lower, upper, epsilon [, delta] [, confidence])    dp_sum..., dp_avg...
// delta selects the (epsilon, delta) Gaussian variant; confidence belongs to
// the *_interval aggregates.
struct ParameterLayout {
  int epsilon = -1;
  int delta = -1;
  int confidence = -1;
};

ParameterLayout LayoutOf(Aggref* aggref, const PrivateAggregateKind& kind, bool interval) {
  const int base = kind.value_kind != ValueKind::kNone ? 4 : 2;
  const int declared = DeclaredArgumentCount(aggref);
  const int extra = declared - base;
  ParameterLayout layout;
  layout.epsilon = base - 1;
  const bool has_delta = extra == 2 || (extra == 1 && !interval);
  if (has_delta) layout.delta = base;
  if (interval) layout.confidence = base + (has_delta ? 1 : 0);
  if (extra != (has_delta ? 1 : 0) + (interval ? 1 : 0))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s has %d arguments, which is no known dp_agg layout",
                           get_func_name(aggref->aggfnoid), declared)));
  return layout;
}

}  // namespace

// Argument `position` of `aggref` must have type `type` in the aggregate's
// signature: a Datum is read only as the type the catalog gives it.
void RequireArgumentType(Aggref* aggref, int position, Oid type, const char* role) {
  if (position < 0 || position >= DeclaredArgumentCount(aggref) ||
      list_nth_oid(aggref->aggargtypes, position) != type)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("%s of %s must be of type %s", role, get_func_name(aggref->aggfnoid),
                           format_type_be(type))));
}

double EvaluateDoubleParameter(Aggref* aggref, int position, const char* role, EState* estate) {
  RequireArgumentType(aggref, position, FLOAT8OID, role);
  bool is_null = false;
  const Datum value = EvaluateParameter(aggref, position, role, estate, &is_null);
  RequireNotNull(is_null, role, aggref);
  return DatumGetFloat8(value);
}

namespace {

// A fresh initial state with the privacy parameters the mechanisms use: the
// requests rounded down to 24 bits (the Laplace sampler would round epsilon
// itself; the Gaussian calibration and the partition-selection threshold
// must get the same value that ChargeFor covers). Under the superuser-only
// test fault halve_noise, every mechanism gets twice the epsilon.
AggregateState* NewPreparedState(ValueKind value_kind, double epsilon, double delta) {
  AggregateState* state = NewAggregateState();
  state->initialized = 1;
  state->value_kind = static_cast<std::uint8_t>(value_kind);
  state->epsilon = CallCore([&] { return dp::EffectivePrivacyParameter(epsilon); });
  state->delta = delta > 0 ? CallCore([&] { return dp::EffectivePrivacyParameter(delta); }) : 0;
  if (test_fault == static_cast<int>(TestFault::kHalveNoise)) state->epsilon *= 2;
  return state;
}

// dp_agg.group_selection(epsilon, delta): (epsilon, delta) partition
// selection; the state keeps the effective parameters like the others.
AggregateState* PrepareGroupSelectionInitialState(Aggref* aggref, EState* estate,
                                                  double* requested_epsilon,
                                                  double* requested_delta) {
  const double epsilon = EvaluateDoubleParameter(aggref, 0, "epsilon", estate);
  const double delta = EvaluateDoubleParameter(aggref, 1, "delta", estate);
  const double maximum_epsilon = max_epsilon;
  const double maximum_delta = dp_pg::max_delta;
  CallCore([&] {
    dp::ValidateEpsilon(epsilon, maximum_epsilon);
    dp::ValidateDelta(delta);
    dp::ValidateDeltaAtMost(delta, maximum_delta);
  });
  *requested_epsilon = epsilon;
  *requested_delta = delta;
  AggregateState* state = NewPreparedState(ValueKind::kNone, epsilon, delta);
  // The threshold comes from the public parameters only: computed here as
  // well, so that a failure is a parameter error before execution.
  const double effective_epsilon = state->epsilon;
  const double effective_delta = state->delta;
  CallCore([&] { dp::PlanPartitionSelection(effective_epsilon, effective_delta); });
  return state;
}

// Checks the call's parameters and returns its initial state (palloc'd in
// the query's memory context); *requested_epsilon and *requested_delta are
// what the call costs.
AggregateState* PrepareInitialState(Aggref* aggref, const PrivateAggregateKind& kind,
                                    bool interval, EState* estate, double* requested_epsilon,
                                    double* requested_delta) {
  const bool has_bounds = kind.value_kind != ValueKind::kNone;
  const ParameterLayout layout = LayoutOf(aggref, kind, interval);
  const double epsilon =
      EvaluateDoubleParameter(aggref, layout.epsilon, kParameterNames[3], estate);
  const double maximum = max_epsilon;
  CallCore([&] { dp::ValidateEpsilon(epsilon, maximum); });
  double delta = 0;
  if (layout.delta >= 0) {
    delta = EvaluateDoubleParameter(aggref, layout.delta, "delta", estate);
    const double maximum_delta = dp_pg::max_delta;
    CallCore([&] {
      dp::ValidateDelta(delta);
      dp::ValidateDeltaAtMost(delta, maximum_delta);
    });
  }
  double confidence = 0;
  if (layout.confidence >= 0) {
    confidence = EvaluateDoubleParameter(aggref, layout.confidence, "confidence", estate);
    CallCore([&] { dp::ValidateConfidence(confidence); });
  }
  *requested_epsilon = epsilon;
  *requested_delta = delta;

  AggregateState* state = NewPreparedState(kind.value_kind, epsilon, delta);
  state->confidence = confidence;
  const FinalKind final_kind = LookupAggregate(aggref->aggfnoid)->final_kind;
  // Test fault (superuser-only): no clamping.
  if (test_fault == static_cast<int>(TestFault::kSkipClamping)) state->skip_clamping = 1;
  if (!has_bounds) return state;

  bool is_null = false;
  Datum bounds[2];
  for (int i = 0; i < 2; ++i) {
    RequireArgumentType(aggref, 1 + i, kind.bound_type, kParameterNames[1 + i]);
    bounds[i] = EvaluateParameter(aggref, 1 + i, kParameterNames[1 + i], estate, &is_null);
    RequireNotNull(is_null, kParameterNames[1 + i], aggref);
  }
  if (kind.value_kind == ValueKind::kInteger) {
    const std::int64_t lower = BoundAsInteger(bounds[0], kind.bound_type);
    const std::int64_t upper = BoundAsInteger(bounds[1], kind.bound_type);
    CallCore([&] { dp::ValidateBounds(lower, upper); });
    state->unit_exponent = 0;
    state->lower_units = lower;
    state->upper_units = upper;
    state->lower = static_cast<double>(lower);
    state->upper = static_cast<double>(upper);
  } else {
    double lower = BoundAsDouble(bounds[0], kind.bound_type, true);
    double upper = BoundAsDouble(bounds[1], kind.bound_type, false);
    // Equal numeric bounds between two doubles cross when rounded inward:
    // use the nearest double for both (the answer is then that constant).
    if (lower > upper && kind.bound_type == NUMERICOID &&
        DatumGetInt32(DirectFunctionCall2(numeric_cmp, bounds[0], bounds[1])) == 0)
      lower = upper = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, bounds[0]));
    CallCore([&] { dp::ValidateBounds(lower, upper); });
    state->unit_exponent = dp::ChooseUnitExponent(lower, upper);
    state->unit_scale = dp::UnitScale(state->unit_exponent);
    // The same mapping as for every row (AddDouble), so that clamped values
    // always land between these units.
    state->lower_units = dp::ToUnits(lower, state->unit_exponent, state->unit_scale);
    state->upper_units = dp::ToUnits(upper, state->unit_exponent, state->unit_scale);
    state->lower = lower;
    state->upper = upper;
  }
  // The final function calibrates its noise from these public values only;
  // calibrating here as well makes every failure (e.g. a discrete Gaussian
  // too wide for the sampler) a parameter error before anything is charged
  // or computed, whatever the rows.
  const AggregateState prepared = *state;
  CallCore([&] {
    const bool count = final_kind == FinalKind::kCount || final_kind == FinalKind::kOther;
    const bool sum = has_bounds && (final_kind == FinalKind::kSum || final_kind == FinalKind::kOther);
    const bool mean =
        has_bounds && (final_kind == FinalKind::kMean || final_kind == FinalKind::kOther);
    const double level = prepared.confidence;
    if (prepared.delta > 0) {
      if (count) {
        const dp::GaussianPlan plan = dp::PlanGaussianCount(prepared.epsilon, prepared.delta);
        if (level > 0) dp::GaussianNoiseInterval(plan, 0, level);
      }
      if (sum) {
        const dp::GaussianPlan plan = dp::PlanGaussianSum(
            prepared.lower_units, prepared.upper_units, prepared.epsilon, prepared.delta);
        if (level > 0) dp::GaussianNoiseInterval(plan, prepared.unit_exponent, level);
      }
      if (mean) {
        const dp::GaussianMeanPlans plans = dp::PlanGaussianMean(
            prepared.lower_units, prepared.upper_units, prepared.epsilon, prepared.delta);
        if (level > 0) dp::GaussianMeanNoiseIntervals(plans, prepared.unit_exponent, level);
      }
    } else {
      if (count) {
        const dp::LaplacePlan plan = dp::PlanCount(prepared.epsilon);
        if (level > 0) dp::LaplaceNoiseInterval(plan, 0, level);
      }
      if (sum) {
        const dp::LaplacePlan plan =
            dp::PlanSum(prepared.lower_units, prepared.upper_units, prepared.epsilon);
        if (level > 0) dp::LaplaceNoiseInterval(plan, prepared.unit_exponent, level);
      }
      if (mean) {
        const dp::MeanPlans plans =
            dp::PlanMean(prepared.lower_units, prepared.upper_units, prepared.epsilon);
        if (level > 0) dp::LaplaceMeanNoiseIntervals(plans, prepared.unit_exponent, level);
      }
    }
  });
  return state;
}

// ---------------------------------------------------------------------------
// Composition: what a query costs, and which plans are refused.
//
// Rule (proved in the README, "How much a query costs"): a query costs, for
// every private aggregate call site, its epsilon times the number of grouping
// sets of its Agg node, charged once per execution of the statement, before
// any row is read. This is sound when
//   (1) the call site's Agg node runs at most once per execution: it is not
//       under the inner side of a nested loop or merge join, not in a
//       correlated or per-row subquery, not in a recursive CTE; and
//   (2) every row of every table feeds the aggregation at most once: its
//       input reads each table at most once, through operators that never
//       repeat a row (no joins, no set-returning functions in the select
//       list, no subqueries that make row membership depend on other rows).
// Then the groups of one grouping set partition the input rows, so releasing
// all of them costs epsilon once (parallel composition), and the grouping
// sets and call sites add up (sequential composition). Anything else is
// refused before execution with SQLSTATE 0A000, so the charge never depends
// on the data.
// ---------------------------------------------------------------------------

struct QueryCost {
  bool leader_paid;  // this is a parallel worker's share of its leader's plan
  int sites;  // call sites charged by this process
  Datum epsilon;  // numeric
  Datum delta;    // numeric
  StringInfoData description;
};

[[noreturn]] void RefuseInput(Aggref* aggref, const char* detail) {
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("dp_agg cannot bound how often one row feeds %s", get_func_name(aggref->aggfnoid)),
           errdetail("%s", detail),
           errhint("Aggregate rows of a single table, filtered by conditions on that table's "
                   "own columns; join or repeat rows only after the private aggregation.")));
  pg_unreachable();
}

// What the walk over an aggregate's input has seen.
struct InputScan {
  List* tables = NIL;          // OIDs of the tables read
  List* roots = NIL;           // for each, the range-table index of the table the query names
                               // (a scanned partition's partitioned ancestor)
  bool has_join = false;
  Bitmapset* join_params = nullptr;  // PARAM_EXEC ids a nested loop passes to its inner side
};

// Expressions inside the input of a private aggregate may not read other
// rows or other tables: no subqueries and no values handed in from outside
// (PARAM_EXEC carries subquery results and outer-row values), except the
// current row of a nested loop's outer side, which joins pass down.
bool ReadsOtherRows(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) || IsA(node, SubLink)) return true;
  if (IsA(node, Param) && reinterpret_cast<Param*>(node)->paramkind == PARAM_EXEC) {
    const auto* scan = static_cast<const InputScan*>(context);
    return scan == nullptr ||
           !bms_is_member(reinterpret_cast<Param*>(node)->paramid, scan->join_params);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ReadsOtherRows), context);
}

void CheckExpressions(Aggref* aggref, Node* expressions, const InputScan* scan = nullptr) {
  if (ReadsOtherRows(expressions, const_cast<InputScan*>(scan)))
    RefuseInput(aggref,
                "A condition or value in its input depends on a subquery or on another row, "
                "so one row could change how many others are aggregated.");
}

void CheckBuiltinFunctions(Aggref* aggref, List* functions) {
  ListCell* cell;
  foreach (cell, functions) {
    auto* function = static_cast<RangeTblFunction*>(lfirst(cell));
    if (!IsA(function->funcexpr, FuncExpr) ||
        reinterpret_cast<FuncExpr*>(function->funcexpr)->funcid >= FirstNormalObjectId)
      RefuseInput(aggref, "Its input calls a user-defined set-returning function, whose rows "
                          "may repeat the rows of a table.");
  }
}

// Do the key columns (attribute numbers of the node's output) include every
// column that the node outputs to the query?
bool KeysCoverOutput(List* target_list, int key_count, const AttrNumber* keys) {
  ListCell* cell;
  foreach (cell, target_list) {
    const auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    if (entry->resjunk) continue;
    bool keyed = false;
    for (int i = 0; i < key_count && !keyed; ++i) keyed = keys[i] == entry->resno;
    if (!keyed) return false;
  }
  return true;
}

// The range-table index of the relation that the query named for the scan
// of `index`: a partition (or inheritance child) scanned for a partitioned
// table maps to that table, through the planner's AppendRelInfos. UNION ALL
// branches are not followed (their parent is a subquery, not a relation).
Index RootRangeTableIndex(Index index, EState* estate) {
  List* append_relations = estate->es_plannedstmt->appendRelations;
  for (int depth = 0; depth <= list_length(append_relations); ++depth) {
    bool moved = false;
    ListCell* cell;
    foreach (cell, append_relations) {
      const auto* info = static_cast<AppendRelInfo*>(lfirst(cell));
      if (info->child_relid != index) continue;
      if (exec_rt_fetch(info->parent_relid, estate)->rtekind != RTE_RELATION) break;
      index = info->parent_relid;
      moved = true;
      break;
    }
    if (!moved) break;
  }
  return index;
}

// Walks the input plan of a private aggregate; `scan` collects the tables
// read so far and whether there are joins.
void CheckInput(Plan* plan, Aggref* aggref, EState* estate, InputScan* scan) {
  if (plan == nullptr) return;
  check_stack_depth();
  List** tables = &scan->tables;
  CheckExpressions(aggref, reinterpret_cast<Node*>(plan->targetlist), scan);
  CheckExpressions(aggref, reinterpret_cast<Node*>(plan->qual), scan);
  switch (nodeTag(plan)) {
    case T_SeqScan:
    case T_SampleScan:
    case T_IndexScan:
    case T_IndexOnlyScan:
    case T_BitmapHeapScan:
    case T_TidScan:
    case T_TidRangeScan:
    case T_ForeignScan: {
      const Index relation_index = reinterpret_cast<Scan*>(plan)->scanrelid;
      if (relation_index == 0) RefuseInput(aggref, "Its input is a foreign join.");
      const Oid table = exec_rt_fetch(relation_index, estate)->relid;
      if (list_member_oid(*tables, table))
        RefuseInput(aggref, "Its input reads the same table more than once.");
      *tables = lappend_oid(*tables, table);
      scan->roots = lappend_int(scan->roots, RootRangeTableIndex(relation_index, estate));
      if (IsA(plan, IndexScan))
        CheckExpressions(aggref,
                         reinterpret_cast<Node*>(reinterpret_cast<IndexScan*>(plan)->indexqualorig),
                         scan);
      if (IsA(plan, IndexOnlyScan))
        CheckExpressions(aggref,
                         reinterpret_cast<Node*>(reinterpret_cast<IndexOnlyScan*>(plan)->indexqual),
                         scan);
      if (IsA(plan, BitmapHeapScan))
        CheckExpressions(
            aggref,
            reinterpret_cast<Node*>(reinterpret_cast<BitmapHeapScan*>(plan)->bitmapqualorig),
            scan);
      return;  // bitmap index scans below read the same table
    }
    case T_FunctionScan:
      CheckExpressions(aggref,
                       reinterpret_cast<Node*>(reinterpret_cast<FunctionScan*>(plan)->functions));
      CheckBuiltinFunctions(aggref, reinterpret_cast<FunctionScan*>(plan)->functions);
      return;
    case T_ValuesScan:
      CheckExpressions(aggref,
                       reinterpret_cast<Node*>(reinterpret_cast<ValuesScan*>(plan)->values_lists));
      return;
    case T_Result:
      CheckExpressions(aggref, reinterpret_cast<Result*>(plan)->resconstantqual);
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    case T_Sort:
    case T_IncrementalSort:
    case T_Material:
    case T_Gather:
    case T_GatherMerge:
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    case T_Unique: {
      // DISTINCT keeps one row per distinct output: removing a row removes at
      // most one. DISTINCT ON keeps a row chosen by the others (removing it
      // promotes another, a swap), like LIMIT: refused.
      const auto* unique = reinterpret_cast<Unique*>(plan);
      if (!KeysCoverOutput(plan->targetlist, unique->numCols, unique->uniqColIdx))
        RefuseInput(aggref, "Its input contains DISTINCT ON, which keeps a row chosen by the "
                            "others.");
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    }
    case T_Agg: {
      // Grouping without aggregates (DISTINCT) never repeats a row; grouping
      // sets repeat every row once per set; any aggregate below would need
      // its own sensitivity analysis.
      const auto* grouping = reinterpret_cast<Agg*>(plan);
      if (grouping->groupingSets != NIL || grouping->chain != NIL)
        RefuseInput(aggref, "Its input contains GROUPING SETS, ROLLUP or CUBE, which repeat "
                            "every row once per grouping set.");
      if (contain_agg_clause(reinterpret_cast<Node*>(plan->targetlist)) ||
          contain_agg_clause(reinterpret_cast<Node*>(plan->qual)))
        RefuseInput(aggref, "Its input is itself the result of other aggregates.");
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    }
    case T_SubqueryScan:
      CheckInput(reinterpret_cast<SubqueryScan*>(plan)->subplan, aggref, estate, scan);
      return;
    case T_CteScan: {
      const int plan_id = reinterpret_cast<CteScan*>(plan)->ctePlanId;
      CheckInput(static_cast<Plan*>(list_nth(estate->es_plannedstmt->subplans, plan_id - 1)),
                 aggref, estate, scan);
      return;
    }
    case T_Append: {
      ListCell* cell;
      foreach (cell, reinterpret_cast<Append*>(plan)->appendplans)
        CheckInput(static_cast<Plan*>(lfirst(cell)), aggref, estate, scan);
      return;
    }
    case T_MergeAppend: {
      ListCell* cell;
      foreach (cell, reinterpret_cast<MergeAppend*>(plan)->mergeplans)
        CheckInput(static_cast<Plan*>(lfirst(cell)), aggref, estate, scan);
      return;
    }
    case T_NestLoop: {
      // The outer row's values reach the inner side as PARAM_EXEC.
      ListCell* cell;
      foreach (cell, reinterpret_cast<NestLoop*>(plan)->nestParams)
        scan->join_params = bms_add_member(scan->join_params,
                                           static_cast<NestLoopParam*>(lfirst(cell))->paramno);
      [[fallthrough]];
    }
    case T_MergeJoin:
    case T_HashJoin:
      // Joins are judged on the query tree (query_rules.cpp): one protected
      // table, public tables pinned by a unique key. Here it is checked that
      // the plan reads exactly one protected table, which is when that
      // judgement was made.
      CheckExpressions(aggref, reinterpret_cast<Node*>(reinterpret_cast<Join*>(plan)->joinqual),
                       scan);
      scan->has_join = true;
      CheckInput(plan->lefttree, aggref, estate, scan);
      CheckInput(plan->righttree, aggref, estate, scan);
      return;
    case T_Hash:
    case T_Memoize:
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    case T_ProjectSet:
      RefuseInput(aggref, "Its input contains a set-returning function in a select list, which "
                          "repeats rows.");
    case T_Limit:
      RefuseInput(aggref, "Its input contains LIMIT, whose selected rows depend on other rows.");
    case T_WindowAgg:
      RefuseInput(aggref, "Its input contains window functions, which read other rows.");
    case T_SetOp:
      RefuseInput(aggref, "Its input contains INTERSECT or EXCEPT, which compare rows of "
                          "different inputs.");
    default:
      RefuseInput(aggref, "Its input contains a plan step that dp_agg does not analyse.");
  }
}

// Counts the protected tables that the query names (a partitioned table is
// one, however many of its partitions are scanned).
void RequireOneProtectedTable(Aggref* aggref, const InputScan& scan, EState* estate) {
  List* protected_roots = NIL;
  ListCell* table_cell;
  ListCell* root_cell;
  forboth (table_cell, scan.tables, root_cell, scan.roots) {
    const int root = lfirst_int(root_cell);
    if (list_member_int(protected_roots, root)) continue;
    if (IsProtectedRelation(lfirst_oid(table_cell), false) ||
        IsProtectedRelation(exec_rt_fetch(root, estate)->relid, false))
      protected_roots = lappend_int(protected_roots, root);
  }
  const int protected_tables = list_length(protected_roots);
  list_free(protected_roots);
  if (protected_tables != 1)
    RefuseInput(aggref, "Its input contains a join, which can repeat a row of either side; "
                        "joins are accepted only between one protected table and public tables "
                        "looked up by a unique key.");
}

// Number of grouping sets of an Agg node (and its chained phases): every row
// feeds one group of each grouping set.
int GroupingSetCount(Agg* plan) {
  int sets = list_length(plan->groupingSets);
  ListCell* cell;
  foreach (cell, plan->chain) sets += list_length(reinterpret_cast<Agg*>(lfirst(cell))->groupingSets);
  return sets > 0 ? sets : 1;
}

// What a call costs, as an exact numeric: the shortest decimal of the
// requested value (0.1 costs 0.1, so 50 calls at 0.1 spend exactly 5.0) when
// that is at least the value the mechanism uses (the request rounded down to
// 24 bits, EffectivePrivacyParameter); otherwise, for the rare request whose
// shortest decimal lies just below its 24-bit value, that value exactly.
Datum ChargeFor(double requested) {
  if (requested == 0) return DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  const double effective = CallCore([&] { return dp::EffectivePrivacyParameter(requested); });
  char shortest_text[DOUBLE_SHORTEST_DECIMAL_LEN];
  double_to_shortest_decimal_buf(requested, shortest_text);
  const Datum shortest = DirectFunctionCall3(numeric_in, CStringGetDatum(shortest_text),
                                             ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
  const Datum used = ExactNumericFromDouble(effective);
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, shortest, used)) >= 0 ? shortest : used;
}

void AddCost(QueryCost* cost, Aggref* aggref, double epsilon, double delta, int multiplier) {
  const Datum times = DirectFunctionCall1(int4_numeric, Int32GetDatum(multiplier));
  cost->epsilon = DirectFunctionCall2(
      numeric_add, cost->epsilon,
      DirectFunctionCall2(numeric_mul, ChargeFor(epsilon), times));
  cost->delta = DirectFunctionCall2(
      numeric_add, cost->delta, DirectFunctionCall2(numeric_mul, ChargeFor(delta), times));
  cost->sites += 1;
  appendStringInfo(&cost->description, "%s%s(epsilon %g", cost->sites > 1 ? "; " : "",
                   get_func_name(aggref->aggfnoid), epsilon);
  if (delta > 0) appendStringInfo(&cost->description, ", delta %g", delta);
  if (multiplier > 1) appendStringInfo(&cost->description, " x %d grouping sets", multiplier);
  appendStringInfoChar(&cost->description, ')');
}

void PrepareAggregates(AggState* node, EState* estate, bool reexecuted, QueryCost* cost) {
  Agg* plan = reinterpret_cast<Agg*>(node->ss.ps.plan);
  bool input_checked = false;
  for (int i = 0; i < node->numtrans; ++i) {
    AggStatePerTrans transition = &node->pertrans[i];
    Aggref* aggref = transition->aggref;
    const AggregateCacheEntry* entry = LookupAggregate(aggref->aggfnoid);
    const PrivateAggregateKind* kind = entry->kind;
    if (kind == nullptr) continue;
    const bool interval = entry->interval;
    // Decided before any argument is read: the parameters are found by their
    // position in the signature, and ORDER BY / DISTINCT would add arguments
    // (sort keys) or drop rows.
    if (aggref->aggorder != NIL || aggref->aggdistinct != NIL)
      ereport(ERROR,
              (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
               errmsg("DISTINCT or ORDER BY inside %s is not supported",
                      get_func_name(aggref->aggfnoid)),
               errdetail("A private aggregate's guarantee is stated for every row counted once, "
                         "and its order does not change the answer."),
               errhint("Remove DISTINCT and ORDER BY from the aggregate's arguments.")));
    // The combining step of a parallel or partial plan has no parameter
    // arguments: its inputs are partial states that already carry them, and
    // the call site is accounted for at its partial step.
    if (DO_AGGSPLIT_COMBINE(aggref->aggsplit)) continue;
    if (reexecuted)
      ereport(ERROR,
              (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
               errmsg("%s cannot run once per row of another query",
                      get_func_name(aggref->aggfnoid)),
               errdetail("It is inside a correlated subquery, a LATERAL join or a recursive "
                         "query, so it would release a data-dependent number of answers."),
               errhint("Use GROUP BY to get one private answer per group.")));
    // The aggregated value (and dp_select's weight) and FILTER are evaluated
    // per row like the input.
    const int per_row = PerRowArgumentCount(aggref);
    for (int position = 0; position < per_row; ++position)
      CheckExpressions(aggref, reinterpret_cast<Node*>(list_nth(aggref->args, position)));
    CheckExpressions(aggref, reinterpret_cast<Node*>(aggref->aggfilter));
    // Who pays: every process pays for the call sites it runs, except a
    // parallel worker running its share of the leader's plan (a partial step
    // below Gather, or the whole subtree of a single-copy Gather), which the
    // leader paid for when it prepared the same nodes. A query that a worker
    // plans and runs itself (inside a PARALLEL SAFE function) is paid by that
    // worker, once per execution like any other.
    const bool charge = !cost->leader_paid;
    if (charge && !input_checked) {
      InputScan scan;
      CheckInput(plan->plan.lefttree, aggref, estate, &scan);
      if (scan.has_join) RequireOneProtectedTable(aggref, scan, estate);
      list_free(scan.tables);
      list_free(scan.roots);
      bms_free(scan.join_params);
      input_checked = true;
    }
    double requested_epsilon = 0;
    double requested_delta = 0;
    MemoryContext previous = MemoryContextSwitchTo(estate->es_query_cxt);
    Datum initial;
    switch (kind->family) {
      case Family::kQuantile:
        initial = PrepareQuantileInitialState(aggref, estate, &requested_epsilon);
        break;
      case Family::kSelection:
        initial = PrepareSelectionInitialState(aggref, estate, &requested_epsilon);
        break;
      case Family::kGroupSelection:
        initial = PointerGetDatum(PrepareGroupSelectionInitialState(
            aggref, estate, &requested_epsilon, &requested_delta));
        break;
      default:
        initial = PointerGetDatum(PrepareInitialState(aggref, *kind, interval, estate,
                                                      &requested_epsilon, &requested_delta));
    }
    MemoryContextSwitchTo(previous);
    transition->initValue = initial;
    transition->initValueIsNull = false;
    if (charge) {
      // Every output aggregate that uses this transition is its own release.
      int outputs = 0;
      for (int j = 0; j < node->numaggs; ++j) outputs += node->peragg[j].transno == i ? 1 : 0;
      AddCost(cost, aggref, requested_epsilon, requested_delta,
              GroupingSetCount(plan) * (outputs > 0 ? outputs : 1));
    }
  }
  ResetPerTupleExprContext(estate);
}

bool FindPrivateWindowFunction(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc)) {
    auto* window_function = reinterpret_cast<WindowFunc*>(node);
    if (LookupPrivateAggregate(window_function->winfnoid) != nullptr) {
      *static_cast<Oid*>(context) = window_function->winfnoid;
      return true;
    }
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindPrivateWindowFunction), context);
}

void RejectWindowUse(Plan* plan) {
  Oid function = InvalidOid;
  if (FindPrivateWindowFunction(reinterpret_cast<Node*>(plan->targetlist), &function))
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("%s cannot be used as a window function", get_func_name(function)),
             errhint("Use it as an aggregate with GROUP BY: every window frame would be a "
                     "separate noisy release of overlapping rows.")));
}

void PreparePlanState(PlanState* node, EState* estate, bool reexecuted, QueryCost* cost);

void PrepareSubPlans(List* subplans, EState* estate, bool reexecuted, QueryCost* cost) {
  ListCell* cell;
  foreach (cell, subplans) {
    auto* subplan = static_cast<SubPlanState*>(lfirst(cell));
    PreparePlanState(subplan->planstate, estate, reexecuted, cost);
  }
}

// Init plans (and materialised WITH queries, which are init plans too) are
// evaluated again on a rescan of their node only when a parameter they
// depend on changed (ExecReScan, ExecReScanCteScan): one without external
// parameters runs at most once per execution, wherever its node is.
void PrepareInitPlans(List* init_plans, EState* estate, bool reexecuted, QueryCost* cost) {
  ListCell* cell;
  foreach (cell, init_plans) {
    auto* subplan = static_cast<SubPlanState*>(lfirst(cell));
    const bool once = bms_is_empty(subplan->planstate->plan->extParam);
    PreparePlanState(subplan->planstate, estate, reexecuted && !once, cost);
  }
}

// Visits every plan node once. `reexecuted`: this node may run more than once
// per execution of the statement (see rule (1) above).
void PreparePlanState(PlanState* node, EState* estate, bool reexecuted, QueryCost* cost) {
  if (node == nullptr) return;
  check_stack_depth();
  // Init plans run once for their node; other subplans may run once per row.
  PrepareInitPlans(node->initPlan, estate, reexecuted, cost);
  PrepareSubPlans(node->subPlan, estate, true, cost);
  if (IsA(node, AggState)) {
    PrepareAggregates(reinterpret_cast<AggState*>(node), estate, reexecuted, cost);
  } else if (IsA(node, WindowAggState)) {
    RejectWindowUse(node->plan);
  }
  switch (nodeTag(node)) {
    case T_NestLoopState:
    case T_MergeJoinState:
    case T_RecursiveUnionState:
      PreparePlanState(outerPlanState(node), estate, reexecuted, cost);
      PreparePlanState(innerPlanState(node), estate, true, cost);
      return;
    case T_MemoizeState:
      PreparePlanState(outerPlanState(node), estate, true, cost);
      return;
    case T_AppendState: {
      auto* append = reinterpret_cast<AppendState*>(node);
      for (int i = 0; i < append->as_nplans; ++i)
        PreparePlanState(append->appendplans[i], estate, reexecuted, cost);
      return;
    }
    case T_MergeAppendState: {
      auto* append = reinterpret_cast<MergeAppendState*>(node);
      for (int i = 0; i < append->ms_nplans; ++i)
        PreparePlanState(append->mergeplans[i], estate, reexecuted, cost);
      return;
    }
    case T_SubqueryScanState:
      PreparePlanState(reinterpret_cast<SubqueryScanState*>(node)->subplan, estate, reexecuted,
                       cost);
      return;
    case T_CustomScanState: {
      ListCell* cell;
      foreach (cell, reinterpret_cast<CustomScanState*>(node)->custom_ps)
        PreparePlanState(static_cast<PlanState*>(lfirst(cell)), estate, true, cost);
      return;
    }
    default:
      PreparePlanState(outerPlanState(node), estate, reexecuted, cost);
      PreparePlanState(innerPlanState(node), estate, reexecuted, cost);
      return;
  }
}

ExecutorStart_hook_type previous_executor_start = nullptr;

void ExecutorStartHook(QueryDesc* query, int flags) {
  // A parallel worker runs exactly one share of its leader's plan, and it is
  // the first executor it starts. Decided here, on entry: starting that share
  // can itself run queries (a STABLE function evaluated for partition
  // pruning), which are the worker's own and must pay.
  static bool worker_share_started = false;
  const bool leader_paid = IsParallelWorker() && !worker_share_started;
  if (IsParallelWorker()) worker_share_started = true;
  DecideNoiseSource();
  CheckExecutionForRestrictedRole(query, flags);
  if (previous_executor_start != nullptr) {
    previous_executor_start(query, flags);
  } else {
    standard_ExecutorStart(query, flags);
  }
  // Plain EXPLAIN runs nothing, so there is nothing to check, prepare or pay.
  if ((flags & EXEC_FLAG_EXPLAIN_ONLY) != 0) return;
  QueryCost cost;
  cost.leader_paid = leader_paid;
  cost.sites = 0;
  cost.epsilon = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  cost.delta = cost.epsilon;
  initStringInfo(&cost.description);
  PreparePlanState(query->planstate, query->estate, false, &cost);
  if (cost.sites > 0) {
    QueryCharge charge;
    charge.epsilon = cost.epsilon;
    charge.delta = cost.delta;
    strlcpy(charge.description, cost.description.data, sizeof charge.description);
    ChargeBudget(charge);
  }
  pfree(cost.description.data);
}

}  // namespace

void InstallExecutorHook() {
  previous_executor_start = ExecutorStart_hook;
  ExecutorStart_hook = ExecutorStartHook;
  CacheRegisterSyscacheCallback(AGGFNOID, InvalidateAggregateCache, 0);
  CacheRegisterSyscacheCallback(PROCOID, InvalidateAggregateCache, 0);
}

}  // namespace dp_pg
