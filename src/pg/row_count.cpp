#include "row_count.h"

extern "C" {
#include "catalog/namespace.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
}

#include "refusal.h"

namespace dp_pg {

namespace {

// The transition function's address identifies dp_count(float8), whatever
// schema or name it was given (as aggregate_catalog.cpp identifies the
// others): a function that merely shares the name is left alone.
bool IsRowCountAggregate(Oid aggregate) {
  if (get_func_nargs(aggregate) != 1) return false;
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggregate));
  if (!HeapTupleIsValid(tuple)) return false;
  const Oid transition = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggtransfn;
  ReleaseSysCache(tuple);
  FmgrInfo info;
  fmgr_info(transition, &info);
  return info.fn_addr == dp_count_rows_transfn;
}

// dp_count(anyelement, float8) of the same schema as the one-argument form.
Oid ValueCountAggregate(Oid row_count) {
  const char* schema = get_namespace_name(get_func_namespace(row_count));
  Oid argument_types[2] = {ANYELEMENTOID, FLOAT8OID};
  return LookupFuncName(list_make2(makeString(pstrdup(schema)), makeString(pstrdup("dp_count"))), 2,
                        argument_types, false);
}

void Expand(Aggref* call) {
  if (call->aggdistinct != NIL || call->aggorder != NIL)
    RefuseAt(ERRCODE_INVALID_PARAMETER_VALUE,
             "dp_count(epsilon) counts rows and takes no DISTINCT or ORDER BY",
             "Its one argument is the epsilon, not a value to count.",
             "To count distinct values write dp_count(DISTINCT column, epsilon); to count rows "
             "write dp_count(epsilon).",
             call->location, "dp_count");
  auto* epsilon = static_cast<TargetEntry*>(linitial(call->args));
  if (list_length(call->args) != 1 || epsilon->resjunk)
    RefuseAt(ERRCODE_INVALID_PARAMETER_VALUE, "dp_count(epsilon) takes exactly one argument",
             "Its one argument is the epsilon.", "Write dp_count(epsilon).", call->location,
             "dp_count");
  Node* always = makeBoolConst(true, false);
  TargetEntry* value = makeTargetEntry(reinterpret_cast<Expr*>(always), 1, nullptr, false);
  epsilon->resno = 2;
  call->aggfnoid = ValueCountAggregate(call->aggfnoid);
  call->args = list_make2(value, epsilon);
  call->aggargtypes = list_make2_oid(BOOLOID, FLOAT8OID);
}

bool ExpandWalker(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(ExpandWalker),
                             context, 0);
  if (IsA(node, Aggref)) {
    auto* call = reinterpret_cast<Aggref*>(node);
    // aggargtypes has one entry per declared argument; args also holds the
    // sort keys of an ORDER BY inside the call.
    if (list_length(call->aggargtypes) == 1 && IsRowCountAggregate(call->aggfnoid)) Expand(call);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ExpandWalker), context);
}

}  // namespace

void ExpandRowCounts(Query* query) { ExpandWalker(reinterpret_cast<Node*>(query), nullptr); }

}  // namespace dp_pg

extern "C" {

PG_FUNCTION_INFO_V1(dp_count_rows_transfn);
Datum dp_count_rows_transfn(PG_FUNCTION_ARGS) {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("dp_agg: dp_count(epsilon) ran without dp_agg's planner hook"),
                  errdetail("dp_agg must be loaded (shared_preload_libraries) for dp_count; "
                            "write dp_count(1, epsilon) meanwhile.")));
  PG_RETURN_NULL();
}

}  // extern "C"
