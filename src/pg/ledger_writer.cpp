// The writer side of the ledger (ledger.h): a pool writer claims a
// database, applies its queued charges in batches (one transaction per
// batch, a subtransaction per charge), answers them, and leaves the database
// when idle or when another one waits.
#include <csignal>
#include <cstring>

#include "ledger.h"
#include "ledger_chain.h"
#include "ledger_fast_charge.h"
#include "ledger_head_log.h"
#include "ledger_queue.h"

extern "C" {
#include "parser/parse_func.h"
#include "mb/pg_wchar.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

#include <algorithm>

namespace dp_pg {

using namespace ledger_queue;

namespace {

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
  // The common case (a budget that does not renew and admits the charge) in
  // C; the others through dp_agg.apply_charge (ledger_fast_charge.h).
  if (by_oid && ChargeWithoutRenewal(request)) return;
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

// Runs `apply` in a subtransaction of its own, so that its failure undoes
// only its own work; the batch's chain head follows (KeepBatchChaining /
// ForgetBatchChaining). Returns nullptr if the subtransaction was kept, else
// the error (palloc'd in the caller's context; the caller frees it).
template <typename Apply>
ErrorData* InSubtransaction(const Apply& apply) {
  MemoryContext context = CurrentMemoryContext;
  ResourceOwner owner = CurrentResourceOwner;
  ErrorData* volatile failure = nullptr;
  BeginInternalSubTransaction(nullptr);
  MemoryContextSwitchTo(context);
  PG_TRY();
  {
    apply();
    ReleaseCurrentSubTransaction();
    KeepBatchChaining();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(context);
    failure = CopyErrorData();
    FlushErrorState();
    RollbackAndReleaseCurrentSubTransaction();
    ForgetBatchChaining();
    MemoryContextSwitchTo(context);
    CurrentResourceOwner = owner;
  }
  PG_END_TRY();
  return failure;
}

// Applies one request in a subtransaction of its own, so that its failure
// (an error in the charge statement, a lock that is not available) undoes
// only its own work. Returns false if the request must be tried again later
// because another transaction holds a lock it needs (lock_timeout is short
// in this worker: it never waits for a lock that a waiting backend may hold).
bool ApplyIsolated(ChargeRequest* request) {
  ErrorData* error = InSubtransaction([request] { ApplyOne(request); });
  if (error == nullptr) return true;
  request->outcome = kFailed;
  const bool locked = error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
  if (!locked) {
    CopyText(request->message, sizeof request->message, error->message);
    ereport(LOG, (errmsg("dp_agg ledger writer: could not record the charge of role \"%s\": %s",
                         request->role_name, error->message)));
  }
  FreeErrorData(error);
  return !locked;
}

// The outcome of charging a group of requests together.
enum class GroupOutcome { kCharged, kNotTogether, kLocked };

// Charges `count` requests of one role together (ChargeTogether), in one
// subtransaction. kNotTogether: nothing of them was applied (the sum was not
// admitted, the budget renews or is missing, or an error other than a lock
// that is not available): the caller charges them one by one, which decides
// each as before. kLocked: the budget row was locked by another transaction:
// the caller tries them all again later.
GroupOutcome ApplyGroupIsolated(ChargeRequest** requests, int count) {
  bool together = true;
  ErrorData* error = InSubtransaction(
      [requests, count, &together] { together = ChargeTogether(requests, count); });
  if (error == nullptr) return together ? GroupOutcome::kCharged : GroupOutcome::kNotTogether;
  const bool locked = error->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
  FreeErrorData(error);
  return locked ? GroupOutcome::kLocked : GroupOutcome::kNotTogether;
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
    BeginBatchChaining();
    // The requests of one role in this batch are charged together, with one
    // UPDATE of its budget (ChargeTogether); a group that cannot be is
    // charged one by one, as every request was before.
    const bool fast_charges = ChargeByOidExists();
    bool* done = static_cast<bool*>(palloc0(sizeof(bool) * count));
    bool* alone = static_cast<bool*>(palloc0(sizeof(bool) * count));
    ChargeRequest** group = static_cast<ChargeRequest**>(palloc(sizeof(ChargeRequest*) * count));
    int* group_indexes = static_cast<int*>(palloc(sizeof(int) * count));
    const auto is_locked = [&](const char* role_name) {
      return std::any_of(locked_roles, locked_roles + num_locked,
                         [&](const char* role) { return std::strcmp(role, role_name) == 0; });
    };
    for (int i = 0; i < count; ++i) {
      if (done[i]) continue;
      ChargeRequest* request = &ledger->requests[indexes[i]];
      const bool role_locked = is_locked(request->role_name);
      if (!role_locked && fast_charges && !alone[i] && !request->reuse) {
        int size = 0;
        for (int j = i; j < count; ++j) {
          ChargeRequest* other = &ledger->requests[indexes[j]];
          if (!done[j] && !alone[j] && (j == i || CanChargeTogether(*request, *other))) {
            group[size] = other;
            group_indexes[size++] = j;
          }
        }
        if (size > 1) {
          const GroupOutcome outcome = ApplyGroupIsolated(group, size);
          for (int k = 0; k < size; ++k) {
            const int j = group_indexes[k];
            if (outcome == GroupOutcome::kCharged) done[j] = true;
            if (outcome == GroupOutcome::kLocked) done[j] = deferred[j] = true;
            if (outcome == GroupOutcome::kNotTogether) alone[j] = true;
          }
          if (outcome == GroupOutcome::kLocked) locked_roles[num_locked++] = request->role_name;
          if (outcome == GroupOutcome::kCharged)
            ereport(DEBUG1, (errmsg("dp_agg ledger writer: charged %d queries of role \"%s\" "
                                    "with one budget update",
                                    size, request->role_name)));
          if (outcome != GroupOutcome::kNotTogether) continue;
        }
      }
      done[i] = true;
      if (role_locked || !ApplyIsolated(request)) {
        deferred[i] = true;
        if (!role_locked) locked_roles[num_locked++] = request->role_name;
      }
    }
    int64 head_seq = 0;
    const bytea* head_hash = nullptr;
    if (FinishBatchChaining(&head_seq, &head_hash))  // the chain head, written once for the batch
      NoteLedgerHeadWritten(head_seq, head_hash);
    else
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
    AbandonBatchChaining();
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

}  // namespace

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
