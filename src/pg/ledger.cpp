// Budget charges: shared-memory request slots, the backend side that waits
// for a durable charge, and the per-database ledger writer worker.
#include "ledger.h"

#include <cstring>

#include "settings.h"

extern "C" {
#include "access/parallel.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
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

namespace dp_pg {

namespace {

// Room for any charge as plain decimal text: the smallest delta's exact
// value (a double with a 24-bit mantissa, down to 2^-1074) has at most 1074
// digits after the point, and the sums of a query's charges no more.
constexpr int kNumberText = 1152;
constexpr int kMaxLedgerWorkers = 16;  // databases with DP activity at once

enum RequestState : std::uint32_t { kFree = 0, kPending = 1, kInProgress = 2, kDone = 3 };
enum ChargeOutcome : std::int32_t { kCharged = 0, kNoBudget = 1, kExhausted = 2, kFailed = 3 };

struct ChargeRequest {
  std::uint32_t state;
  Oid database;
  int requester_procno;
  std::int32_t outcome;
  std::int64_t query_id;
  char role_name[NAMEDATALEN];
  char current_user_name[NAMEDATALEN];
  char epsilon[kNumberText];
  char delta[kNumberText];
  char aggregates[512];
  char query_text[1024];
  // Filled in by the worker: the budget after (or, if refused, without) the charge.
  char epsilon_total[kNumberText];
  char epsilon_spent[kNumberText];
  char delta_total[kNumberText];
  char delta_spent[kNumberText];
  char message[256];
};

struct LedgerWorkerSlot {
  Oid database;  // InvalidOid: free
  int procno;    // -1 until the worker is ready
  pid_t pid;
};

struct LedgerShared {
  LWLock* lock;
  int num_requests;
  LedgerWorkerSlot workers[kMaxLedgerWorkers];
  ChargeRequest requests[FLEXIBLE_ARRAY_MEMBER];
};

LedgerShared* ledger = nullptr;
shmem_request_hook_type previous_shmem_request = nullptr;
shmem_startup_hook_type previous_shmem_startup = nullptr;

int RequestSlotCount() { return MaxBackends; }

Size LedgerSize() {
  return add_size(offsetof(LedgerShared, requests),
                  mul_size(RequestSlotCount(), sizeof(ChargeRequest)));
}

void LedgerShmemRequest() {
  if (previous_shmem_request != nullptr) previous_shmem_request();
  RequestAddinShmemSpace(LedgerSize());
  RequestNamedLWLockTranche("dp_agg_ledger", 1);
}

void LedgerShmemStartup() {
  if (previous_shmem_startup != nullptr) previous_shmem_startup();
  LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
  bool found = false;
  ledger = static_cast<LedgerShared*>(ShmemInitStruct("dp_agg ledger", LedgerSize(), &found));
  if (!found) {
    std::memset(ledger, 0, LedgerSize());
    ledger->lock = &(GetNamedLWLockTranche("dp_agg_ledger"))->lock;
    ledger->num_requests = RequestSlotCount();
    for (LedgerWorkerSlot& worker : ledger->workers) {
      worker.database = InvalidOid;
      worker.procno = -1;
    }
  }
  LWLockRelease(AddinShmemInitLock);
}

void CopyText(char* destination, std::size_t size, const char* source) {
  strlcpy(destination, source != nullptr ? source : "", size);
}

void WakeProc(int procno) {
  if (procno >= 0) SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

// The worker slot of `database`, or nullptr. Caller holds the lock.
LedgerWorkerSlot* FindWorker(Oid database) {
  for (LedgerWorkerSlot& worker : ledger->workers) {
    if (worker.database == database) return &worker;
  }
  return nullptr;
}

// Makes sure a ledger writer serves this database; returns its procno or -1
// while it is starting. Raises an ERROR if none can be started.
int EnsureWorker() {
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  LedgerWorkerSlot* worker = FindWorker(MyDatabaseId);
  if (worker != nullptr) {
    const int procno = worker->procno;
    LWLockRelease(ledger->lock);
    return procno;
  }
  worker = FindWorker(InvalidOid);
  if (worker == nullptr) {
    LWLockRelease(ledger->lock);
    ereport(ERROR, (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                    errmsg("too many databases with differentially private queries"),
                    errhint("dp_agg runs one ledger writer per database, at most %d.",
                            kMaxLedgerWorkers)));
  }
  worker->database = MyDatabaseId;
  worker->procno = -1;
  worker->pid = 0;
  LWLockRelease(ledger->lock);

  BackgroundWorker definition;
  std::memset(&definition, 0, sizeof definition);
  definition.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
  definition.bgw_start_time = BgWorkerStart_RecoveryFinished;
  definition.bgw_restart_time = BGW_NEVER_RESTART;
  CopyText(definition.bgw_library_name, sizeof definition.bgw_library_name, "dp_agg");
  CopyText(definition.bgw_function_name, sizeof definition.bgw_function_name,
           "dp_agg_ledger_worker_main");
  snprintf(definition.bgw_name, sizeof definition.bgw_name, "dp_agg ledger writer for %u",
           MyDatabaseId);
  CopyText(definition.bgw_type, sizeof definition.bgw_type, "dp_agg ledger writer");
  definition.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
  definition.bgw_notify_pid = MyProcPid;
  BackgroundWorkerHandle* handle = nullptr;
  pid_t pid = 0;
  if (!RegisterDynamicBackgroundWorker(&definition, &handle) ||
      WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED) {
    LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
    if (worker->database == MyDatabaseId && worker->procno == -1) worker->database = InvalidOid;
    LWLockRelease(ledger->lock);
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_RESOURCES),
             errmsg("could not start the dp_agg ledger writer, so no privacy charge can be "
                    "recorded"),
             errhint("Raise max_worker_processes: the ledger writer needs one background "
                     "worker per database.")));
  }
  return -1;
}

// A writer that exits hands its unfinished requests back to the queue, so a
// successor applies them. If it had already committed them, they are charged
// twice: an overcharge, never a refund.
void OnWorkerExit(int, Datum) {
  if (ledger == nullptr) return;
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  LedgerWorkerSlot* worker = FindWorker(MyDatabaseId);
  if (worker != nullptr && worker->pid == MyProcPid) {
    worker->database = InvalidOid;
    worker->procno = -1;
    worker->pid = 0;
  }
  for (int i = 0; i < ledger->num_requests; ++i) {
    ChargeRequest* request = &ledger->requests[i];
    if (request->state == kInProgress && request->database == MyDatabaseId)
      request->state = kPending;
  }
  LWLockRelease(ledger->lock);
}

// An idle writer leaves after this long, so that it never holds a database
// open for long (DROP DATABASE waits up to 5 s for other sessions); the next
// charge starts a new one.
constexpr int kIdleExitMs = 1000;

// Unregisters the writer if no request waits for it, under the same lock
// that requesters take, so a request queued afterwards starts a new writer.
bool ExitIfIdle() {
  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  for (int i = 0; i < ledger->num_requests; ++i) {
    const ChargeRequest& request = ledger->requests[i];
    if (request.state == kPending && request.database == MyDatabaseId) {
      LWLockRelease(ledger->lock);
      return false;
    }
  }
  LedgerWorkerSlot* worker = FindWorker(MyDatabaseId);
  if (worker != nullptr && worker->pid == MyProcPid) {
    worker->database = InvalidOid;
    worker->procno = -1;
    worker->pid = 0;
  }
  LWLockRelease(ledger->lock);
  return true;
}

// Waits until request `slot` is done. Interrupts (cancel, terminate) are
// honoured: the charge may still be committed later, which only overcharges.
void WaitForRequest(ChargeRequest* slot) {
  const TimestampTz start = GetCurrentTimestamp();
  for (;;) {
    LWLockAcquire(ledger->lock, LW_SHARED);
    const std::uint32_t state = slot->state;
    LWLockRelease(ledger->lock);
    if (state == kDone || state == kFree) return;
    // Wake (or start again) the writer of this database in case it missed us.
    const int worker_procno = EnsureWorker();
    WakeProc(worker_procno);
    const long waited_ms =
        TimestampDifferenceMilliseconds(start, GetCurrentTimestamp());
    if (waited_ms >= charge_timeout_ms)
      ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED),
                      errmsg("timed out waiting for the dp_agg ledger writer to record the "
                             "privacy charge"),
                      errdetail("No private value was computed. The charge may still be "
                                "recorded; it is never refunded.")));
    (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
                    PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
  }
}

const char* kChargeSql =
    "SELECT status, epsilon_total::text, epsilon_spent::text, delta_total::text, "
    "delta_spent::text FROM dp_agg.apply_charge($1::name, $2::name, $3::numeric, $4::numeric, "
    "$5::bigint, $6::text, $7::text)";

SPIPlanPtr charge_plan = nullptr;

void ApplyOne(ChargeRequest* request) {
  if (charge_plan == nullptr) {
    Oid types[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID, TEXTOID, TEXTOID};
    SPIPlanPtr plan = SPI_prepare(kChargeSql, 7, types);
    if (plan == nullptr) elog(ERROR, "dp_agg: could not prepare the charge statement");
    SPI_keepplan(plan);
    charge_plan = plan;
  }
  Datum values[7] = {
      CStringGetTextDatum(request->role_name), CStringGetTextDatum(request->current_user_name),
      CStringGetTextDatum(request->epsilon),   CStringGetTextDatum(request->delta),
      Int64GetDatum(request->query_id),        CStringGetTextDatum(request->aggregates),
      CStringGetTextDatum(request->query_text)};
  char nulls[7] = {' ', ' ', ' ', ' ', request->query_id == 0 ? 'n' : ' ', ' ', ' '};
  if (SPI_execute_plan(charge_plan, values, nulls, false, 1) != SPI_OK_SELECT ||
      SPI_processed != 1)
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
  } else {
    elog(ERROR, "dp_agg: unknown charge status \"%s\"", status);
  }
  char* fields[4] = {request->epsilon_total, request->epsilon_spent, request->delta_total,
                     request->delta_spent};
  for (int i = 0; i < 4; ++i) CopyText(fields[i], kNumberText, SPI_getvalue(row, description, i + 2));
}

// Applies a batch of requests in one transaction: one commit (and WAL flush)
// for all of them.
void ApplyBatch(int* indexes, int count) {
  MemoryContext worker_context = CurrentMemoryContext;
  PG_TRY();
  {
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    SPI_connect();
    PushActiveSnapshot(GetTransactionSnapshot());
    pgstat_report_activity(STATE_RUNNING, "dp_agg: recording privacy charges");
    for (int i = 0; i < count; ++i) ApplyOne(&ledger->requests[indexes[i]]);
    PopActiveSnapshot();
    SPI_finish();
    CommitTransactionCommand();  // durable: synchronous_commit is on in this worker
    pgstat_report_activity(STATE_IDLE, nullptr);
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(worker_context);
    ErrorData* error = CopyErrorData();
    FlushErrorState();
    AbortCurrentTransaction();
    for (int i = 0; i < count; ++i) {
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

  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  for (int i = 0; i < count; ++i) ledger->requests[indexes[i]].state = kDone;
  LWLockRelease(ledger->lock);
  for (int i = 0; i < count; ++i) WakeProc(ledger->requests[indexes[i]].requester_procno);
}

}  // namespace

void InstallLedger() {
  previous_shmem_request = shmem_request_hook;
  shmem_request_hook = LedgerShmemRequest;
  previous_shmem_startup = shmem_startup_hook;
  shmem_startup_hook = LedgerShmemStartup;
}

void ChargeBudget(const QueryCharge& charge) {
  if (RecoveryInProgress())
    ereport(ERROR, (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                    errmsg("differentially private queries cannot run during recovery"),
                    errdetail("Every private answer must first be charged to the privacy "
                              "budget, and a hot standby cannot write the ledger."),
                    errhint("Run the query on the primary server.")));
  if (ledger == nullptr || MyBackendId < 1 || MyBackendId > ledger->num_requests)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("the dp_agg ledger is not available in this process")));
  ChargeRequest* slot = &ledger->requests[MyBackendId - 1];
  // A request left behind by a cancelled query of this backend (or of the
  // previous owner of this slot) is finished first; it is never withdrawn.
  WaitForRequest(slot);

  const char* epsilon = DatumGetCString(DirectFunctionCall1(numeric_out, charge.epsilon));
  const char* delta = DatumGetCString(DirectFunctionCall1(numeric_out, charge.delta));
  if (std::strlen(epsilon) >= kNumberText || std::strlen(delta) >= kNumberText)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("privacy charge %s / %s has too many digits", epsilon, delta)));

  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  slot->database = MyDatabaseId;
  slot->requester_procno = MyProc->pgprocno;
  slot->outcome = kFailed;
  slot->query_id = static_cast<std::int64_t>(pgstat_get_my_query_id());
  CopyText(slot->role_name, sizeof slot->role_name, GetUserNameFromId(GetSessionUserId(), false));
  CopyText(slot->current_user_name, sizeof slot->current_user_name,
           GetUserNameFromId(GetUserId(), false));
  CopyText(slot->epsilon, sizeof slot->epsilon, epsilon);
  CopyText(slot->delta, sizeof slot->delta, delta);
  CopyText(slot->aggregates, sizeof slot->aggregates, charge.description);
  CopyText(slot->query_text, sizeof slot->query_text, debug_query_string);
  slot->message[0] = '\0';
  slot->state = kPending;
  LWLockRelease(ledger->lock);

  WakeProc(EnsureWorker());
  WaitForRequest(slot);

  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  ChargeRequest result = *slot;
  slot->state = kFree;
  LWLockRelease(ledger->lock);

  switch (result.outcome) {
    case kCharged:
      return;
    case kNoBudget:
      ereport(ERROR, (errcode(MAKE_SQLSTATE('D', 'P', '0', '0', '2')),
                      errmsg("role \"%s\" has no differential privacy budget", result.role_name),
                      errdetail("Every private query is charged to the budget of the session "
                                "user; none was granted to this role."),
                      errhint("An administrator can grant one with dp_agg.set_budget('%s', "
                              "epsilon).",
                              result.role_name)));
      break;
    case kExhausted:
      ereport(ERROR,
              (errcode(MAKE_SQLSTATE('D', 'P', '0', '0', '1')),
               errmsg("privacy budget exhausted for role \"%s\"", result.role_name),
               errdetail("This query needs epsilon %s and delta %s; the role has spent epsilon "
                         "%s of %s and delta %s of %s.",
                         result.epsilon, result.delta, result.epsilon_spent, result.epsilon_total,
                         result.delta_spent, result.delta_total),
               errhint("Use a smaller epsilon, or ask an administrator for more budget "
                       "(dp_agg.add_budget). Nothing was released.")));
      break;
    default:
      ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
                      errmsg("could not record the privacy charge: %s", result.message),
                      errdetail("No private value was computed.")));
  }
}

extern "C" void dp_agg_ledger_worker_main(Datum database) {
  pqsignal(SIGTERM, die);
  BackgroundWorkerUnblockSignals();
  BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(database), InvalidOid, 0);
  // A charge is answered only once it is on disk.
  SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
  SetConfigOption("statement_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
  SetConfigOption("default_transaction_read_only", "off", PGC_SUSET, PGC_S_OVERRIDE);

  LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
  LedgerWorkerSlot* slot = FindWorker(MyDatabaseId);
  if (slot == nullptr || (slot->procno >= 0 && slot->pid != MyProcPid)) {
    LWLockRelease(ledger->lock);
    ereport(LOG, (errmsg("dp_agg ledger writer: another writer serves this database")));
    proc_exit(0);
  }
  slot->procno = MyProc->pgprocno;
  slot->pid = MyProcPid;
  LWLockRelease(ledger->lock);
  before_shmem_exit(OnWorkerExit, 0);

  MemoryContext loop_context =
      AllocSetContextCreate(TopMemoryContext, "dp_agg ledger writer", ALLOCSET_DEFAULT_SIZES);
  int* batch = static_cast<int*>(
      MemoryContextAlloc(TopMemoryContext, sizeof(int) * ledger->num_requests));
  for (;;) {
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
    int count = 0;
    LWLockAcquire(ledger->lock, LW_EXCLUSIVE);
    for (int i = 0; i < ledger->num_requests; ++i) {
      ChargeRequest* request = &ledger->requests[i];
      if (request->state == kPending && request->database == MyDatabaseId) {
        request->state = kInProgress;
        batch[count++] = i;
      }
    }
    LWLockRelease(ledger->lock);
    if (count > 0) {
      MemoryContext previous = MemoryContextSwitchTo(loop_context);
      ApplyBatch(batch, count);
      MemoryContextSwitchTo(previous);
      MemoryContextReset(loop_context);
      continue;  // look again before sleeping: charges may have queued meanwhile
    }
    const int events = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                                 kIdleExitMs, PG_WAIT_EXTENSION);
    if ((events & WL_TIMEOUT) != 0 && ExitIfIdle()) proc_exit(0);
  }
}

}  // namespace dp_pg
