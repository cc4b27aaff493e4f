// The privacy budget ledger: every query that releases differentially
// private values pays for them before the first row is read.
//
// PostgreSQL has no autonomous transactions, and a charge written in the
// analyst's own transaction would be undone by ROLLBACK, a savepoint or an
// exception block while the noisy value had already left. So each charge is
// handed through shared memory to a ledger writer, a background worker
// connected to the same database, which commits it in a transaction of its
// own with synchronous_commit = on and only then answers. The backend
// computes nothing until that answer arrives; if no answer comes, the query
// fails (fail closed). Charges are never refunded. A writer applies the waiting charges of its
// database in batches, one commit per batch (group commit), each charge in a subtransaction of its
// own so that one failing charge fails only its query. The worker never waits for a lock
// (lock_timeout 10 ms): a charge whose budget row another transaction holds is retried later while
// the others go on; a query whose own transaction holds its budget row fails at once (55P03), since
// the worker could only wait for it.
//
// The writers are a fixed pool (dp_agg.ledger_writers, default 2) of static
// background workers registered by _PG_init when the library is preloaded.
// A static worker owns its worker slot for the server's life, so nothing
// that starts workers on demand (parallel queries above all: 4 sessions of
// ordinary parallel counts took every slot at the defaults) can keep a
// charge from being recorded. Until issue 28 each database got a writer
// started on demand (RegisterDynamicBackgroundWorker), which competed for
// those slots and failed every private query of the cluster when it lost;
// and it cost a slot per database that ran private queries at the same time.
// A pool writer is bound to no database: it waits, unconnected, until some
// database has waiting charges that no writer serves, claims the one whose
// oldest charge is the oldest, connects to it and serves it. It leaves the
// database after ~1 s without charges (so that it never holds a database
// open for long: DROP DATABASE waits up to 5 s for its sessions), or at
// once when it is idle and another database waits with no writer free, or
// after kFairBatches batches when another database waits: by exiting with
// code 1, upon which the postmaster starts it again at once, unconnected
// (PostgreSQL cannot disconnect a process from its database; a static
// worker that exits with 1 keeps its slot, one that exits with 0 would be
// unregistered and lose it). With more busy databases than writers, charges
// wait their turn; a query still fails closed after dp_agg.charge_timeout.
// Alternatives considered: a launcher that starts writers on demand, as
// autovacuum's does, would start them in dynamic slots (autovacuum has its
// own reserved slots, an extension cannot), so parallel queries could still
// take them; one permanent writer per database would cost a slot per
// database whether used or not, and would keep every database open.
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

// The pool of writers (from _PG_init, when preloaded).
void InstallLedger();

// The ledger's shared memory: requested and attached from the
// shmem_request and shmem_startup hooks (hooks.cpp).
void RequestLedgerSharedMemory();
void StartLedgerSharedMemory();

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

// Entry point of a pool writer (bgw_main_arg: its index in the pool).
extern "C" PGDLLEXPORT void dp_agg_ledger_writer_main(Datum index);

}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_H
