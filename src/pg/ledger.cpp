// The ledger's pool of writers and its queue in shared memory (ledger.h):
// the shared memory, the registration of the pool at server start, and the
// helpers that find and wake a writer. The requester side is
// ledger_charge.cpp, the writer side ledger_writer.cpp, the refusals
// ledger_refusals.cpp.
#include "ledger.h"

#include <cstring>

#include "ledger_queue.h"
#include "settings.h"

extern "C" {
#include "mb/pg_wchar.h"
#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
}

#include <algorithm>

namespace dp_pg {

namespace ledger_queue {

LedgerShared* ledger = nullptr;
int registered_writers = 0;

namespace {

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

}  // namespace

Datum ValidTextDatum(const char* text) {
  const int length = static_cast<int>(std::strlen(text));
  const int valid = pg_encoding_verifymbstr(GetDatabaseEncoding(), text, length);
  return PointerGetDatum(cstring_to_text_with_len(text, valid));
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

}  // namespace ledger_queue

using namespace ledger_queue;

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

// The shared-memory hooks' work (hooks.cpp installs and chains the hooks).
void RequestLedgerSharedMemory() { ledger_queue::LedgerShmemRequest(); }

void StartLedgerSharedMemory() { ledger_queue::LedgerShmemStartup(); }

}  // namespace dp_pg
