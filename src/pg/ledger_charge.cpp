// The requester side of the ledger (ledger.h): a backend queues its
// query's charge (or the record of a reuse), wakes a writer, waits for the
// answer, and raises the refusal when the charge was not recorded.
#include <cstring>

#include "ledger.h"
#include "ledger_chain.h"
#include "ledger_queue.h"
#include "ledger_refusals.h"
#include "settings.h"
#include "spend_alert.h"
#include "sqlstates.h"

extern "C" {
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/xlog.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/rel.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"
}

namespace dp_pg {

using namespace ledger_queue;

namespace {

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

}  // namespace dp_pg
