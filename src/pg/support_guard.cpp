// Who may run dp_agg's support functions (see support_guard.h).
#include "support_guard.h"

extern "C" {
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "nodes/parsenodes.h"
}

#include "aggregate_catalog.h"
#include "citus/adapter.h"

namespace dp_pg {

namespace {

// The options of CREATE AGGREGATE that name a function (both syntaxes; see
// DefineAggregate in src/backend/commands/aggregatecmds.c).
bool NamesSupportFunction(const char* option) {
  static const char* const kOptions[] = {"sfunc",       "sfunc1",     "finalfunc",
                                         "combinefunc", "serialfunc", "deserialfunc",
                                         "msfunc",      "minvfunc",   "mfinalfunc"};
  for (const char* name : kOptions)
    if (pg_strcasecmp(option, name) == 0) return true;
  return false;
}

// Whether some function that `names` may resolve to, with any argument list,
// is one of dp_agg's. Deliberately wider than PostgreSQL's own resolution
// (which also matches argument types): a name that could mean dp_agg's
// function is refused.
bool MayNameDpAggFunction(List* names, Oid extension) {
  FuncCandidateList candidates = FuncnameGetCandidates(names, -1, NIL, false, false, false, true);
  for (; candidates != nullptr; candidates = candidates->next)
    if (getExtensionOfObject(ProcedureRelationId, candidates->oid) == extension) return true;
  return false;
}

[[noreturn]] void RefuseForeignUse(const char* what, const char* detail) {
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), errmsg("%s", what), errdetail("%s", detail),
           errhint("Use dp_agg's own aggregates (dp_count, dp_sum, dp_avg, dp_median, ...).")));
  pg_unreachable();
}

}  // namespace

void RefuseAggregateOverSupportFunctions(Node* parse_tree) {
  if (parse_tree == nullptr || !IsA(parse_tree, DefineStmt)) return;
  const auto* define = reinterpret_cast<DefineStmt*>(parse_tree);
  if (define->kind != OBJECT_AGGREGATE) return;
  if (creating_extension) return;  // dp_agg's own install and upgrade scripts
  const Oid extension = get_extension_oid("dp_agg", true);
  if (!OidIsValid(extension)) return;
  ListCell* cell;
  foreach (cell, define->definition) {
    auto* option = static_cast<DefElem*>(lfirst(cell));
    if (option->defname == nullptr || !NamesSupportFunction(option->defname)) continue;
    if (option->arg == nullptr) continue;  // PostgreSQL reports the missing value itself
    if (MayNameDpAggFunction(defGetQualifiedName(option), extension))
      RefuseForeignUse("an aggregate cannot be built on dp_agg's support functions",
                       "Their states hold exact sums and counts; dp_agg runs them only for its own "
                       "aggregates, which add the noise and charge the budget.");
  }
}

void RefuseForeignAggregate(Oid aggregate) {
  if (!LookupAggregate(aggregate)->foreign_support) return;
  char* name = get_func_name(aggregate);
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("aggregate %s is built on dp_agg's support functions but is not one of "
                         "dp_agg's aggregates",
                         name != nullptr ? name : "?"),
                  errdetail("dp_agg runs its support functions only for its own aggregates, whose "
                            "final functions add the noise; the query is refused before anything "
                            "is charged."),
                  errhint("Use dp_agg's own aggregates (dp_count, dp_sum, dp_avg, dp_median, "
                          "...); a superuser may drop this aggregate.")));
}

void RequireOwnAggregateCall(FunctionCallInfo fcinfo, const char* function) {
  Aggref* aggref = AggGetAggref(fcinfo);
  if (aggref != nullptr) {
    if (LookupAggregate(aggref->aggfnoid)->member) return;
    if (IsCitusWrapperCall(fcinfo) && CitusSiteIsPrepared(fcinfo)) return;
  }
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("%s runs only for dp_agg's own aggregates", function),
                  errdetail("This call belongs to an aggregate that dp_agg did not define or did "
                            "not prepare for this query."),
                  errhint("Use dp_agg's own aggregates (dp_count, dp_sum, dp_avg, dp_median, "
                          "...).")));
}

void RequirePreparedState(std::uint8_t origin) {
  if (origin == kStatePrepared) return;
  if (origin == kStateUninitialized)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("dp_agg aggregate parameters were not prepared by the executor hook"),
                    errhint("Add dp_agg to shared_preload_libraries in postgresql.conf and restart "
                            "the server.")));
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("dp_agg accumulates and releases only states it prepared for the query"),
                  errdetail("This state was read from text (an initial value, a cast or a partial "
                            "state); its parameters were never checked or charged.")));
}

}  // namespace dp_pg
