// dp_agg on Citus: Citus's functions, refused to restricted roles.
#ifndef DP_AGG_PG_CITUS_FUNCTION_GUARD_H
#define DP_AGG_PG_CITUS_FUNCTION_GUARD_H

#include "../pg_includes.h"

namespace dp_pg {

// Restricted sessions may execute no function of extension citus except the
// support functions of worker_partial_agg and coord_combine_agg, which
// Citus's own plans run; on a worker, the authenticated coordinator's
// sessions may also run the few Citus functions that Citus's own execution
// of a SELECT calls there (an explicit list, function_guard.cpp), and nothing
// else: Citus opens those sessions as the analyst and pushes the analyst's
// SQL down into them (issue 25, finding 3). Citus's run_command_on_workers, master_run_on_worker
// and the like send any SQL text over the coordinator's connections, which
// carry the certificate the workers trust: a restricted role could have a
// worker compute an exact partial state of a hand-written fragment with them.
// Checked when the function is called (an fmgr hook), so a call reached
// through a view, an inlined SQL function, PL/pgSQL or a SECURITY DEFINER
// function is refused too. The fmgr hooks of hooks.cpp ask
// CitusFunctionNeedsGuard (needs_fmgr_hook) and call GuardCitusFunctionCall
// when such a function starts (ERROR 42501 when it is refused).
bool CitusFunctionNeedsGuard(Oid function);
void GuardCitusFunctionCall(Oid function);

// Forgets the guard's classification of functions when pg_proc changes
// (from _PG_init).
void RegisterCitusFunctionCacheInvalidation();

// Planner hook, on the coordinator, for a restricted session's query before
// it is judged or planned: refuses (ERROR 42501) a call of any function of
// extension citus at any level of the query (subqueries, sublinks, CTEs,
// functions in FROM, operators and casts included). Citus pushes the
// analyst's SQL down to the workers in sessions it opens as the analyst with
// the coordinator's certificate, so a Citus function in it would run on a
// worker (issue 25, finding 3); refused here before anything is charged, and
// the worker refuses it again (GuardCitusFunctionCall). When
// `citus_planning` (a query planned inside another planning, or while a
// query runs: Citus's recursive planning and local execution, but also
// PL/pgSQL, EXPLAIN and EXECUTE), the functions Citus itself puts into the
// queries it plans pass: read_intermediate_result(s), worker_partial_agg,
// coord_combine_agg and citus_extradata_container.
void RefuseRestrictedCitusCalls(Query* query, bool citus_planning);

// A restricted session's statement that aggregates a distributed table
// privately may call only built-in functions that run no SQL and the
// functions of dp_agg and citus (ERROR 42501 otherwise, before anything is
// charged; PrepareDistributedQuery).
void RefuseSqlRunningCallsInPrivateQuery(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_FUNCTION_GUARD_H
