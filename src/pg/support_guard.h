// Who may run dp_agg's support functions (transition, combine and final
// functions of the private aggregates): see README, "Scaling out with Citus",
// "Who may query".
//
// Citus checks EXECUTE on an aggregate's support functions for the querying
// role on every node, so PUBLIC holds EXECUTE on them. That privilege is
// harmless because of where the functions run, not because of who calls them:
//  1. only inside an aggregate (AggCheckCallContext): a direct call, or a call
//     from a SQL or PL function, operator or cast, has no aggregate context
//     (RequireAggregateContext, aggregate_state.h);
//  2. only for dp_agg's own aggregates (members of the extension) or for a
//     Citus wrapper site dp_agg's executor hook prepared for the running
//     query: an aggregate someone else builds on them is refused when it is
//     created (RefuseAggregateOverSupportFunctions) and, were it ever created
//     (by a superuser, or before this check), when a query using it starts
//     (RefuseForeignAggregate, before anything is charged) and in the
//     combine and final functions themselves (RequireOwnAggregateCall);
//  3. transition and final functions accept only a state the executor hook
//     prepared (StateOrigin::kPrepared): a state typed as text (INITCOND,
//     a cast, a partial shipped by Citus) never accumulates rows and is never
//     released; Citus's partial states are only merged into the state the
//     coordinator prepared and charged.
#ifndef DP_AGG_PG_SUPPORT_GUARD_H
#define DP_AGG_PG_SUPPORT_GUARD_H

#include <cstdint>

#include "pg_includes.h"

namespace dp_pg {

// StateHeader::initialized: where a state's parameters came from.
enum StateOrigin : std::uint8_t {
  kStateUninitialized = 0,  // no parameters ('uninitialized', agginitcond)
  kStatePrepared = 1,  // written by the executor hook of a process running this query
  kStateFromText = 2,  // parsed from text: a Citus partial state, or typed by anyone
};

// Utility hook: CREATE AGGREGATE naming one of dp_agg's functions as a
// support function (any of SFUNC, FINALFUNC, COMBINEFUNC, SERIALFUNC,
// DESERIALFUNC, MSFUNC, MINVFUNC, MFINALFUNC; any role; outside dp_agg's own
// install and upgrade scripts) is refused with 42501.
void RefuseAggregateOverSupportFunctions(Node* parse_tree);

// Executor hook: ERROR 42501 when pg_proc OID `aggregate` is an aggregate
// built on dp_agg's support functions that is not dp_agg's own.
void RefuseForeignAggregate(Oid aggregate);

// Inside a combine or final function: ERROR 42501 unless its aggregate call
// is one of dp_agg's own aggregates or a prepared Citus wrapper site.
void RequireOwnAggregateCall(FunctionCallInfo fcinfo, const char* function);

// Inside a transition or final function: ERROR unless the state was prepared
// by the executor hook (0: library not preloaded; 2: a state typed as text).
void RequirePreparedState(std::uint8_t origin);

}  // namespace dp_pg

#endif  // DP_AGG_PG_SUPPORT_GUARD_H
