#include "release_cache.h"

#include <cstring>

extern "C" {
#include "access/detoast.h"
#include "catalog/namespace.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "tcop/tcopprot.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
}

#include "citus/sites.h"
#include "ledger.h"
#include "scan_above.h"
#include "release_claims.h"
#include "release_store.h"
#include "settings.h"
#include "sqlstates.h"

namespace dp_pg {

namespace {

constexpr const char* kNodeName = "dp_agg release cache";

enum class CacheMode {
  kPassThrough,  // not cached: rows pass through as the plan below makes them
  kMaterialize,  // computed here once into the tuplestore, not stored
  kOwner,  // computed here once, stored durably, then served
  kServe,  // served from a stored release; the plan below never runs
};

struct CacheState {
  CustomScanState css;
  CacheMode mode;
  int period_seconds;  // dp_agg.release_cache_period when the query started
  bool filled;  // the tuplestore holds the whole release
  Tuplestorestate* store;
  TupleTableSlot* stored;  // reads the store (minimal tuples)
  int claim;  // kOwner: the claims table slot this execution holds
  unsigned char key[kReleaseKeyBytes];
  int64 period_index;
  // kOwner: the statement's text when the query started (for a cursor, its
  // DECLARE, not the FETCH that computes the release), as the ledger has it.
  const char* query_text;
};

// --- execution --------------------------------------------------------------

void BeginCache(CustomScanState* node, EState* estate, int eflags) {
  auto* state = reinterpret_cast<CacheState*>(node);
  auto* plan = reinterpret_cast<CustomScan*>(node->ss.ps.plan);
  state->period_seconds = release_cache_period_s;
  const bool cached = state->period_seconds > 0 && estate->es_instrument == 0 &&
                      (eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0;
  state->mode = cached ? CacheMode::kMaterialize : CacheMode::kPassThrough;
  state->filled = false;
  state->claim = -1;
  state->store = nullptr;
  // Cached, this node answers rewinds, backward scans and rescans itself:
  // the plan below only ever runs forward, once.
  const int child_flags =
      cached ? eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK) : eflags;
  outerPlanState(node) = ExecInitNode(outerPlan(plan), estate, child_flags);
  if (cached) state->store = tuplestore_begin_heap(true, false, work_mem);
  state->stored = ExecAllocTableSlot(
      &estate->es_tupleTable, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor, &TTSOpsMinimalTuple);
}

// A row of the plan below, with every value that points into a table's
// TOAST storage fetched: what is kept must not depend on the table later.
void KeepRow(CacheState* state, TupleTableSlot* row) {
  TupleDesc description = row->tts_tupleDescriptor;
  slot_getallattrs(row);
  const int columns = description->natts;
  ExprContext* context = state->css.ss.ps.ps_ExprContext;
  MemoryContext previous = MemoryContextSwitchTo(context->ecxt_per_tuple_memory);
  Datum* values = static_cast<Datum*>(palloc(sizeof(Datum) * Max(columns, 1)));
  for (int i = 0; i < columns; ++i) {
    values[i] = row->tts_values[i];
    if (!row->tts_isnull[i] && TupleDescAttr(description, i)->attlen == -1 &&
        VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
      values[i] = PointerGetDatum(
          detoast_external_attr(reinterpret_cast<struct varlena*>(DatumGetPointer(values[i]))));
  }
  MemoryContextSwitchTo(previous);
  tuplestore_putvalues(state->store, description, values, row->tts_isnull);
  ResetExprContext(context);
}

void Fill(CacheState* state) {
  PlanState* below = outerPlanState(&state->css);
  for (;;) {
    TupleTableSlot* row = ExecProcNode(below);
    if (TupIsNull(row)) break;
    KeepRow(state, row);
  }
  if (state->mode == CacheMode::kOwner) {
    const StoredReleaseId id{state->key, GetSessionUserId(), state->period_seconds,
                             state->period_index};
    (void)StoreRelease(id, state->query_text, state->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
                       state->store, state->stored);
    GiveUpClaim(state->claim);
    state->claim = -1;
  }
  tuplestore_rescan(state->store);
  state->filled = true;
}

TupleTableSlot* ExecCache(CustomScanState* node) {
  auto* state = reinterpret_cast<CacheState*>(node);
  if (state->mode == CacheMode::kPassThrough) {
    TupleTableSlot* row = ExecProcNode(outerPlanState(node));
    if (TupIsNull(row)) return ExecClearTuple(node->ss.ss_ScanTupleSlot);
    return EmitRowAbove(node, row);
  }
  if (!state->filled) Fill(state);
  const bool forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
  if (tuplestore_gettupleslot(state->store, forward, false, state->stored))
    return EmitRowAbove(node, state->stored);
  return ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

void EndCache(CustomScanState* node) {
  auto* state = reinterpret_cast<CacheState*>(node);
  ExecEndNode(outerPlanState(node));
  if (state->store != nullptr) tuplestore_end(state->store);
  // Started and claimed, but never read: nothing was stored.
  if (state->claim >= 0) GiveUpClaim(state->claim);
  state->claim = -1;
}

void RescanCache(CustomScanState* node) {
  auto* state = reinterpret_cast<CacheState*>(node);
  ExecClearTuple(node->ss.ss_ScanTupleSlot);
  if (state->mode == CacheMode::kPassThrough) {
    if (outerPlanState(node)->chgParam == nullptr) ExecReScan(outerPlanState(node));
    return;
  }
  if (state->filled) tuplestore_rescan(state->store);
}

const CustomExecMethods kExecMethods = {
    kNodeName, BeginCache, ExecCache, EndCache, RescanCache, nullptr, nullptr,
    nullptr,   nullptr,    nullptr,   nullptr,  nullptr,     nullptr,
};

Node* CreateCacheState(CustomScan* plan) {
  auto* state = reinterpret_cast<CacheState*>(newNode(sizeof(CacheState), T_CustomScanState));
  state->css.methods = &kExecMethods;
  return reinterpret_cast<Node*>(state);
}

const CustomScanMethods kPlanMethods = {kNodeName, CreateCacheState};

// --- the decision at ExecutorStart -----------------------------------------

CacheState* CachedTop(QueryDesc* query) {
  if (query->planstate == nullptr || !IsReleaseCacheState(query->planstate)) return nullptr;
  auto* state = reinterpret_cast<CacheState*>(query->planstate);
  return state->mode == CacheMode::kPassThrough ? nullptr : state;
}

// Whether this execution releases anything: a call site it charges, or a
// private level that Citus runs as a subplan (charged when it runs).
bool Releases(QueryDesc* query, const QueryCost* cost) {
  return cost->sites > 0 || PlanHasCitusSubplanRelease(query->planstate);
}

// Whether the ledger can record a reuse: a database whose dp_agg has the
// 0.2.0 objects (between a library upgrade and ALTER EXTENSION UPDATE it
// has not; then nothing is cached).
bool ReuseRecordable() {
  Oid types[6] = {OIDOID, NAMEOID, NAMEOID, INT8OID, TEXTOID, TEXTOID};
  List* name = list_make2(makeString(pstrdup("dp_agg")), makeString(pstrdup("apply_reuse")));
  return OidIsValid(LookupFuncName(name, 6, types, true));
}

void ComputeKey(CacheState* state, QueryDesc* query) {
  auto* plan = reinterpret_cast<CustomScan*>(state->css.ss.ps.plan);
  const char* digest = strVal(linitial(plan->custom_private));
  List* parameters = static_cast<List*>(lsecond(plan->custom_private));
  ComputeReleaseKey(digest, parameters, query->params, state->period_seconds, query->plannedstmt,
                    query->estate->es_snapshot, state->key);
  state->period_index = PeriodIndexNow(state->period_seconds);
}

StoredReleaseId IdOf(const CacheState* state) {
  return StoredReleaseId{state->key, GetSessionUserId(), state->period_seconds,
                         state->period_index};
}

TupleDesc ResultDescription(CacheState* state) {
  return state->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor;
}

bool LoadInto(CacheState* state) {
  return LoadStoredRelease(IdOf(state), ResultDescription(state), state->store, state->stored);
}

// The rows are in the store: the reuse is recorded (durably, or an ERROR
// and nothing is served) and the node serves them.
void ServeStored(CacheState* state, QueryCost* cost) {
  RecordReuse(cost->description.data);
  CountStoredReuse(IdOf(state));
  state->mode = CacheMode::kServe;
  state->filled = true;
  // The plan below is ended now, before ExecutorRun, and taken out of the
  // plan state tree: nothing may run it, not even an extension that walks
  // the tree when the query runs (Citus's ExecutorRun hook executes the
  // subplans of every Citus scan it finds, contacting the workers and
  // charging the private levels they hold).
  ExecEndNode(outerPlanState(&state->css));
  outerPlanState(&state->css) = nullptr;
}

}  // namespace

void RegisterReleaseCache() { RegisterCustomScanMethods(&kPlanMethods); }

bool IsReleaseCacheState(const PlanState* state) {
  return state != nullptr && IsA(state, CustomScanState) &&
         reinterpret_cast<const CustomScanState*>(state)->methods == &kExecMethods;
}

void WrapInReleaseCache(PlannedStmt* statement, const CachedStatement& cached) {
  if (statement->commandType != CMD_SELECT || statement->planTree == nullptr) return;
  CustomScan* cache = makeNode(CustomScan);
  // Never in a parallel worker: only the leader serves or stores a release.
  PlaceScanAbove(cache, statement->planTree, MaxPlanNodeId(statement) + 1, false);
  cache->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
  // Nodes, not an integer list: Citus takes the first element of any
  // CustomScan's custom_private for a node and looks at its tag.
  cache->custom_private =
      list_make2(makeString(pstrdup(cached.digest)), list_copy(cached.parameters));
  cache->methods = &kPlanMethods;
  statement->planTree = &cache->scan.plan;
}

bool AnswerFromReleaseCache(QueryDesc* query, QueryCost* cost) {
  CacheState* state = CachedTop(query);
  if (state == nullptr) return false;
  if (!Releases(query, cost) || !ReuseRecordable()) return false;  // kMaterialize
  ComputeKey(state, query);
  const TimestampTz deadline =
      TimestampTzPlusMilliseconds(GetCurrentTimestamp(), charge_timeout_ms);
  for (;;) {
    if (LoadInto(state)) {
      ServeStored(state, cost);
      return true;
    }
    int slot = -1;
    switch (TryClaimRelease(state->key, &slot)) {
      case ClaimResult::kClaimed:
        // Stored by another session between the look-up and the claim?
        if (LoadInto(state)) {
          GiveUpClaim(slot);
          ServeStored(state, cost);
          return true;
        }
        state->claim = slot;
        state->mode = CacheMode::kOwner;
        state->query_text = MemoryContextStrdup(
            query->estate->es_query_cxt,
            debug_query_string != nullptr ? debug_query_string : query->sourceText);
        return false;
      case ClaimResult::kHeldByMe:
      case ClaimResult::kTableFull:
        return false;  // charged and computed here, not stored (kMaterialize)
      case ClaimResult::kHeldByOther:
        if (!WaitForClaimRelease(slot, state->key, deadline))
          ereport(ERROR,
                  (errcode(ERRCODE_DP_AGG_RELEASE_BUSY),
                   errmsg("another session of this role is computing the answer to the same "
                          "query"),
                   errdetail("Its answer is reused by this query once it is stored; it has not "
                             "been stored within dp_agg.charge_timeout (%d ms). Nothing was "
                             "charged.",
                             charge_timeout_ms),
                   errhint("Run the query again when the other session has its answer.")));
        continue;
    }
  }
}

void ProbeReleaseCache(QueryDesc* query, QueryCost* cost) {
  CacheState* state = CachedTop(query);
  if (state == nullptr || !Releases(query, cost) || !ReuseRecordable()) return;
  ComputeKey(state, query);
  if (!LoadStoredRelease(IdOf(state), ResultDescription(state), nullptr, nullptr)) return;
  const Datum zero = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  cost->epsilon = zero;
  cost->delta = zero;
  cost->rho = zero;
  cost->zcdp_delta = zero;
  StringInfoData reused;
  initStringInfo(&reused);
  appendStringInfo(&reused, "reused: %s", cost->description.data);
  pfree(cost->description.data);
  cost->description = reused;
}

}  // namespace dp_pg
