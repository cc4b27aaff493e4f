// dp_agg on Citus: the initial state the executor hook prepared for each
// wrapper call site of the running queries, for the aggregates' support
// functions (adapter.h) and RegisterCitusPreparedState (sites.h).
#include "adapter.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

#include "sites.h"
#include "wrappers.h"
namespace dp_pg {

namespace {

// --- per-query states of wrapper sites --------------------------------------

struct PreparedSite {
  Aggref* aggref;  // the wrapper call (pointer in the executing plan)
  EState* estate;  // whose es_query_cxt holds `state`
  void* state;
  Size size;
  Oid collation;  // the inner call's input collation (Citus calls with none)
  void* final_cache;  // the final function's per-query cache (CitusFinalCacheSlot)
};

List* prepared_sites = NIL;  // of PreparedSite*, in TopMemoryContext

void ForgetSitesOf(void* argument) {
  auto* estate = static_cast<EState*>(argument);
  List* kept = NIL;
  ListCell* cell;
  MemoryContext previous = MemoryContextSwitchTo(TopMemoryContext);
  foreach (cell, prepared_sites) {
    auto* site = static_cast<PreparedSite*>(lfirst(cell));
    if (site->estate == estate) {
      pfree(site);
    } else {
      kept = lappend(kept, site);
    }
  }
  list_free(prepared_sites);
  prepared_sites = kept;
  MemoryContextSwitchTo(previous);
}

PreparedSite* FindSite(Aggref* aggref) {
  if (aggref == nullptr) return nullptr;
  ListCell* cell;
  foreach (cell, prepared_sites) {
    auto* site = static_cast<PreparedSite*>(lfirst(cell));
    if (site->aggref == aggref) return site;
  }
  // A final function may be given an equal Aggref of another output that
  // shares the transition (nodeAgg merges identical calls).
  for (int i = list_length(prepared_sites) - 1; i >= 0; --i) {
    auto* site = static_cast<PreparedSite*>(list_nth(prepared_sites, i));
    if (site->aggref->aggfnoid == aggref->aggfnoid && equal(site->aggref, aggref)) return site;
  }
  return nullptr;
}

}  // namespace

void** RegisterCitusPreparedState(Aggref* outer, Datum state, Size size, Oid collation,
                                  EState* estate) {
  bool first_of_estate = true;
  ListCell* cell;
  foreach (cell, prepared_sites)
    if (static_cast<PreparedSite*>(lfirst(cell))->estate == estate) first_of_estate = false;
  if (first_of_estate) {
    auto* callback = static_cast<MemoryContextCallback*>(
        MemoryContextAllocZero(estate->es_query_cxt, sizeof(MemoryContextCallback)));
    callback->func = ForgetSitesOf;
    callback->arg = estate;
    MemoryContextRegisterResetCallback(estate->es_query_cxt, callback);
  }
  MemoryContext previous = MemoryContextSwitchTo(TopMemoryContext);
  auto* site = static_cast<PreparedSite*>(palloc0(sizeof(PreparedSite)));
  site->aggref = outer;
  site->estate = estate;
  site->state = DatumGetPointer(state);
  site->size = size;
  site->collation = collation;
  prepared_sites = lappend(prepared_sites, site);
  MemoryContextSwitchTo(previous);
  return &site->final_cache;
}

void* CitusPreparedState(FunctionCallInfo fcinfo) {
  if (prepared_sites == NIL) return nullptr;
  const PreparedSite* site = FindSite(AggGetAggref(fcinfo));
  if (site == nullptr) return nullptr;
  void* copy = palloc(site->size);
  std::memcpy(copy, site->state, site->size);
  return copy;
}

void** CitusFinalCacheSlot(FunctionCallInfo fcinfo, MemoryContext* context) {
  if (prepared_sites == NIL) return nullptr;
  PreparedSite* site = FindSite(AggGetAggref(fcinfo));
  if (site == nullptr) return nullptr;
  *context = site->estate->es_query_cxt;
  return &site->final_cache;
}

Oid CitusSiteCollation(FunctionCallInfo fcinfo) {
  if (prepared_sites == NIL) return InvalidOid;
  const PreparedSite* site = FindSite(AggGetAggref(fcinfo));
  return site != nullptr ? site->collation : InvalidOid;
}

bool CitusSiteIsPrepared(FunctionCallInfo fcinfo) {
  return prepared_sites != NIL && FindSite(AggGetAggref(fcinfo)) != nullptr;
}

bool IsCitusWrapperCall(FunctionCallInfo fcinfo) {
  Aggref* aggref = AggGetAggref(fcinfo);
  return aggref != nullptr && WrapperOf(aggref->aggfnoid) != Wrapper::kNone;
}

void* RequireCitusPreparedState(FunctionCallInfo fcinfo) {
  void* prepared = CitusPreparedState(fcinfo);
  if (prepared == nullptr)
    ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                    errmsg("dp_agg combines only partial states of a query it prepared"),
                    errdetail("Citus's combine step was called on private aggregate states "
                              "that this backend did not prepare and charge for this query.")));
  return prepared;
}

}  // namespace dp_pg
