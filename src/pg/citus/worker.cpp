// dp_agg on Citus: a worker accepts the authenticated coordinator's fragments
// (worker.h).
#include "worker.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

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

namespace {

bool OnlyPartialAggregates(Node* node, void*) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    auto* aggref = reinterpret_cast<Aggref*>(node);
    // Anything but worker_partial_agg of a private aggregate stops the walk.
    return WrapperOf(aggref->aggfnoid) != Wrapper::kWorkerPartial || !WrapsPrivateAggregate(aggref);
  }
  if (IsA(node, Query) || IsA(node, SubLink)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(OnlyPartialAggregates), nullptr);
}

}  // namespace

bool AcceptCoordinatorFragment(Query* query) {
  if (!IsWorkerNode() || !IsAuthenticatedCoordinator() || !CitusInstalled()) return false;
  // Only a statement Citus sends over its connection is planned with no
  // portal running: SQL planned while another query runs (query_to_xml,
  // PL/pgSQL, SQL functions in a fragment Citus routed for the analyst) is
  // text the analyst wrote, and is judged like any other (adversarial review
  // of issue 15, finding F1).
  if (ActivePortal != nullptr) return false;
  if (query->commandType != CMD_SELECT || !query->hasAggs || query->hasSubLinks ||
      query->cteList != NIL || query->setOperations != nullptr || query->hasWindowFuncs ||
      query->hasTargetSRFs || query->groupingSets != NIL || query->rowMarks != NIL)
    return false;
  bool has_partial = false;
  ListCell* cell;
  foreach (cell, query->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    Node* expression = StripRelabel(reinterpret_cast<Node*>(entry->expr));
    if (expression != nullptr && IsA(expression, Aggref)) {
      if (OnlyPartialAggregates(expression, nullptr)) return false;
      has_partial = true;
      continue;
    }
    // A constant output (SELECT 'total' AS label, region, dp_count(...)) is
    // sent along by Citus: it reads no row, and IsShippableConstant admits
    // only those the coordinator reads back whatever its settings.
    if (IsShippableConstant(expression)) continue;
    // Any other output is a group key, which the coordinator releases only
    // through its own rules (group selection for restricted roles).
    if (entry->ressortgroupref == 0 || OnlyPartialAggregates(expression, nullptr)) return false;
    if (get_sortgroupref_clause_noerr(entry->ressortgroupref, query->groupClause) == nullptr)
      return false;
  }
  if (!has_partial || OnlyPartialAggregates(query->havingQual, nullptr)) return false;
  List* protected_shards = NIL;
  // Over privacy units the fragment reads its shard through the rewrite's
  // per-unit level (WorkerUnitFragmentShard).
  List* tables = query->rtable;
  if (list_length(query->rtable) == 1 &&
      static_cast<RangeTblEntry*>(linitial(query->rtable))->rtekind == RTE_SUBQUERY) {
    RangeTblEntry* shard = WorkerUnitFragmentShard(query);
    if (shard == nullptr) return false;
    tables = list_make1(shard);
  }
  foreach (cell, tables) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_RESULT) continue;
    if (entry->rtekind != RTE_RELATION ||
        (entry->relkind != RELKIND_RELATION && entry->relkind != RELKIND_PARTITIONED_TABLE))
      return false;
    if (!OidIsValid(CitusShardParent(entry->relid))) return false;
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
