// Budget charges: shared-memory request slots, the backend side that waits
// for a durable charge, and the pool of ledger writers (ledger.h).
#include "ledger.h"

#include <cerrno>
#include <csignal>
#include <cstring>

#include "ledger_chain.h"
#include "settings.h"
#include "spend_alert.h"
#include "sqlstates.h"

extern "C" {
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/parallel.h"
#include "access/xlog.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "parser/parse_func.h"
#include "mb/pg_wchar.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/rel.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

#include <algorithm>

namespace dp_pg {

namespace {

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

LedgerShared* ledger = nullptr;

// How many pool writers the postmaster registered (InstallLedger): fewer
// than dp_agg.ledger_writers when max_worker_processes left no room; 0 means
// no charge can be recorded. Set in the postmaster, inherited by every child.
int registered_writers = 0;

int RequestSlotCount() { return MaxBackends; }

Size LedgerSize() {
  return add_size(offsetof(LedgerShared, requests),
                  mul_size(RequestSlotCount(), sizeof(ChargeRequest)));
}

void LedgerShmemRequest() {
  RequestAddinShmemSpace(LedgerSize());
  RequestNamedLWLockTranche("dp_agg_ledger", 1);
}

void LedgerShmemStartup() {
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found = false;
  ledger = static_cast<LedgerShared*>(ShmemInitStruct("dp_agg ledger", LedgerSize(), &found));
  if (!found) {
    std::memset(ledger, 0, LedgerSize());
    ledger->lock = &(GetNamedLWLockTranche("dp_agg_ledger"))->lock;
    ledger->num_requests = RequestSlotCount();
    for (LedgerWriter& writer : ledger->writers) {
      writer.procno = -1;
      writer.database = InvalidOid;
    }
  }
  LWLockRelease(AddinShmemInitLock);
}

void CopyText(char* destination, std::size_t size, const char* source) {
  strlcpy(destination, source != nullptr ? source : "", size);
}

// Copies as much of `source` as fits, cut at a character boundary of the
// database encoding (never inside a multibyte character).
void CopyClipped(char* destination, std::size_t size, const char* source) {
  if (source == nullptr) source = "";
  const int length = static_cast<int>(strnlen(source, size));
  const int clipped = pg_mbcliplen(source, length, static_cast<int>(size) - 1);
  std::memcpy(destination, source, clipped);
  destination[clipped] = '\0';
}

void WakeProc(int procno) {
  if (procno >= 0) SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

// The writer that claimed `database`, or nullptr. Caller holds the lock.
LedgerWriter* WriterOf(Oid database) {
  for (int i = 0; i < registered_writers; ++i) {
    LedgerWriter* writer = &ledger->writers[i];
    if (writer->pid != 0 && writer->database == database) return writer;
  }
  return nullptr;
}

// A running writer that waits, unconnected, for a database, or nullptr.
// Caller holds the lock.
LedgerWriter* FreeWriter() {
  for (int i = 0; i < registered_writers; ++i) {
    LedgerWriter* writer = &ledger->writers[i];
    if (writer->pid != 0 && writer->procno >= 0 && writer->database == InvalidOid) return writer;
  }
  return nullptr;
}

// Wakes the writer that serves `database`, or else a free writer to claim
// it. When every writer serves another database, nobody is woken: the
// request waits for the first of them to leave its database (after a
// bounded number of batches when others wait, ledger.h). The lock makes
// this exact against a writer that leaves: either it sees the request
// before it leaves, or this sees it gone and wakes another.
void WakeWriterFor(Oid database) {
  LWLockAcquire(ledger->lock, LW_SHARED);
  LedgerWriter* writer = WriterOf(database);
  if (writer == nullptr) writer = FreeWriter();
  const int procno = writer != nullptr ? writer->procno : -1;
  LWLockRelease(ledger->lock);
  WakeProc(procno);
}

// The database, other than `except`, whose oldest waiting request is the
// oldest among the databases no writer has claimed; InvalidOid if none.
// Caller holds the lock.
Oid OldestUnservedDatabase(Oid except) {
  Oid oldest = InvalidOid;
  std::uint64_t oldest_sequence = 0;
  for (int i = 0; i < ledger->num_requests; ++i) {
    const ChargeRequest& request = ledger->requests[i];
    if (request.state != kPending || request.database == except) continue;
    if (OidIsValid(oldest) && request.sequence >= oldest_sequence) continue;
    if (WriterOf(request.database) != nullptr) continue;
    oldest = request.database;
    oldest_sequence = request.sequence;
  }
  return oldest;
}

// Gives up a request that no writer has taken: nothing of it was applied (a
// kPending request is not in any writer's transaction, or was requeued by an
// exiting writer, possibly after its commit: then it is charged once), and
// its query fails without computing anything, so nothing is released for it.
// Caller holds the lock.
void WithdrawIfPending(ChargeRequest* request) {
  if (request->state == kPending) request->state = kFree;
}

// This writer's index in ledger->writers (its bgw_main_arg).
int my_writer = -1;

// A writer that exits hands its unfinished requests back to the queue, so
// another writer applies them. If it had already committed them, they are
// charged twice: an overcharge, never a refund. Only its own requests:
// another writer may be applying others. A writer that claimed a database
// and could not connect to it (dropped since its request was queued, or a
// failure while connecting) answers that database's waiting requests with
// a failure: no writer could serve them, and the next one would fail the
// same way, again and again.
void OnWriterExit(int, Datum) {
  if (ledger == nullptr || my_writer < 0) return;
  LedgerWriter* writer = &ledger->writers[my_writer];
  int wake[64];
  int num_wake = 0;
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  const bool failed_to_connect = OidIsValid(writer->database) && !writer->connected;
  for (int i = 0; i < ledger->num_requests; ++i) {
    ChargeRequest* request = &ledger->requests[i];
    if (request->state == kInProgress && request->writer_pid == MyProcPid)
      request->state = kPending;
    if (failed_to_connect && request->state == kPending && request->database == writer->database) {
      request->outcome = kFailed;
      CopyText(request->message, sizeof request->message,
               "the ledger writer could not connect to this database");
      request->state = kDone;
      if (num_wake < 64) wake[num_wake++] = request->requester_procno;
    }
  }
  writer->pid = 0;
  writer->procno = -1;
  writer->database = InvalidOid;
  writer->connected = false;
  LWLockRelease(ledger->lock);
  for (int i = 0; i < num_wake; ++i) WakeProc(wake[i]);
}

// A connected writer leaves its database when idle this long, so that it
// never holds a database open for long (DROP DATABASE waits up to 5 s for
// other sessions) and is free for another database.
constexpr int kIdleExitMs = 1000;
// A writer that has applied this many batches in its database leaves it as
// soon as another database waits and no writer is free.
constexpr int kFairBatches = 8;

// Gives up this writer's database: after this, no request is handed to it
// (WakeWriterFor, FreeWriter), and it exits. Caller holds the lock.
void ReleaseDatabase() {
  LedgerWriter* self = &ledger->writers[my_writer];
  self->database = InvalidOid;
  self->procno = -1;
}

// Leaves this writer's database if no request of it waits, under the same
// lock that requesters take, so that a request queued afterwards wakes
// another writer (or this one's successor finds it).
bool LeaveIfIdle() {
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  for (int i = 0; i < ledger->num_requests; ++i) {
    const ChargeRequest& request = ledger->requests[i];
    if (request.state == kPending && request.database == MyDatabaseId) {
      LWLockRelease(ledger->lock);
      return false;
    }
  }
  ReleaseDatabase();
  LWLockRelease(ledger->lock);
  return true;
}

// Leaves this writer's database if another database has waiting requests
// and no writer is free to take them.
bool LeaveIfOthersWait() {
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  const bool others_wait =
      FreeWriter() == nullptr && OidIsValid(OldestUnservedDatabase(MyDatabaseId));
  if (others_wait) ReleaseDatabase();
  LWLockRelease(ledger->lock);
  return others_wait;
}

// Clears what a previous query of this request slot left behind: this
// backend's own query that was cancelled while waiting, or the query of an
// earlier backend with the same BackendId, possibly in another database
// (perhaps one dropped since). A request no writer has taken is withdrawn; a
// request a writer is applying is waited for (that writer answers it, or
// hands it back when it exits, and then it is withdrawn).
//
// This used to wait for any leftover request while waking and starting only
// the writer of the backend's own database: a leftover of another database,
// which arises whenever a query fails while its charge is queued (a writer
// that could not start, a timeout, a cancel), was then never applied, every
// later query of that BackendId timed out in any database, and their wake-ups
// kept their own idle writer from ever exiting.
void ClearLeftover(ChargeRequest* slot) {
  const TimestampTz start = GetCurrentTimestamp();
  for (;;) {
    LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
    const std::uint32_t state = slot->state;
    WithdrawIfPending(slot);
    if (state == kDone) slot->state = kFree;
    LWLockRelease(ledger->lock);
    if (state != kInProgress) return;
    if (TimestampDifferenceMilliseconds(start, GetCurrentTimestamp()) >= charge_timeout_ms)
      ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED),
                      errmsg("timed out waiting for the dp_agg ledger writer to finish an earlier "
                             "privacy charge"),
                      errdetail("No private value was computed and nothing was charged for this "
                                "query.")));
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
  }
}

// Waits until this backend's request `slot` (of this database) is done.
// Interrupts (cancel, terminate) are honoured: the charge may still be
// committed later, which only overcharges.
void WaitForRequest(ChargeRequest* slot) {
  const TimestampTz start = GetCurrentTimestamp();
  for (;;) {
    LWLockAcquire(ledger->lock, LW_SHARED);
    const std::uint32_t state = slot->state;
    LWLockRelease(ledger->lock);
    if (state == kDone || state == kFree) return;
    // Wake the writer of this database, or a free one, in case it missed us.
    WakeWriterFor(MyDatabaseId);
    const long waited_ms = TimestampDifferenceMilliseconds(start, GetCurrentTimestamp());
    if (waited_ms >= charge_timeout_ms) {
      // Not left pending: a writer could apply it after the next query of
      // this slot had queued its own (ClearLeftover).
      LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
      WithdrawIfPending(slot);
      LWLockRelease(ledger->lock);
      ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED),
                      errmsg("timed out waiting for the dp_agg ledger writer to record the "
                             "privacy charge"),
                      errdetail("No private value was computed. The charge may still be "
                                "recorded; it is never refunded.")));
    }
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
  }
}

// The charge statement of 0.2.0 finds the budget by the role's OID and
// passes the charge in both currencies, (epsilon, delta) and zCDP (rho,
// zcdp_delta). The 0.1.0 one (by name, (epsilon, delta) only) is used while
// the database still has dp_agg 0.1.0 installed, i.e. between installing this
// library and ALTER EXTENSION UPDATE; which one exists is looked up for every
// charge, so an upgrade in the middle of a writer's life is followed at once.
const char* kChargeByOidSql =
    "SELECT status, epsilon_total::text, epsilon_spent::text, delta_total::text, "
    "delta_spent::text, budget_kind, rho_total::text, rho_spent::text, "
    "zcdp_delta_total::text, zcdp_delta_spent::text "
    "FROM dp_agg.apply_charge($8::oid, $1::name, $2::name, $3::numeric, "
    "$4::numeric, $5::bigint, $6::text, $7::text, $9::numeric, $10::numeric)";
const char* kChargeByNameSql =
    "SELECT status, epsilon_total::text, epsilon_spent::text, delta_total::text, "
    "delta_spent::text FROM dp_agg.apply_charge($1::name, $2::name, $3::numeric, $4::numeric, "
    "$5::bigint, $6::text, $7::text)";

SPIPlanPtr charge_by_oid_plan = nullptr;
SPIPlanPtr charge_by_name_plan = nullptr;

bool ChargeByOidExists() {
  Oid types[10] = {OIDOID,  NAMEOID, NAMEOID, NUMERICOID, NUMERICOID,
                   INT8OID, TEXTOID, TEXTOID, NUMERICOID, NUMERICOID};
  List* name = list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup("apply_charge")));
  return OidIsValid(LookupFuncName(name, 10, types, true));
}

// `text` as a text datum, cut before its first byte that is not valid in the
// database encoding: the requester clips at a character boundary already, and
// this makes sure the writer can never be refused a ledger row for it.
Datum ValidTextDatum(const char* text) {
  const int length = static_cast<int>(std::strlen(text));
  const int valid = pg_encoding_verifymbstr(GetDatabaseEncoding(), text, length);
  return PointerGetDatum(cstring_to_text_with_len(text, valid));
}

// A reuse of a stored release (release_cache.h): a ledger row of kind
// 'reused', epsilon 0, for a role that has a budget.
const char* kReuseSql =
    "SELECT status FROM dp_agg.apply_reuse($1::oid, $2::name, $3::name, $4::bigint, $5::text, "
    "$6::text)";
SPIPlanPtr reuse_plan = nullptr;

void ApplyReuse(ChargeRequest* request) {
  if (reuse_plan == nullptr) {
    Oid types[6] = {OIDOID, TEXTOID, TEXTOID, INT8OID, TEXTOID, TEXTOID};
    SPIPlanPtr plan = SPI_prepare(kReuseSql, 6, types);
    if (plan == nullptr) elog(ERROR, "dp_agg: could not prepare the reuse statement");
    SPI_keepplan(plan);
    reuse_plan = plan;
  }
  Datum values[6] = {ObjectIdGetDatum(request->role_oid),
                     CStringGetTextDatum(request->role_name),
                     CStringGetTextDatum(request->current_user_name),
                     Int64GetDatum(request->query_id),
                     ValidTextDatum(request->aggregates),
                     ValidTextDatum(request->query_text)};
  char nulls[6] = {' ', ' ', ' ', request->query_id == 0 ? 'n' : ' ', ' ', ' '};
  if (SPI_execute_plan(reuse_plan, values, nulls, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
    elog(ERROR, "dp_agg: the reuse statement returned no row");
  const char* status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
  if (status != nullptr && std::strcmp(status, "reused") == 0) {
    request->outcome = kCharged;
  } else if (status != nullptr && std::strcmp(status, "no_budget") == 0) {
    request->outcome = kNoBudget;
  } else {
    elog(ERROR, "dp_agg: unknown reuse status \"%s\"", status != nullptr ? status : "");
  }
}

void ApplyOne(ChargeRequest* request) {
  if (request->reuse) {
    ApplyReuse(request);
    return;
  }
  const bool by_oid = ChargeByOidExists();
  SPIPlanPtr* cached = by_oid ? &charge_by_oid_plan : &charge_by_name_plan;
  const int num_arguments = by_oid ? 10 : 7;
  if (*cached == nullptr) {
    Oid types[10] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID,
                     TEXTOID, TEXTOID, OIDOID,  TEXTOID, TEXTOID};
    SPIPlanPtr plan =
        SPI_prepare(by_oid ? kChargeByOidSql : kChargeByNameSql, num_arguments, types);
    if (plan == nullptr) elog(ERROR, "dp_agg: could not prepare the charge statement");
    SPI_keepplan(plan);
    *cached = plan;
  }
  Datum values[10] = {
      CStringGetTextDatum(request->role_name), CStringGetTextDatum(request->current_user_name),
      CStringGetTextDatum(request->epsilon),   CStringGetTextDatum(request->delta),
      Int64GetDatum(request->query_id),        ValidTextDatum(request->aggregates),
      ValidTextDatum(request->query_text),     ObjectIdGetDatum(request->role_oid),
      CStringGetTextDatum(request->rho),       CStringGetTextDatum(request->zcdp_delta)};
  char nulls[10] = {' ', ' ', ' ', ' ', request->query_id == 0 ? 'n' : ' ',
                    ' ', ' ', ' ', ' ', ' '};
  if (SPI_execute_plan(*cached, values, nulls, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
    elog(ERROR, "dp_agg: the charge statement returned no row");
  HeapTuple row = SPI_tuptable->vals[0];
  TupleDesc description = SPI_tuptable->tupdesc;
  const char* status = SPI_getvalue(row, description, 1);
  if (status == nullptr) elog(ERROR, "dp_agg: the charge statement returned no status");
  if (std::strcmp(status, "charged") == 0) {
    request->outcome = kCharged;
  } else if (std::strcmp(status, "no_budget") == 0) {
    request->outcome = kNoBudget;
  } else if (std::strcmp(status, "exhausted") == 0) {
    request->outcome = kExhausted;
  } else if (std::strcmp(status, "orphaned") == 0) {
    request->outcome = kOrphaned;
  } else {
    elog(ERROR, "dp_agg: unknown charge status \"%s\"", status);
  }
  char* fields[4] = {request->epsilon_total, request->epsilon_spent, request->delta_total,
                     request->delta_spent};
  for (int i = 0; i < 4; ++i)
    CopyText(fields[i], kNumberText, SPI_getvalue(row, description, i + 2));
  CopyText(request->budget_kind, sizeof request->budget_kind,
           by_oid ? SPI_getvalue(row, description, 6) : "epsilon_delta");
  CopyText(request->rho_total, kNumberText, by_oid ? SPI_getvalue(row, description, 7) : "");
  CopyText(request->rho_spent, kNumberText, by_oid ? SPI_getvalue(row, description, 8) : "");
  CopyText(request->zcdp_delta_total, kNumberText, by_oid ? SPI_getvalue(row, description, 9) : "");
  CopyText(request->zcdp_delta_spent, kNumberText,
           by_oid ? SPI_getvalue(row, description, 10) : "");
}

// Applies one request in a subtransaction of its own, so that its failure
// (an error in the charge statement, a lock that is not available) undoes
// only its own work. Returns false if the request must be tried again later
// because another transaction holds a lock it needs (lock_timeout is short
// in this worker: it never waits for a lock that a waiting backend may hold).
bool ApplyIsolated(ChargeRequest* request) {
  MemoryContext context = CurrentMemoryContext;
  ResourceOwner owner = CurrentResourceOwner;
  volatile bool applied = true;
  BeginInternalSubTransaction(nullptr);
  MemoryContextSwitchTo(context);
  PG_TRY();
  {
    ApplyOne(request);
    ReleaseCurrentSubTransaction();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(context);
    ErrorData* error = CopyErrorData();
    FlushErrorState();
    RollbackAndReleaseCurrentSubTransaction();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
    request->outcome = kFailed;
    if (error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE) {
      applied = false;
    } else {
      CopyText(request->message, sizeof request->message, error->message);
      ereport(LOG, (errmsg("dp_agg ledger writer: could not record the charge of role \"%s\": %s",
                           request->role_name, error->message)));
    }
    FreeErrorData(error);
  }
  PG_END_TRY();
  return applied;
}

// Applies a batch of requests in one transaction: one commit (and WAL flush)
// for all of them, each request in its own subtransaction. Sets deferred[i]
// for the requests to try again later (nothing of them was applied).
void ApplyBatch(int* indexes, int count, bool* deferred) {
  MemoryContext worker_context = CurrentMemoryContext;
  // Roles whose budget row was found locked in this batch: their other
  // requests are deferred without waiting again.
  const char** locked_roles = static_cast<const char**>(palloc0(sizeof(char*) * count));
  int num_locked = 0;
  for (int i = 0; i < count; ++i) deferred[i] = false;
  PG_TRY();
  {
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    SPI_connect();
    PushActiveSnapshot(GetTransactionSnapshot());
    pgstat_report_activity(STATE_RUNNING, "dp_agg: recording privacy charges");
    for (int i = 0; i < count; ++i) {
      ChargeRequest* request = &ledger->requests[indexes[i]];
      const bool role_locked =
          std::any_of(locked_roles, locked_roles + num_locked,
                      [&](const char* role) { return std::strcmp(role, request->role_name) == 0; });
      if (role_locked || !ApplyIsolated(request)) {
        deferred[i] = true;
        if (!role_locked) locked_roles[num_locked++] = request->role_name;
      }
    }
    NoteLedgerHead();
    PopActiveSnapshot();
    SPI_finish();
    CommitTransactionCommand();  // durable: synchronous_commit is on in this worker
    LedgerHeadCommitted();
    pgstat_report_activity(STATE_IDLE, nullptr);
  }
  PG_CATCH();
  {
    // The transaction as a whole failed (e.g. at commit): nothing of it is
    // durable, so no request of it was charged.
    MemoryContextSwitchTo(worker_context);
    ErrorData* error = CopyErrorData();
    FlushErrorState();
    AbortCurrentTransaction();
    ForgetLedgerHead();
    for (int i = 0; i < count; ++i) {
      if (deferred[i]) continue;
      ChargeRequest* request = &ledger->requests[indexes[i]];
      request->outcome = kFailed;
      CopyText(request->message, sizeof request->message, error->message);
    }
    ereport(LOG, (errmsg("dp_agg ledger writer: could not record %d charge(s): %s", count,
                         error->message)));
    FreeErrorData(error);
    pgstat_report_activity(STATE_IDLE, nullptr);
  }
  PG_END_TRY();

  // Deferred requests go back to the queue with a growing delay (10 ms to
  // 250 ms); the others are answered.
  const TimestampTz now = GetCurrentTimestamp();
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  for (int i = 0; i < count; ++i) {
    ChargeRequest* request = &ledger->requests[indexes[i]];
    // Nobody else changes a request this writer holds (OnWorkerExit requeues
    // only its own writer's; requesters withdraw only kPending ones).
    Assert(request->state == kInProgress && request->writer_pid == MyProcPid);
    if (deferred[i]) {
      const int delay_ms = std::min(250, 10 << std::min(request->attempts, 5));
      request->attempts++;
      request->retry_at = TimestampTzPlusMilliseconds(now, delay_ms);
      request->state = kPending;
    } else {
      request->state = kDone;
    }
  }
  LWLockRelease(ledger->lock);
  for (int i = 0; i < count; ++i) {
    if (!deferred[i]) WakeProc(ledger->requests[indexes[i]].requester_procno);
  }
}

// Whether this backend's own open transaction holds a lock that the ledger
// writer would need to charge `role`: a lock on dp_agg.role_budget,
// dp_agg.ledger_entry or dp_agg.ledger_head that conflicts with the
// writer's, the role's budget row changed or locked by this transaction
// (dp_agg.add_budget, set_budget, SELECT ... FOR UPDATE), or the ledger's
// chain head (an administrative entry chained before commit: SET
// CONSTRAINTS ALL IMMEDIATE). The writer would then wait for this backend,
// which waits for the writer.
bool OwnTransactionLocksBudget(const char* role, Oid role_oid) {
  // Table locks first (LOCK TABLE needs no transaction id).
  const Oid schema = get_namespace_oid("dp_agg", true);
  if (!OidIsValid(schema)) return false;
  const Oid budget = get_relname_relid("role_budget", schema);
  const Oid entries = get_relname_relid("ledger_entry", schema);
  const Oid head = get_relname_relid("ledger_head", schema);
  for (const Oid relation : {budget, entries, head}) {
    if (!OidIsValid(relation)) continue;
    LOCKTAG tag;
    SET_LOCKTAG_RELATION(tag, MyDatabaseId, relation);
    // The writer takes RowExclusiveLock; these modes conflict with it.
    for (LOCKMODE mode = ShareLock; mode <= AccessExclusiveLock; ++mode) {
      if (LockHeldByMe(&tag, mode)) return true;
    }
  }
  // Changing or locking a row needs a transaction id: a transaction without
  // one (every read-only analyst query) is done here.
  if (!OidIsValid(budget) || !TransactionIdIsValid(GetTopTransactionIdIfAny())) return false;
  // The chain head, locked until commit by an entry chained in this
  // transaction (ledger_chain.h).
  if (ChainedInThisTransaction()) return true;
  // Another session's table lock: that is not a wait on ourselves, and the
  // writer retries without blocking anyone.
  if (!ConditionalLockRelationOid(budget, AccessShareLock)) return false;
  Relation relation = table_open(budget, NoLock);
  if (relation->rd_rel->relkind != RELKIND_RELATION) {
    table_close(relation, NoLock);
    return false;
  }
  const bool pushed = !ActiveSnapshotSet();
  if (pushed) PushActiveSnapshot(GetTransactionSnapshot());
  // 0.2.0 keys budgets by role OID (column role_oid) and cluster (column
  // system_identifier: a row restored from another cluster is nobody's
  // here); 0.1.0 by name (column 1).
  const AttrNumber oid_column = get_attnum(budget, "role_oid");
  const AttrNumber cluster_column = get_attnum(budget, "system_identifier");
  const int64 cluster = static_cast<int64>(GetSystemIdentifier());
  TableScanDesc scan = table_beginscan(relation, GetActiveSnapshot(), 0, nullptr);
  bool locked = false;
  HeapTuple tuple;
  while (!locked && (tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
    bool is_null = true;
    if (oid_column != InvalidAttrNumber) {
      const Datum owner = heap_getattr(tuple, oid_column, RelationGetDescr(relation), &is_null);
      if (is_null || DatumGetObjectId(owner) != role_oid) continue;
      if (cluster_column != InvalidAttrNumber) {
        const Datum written_in =
            heap_getattr(tuple, cluster_column, RelationGetDescr(relation), &is_null);
        if (is_null || DatumGetInt64(written_in) != cluster) continue;
      }
    } else {
      const Datum name = heap_getattr(tuple, 1, RelationGetDescr(relation), &is_null);
      if (is_null || std::strcmp(NameStr(*DatumGetName(name)), role) != 0) continue;
    }
    const Buffer buffer = reinterpret_cast<HeapScanDesc>(scan)->rs_cbuf;
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    HeapTupleHeader header = tuple->t_data;
    const TransactionId xmin = HeapTupleHeaderGetRawXmin(header);
    const TransactionId xmax = HeapTupleHeaderGetRawXmax(header);
    const uint16 infomask = header->t_infomask;
    LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
    // Inserted or updated by us: the writer cannot see or change it until we commit.
    if (TransactionIdIsCurrentTransactionId(xmin)) locked = true;
    if (!locked && (infomask & HEAP_XMAX_INVALID) == 0 && TransactionIdIsValid(xmax)) {
      if ((infomask & HEAP_XMAX_IS_MULTI) != 0) {
        MultiXactMember* members = nullptr;
        const int n =
            GetMultiXactIdMembers(xmax, &members, false, HEAP_XMAX_IS_LOCKED_ONLY(infomask));
        for (int i = 0; i < n && !locked; ++i)
          locked = TransactionIdIsCurrentTransactionId(members[i].xid);
        if (members != nullptr) pfree(members);
      } else {
        locked = TransactionIdIsCurrentTransactionId(xmax);
      }
    }
  }
  table_endscan(scan);
  if (pushed) PopActiveSnapshot();
  table_close(relation, NoLock);
  return locked;
}

Datum NumericFromText(const char* text) {
  return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

// Whether spent + needed > total, as exact numerics.
bool Exceeds(const char* spent, const char* needed, const char* total) {
  const Datum sum =
      DirectFunctionCall2(numeric_add, NumericFromText(spent), NumericFromText(needed));
  return DatumGetInt32(DirectFunctionCall2(numeric_cmp, sum, NumericFromText(total))) > 0;
}

// Whether the charge does not fit the (epsilon, delta) certificate, or the
// zCDP one (whose totals are empty when it does not bind).
bool EpsilonDeltaRefuses(const ChargeRequest& result) {
  return Exceeds(result.epsilon_spent, result.epsilon, result.epsilon_total) ||
         Exceeds(result.delta_spent, result.delta, result.delta_total);
}

bool ZcdpRefuses(const ChargeRequest& result) {
  return result.rho_total[0] == '\0' || Exceeds(result.rho_spent, result.rho, result.rho_total) ||
         Exceeds(result.zcdp_delta_spent, result.zcdp_delta, result.zcdp_delta_total);
}

// A refusal for lack of delta only: saying "use a smaller epsilon" would
// send the analyst the wrong way.
bool OnlyDeltaIsShort(const ChargeRequest& result) {
  const bool needs_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.delta),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) > 0;
  return needs_delta && !Exceeds(result.epsilon_spent, result.epsilon, result.epsilon_total) &&
         Exceeds(result.delta_spent, result.delta, result.delta_total);
}

// The charge description names dp_agg.group_selection when a restricted
// role's GROUP BY keys pay for partition selection (query_cost.cpp).
[[noreturn]] void RefuseForDelta(const ChargeRequest& result) {
  const bool group_selection = std::strstr(result.aggregates, "group_selection(") != nullptr;
  const bool no_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.delta_total),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) == 0;
  const char* purpose = group_selection ? " for group selection" : "";
  const char* guidance =
      group_selection
          ? "Ask an administrator for a delta budget (dp_agg.add_budget(role, 0, delta)); "
            "group selection's delta is the setting dp_agg.group_selection_delta."
          : "Ask an administrator for a delta budget (dp_agg.add_budget(role, 0, delta)), or "
            "use the epsilon-only form of the aggregate (without delta).";
  if (no_delta)
    ereport(ERROR, (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
                    errmsg("this query needs delta %s%s; the role \"%s\" has no delta budget",
                           result.delta, purpose, result.role_name),
                    errdetail("It needs epsilon %s and delta %s (%s); the role has epsilon %s of "
                              "%s spent and a delta total of 0. %s Nothing was charged or "
                              "released.",
                              result.epsilon, result.delta, result.aggregates, result.epsilon_spent,
                              result.epsilon_total, guidance)));
  ereport(ERROR,
          (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
           errmsg("this query needs delta %s%s; the delta budget of role \"%s\" is exhausted",
                  result.delta, purpose, result.role_name),
           errdetail("It needs epsilon %s and delta %s (%s); the role has spent delta %s of %s "
                     "(epsilon %s of %s). %s Nothing was charged or released.",
                     result.epsilon, result.delta, result.aggregates, result.delta_spent,
                     result.delta_total, result.epsilon_spent, result.epsilon_total, guidance)));
  pg_unreachable();
}

// A refusal by a zCDP budget (dp_agg.set_budget_zcdp): its certificate is
// rho_spent + rho <= rho_total and zcdp_delta_spent + zcdp_delta <=
// zcdp_delta_total. Only group selection needs zCDP delta.
[[noreturn]] void RefuseForZcdp(const ChargeRequest& result) {
  // An (epsilon, delta) budget whose earlier zCDP certificate still binds.
  const char* holder = std::strcmp(result.budget_kind, "zcdp") == 0
                           ? "the role has a zCDP budget with"
                           : "the role's earlier zCDP certificate, binding since its switch of "
                             "budget kind (until dp_agg.reset_spent), has";
  const bool rho_fits = !Exceeds(result.rho_spent, result.rho, result.rho_total);
  const bool needs_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.zcdp_delta),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) > 0;
  const bool no_delta =
      DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericFromText(result.zcdp_delta_total),
                                        DirectFunctionCall1(int4_numeric, Int32GetDatum(0)))) == 0;
  if (rho_fits && needs_delta && no_delta)
    ereport(ERROR, (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
                    errmsg("this query needs delta %s for group selection; the role \"%s\" has no "
                           "delta budget",
                           result.zcdp_delta, result.role_name),
                    errdetail("It needs rho %s and delta %s (%s); %s rho "
                              "%s of %s spent and a delta total of 0. Ask an administrator for a "
                              "delta budget (dp_agg.set_budget_zcdp(role, rho, delta)); group "
                              "selection's delta is the setting dp_agg.group_selection_delta. "
                              "Nothing was charged or released.",
                              result.rho, result.zcdp_delta, result.aggregates, holder,
                              result.rho_spent, result.rho_total)));
  if (rho_fits && needs_delta)
    ereport(ERROR,
            (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
             errmsg("this query needs delta %s for group selection; the delta budget of role "
                    "\"%s\" is exhausted",
                    result.zcdp_delta, result.role_name),
             errdetail("It needs rho %s and delta %s (%s); %s "
                       "delta %s of %s spent (rho %s of %s). Ask an administrator for more "
                       "(dp_agg.set_budget_zcdp(role, rho, delta)). Nothing was charged or "
                       "released.",
                       result.rho, result.zcdp_delta, result.aggregates, holder,
                       result.zcdp_delta_spent, result.zcdp_delta_total, result.rho_spent,
                       result.rho_total)));
  ereport(ERROR,
          (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
           errmsg("privacy budget exhausted for role \"%s\"", result.role_name),
           errdetail("This query needs rho %s and delta %s (%s); %s rho %s "
                     "of %s and delta %s of %s spent. A pure release of epsilon "
                     "costs rho epsilon^2/2, a Gaussian one the rho of its noise. Nothing was "
                     "charged or released.",
                     result.rho, result.zcdp_delta, result.aggregates, holder, result.rho_spent,
                     result.rho_total, result.zcdp_delta_spent, result.zcdp_delta_total),
           errhint("Use a smaller epsilon, or ask an administrator for more budget "
                   "(dp_agg.set_budget_zcdp). Nothing was released.")));
  pg_unreachable();
}

}  // namespace

// Registers the pool of ledger writers with the postmaster (ledger.h): static
// background workers, each owning its worker slot for the server's life, so
// that neither parallel queries nor anything else that starts workers on
// demand can take it. Counts how many were registered: the postmaster
// registers no more than max_worker_processes static workers, other
// extensions' included, and says so only in its log.
static void RegisterLedgerWriters() {
  const int wanted = std::min(ledger_writers, kMaxLedgerWriters);
  for (int i = 0; i < wanted; ++i) {
    BackgroundWorker definition;
    std::memset(&definition, 0, sizeof definition);
    definition.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    definition.bgw_start_time = BgWorkerStart_RecoveryFinished;
    // Restarted at once when it exits with code 1 (a writer leaving its
    // database); exit code 0 would unregister it and give its slot away.
    definition.bgw_restart_time = 0;
    CopyText(definition.bgw_library_name, sizeof definition.bgw_library_name, "dp_agg");
    CopyText(definition.bgw_function_name, sizeof definition.bgw_function_name,
             "dp_agg_ledger_writer_main");
    snprintf(definition.bgw_name, sizeof definition.bgw_name, "dp_agg ledger writer %d", i + 1);
    CopyText(definition.bgw_type, sizeof definition.bgw_type, "dp_agg ledger writer");
    definition.bgw_main_arg = Int32GetDatum(i);
    RegisterBackgroundWorker(&definition);
  }
  registered_writers = 0;
  // (slist_foreach and slist_container check types in C only.)
  for (const slist_node* node = BackgroundWorkerList.head.next; node != nullptr;
       node = node->next) {
    const auto* worker = reinterpret_cast<const RegisteredBgWorker*>(
        reinterpret_cast<const char*>(node) - offsetof(RegisteredBgWorker, rw_lnode));
    if (std::strcmp(worker->rw_worker.bgw_library_name, "dp_agg") == 0 &&
        std::strcmp(worker->rw_worker.bgw_function_name, "dp_agg_ledger_writer_main") == 0)
      ++registered_writers;
  }
  if (registered_writers < wanted)
    ereport(WARNING,
            (errmsg("dp_agg: only %d of dp_agg.ledger_writers = %d ledger writers could be "
                    "registered",
                    registered_writers, wanted),
             errdetail(registered_writers == 0
                           ? "No private query can be charged, so every private query fails."
                           : "Databases wait longer for their turn when more of them run "
                             "private queries at the same time than there are writers."),
             errhint("Raise max_worker_processes (now %d) by %d: the writers and other "
                     "extensions' background workers registered at server start count "
                     "against it.",
                     max_worker_processes, wanted - registered_writers)));
}

void InstallLedger() { RegisterLedgerWriters(); }

void RequestLedgerSharedMemory() { LedgerShmemRequest(); }

void StartLedgerSharedMemory() { LedgerShmemStartup(); }

namespace {

// Hands `charge` (or, `reuse`, the record of a reuse) to the ledger writer
// and waits until it is durable, or raises an ERROR.
void SubmitToLedger(const QueryCharge& charge, bool reuse) {
  if (RecoveryInProgress())
    ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                    errmsg("differentially private queries cannot run during recovery"),
                    errdetail("Every private answer must first be charged to the privacy "
                              "budget, and a hot standby cannot write the ledger."),
                    errhint("Run the query on the primary server.")));
  if (ledger == nullptr || MyBackendId < 1 || MyBackendId > ledger->num_requests)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("the dp_agg ledger is not available in this process")));
  if (registered_writers == 0)
    ereport(ERROR,
            (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
             errmsg("no dp_agg ledger writer runs, so no privacy charge can be recorded"),
             errdetail("max_worker_processes = %d left no room for the ledger writers "
                       "(dp_agg.ledger_writers = %d) at server start. Nothing was charged and no "
                       "private value was computed.",
                       max_worker_processes, ledger_writers),
             errhint("Raise max_worker_processes by dp_agg.ledger_writers and restart the "
                     "server.")));
  const char* role = GetUserNameFromId(GetSessionUserId(), false);
  // Checked first: the writer would wait for this transaction to end, and this
  // backend for the writer. Nothing is queued, charged or computed.
  if (OwnTransactionLocksBudget(role, GetSessionUserId()))
    ereport(ERROR,
            (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
             errmsg("cannot charge the privacy budget of role \"%s\" in a transaction that "
                    "changed or locked it",
                    role),
             errdetail("This transaction changed or locked the role's budget (for example with "
                       "dp_agg.add_budget or dp_agg.set_budget) or the ledger's chain head, and "
                       "the charge is recorded in a separate transaction that would wait for "
                       "this one. Nothing was charged and no private value was computed."),
             errhint("Commit the budget change first, then run the private query in a new "
                     "transaction.")));
  ChargeRequest* slot = &ledger->requests[MyBackendId - 1];
  // A request left behind by a cancelled query of this backend (or of the
  // previous owner of this slot) is withdrawn, or finished first if a writer
  // is applying it.
  ClearLeftover(slot);

  const char* epsilon = DatumGetCString(DirectFunctionCall1(numeric_out, charge.epsilon));
  const char* delta = DatumGetCString(DirectFunctionCall1(numeric_out, charge.delta));
  const Datum parts_datums[2] = {charge.rho, charge.zcdp_delta};
  const char* parts[2];
  bool too_long = std::strlen(epsilon) >= kNumberText || std::strlen(delta) >= kNumberText;
  for (int i = 0; i < 2; ++i) {
    parts[i] = DatumGetCString(DirectFunctionCall1(numeric_out, parts_datums[i]));
    too_long = too_long || std::strlen(parts[i]) >= kNumberText;
  }
  if (too_long)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("privacy charge %s / %s has too many digits", epsilon, delta)));

  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  slot->database = MyDatabaseId;
  slot->requester_procno = MyProc->pgprocno;
  slot->outcome = kFailed;
  slot->attempts = 0;
  slot->retry_at = 0;
  slot->query_id = static_cast<std::int64_t>(pgstat_get_my_query_id());
  slot->reuse = reuse;
  slot->role_oid = GetSessionUserId();
  CopyText(slot->role_name, sizeof slot->role_name, role);
  CopyText(slot->current_user_name, sizeof slot->current_user_name,
           GetUserNameFromId(GetUserId(), false));
  CopyText(slot->epsilon, sizeof slot->epsilon, epsilon);
  CopyText(slot->delta, sizeof slot->delta, delta);
  CopyText(slot->rho, sizeof slot->rho, parts[0]);
  CopyText(slot->zcdp_delta, sizeof slot->zcdp_delta, parts[1]);
  CopyClipped(slot->aggregates, sizeof slot->aggregates, charge.description);
  CopyClipped(slot->query_text, sizeof slot->query_text, debug_query_string);
  slot->message[0] = '\0';
  slot->sequence = ++ledger->next_sequence;
  slot->state = kPending;
  LWLockRelease(ledger->lock);

  WakeWriterFor(MyDatabaseId);
  WaitForRequest(slot);

  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  ChargeRequest result = *slot;
  slot->state = kFree;
  LWLockRelease(ledger->lock);

  switch (result.outcome) {
    case kCharged: {
      const BudgetAfterCharge budget{result.role_name,
                                     result.budget_kind,
                                     result.epsilon,
                                     result.delta,
                                     result.rho,
                                     result.zcdp_delta,
                                     result.epsilon_total,
                                     result.epsilon_spent,
                                     result.delta_total,
                                     result.delta_spent,
                                     result.rho_total,
                                     result.rho_spent,
                                     result.zcdp_delta_total,
                                     result.zcdp_delta_spent};
      if (!reuse) AlertIfBudgetLow(budget);  // a reuse spends nothing
      return;
    }
    case kNoBudget:
      ereport(ERROR, (errcode(ERRCODE_DP_AGG_NO_BUDGET),
                      errmsg("role \"%s\" has no differential privacy budget", result.role_name),
                      errdetail("Every private query is charged to the budget of the session "
                                "user; none was granted to this role."),
                      errhint("An administrator can grant one with dp_agg.set_budget('%s', "
                              "epsilon).",
                              result.role_name)));
      break;
    case kOrphaned:
      // A budget restored from another cluster under the role's name, not
      // re-attached (src/sql/42_budget_restores.sql): set_budget would start
      // a fresh one, forgetting what it spent.
      ereport(ERROR,
              (errcode(ERRCODE_DP_AGG_NO_BUDGET),
               errmsg("role \"%s\" has no differential privacy budget", result.role_name),
               errdetail("A budget recorded for the role name \"%s\" was restored from a dump of "
                         "another cluster, whose role OIDs differ from this one's, and is not "
                         "re-attached to a role yet. Nothing was charged and no private value was "
                         "computed.",
                         result.role_name),
               errhint("An administrator re-attaches restored budgets, with what they spent, to "
                       "the roles of their names: SELECT * FROM dp_agg.reattach_budgets();")));
      break;
    case kExhausted:
      // After a switch of kind with spending, the earlier kind's
      // certificate binds too (README "Switching kinds"): the refusal names
      // the certificate that the charge does not fit.
      if (std::strcmp(result.budget_kind, "zcdp") == 0
              ? ZcdpRefuses(result) || !EpsilonDeltaRefuses(result)
              : !EpsilonDeltaRefuses(result) && result.rho_total[0] != '\0')
        RefuseForZcdp(result);
      if (OnlyDeltaIsShort(result)) RefuseForDelta(result);
      ereport(ERROR,
              (errcode(ERRCODE_DP_AGG_BUDGET_EXHAUSTED),
               errmsg("privacy budget exhausted for role \"%s\"", result.role_name),
               errdetail("This query needs epsilon %s and delta %s; the role has spent epsilon "
                         "%s of %s and delta %s of %s.",
                         result.epsilon, result.delta, result.epsilon_spent, result.epsilon_total,
                         result.delta_spent, result.delta_total),
               errhint("Use a smaller epsilon, or ask an administrator for more budget "
                       "(dp_agg.add_budget). Nothing was released.")));
      break;
    default:
      ereport(ERROR,
              (errcode(ERRCODE_SYSTEM_ERROR),
               errmsg(reuse ? "could not record the reuse of a released answer: %s"
                            : "could not record the privacy charge: %s",
                      result.message),
               errdetail(reuse ? "No answer was returned." : "No private value was computed.")));
  }
}

}  // namespace

void ChargeBudget(const QueryCharge& charge) { SubmitToLedger(charge, false); }

void RecordReuse(const char* description) {
  QueryCharge reuse;
  const Datum zero = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  reuse.epsilon = zero;
  reuse.delta = zero;
  reuse.rho = zero;
  reuse.zcdp_delta = zero;
  snprintf(reuse.description, sizeof reuse.description, "reused: %s",
           description != nullptr ? description : "");
  SubmitToLedger(reuse, true);
}

extern "C" void dp_agg_ledger_writer_main(Datum index) {
  pqsignal(SIGTERM, die);
  BackgroundWorkerUnblockSignals();
  const int number = DatumGetInt32(index);
  // (Never: the postmaster starts only the writers it registered.)
  if (ledger == nullptr || number < 0 || number >= registered_writers) proc_exit(0);
  // Registered before checking in, so that no exit leaves the claim behind.
  before_shmem_exit(OnWriterExit, 0);
  LedgerWriter* self = &ledger->writers[number];
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  my_writer = number;
  self->pid = MyProcPid;
  self->procno = MyProc->pgprocno;
  self->database = InvalidOid;
  self->connected = false;
  LWLockRelease(ledger->lock);

  // Unconnected, wait for a database whose requests no writer serves; of
  // several, the one with the oldest waiting request.
  Oid database = InvalidOid;
  for (;;) {
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
    LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
    database = OldestUnservedDatabase(InvalidOid);
    if (OidIsValid(database)) self->database = database;
    LWLockRelease(ledger->lock);
    if (OidIsValid(database)) break;
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 5000,
                    PG_WAIT_EXTENSION);
  }
  // A FATAL here (the database was dropped since) ends in OnWriterExit,
  // which fails that database's waiting requests.
  BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, BGWORKER_BYPASS_ALLOWCONN);
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  self->connected = true;
  LWLockRelease(ledger->lock);
  // A charge is answered only once it is on disk.
  SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
  SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
  SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);
  // Never wait long for a lock: its holder may be a backend that waits for
  // this worker (which the deadlock detector cannot see). A request whose
  // lock is not available is retried later; the others go on.
  SetConfigOption("lock_timeout", "10", PGC_SUSET, PGC_S_OVERRIDE);
  SetConfigOption("idle_in_transaction_session_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
  // The writer runs as the bootstrap superuser, but takes the database's
  // settings (ALTER DATABASE ... SET), which its owner chooses: a search_path
  // of the owner's schemas would resolve the types and functions of the
  // writer's statements to the owner's objects, run as superuser (review 28).
  SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);

  MemoryContext loop_context =
      AllocSetContextCreate(TopMemoryContext, "dp_agg ledger writer", ALLOCSET_DEFAULT_SIZES);
  int* batch =
      static_cast<int*>(MemoryContextAlloc(TopMemoryContext, sizeof(int) * ledger->num_requests));
  bool* deferred =
      static_cast<bool*>(MemoryContextAlloc(TopMemoryContext, sizeof(bool) * ledger->num_requests));
  int batches = 0;
  for (;;) {
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
    int count = 0;
    const TimestampTz now = GetCurrentTimestamp();
    TimestampTz next_retry = 0;  // earliest deferred request not yet due
    LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
    for (int i = 0; i < ledger->num_requests; ++i) {
      ChargeRequest* request = &ledger->requests[i];
      if (request->state != kPending || request->database != MyDatabaseId) continue;
      if (request->retry_at > now) {
        if (next_retry == 0 || request->retry_at < next_retry) next_retry = request->retry_at;
        continue;
      }
      request->state = kInProgress;
      request->writer_pid = MyProcPid;
      batch[count++] = i;
    }
    LWLockRelease(ledger->lock);
    if (count > 0) {
      MemoryContext previous = MemoryContextSwitchTo(loop_context);
      ApplyBatch(batch, count, deferred);
      MemoryContextSwitchTo(previous);
      MemoryContextReset(loop_context);
      // Fairness: after a bounded number of batches, another database that
      // waits with no writer free gets this one.
      if (++batches >= kFairBatches && LeaveIfOthersWait()) proc_exit(1);
      continue;  // look again before sleeping: charges may have queued meanwhile
    }
    // Nothing due here: a database that waits for a writer gets this one now.
    if (LeaveIfOthersWait()) proc_exit(1);
    long timeout_ms = kIdleExitMs;
    if (next_retry != 0)
      timeout_ms =
          std::max(1L, std::min(timeout_ms, TimestampDifferenceMilliseconds(now, next_retry)));
    const int events = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                                 timeout_ms, PG_WAIT_EXTENSION);
    if ((events & WL_TIMEOUT) != 0 && LeaveIfIdle()) proc_exit(1);
  }
}

}  // namespace dp_pg
