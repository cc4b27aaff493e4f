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

#include <cstring>

#include "../core/grid_value.h"
#include "../core/parameters.h"
#include "aggregate_functions.h"
#include "aggregate_state.h"
#include "error_boundary.h"
#include "settings.h"

// PostgreSQL 15 declares tree walkers as taking `bool (*)()`; 16 and later
// take a typed callback. These casts compile against both.
#define DP_EXPRESSION_WALKER(function) \
  reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(function))
#define DP_PLANSTATE_WALKER(function) \
  reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(function))

namespace dp_pg {

// What the executor needs to know about one private aggregate signature.
struct PrivateAggregateKind {
  PGFunction transition;
  ValueKind value_kind;
  Oid bound_type;  // InvalidOid for dp_count
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
};

struct AggregateCacheEntry {
  Oid aggregate;  // hash key: pg_proc OID of the aggregate
  const PrivateAggregateKind* kind;  // nullptr: not one of ours
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
const PrivateAggregateKind* ClassifyAggregate(Oid aggregate) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggregate));
  if (!HeapTupleIsValid(tuple)) return nullptr;
  const Oid transition = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggtransfn;
  ReleaseSysCache(tuple);
  FmgrInfo info;
  fmgr_info(transition, &info);
  for (const PrivateAggregateKind& kind : kPrivateAggregates) {
    if (info.fn_addr == kind.transition) return &kind;
  }
  return nullptr;
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

const PrivateAggregateKind* LookupPrivateAggregate(Oid aggregate) {
  EnsureAggregateCache();
  bool found = false;
  auto* entry = static_cast<AggregateCacheEntry*>(
      hash_search(aggregate_cache, &aggregate, HASH_FIND, &found));
  if (found) return entry->kind;
  // Catalog lookups may process invalidations that drop the cache, so the
  // entry is made only afterwards.
  const PrivateAggregateKind* kind = ClassifyAggregate(aggregate);
  EnsureAggregateCache();
  entry = static_cast<AggregateCacheEntry*>(
      hash_search(aggregate_cache, &aggregate, HASH_ENTER, &found));
  entry->kind = kind;
  return kind;
}

namespace {

// Expressions whose value could differ from one row to the next, or that
// read data: columns, subqueries (their results arrive as PARAM_EXEC), other
// aggregates, volatile functions.
bool VariesByRow(Node* node, void* context) {
  if (node == nullptr) return false;
  switch (nodeTag(node)) {
    case T_Var:
    case T_Aggref:
    case T_WindowFunc:
    case T_GroupingFunc:
    case T_SubLink:
    case T_SubPlan:
    case T_AlternativeSubPlan:
    case T_CurrentOfExpr:
    case T_NextValueExpr:
      return true;
    case T_Param:
      return reinterpret_cast<Param*>(node)->paramkind != PARAM_EXTERN;
    default:
      break;
  }
  if (contain_volatile_functions(node)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(VariesByRow), context);
}

const char* const kParameterNames[] = {"value", "lower bound", "upper bound", "epsilon"};

// Evaluates argument `position` of `aggref` once, before any row is read.
Datum EvaluateParameter(Aggref* aggref, int position, const char* role, EState* estate,
                        bool* is_null) {
  auto* entry = static_cast<TargetEntry*>(list_nth(aggref->args, position));
  Expr* expression = entry->expr;
  if (VariesByRow(reinterpret_cast<Node*>(expression), nullptr))
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("%s of %s must be the same for every row", role,
                    get_func_name(aggref->aggfnoid)),
             errhint("Pass a constant or a query parameter such as $1, not a column, a "
                     "subquery or a volatile function.")));
  if (IsA(expression, Const)) {
    auto* constant = reinterpret_cast<Const*>(expression);
    *is_null = constant->constisnull;
    return constant->constvalue;
  }
  ExprState* state = ExecInitExprWithParams(expression, estate->es_param_list_info);
  ExprContext* context = GetPerTupleExprContext(estate);
  return ExecEvalExprSwitchContext(state, context, is_null);
}

double BoundAsDouble(Datum value, Oid type) {
  switch (type) {
    case FLOAT4OID:
      return DatumGetFloat4(value);
    case FLOAT8OID:
      return DatumGetFloat8(value);
    case NUMERICOID:
      return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, value));
    default:
      elog(ERROR, "dp_agg: unexpected bound type %u", type);
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
      elog(ERROR, "dp_agg: unexpected bound type %u", type);
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
AggregateState* PrepareInitialState(Aggref* aggref, const PrivateAggregateKind& kind,
                                    EState* estate) {
  const bool has_bounds = kind.value_kind != ValueKind::kNone;
  const int expected_arguments = has_bounds ? 4 : 2;
  if (list_length(aggref->args) != expected_arguments)
    elog(ERROR, "dp_agg: %s has %d arguments, expected %d", get_func_name(aggref->aggfnoid),
         list_length(aggref->args), expected_arguments);

  bool is_null = false;
  const int epsilon_position = expected_arguments - 1;
  const Datum epsilon_datum =
      EvaluateParameter(aggref, epsilon_position, kParameterNames[3], estate, &is_null);
  RequireNotNull(is_null, kParameterNames[3], aggref);
  const double epsilon = DatumGetFloat8(epsilon_datum);
  const double maximum = max_epsilon;
  CallCore([&] { dp::ValidateEpsilon(epsilon, maximum); });

  AggregateState* state = NewAggregateState();
  state->initialized = 1;
  state->value_kind = static_cast<std::uint8_t>(kind.value_kind);
  state->epsilon = epsilon;
  // Test faults (superuser-only): noise of half the scale, or no clamping.
  if (test_fault == static_cast<int>(TestFault::kHalveNoise)) state->epsilon = 2 * epsilon;
  if (test_fault == static_cast<int>(TestFault::kSkipClamping)) state->skip_clamping = 1;
  if (!has_bounds) return state;

  Datum bounds[2];
  for (int i = 0; i < 2; ++i) {
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
    const double lower = BoundAsDouble(bounds[0], kind.bound_type);
    const double upper = BoundAsDouble(bounds[1], kind.bound_type);
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
  return state;
}

void PrepareAggregates(AggState* node, EState* estate) {
  for (int i = 0; i < node->numtrans; ++i) {
    AggStatePerTrans transition = &node->pertrans[i];
    Aggref* aggref = transition->aggref;
    const PrivateAggregateKind* kind = LookupPrivateAggregate(aggref->aggfnoid);
    if (kind == nullptr) continue;
    // The combining step of a parallel or partial plan has no parameter
    // arguments: its inputs are partial states that already carry them.
    if (DO_AGGSPLIT_COMBINE(aggref->aggsplit)) continue;
    MemoryContext previous = MemoryContextSwitchTo(estate->es_query_cxt);
    AggregateState* initial = PrepareInitialState(aggref, *kind, estate);
    MemoryContextSwitchTo(previous);
    transition->initValue = PointerGetDatum(initial);
    transition->initValueIsNull = false;
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

bool PreparePlanState(PlanState* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, AggState)) {
    PrepareAggregates(reinterpret_cast<AggState*>(node), static_cast<EState*>(context));
  } else if (IsA(node, WindowAggState)) {
    RejectWindowUse(node->plan);
  }
  return planstate_tree_walker(node, DP_PLANSTATE_WALKER(PreparePlanState), context);
}

ExecutorStart_hook_type previous_executor_start = nullptr;

void ExecutorStartHook(QueryDesc* query, int flags) {
  if (previous_executor_start != nullptr) {
    previous_executor_start(query, flags);
  } else {
    standard_ExecutorStart(query, flags);
  }
  // Plain EXPLAIN runs nothing, so there is nothing to check or prepare.
  if ((flags & EXEC_FLAG_EXPLAIN_ONLY) != 0) return;
  PreparePlanState(query->planstate, query->estate);
}

}  // namespace

void InstallExecutorHook() {
  previous_executor_start = ExecutorStart_hook;
  ExecutorStart_hook = ExecutorStartHook;
  CacheRegisterSyscacheCallback(AGGFNOID, InvalidateAggregateCache, 0);
  CacheRegisterSyscacheCallback(PROCOID, InvalidateAggregateCache, 0);
}

}  // namespace dp_pg
