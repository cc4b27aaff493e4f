// A restricted-role rule (restriction.h): restricted roles may not call a
// function of dblink or postgres_fdw, foreign tables of postgres_fdw
// included (its handler is called for every scan of them).
//
// A libpq connection opened by a server process reads outside dp_agg's
// judgement of the analyst's query, and can present the client certificate
// in citus.node_conninfo, whose key that process reads: on a Citus
// coordinator it talks to the workers (and to this node) as the coordinator
// does (review of privacy units on Citus, finding R2; the worker's primary
// defence is that such a connection must send a password, citus/node_role.h).
// Checked when the function is called (the fmgr hooks of hooks.cpp), so a
// call reached through a view, an inlined SQL function, PL/pgSQL or a
// SECURITY DEFINER function is refused too.
#ifndef DP_AGG_PG_REMOTE_CONNECTION_GUARD_H
#define DP_AGG_PG_REMOTE_CONNECTION_GUARD_H

#include "pg_includes.h"

namespace dp_pg {

// needs_fmgr_hook: whether `function` is one of dblink's or postgres_fdw's.
bool RemoteConnectionFunctionNeedsGuard(Oid function);

// fmgr_hook, when the function starts: ERROR 42501 for a restricted session.
void GuardRemoteConnectionCall(Oid function);

// Forgets the classification of functions when pg_proc changes (from
// _PG_init).
void RegisterRemoteConnectionCacheInvalidation();

}  // namespace dp_pg

#endif  // DP_AGG_PG_REMOTE_CONNECTION_GUARD_H
