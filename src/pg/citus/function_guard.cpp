// dp_agg on Citus: the guard on Citus's functions (function_guard.h).
#include "function_guard.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

#include "../function_classes.h"
#include "../restriction.h"
#include "catalog.h"
#include "node_role.h"
namespace dp_pg {

namespace {

// --- the guard on Citus's functions ------------------------------------------

// Functions refused to restricted roles by the fmgr hook below.
enum class GuardedFunction : char {
  kNone,
  kCitus,  // Citus's own functions (run_command_on_workers, ...)
  // Citus's functions that Citus's own execution of the coordinator's SELECT
  // calls on a worker (IsCitusWorkerExecutionFunction): the only ones a
  // restricted role's coordinator session on a worker may run.
  kCitusWorkerExecution,
};

// Citus's own plans call these per row or per group (worker_partial_agg and
// coord_combine_agg are plain aggregates with them as support functions).
bool IsCitusAggregateSupport(Oid function) {
  char* name = get_func_name(function);
  if (name == nullptr) return false;
  const bool support = std::strcmp(name, "worker_partial_agg_sfunc") == 0 ||
                       std::strcmp(name, "worker_partial_agg_ffunc") == 0 ||
                       std::strcmp(name, "coord_combine_agg_sfunc") == 0 ||
                       std::strcmp(name, "coord_combine_agg_ffunc") == 0;
  pfree(name);
  return support;
}

// Issue 25, finding 3: a worker used to exempt EVERY Citus function in a
// session that presented the coordinator's certificate. But Citus opens those
// sessions as the analyst's own role and pushes the analyst's SQL down into
// them, so `SELECT citus_version() FROM pub WHERE id = 1` (pub an unprotected
// distributed table) ran citus_version() on a worker, and the same way
// run_command_on_workers, citus_check_connection_to_node, citus_shard_sizes
// and citus_internal.delete_placement_metadata (which deleted a worker's
// placement row). The exempt session now runs only what Citus's own
// execution of a SELECT calls there, found by logging every function the old
// exemption let through while the Citus suite's restricted-analyst queries
// ran (test/citus/run_citus_tests.sh). That log showed none besides the
// support functions of worker_partial_agg (IsCitusAggregateSupport): every
// Citus function it showed came from the attacks of the suite's finding 3
// block. The list holds what Citus's execution of a SELECT sends beyond the
// suite's single statements:
//  * assign_distributed_transaction_id: Citus runs it first in every remote
//    transaction it opens (remote_transaction.c), e.g. for a private query
//    inside BEGIN ... COMMIT;
//  * read_intermediate_result, read_intermediate_results: the query Citus
//    pushes down reads a subplan's (a CTE's or subquery's) result with them
//    (recursive planning); the coordinator refuses them in the analyst's own
//    statement (RefuseRestrictedCitusCalls), and they read only results of
//    the same distributed transaction.
bool IsCitusWorkerExecutionFunction(Oid function) {
  char* name = get_func_name(function);
  if (name == nullptr) return false;
  bool listed = false;
  for (const char* citus : {"assign_distributed_transaction_id", "read_intermediate_result",
                            "read_intermediate_results"})
    listed = listed || std::strcmp(name, citus) == 0;
  pfree(name);
  return listed && get_func_namespace(function) == PG_CATALOG_NAMESPACE;
}

// Issue 25, finding 5: Citus's planner puts these into every query of
// pg_class (shards are hidden from it: citus.override_table_visibility), so
// psql's \dt and BI tools' catalog probes called them and were refused to
// restricted roles on every node. They say whether a relation is one of
// Citus's shards, catalog metadata and no row of any table.
bool IsCitusCatalogVisibility(Oid function) {
  char* name = get_func_name(function);
  if (name == nullptr) return false;
  const bool visibility = std::strcmp(name, "relation_is_a_known_shard") == 0 ||
                          std::strcmp(name, "citus_table_is_visible") == 0;
  pfree(name);
  return visibility && get_func_namespace(function) == PG_CATALOG_NAMESPACE;
}

char ClassifyCitusFunction(Oid function) {
  GuardedFunction guard = GuardedFunction::kNone;
  if (FunctionBelongsToExtension(function, get_extension_oid("citus", true)) &&
      !IsCitusAggregateSupport(function) && !IsCitusCatalogVisibility(function))
    guard = IsCitusWorkerExecutionFunction(function) ? GuardedFunction::kCitusWorkerExecution
                                                     : GuardedFunction::kCitus;
  return static_cast<char>(guard);
}

// Looked up for every fmgr_info (function_classes.h).
FunctionClasses citus_functions{"dp_agg Citus functions", ClassifyCitusFunction, nullptr,
                                InvalidOid, 0};

GuardedFunction GuardOf(Oid function) {
  if (function < FirstNormalObjectId || !IsTransactionState()) return GuardedFunction::kNone;
  return static_cast<GuardedFunction>(FunctionClass(&citus_functions, function));
}

}  // namespace

bool CitusFunctionNeedsGuard(Oid function) { return GuardOf(function) != GuardedFunction::kNone; }

void GuardCitusFunctionCall(Oid function) {
  const GuardedFunction guard = GuardOf(function);
  if (guard == GuardedFunction::kNone || !RestrictedSession()) return;
  // Only the functions Citus's execution calls on a worker, and only in the
  // coordinator's session; anything else a restricted analyst's query pushes
  // down is judged as the analyst, with this guard on (issue 25, finding 3).
  if (guard == GuardedFunction::kCitusWorkerExecution && IsWorkerNode() &&
      IsAuthenticatedCoordinator())
    return;
  char* name = get_func_name(function);
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("dp_agg: restricted roles may not call Citus's function %s",
                  name != nullptr ? name : "?"),
           errdetail("Citus's functions can send commands over the coordinator's connections, "
                     "which the workers trust to ask only for partial states of judged "
                     "queries."),
           errhint("Query distributed tables with dp_agg's private aggregates; an "
                   "administrator runs Citus's functions.")));
}

namespace {

// Citus puts these into queries it plans itself through the planner hook (a
// subquery it plans recursively reads the deeper ones' results with
// read_intermediate_result(s); a task it runs locally is a shard query with
// its wrappers and placeholder), never into the tree of the analyst's
// statement: dp_agg's planner hook runs before Citus's.
bool IsCitusInsertedFunction(Oid function) {
  if (get_func_namespace(function) != PG_CATALOG_NAMESPACE) return false;
  char* name = get_func_name(function);
  if (name == nullptr) return false;
  bool inserted = false;
  for (const char* citus : {"read_intermediate_result", "read_intermediate_results",
                            "worker_partial_agg", "coord_combine_agg", "citus_extradata_container"})
    inserted = inserted || std::strcmp(name, citus) == 0;
  pfree(name);
  return inserted;
}

struct CitusCallSearch {
  bool citus_planning;  // a query Citus plans itself: the functions it inserts pass
  Oid found;
};

bool IsRefusedCitusCall(Oid function, void* context) {
  auto* search = static_cast<CitusCallSearch*>(context);
  const GuardedFunction guard = GuardOf(function);
  if (guard != GuardedFunction::kCitus && guard != GuardedFunction::kCitusWorkerExecution)
    return false;
  if (search->citus_planning && IsCitusInsertedFunction(function)) return false;
  search->found = function;
  return true;
}

// A function test and its context, for FindCall.
struct CallTest {
  check_function_callback test;
  void* context;
};

// Whether `test` holds for a function called anywhere in `node`: every
// level (subqueries, sublinks, CTEs, functions in FROM) and every kind of
// call check_functions_in_node knows (operators, casts, aggregates, window
// functions, I/O coercions).
bool FindCall(Node* node, void* test) {
  if (node == nullptr) return false;
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(FindCall), test,
                             0);
  const auto* call = static_cast<CallTest*>(test);
  if (check_functions_in_node(node, call->test, call->context)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindCall), test);
}

bool QueryCalls(Query* query, check_function_callback test, void* context) {
  CallTest call{test, context};
  return FindCall(reinterpret_cast<Node*>(query), &call);
}

// Built-in functions that run SQL text or read relations through SPI: a view
// or a query given to them can call Citus's functions.
bool RunsSql(Oid function) {
  char* name = get_func_name(function);
  if (name == nullptr) return true;
  // ts_rewrite(tsquery, text) runs its text as a query (third review of
  // issue 25, F2); its other form does not, but is refused alike.
  bool runs = std::strcmp(name, "ts_stat") == 0 || std::strcmp(name, "ts_rewrite") == 0;
  for (const char* prefix :
       {"query_to_xml", "cursor_to_xml", "table_to_xml", "schema_to_xml", "database_to_xml"})
    runs = runs || std::strncmp(name, prefix, std::strlen(prefix)) == 0;
  pfree(name);
  return runs;
}

struct SqlCallSearch {
  Oid dp_agg;
  Oid citus;
  Oid found;
};

bool IsRefusedPrivateCall(Oid function, void* context) {
  auto* search = static_cast<SqlCallSearch*>(context);
  if (function < FirstNormalObjectId) {
    if (!RunsSql(function)) return false;
  } else if (FunctionBelongsToExtension(function, search->dp_agg) ||
             FunctionBelongsToExtension(function, search->citus)) {
    return false;  // Citus's functions are IsRefusedCitusCall's
  }
  search->found = function;
  return true;
}

}  // namespace

// A restricted session's statement that aggregates a distributed table
// privately is charged on the coordinator before Citus sends its fragments;
// a worker decides alone (the guard above) that a Citus function reached
// through SQL the analyst wrote is refused. Such SQL is reachable only
// through a function that runs SQL: a user-defined function (PL/pgSQL, SQL,
// or any other language), or a built-in one that runs a query text or reads
// a view (query_to_xml, table_to_xml, ts_stat, ...). Refused here, before
// anything is charged, so that no worker refusal can come after a charge
// (issue 25, finding 3).
void RefuseSqlRunningCallsInPrivateQuery(Query* query) {
  SqlCallSearch search{get_extension_oid("dp_agg", true), get_extension_oid("citus", true),
                       InvalidOid};
  if (!QueryCalls(query, IsRefusedPrivateCall, &search)) return;
  char* name = get_func_name(search.found);
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("dp_agg: restricted roles' private aggregates over a Citus distributed table "
                  "may not call %s, a function that is not built in or runs SQL",
                  name != nullptr ? name : "?"),
           errdetail("Citus runs the query on the workers after the coordinator charged it, and "
                     "SQL that function runs there could call Citus's functions, which the "
                     "workers refuse to restricted roles: the query is refused before anything "
                     "is charged."),
           errhint("Use built-in functions and dp_agg's in private queries, or compute the "
                   "function's value in the client.")));
}

namespace {

bool IsSqlRunningBuiltin(Oid function, void* context) {
  if (function >= FirstNormalObjectId || !RunsSql(function)) return false;
  *static_cast<Oid*>(context) = function;
  return true;
}

// Third review of issue 25, F1: a built-in that runs SQL text, in any
// restricted query that Citus pushes down (private or not), runs that text
// on a worker inside the coordinator's trusted session, where the functions
// Citus's own execution needs pass the guard: the analyst chose the
// arguments of assign_distributed_transaction_id and read another of its
// transactions' intermediate results. No query of a restricted role on a
// Citus coordinator may call one.
void RefuseSqlRunningBuiltins(Query* query) {
  Oid found = InvalidOid;
  if (!QueryCalls(query, IsSqlRunningBuiltin, &found)) return;
  char* name = get_func_name(found);
  ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                  errmsg("dp_agg: restricted roles may not call %s on a Citus cluster",
                         name != nullptr ? name : "?"),
                  errdetail("It runs SQL text, which Citus can push down to a worker into the "
                            "session it opens with the coordinator's certificate."),
                  errhint("Run the query it would run as a query of its own.")));
}

}  // namespace

void RefuseRestrictedCitusCalls(Query* query, bool citus_planning) {
  if (IsWorkerNode() || !RestrictedSession() || !CitusInstalled()) return;
  RefuseSqlRunningBuiltins(query);
  CitusCallSearch search{citus_planning, InvalidOid};
  if (!QueryCalls(query, IsRefusedCitusCall, &search)) return;
  char* name = get_func_name(search.found);
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("dp_agg: restricted roles may not call Citus's function %s",
                  name != nullptr ? name : "?"),
           errdetail("Citus can push the call down to a worker, into a session it opens with "
                     "the coordinator's certificate, where it would run outside this node's "
                     "guard; the query is refused before it is planned or charged."),
           errhint("Remove the call from the query; an administrator runs Citus's "
                   "functions.")));
}

void RegisterCitusFunctionCacheInvalidation() {
  RegisterFunctionClassesInvalidation(&citus_functions);
}

}  // namespace dp_pg
