// The ledger's queue in shared memory (ledger.h), shared by the requester
// side (ledger_charge.cpp: a backend queues its charge and waits), the
// writer side (ledger_writer.cpp: a pool writer applies and answers) and
// the pool itself (ledger.cpp: shared memory, registration, waking). Internal
// to those files: nothing else includes it.
#ifndef DP_AGG_PG_LEDGER_QUEUE_H
#define DP_AGG_PG_LEDGER_QUEUE_H

#include <cstddef>
#include <cstdint>

#include "pg_includes.h"

extern "C" {
#include "storage/lwlock.h"
}

namespace dp_pg {
namespace ledger_queue {

// Room for any charge as plain decimal text: the smallest delta's exact
// value (a double with a 24-bit mantissa, down to 2^-1074) has at most 1074
// digits after the point, and the sums of a query's charges no more.
constexpr int kNumberText = 1152;
// The most pool writers (dp_agg.ledger_writers' maximum, settings.cpp).
constexpr int kMaxLedgerWriters = 64;

enum RequestState : std::uint32_t { kFree = 0, kPending = 1, kInProgress = 2, kDone = 3 };
enum ChargeOutcome : std::int32_t {
  kCharged = 0,
  kNoBudget = 1,
  kExhausted = 2,
  kFailed = 3,
  // No budget in this cluster, but one restored from another cluster under
  // the role's name waits to be re-attached (dp_agg.reattach_budgets).
  kOrphaned = 4,
};

struct ChargeRequest {
  std::uint32_t state;
  Oid database;
  int requester_procno;
  // Queue order over all databases: a writer that is free takes the database
  // whose oldest waiting request is the oldest.
  std::uint64_t sequence;
  // The writer that took the request (kInProgress): only that writer may
  // answer it or, when it exits, hand it back to the queue. An exiting writer
  // that requeued another writer's requests let a successor of the
  // requester's slot be answered with the old request's outcome.
  pid_t writer_pid;
  std::int32_t outcome;
  // Set by the writer when the budget row (or table) was locked by another
  // transaction: the request is tried again at retry_at, others go on.
  std::int32_t attempts;
  TimestampTz retry_at;
  std::int64_t query_id;
  // A reuse of a stored release (release_cache.h): recorded as kind
  // 'reused' with epsilon 0 by dp_agg.apply_reuse, admitted whenever the
  // role has a budget at all.
  bool reuse;
  Oid role_oid;  // the session user: budgets follow the role, not its name
  char role_name[NAMEDATALEN];
  char current_user_name[NAMEDATALEN];
  char epsilon[kNumberText];
  char delta[kNumberText];
  // The same charge in approximate zCDP (query_cost.h).
  char rho[kNumberText];
  char zcdp_delta[kNumberText];
  char aggregates[512];
  char query_text[1024];
  // Filled in by the worker: the budget after (or, if refused, without) the charge.
  char epsilon_total[kNumberText];
  char epsilon_spent[kNumberText];
  char delta_total[kNumberText];
  char delta_spent[kNumberText];
  char budget_kind[16];  // 'epsilon_delta' or 'zcdp' (0.2.0)
  char rho_total[kNumberText];  // zcdp budgets only
  char rho_spent[kNumberText];
  char zcdp_delta_total[kNumberText];  // zcdp budgets only
  char zcdp_delta_spent[kNumberText];
  char message[256];
};

// One writer of the pool (ledger.h). A writer starts unconnected, claims a
// database that has waiting requests (database), connects to it
// (connected) and serves it until it leaves; then it exits and the
// postmaster starts it again, unconnected.
struct LedgerWriter {
  pid_t pid;  // 0 while the writer is not running (between exit and restart)
  int procno;  // -1 likewise
  Oid database;  // the database it claimed, InvalidOid while it waits for one
  bool connected;
};

struct LedgerShared {
  LWLock* lock;
  int num_requests;
  std::uint64_t next_sequence;
  LedgerWriter writers[kMaxLedgerWriters];
  ChargeRequest requests[FLEXIBLE_ARRAY_MEMBER];
};

// The queue and the writers' slots, in shared memory (ledger.cpp).
extern LedgerShared* ledger;

// How many pool writers the postmaster registered (InstallLedger): fewer
// than dp_agg.ledger_writers when max_worker_processes left no room; 0 means
// no charge can be recorded. Set in the postmaster, inherited by every child.
extern int registered_writers;

void CopyText(char* destination, std::size_t size, const char* source);

// Copies as much of `source` as fits, cut at a character boundary of the
// database encoding (never inside a multibyte character).
void CopyClipped(char* destination, std::size_t size, const char* source);

// `text` as a text datum, cut before its first byte that is not valid in the
// database encoding: the requester clips at a character boundary already, and
// this makes sure the writer can never be refused a ledger row for it.
Datum ValidTextDatum(const char* text);

void WakeProc(int procno);

// The writer that claimed `database`, or nullptr. Caller holds the lock.
LedgerWriter* WriterOf(Oid database);

// A running writer that waits, unconnected, for a database, or nullptr.
// Caller holds the lock.
LedgerWriter* FreeWriter();

// Wakes the writer that serves `database`, or else a free writer to claim
// it. When every writer serves another database, nobody is woken: the
// request waits for the first of them to leave its database (after a
// bounded number of batches when others wait, ledger.h). The lock makes
// this exact against a writer that leaves: either it sees the request
// before it leaves, or this sees it gone and wakes another.
void WakeWriterFor(Oid database);

// The database, other than `except`, whose oldest waiting request is the
// oldest among the databases no writer has claimed; InvalidOid if none.
// Caller holds the lock.
Oid OldestUnservedDatabase(Oid except);

// Gives up a request that no writer has taken: nothing of it was applied (a
// kPending request is not in any writer's transaction, or was requeued by an
// exiting writer, possibly after its commit: then it is charged once), and
// its query fails without computing anything, so nothing is released for it.
// Caller holds the lock.
void WithdrawIfPending(ChargeRequest* request);

}  // namespace ledger_queue
}  // namespace dp_pg

#endif  // DP_AGG_PG_LEDGER_QUEUE_H
