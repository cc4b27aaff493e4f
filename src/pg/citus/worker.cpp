// dp_agg on Citus: a worker accepts the authenticated coordinator's fragments
// (worker.h).
#include "worker.h"

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

#include "../restriction.h"
#include "catalog.h"
#include "contract.h"
#include "node_role.h"
#include "wrappers.h"
namespace dp_pg {

bool AcceptCoordinatorFragment(Query* query) {
  if (!IsWorkerNode() || !IsAuthenticatedCoordinator() || !CitusInstalled()) return false;
  // Only a statement Citus sends over its connection is planned with no
  // portal running: SQL planned while another query runs (query_to_xml,
  // PL/pgSQL, SQL functions in a fragment Citus routed for the analyst) is
  // text the analyst wrote, and is judged like any other (adversarial review
  // of issue 15, finding F1).
  if (ActivePortal != nullptr) return false;
  // The fragment shapes of contract.h, each beside the coordinator's own.
  List* shards = NIL;
  if (!WorkerAcceptsFragmentClauses(query) || !WorkerAcceptsOutputs(query) ||
      !WorkerFragmentShards(query, &shards))
    return false;
  List* protected_shards = NIL;
  ListCell* cell;
  foreach (cell, shards) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    // Owner access only for a restricted session, whose coordinator query
    // was judged and charged under dp_agg's rules; any other role reads a
    // shard with its own privileges (a role without SELECT on the table gets
    // nothing through a statement it makes Citus send, run_command_on_workers
    // included: review finding F1).
    if (RestrictedSession() && IsProtectedRelation(entry->relid, entry->inh))
      protected_shards = lappend(protected_shards, entry);
  }
  foreach (cell, protected_shards) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(entry->relid));
    if (!HeapTupleIsValid(tuple)) return false;
    entry->checkAsUser = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relowner;
    ReleaseSysCache(tuple);
  }
  return true;
}

}  // namespace dp_pg
