// Why: Citus sends each shard's part of a private aggregate as
//   SELECT worker_partial_agg('dp_sum(...)'::regprocedure, ROW(v, 0, 500, 1.0))
//   FROM t_102008 ...
// and worker_partial_agg_sfunc (Citus, aggregate_utils.c) looks the inner
// aggregate up in the syscache and runs fmgr_info on its transition function
// for every row; with more than one argument the executor also forms a ROW
// per row that the wrapper deforms again. That costs 4-5 times the built-in
// sum per row (BENCHMARKS.md), and a private aggregate over a distributed
// table 2-3 times the built-in one. worker_partial_agg's final function
// prints the transition state with its type's output function.
//
// PostgreSQL's own partial aggregation (the partial step of a parallel plan:
// AGGSPLIT_INITIAL_SERIAL, nodeAgg.c) computes the same transition state,
// with the same transition function called directly per row, and outputs it
// unchanged when the transition type is not internal (only internal states
// are serialised). So the wrapper's call is replaced by the private
// aggregate's own partial step whose state is printed by an I/O conversion
// to cstring, the type worker_partial_agg returns: the coordinator receives
// the same text it received from the wrapper and merges it exactly as
// before, into the state it prepared and charged (citus/sites.cpp). Nothing
// changes for the coordinator, the charge or the noise, and the worker sends
// the coordinator nothing it did not send before (an exact partial state of
// the fragment, over the same authenticated connection).
//
// Two details differ from the wrapper, neither observable beyond the
// coordinator's merge:
//  * the initial state is the one the executor hook prepares for the call
//    site (the parameters checked and written in, call_sites.cpp), as on
//    one node; the wrapper starts from the aggregate's INITCOND and takes
//    the prepared state at its first row. A shard whose rows are all
//    skipped (none, or all NULL) therefore sends the prepared empty state
//    instead of the INITCOND's text; the coordinator's merge adds nothing
//    for either.
//  * the executor hook recognises the partial step (IsDirectShardPartial)
//    by its place, the top of the plan, where PostgreSQL never puts a
//    partial Agg node itself, and requires the coordinator's certificate
//    again at every execution, as it does for the wrapper.
#include "shard_partials.h"

#include "citus/node_role.h"
#include "citus/wrappers.h"
#include "settings.h"

namespace dp_pg {

namespace {

// The transition type of aggregate `aggregate`, or InvalidOid.
Oid TransitionType(Oid aggregate) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggregate));
  if (!HeapTupleIsValid(tuple)) return InvalidOid;
  const Oid type = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggtranstype;
  ReleaseSysCache(tuple);
  return type;
}

// The partial step of the private aggregate inside wrapper call `outer`,
// printed as worker_partial_agg prints it; nullptr when `outer` is not a
// wrapper around a private aggregate or its state cannot be output as is.
Expr* DirectPartialStep(Aggref* outer) {
  if (outer->aggtype != CSTRINGOID) return nullptr;
  Aggref* call = WorkerPartialInnerCall(outer);
  if (call == nullptr) return nullptr;
  const Oid state_type = TransitionType(call->aggfnoid);
  if (!OidIsValid(state_type) || state_type == INTERNALOID || IsPolymorphicType(state_type))
    return nullptr;
  call->aggsplit = AGGSPLIT_INITIAL_SERIAL;
  call->aggtype = state_type;  // a partial step outputs its state (mark_partial_aggref)
  call->aggtranstype = state_type;
  // An I/O conversion, like printing the column: it runs the state type's
  // output function without an EXECUTE check, as worker_partial_agg's final
  // function does (PUBLIC has no EXECUTE on dp_agg.aggregate_state_out).
  CoerceViaIO* print = makeNode(CoerceViaIO);
  print->arg = reinterpret_cast<Expr*>(call);
  print->resulttype = CSTRINGOID;
  print->resultcollid = InvalidOid;
  print->coerceformat = COERCE_EXPLICIT_CAST;
  print->location = -1;
  return reinterpret_cast<Expr*>(print);
}

}  // namespace

void RunShardPartialsDirectly(PlannedStmt* statement) {
  if (!DirectShardPartialsEnabled()) return;
  // Test fault distributed_subquery_unseen (citus/planner.cpp,
  // ReadsDistributedTable) replays a coordinator bug found while every shard
  // still ran Citus's wrapper, whose per-row type check made it a
  // data-dependent error; the direct step has no such check and would hide
  // it. With the fault set on the workers too, they keep the wrapper.
  if (TestFaultIs(TestFault::kDistributedSubqueryUnseen)) return;
  Plan* top = statement->planTree;
  if (top == nullptr || !IsA(top, Agg) || top->qual != NIL) return;
  Agg* aggregation = reinterpret_cast<Agg*>(top);
  // One Agg node runs all its aggregates in one mode: all or nothing.
  if (aggregation->aggsplit != AGGSPLIT_SIMPLE || aggregation->groupingSets != NIL) return;
  List* steps = NIL;  // per output column: its partial step, or nullptr (a group key)
  bool any = false;
  ListCell* cell;
  foreach (cell, top->targetlist) {
    Node* expression = reinterpret_cast<Node*>(static_cast<TargetEntry*>(lfirst(cell))->expr);
    Expr* step = nullptr;
    if (expression != nullptr && IsA(expression, Aggref)) {
      step = DirectPartialStep(reinterpret_cast<Aggref*>(expression));
      if (step == nullptr) return;
      any = true;
    } else if (contain_agg_clause(expression)) {
      return;
    }
    steps = lappend(steps, step);
  }
  if (!any) return;
  ListCell* step_cell;
  forboth(cell, top->targetlist, step_cell, steps) {
    if (lfirst(step_cell) != nullptr)
      static_cast<TargetEntry*>(lfirst(cell))->expr = static_cast<Expr*>(lfirst(step_cell));
  }
  aggregation->aggsplit = AGGSPLIT_INITIAL_SERIAL;
}

}  // namespace dp_pg
