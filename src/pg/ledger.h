// The privacy budget ledger: every query that releases differentially
// private values pays for them before the first row is read.
//
// PostgreSQL has no autonomous transactions, and a charge written in the
// analyst's own transaction would be undone by ROLLBACK, a savepoint or an
// exception block while the noisy value had already left. So each charge is
// handed through shared memory to a background worker of the same database,
// which commits it in a transaction of its own with synchronous_commit = on
// and only then answers. The backend computes nothing until that answer
// arrives; if no answer comes, the query fails (fail closed). Charges are
// never refunded. One worker serves a database and applies waiting charges in
// batches, one commit per batch (group commit), each charge in a
// subtransaction of its own so that one failing charge fails only its query.
// The worker never waits for a lock (lock_timeout 10 ms): a charge whose
// budget row another transaction holds is retried later while the others go
// on; a query whose own transaction holds its budget row fails at once
// (55P03), since the worker could only wait for it.
#ifndef DP_AGG_PG_LEDGER_H
#define DP_AGG_PG_LEDGER_H

#include "pg_includes.h"

namespace dp_pg {

// What a query is about to release, summed over its private aggregates.
struct QueryCharge {
  Datum epsilon;  // numeric, exact: every release's epsilon (basic composition)
  Datum delta;  // numeric, exact
  // The same releases in approximate zCDP (query_cost.h), numerics.
  Datum rho;
  Datum zcdp_delta;
  char description[512];  // which aggregates, e.g. "dp_count(eps 0.1); dp_sum(eps 0.5 x 2 sets)"
};

// Shared memory and hooks (from _PG_init, when preloaded).
void InstallLedger();

// Durably charges `charge` to the session user's budget, or raises an ERROR
// (no budget, exhausted, ledger unavailable, hot standby).
void ChargeBudget(const QueryCharge& charge);

// Durably records that the session user was served a stored release
// (release_cache.h): a ledger row of kind 'reused' with epsilon 0, through
// the same writer as charges (so ROLLBACK does not undo it). Raises the
// same ERROR as a charge when the role has no budget at all; an exhausted
// budget does not matter. `description`: the aggregates the release paid
// for.
void RecordReuse(const char* description);

// Entry point of the ledger writer background worker.
extern "C" PGDLLEXPORT void dp_agg_ledger_worker_main(Datum database);

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_H
