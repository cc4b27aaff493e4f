// Checks on the input of a private aggregate and on its call, made on the
// plan before any row is read: every row must feed the aggregation at most
// once, and the call site must run at most once per execution, so that the
// charge (query_cost.h) never depends on the data. Refused with 0A000.
#include "input_checks.h"

#include "aggregate_catalog.h"
#include "aggregate_functions.h"
#include "release_replay.h"
#include "restriction.h"
#include "unit_rewrite.h"

extern "C" {
#include "utils/fmgroids.h"
}

namespace dp_pg {

namespace {

[[noreturn]] void RefuseInput(Aggref* aggref, const char* detail) {
  ereport(
      ERROR,
      (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
       errmsg("dp_agg cannot bound how often one row feeds %s", AggregateName(aggref->aggfnoid)),
       errdetail("%s", detail),
       errhint("Aggregate rows of a single table, filtered by conditions on that table's "
               "own columns; join or repeat rows only after the private aggregation.")));
  pg_unreachable();
}

// What the walk over an aggregate's input has seen.
struct InputScan {
  List* tables = NIL;  // OIDs of the tables read
  List* roots = NIL;  // for each, the range-table index of the table the query names
                      // (a scanned partition's partitioned ancestor)
  bool has_join = false;
  Bitmapset* join_params = nullptr;  // PARAM_EXEC ids a nested loop passes to its inner side
  int unit_groups = 0;  // > 0 below the privacy-unit sampler: its max_groups
};

// Expressions inside the input of a private aggregate may not read other
// rows or other tables: no subqueries and no values handed in from outside
// (PARAM_EXEC carries subquery results and outer-row values), except the
// current row of a nested loop's outer side, which joins pass down.
bool ReadsOtherRows(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) || IsA(node, SubLink)) return true;
  if (IsA(node, Param) && reinterpret_cast<Param*>(node)->paramkind == PARAM_EXEC) {
    const auto* scan = static_cast<const InputScan*>(context);
    return scan == nullptr ||
           !bms_is_member(reinterpret_cast<Param*>(node)->paramid, scan->join_params);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ReadsOtherRows), context);
}

void CheckExpressions(Aggref* aggref, Node* expressions, const InputScan* scan = nullptr) {
  if (ReadsOtherRows(expressions, const_cast<InputScan*>(scan)))
    RefuseInput(aggref,
                "A condition or value in its input depends on a subquery or on another row, "
                "so one row could change how many others are aggregated.");
}

void CheckBuiltinFunctions(Aggref* aggref, List* functions) {
  ListCell* cell;
  foreach (cell, functions) {
    auto* function = static_cast<RangeTblFunction*>(lfirst(cell));
    if (!IsA(function->funcexpr, FuncExpr) ||
        reinterpret_cast<FuncExpr*>(function->funcexpr)->funcid >= FirstNormalObjectId)
      RefuseInput(aggref,
                  "Its input calls a user-defined set-returning function, whose rows "
                  "may repeat the rows of a table.");
  }
}

// Do the key columns (attribute numbers of the node's output) include every
// column that the node outputs to the query?
bool KeysCoverOutput(List* target_list, int key_count, const AttrNumber* keys) {
  ListCell* cell;
  foreach (cell, target_list) {
    const auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    if (entry->resjunk) continue;
    bool keyed = false;
    for (int i = 0; i < key_count && !keyed; ++i) keyed = keys[i] == entry->resno;
    if (!keyed) return false;
  }
  return true;
}

// The range-table index of the relation that the query named for the scan
// of `index`: a partition (or inheritance child) scanned for a partitioned
// table maps to that table, through the planner's AppendRelInfos. UNION ALL
// branches are not followed (their parent is a subquery, not a relation).
Index RootRangeTableIndex(Index index, EState* estate) {
  List* append_relations = estate->es_plannedstmt->appendRelations;
  for (int depth = 0; depth <= list_length(append_relations); ++depth) {
    bool moved = false;
    ListCell* cell;
    foreach (cell, append_relations) {
      const auto* info = static_cast<AppendRelInfo*>(lfirst(cell));
      if (info->child_relid != index) continue;
      if (exec_rt_fetch(info->parent_relid, estate)->rtekind != RTE_RELATION) break;
      index = info->parent_relid;
      moved = true;
      break;
    }
    if (!moved) break;
  }
  return index;
}

// The window functions of a WindowAgg's target list: whether there is one
// other than dp_agg.unit_group_sample (search->function), and the constant
// max_groups of the sampler.
struct SamplerSearch {
  Oid function;
  int max_groups;
  bool other;
};

bool FindSampler(Node* node, SamplerSearch* search) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc)) {
    const auto* window = reinterpret_cast<WindowFunc*>(node);
    if (window->winfnoid != search->function || list_length(window->args) != 1) {
      search->other = true;
      return false;
    }
    Node* argument = static_cast<Node*>(linitial(window->args));
    if (IsA(argument, Const) && !reinterpret_cast<Const*>(argument)->constisnull)
      search->max_groups = DatumGetInt32(reinterpret_cast<Const*>(argument)->constvalue);
    else
      search->other = true;
    return false;
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindSampler), search);
}

// The privacy-unit rewrite's sampler (unit_rewrite.h): a WindowAgg of
// dp_agg.unit_group_sample(max_groups) only, which restricted roles may not
// write (query_judgement.cpp), over the per-unit Agg. Returns max_groups,
// or 0 for any other WindowAgg.
int UnitSamplerGroups(Plan* window) {
  SamplerSearch search{UnitGroupSampleFunction(), 0, false};
  if (!OidIsValid(search.function)) return 0;
  FindSampler(reinterpret_cast<Node*>(window->targetlist), &search);
  if (search.other || search.max_groups < 1) return 0;
  Plan* below = window->lefttree;
  while (below != nullptr && (IsA(below, Sort) || IsA(below, IncrementalSort) ||
                              IsA(below, Result) || IsA(below, Material)))
    below = below->lefttree;
  if (below == nullptr || !IsA(below, Agg)) return 0;
  return search.max_groups;
}

// Below the sampler: the per-unit Agg (and its partial steps) combine each
// unit's rows with built-in aggregates and dp_agg.unit_sum.
bool HasNonBuiltinAggregate(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    const Oid function = reinterpret_cast<Aggref*>(node)->aggfnoid;
    return function >= FirstNormalObjectId && !IsUnitSumAggregate(function);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(HasNonBuiltinAggregate), context);
}

// Walks the input plan of a private aggregate; `scan` collects the tables
// read so far and whether there are joins.
void CheckInput(Plan* plan, Aggref* aggref, EState* estate, InputScan* scan) {
  if (plan == nullptr) return;
  check_stack_depth();
  List** tables = &scan->tables;
  CheckExpressions(aggref, reinterpret_cast<Node*>(plan->targetlist), scan);
  CheckExpressions(aggref, reinterpret_cast<Node*>(plan->qual), scan);
  switch (nodeTag(plan)) {
    case T_SeqScan:
    case T_SampleScan:
    case T_IndexScan:
    case T_IndexOnlyScan:
    case T_BitmapHeapScan:
    case T_TidScan:
    case T_TidRangeScan:
    case T_ForeignScan: {
      const Index relation_index = reinterpret_cast<Scan*>(plan)->scanrelid;
      if (relation_index == 0) RefuseInput(aggref, "Its input is a foreign join.");
      const Oid table = exec_rt_fetch(relation_index, estate)->relid;
      if (list_member_oid(*tables, table))
        RefuseInput(aggref, "Its input reads the same table more than once.");
      *tables = lappend_oid(*tables, table);
      scan->roots = lappend_int(scan->roots, RootRangeTableIndex(relation_index, estate));
      if (IsA(plan, IndexScan))
        CheckExpressions(aggref,
                         reinterpret_cast<Node*>(reinterpret_cast<IndexScan*>(plan)->indexqualorig),
                         scan);
      if (IsA(plan, IndexOnlyScan))
        CheckExpressions(aggref,
                         reinterpret_cast<Node*>(reinterpret_cast<IndexOnlyScan*>(plan)->indexqual),
                         scan);
      if (IsA(plan, BitmapHeapScan))
        CheckExpressions(
            aggref,
            reinterpret_cast<Node*>(reinterpret_cast<BitmapHeapScan*>(plan)->bitmapqualorig), scan);
      return;  // bitmap index scans below read the same table
    }
    case T_FunctionScan:
      CheckExpressions(aggref,
                       reinterpret_cast<Node*>(reinterpret_cast<FunctionScan*>(plan)->functions));
      CheckBuiltinFunctions(aggref, reinterpret_cast<FunctionScan*>(plan)->functions);
      return;
    case T_ValuesScan:
      CheckExpressions(aggref,
                       reinterpret_cast<Node*>(reinterpret_cast<ValuesScan*>(plan)->values_lists));
      return;
    case T_Result:
      CheckExpressions(aggref, reinterpret_cast<Result*>(plan)->resconstantqual);
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    case T_Sort:
    case T_IncrementalSort:
    case T_Material:
    case T_Gather:
    case T_GatherMerge:
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    case T_Unique: {
      // DISTINCT keeps one row per distinct output: removing a row removes at
      // most one. DISTINCT ON keeps a row chosen by the others (removing it
      // promotes another, a swap), like LIMIT: refused.
      const auto* unique = reinterpret_cast<Unique*>(plan);
      if (!KeysCoverOutput(plan->targetlist, unique->numCols, unique->uniqColIdx))
        RefuseInput(aggref,
                    "Its input contains DISTINCT ON, which keeps a row chosen by the "
                    "others.");
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    }
    case T_Agg: {
      // Grouping without aggregates (DISTINCT) never repeats a row; grouping
      // sets repeat every row once per set; any aggregate below would need
      // its own sensitivity analysis.
      const auto* grouping = reinterpret_cast<Agg*>(plan);
      if (grouping->groupingSets != NIL || grouping->chain != NIL)
        RefuseInput(aggref,
                    "Its input contains GROUPING SETS, ROLLUP or CUBE, which repeat "
                    "every row once per grouping set.");
      const bool aggregates = contain_agg_clause(reinterpret_cast<Node*>(plan->targetlist)) ||
                              contain_agg_clause(reinterpret_cast<Node*>(plan->qual));
      // One row feeds one group of the per-unit level, whose value the
      // private aggregate above bounds per unit.
      if (aggregates &&
          (scan->unit_groups == 0 || grouping->numCols == 0 ||
           HasNonBuiltinAggregate(reinterpret_cast<Node*>(plan->targetlist), nullptr) ||
           HasNonBuiltinAggregate(reinterpret_cast<Node*>(plan->qual), nullptr)))
        RefuseInput(aggref, "Its input is itself the result of other aggregates.");
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    }
    case T_SubqueryScan:
      CheckInput(reinterpret_cast<SubqueryScan*>(plan)->subplan, aggref, estate, scan);
      return;
    case T_CteScan: {
      const int plan_id = reinterpret_cast<CteScan*>(plan)->ctePlanId;
      CheckInput(static_cast<Plan*>(list_nth(estate->es_plannedstmt->subplans, plan_id - 1)),
                 aggref, estate, scan);
      return;
    }
    case T_Append: {
      ListCell* cell;
      foreach (cell, reinterpret_cast<Append*>(plan)->appendplans)
        CheckInput(static_cast<Plan*>(lfirst(cell)), aggref, estate, scan);
      return;
    }
    case T_MergeAppend: {
      ListCell* cell;
      foreach (cell, reinterpret_cast<MergeAppend*>(plan)->mergeplans)
        CheckInput(static_cast<Plan*>(lfirst(cell)), aggref, estate, scan);
      return;
    }
    case T_NestLoop: {
      // The outer row's values reach the inner side as PARAM_EXEC.
      ListCell* cell;
      foreach (cell, reinterpret_cast<NestLoop*>(plan)->nestParams)
        scan->join_params =
            bms_add_member(scan->join_params, static_cast<NestLoopParam*>(lfirst(cell))->paramno);
      [[fallthrough]];
    }
    case T_MergeJoin:
    case T_HashJoin:
      // Joins are judged on the query tree (join_analysis.cpp): one protected
      // table, public tables pinned by a unique key. Here it is checked that
      // the plan reads at most one protected table, which is when that
      // judgement was made (none when the planner proved that side empty).
      CheckExpressions(aggref, reinterpret_cast<Node*>(reinterpret_cast<Join*>(plan)->joinqual),
                       scan);
      scan->has_join = true;
      CheckInput(plan->lefttree, aggref, estate, scan);
      CheckInput(plan->righttree, aggref, estate, scan);
      return;
    case T_Hash:
    case T_Memoize:
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    case T_ProjectSet:
      RefuseInput(aggref,
                  "Its input contains a set-returning function in a select list, which "
                  "repeats rows.");
    case T_Limit:
      RefuseInput(aggref, "Its input contains LIMIT, whose selected rows depend on other rows.");
    case T_WindowAgg: {
      const int groups = scan->unit_groups == 0 ? UnitSamplerGroups(plan) : 0;
      if (groups == 0)
        RefuseInput(aggref, "Its input contains window functions, which read other rows.");
      scan->unit_groups = groups;
      CheckInput(plan->lefttree, aggref, estate, scan);
      return;
    }
    case T_SetOp:
      RefuseInput(aggref,
                  "Its input contains INTERSECT or EXCEPT, which compare rows of "
                  "different inputs.");
    case T_CustomScan:
      // The replay of another private aggregate's release: judged as that
      // Agg (release_replay.h).
      if (IsReleaseReplay(plan)) {
        CheckInput(plan->lefttree, aggref, estate, scan);
        return;
      }
      RefuseInput(aggref, "Its input contains a plan step that dp_agg does not analyse.");
    default:
      RefuseInput(aggref, "Its input contains a plan step that dp_agg does not analyse.");
  }
}

// Counts the protected tables that the query names (a partitioned table is
// one, however many of its partitions are scanned) and refuses more than
// one. None is accepted in a restricted session only: there every table that
// is not protected is public to the analyst, so a join reading no protected
// table aggregates public rows alone, and the planner leaves a protected
// side unscanned only when it proves it empty from the query and the catalog
// (WHERE false, contradictory constants, every partition pruned). The
// public-keys rewrite of `GROUP BY col ... WHERE false` is such a join
// (issue 29, review 2): it releases every declared key with noise around 0,
// as any other GROUP BY over them does. Without restriction, where no table
// may be protected and every table is private, a join stays refused.
void RequireAtMostOneProtectedTable(Aggref* aggref, const InputScan& scan, EState* estate) {
  List* protected_roots = NIL;
  ListCell* table_cell;
  ListCell* root_cell;
  forboth(table_cell, scan.tables, root_cell, scan.roots) {
    const int root = lfirst_int(root_cell);
    if (list_member_int(protected_roots, root)) continue;
    if (IsProtectedRelation(lfirst_oid(table_cell), false) ||
        IsProtectedRelation(exec_rt_fetch(root, estate)->relid, false))
      protected_roots = lappend_int(protected_roots, root);
  }
  const int protected_tables = list_length(protected_roots);
  list_free(protected_roots);
  if (protected_tables > 1 || (protected_tables == 0 && !RestrictedSession()))
    RefuseInput(aggref,
                "Its input contains a join, which can repeat a row of either side; "
                "joins are accepted only between one protected table and public tables "
                "looked up by a unique key.");
}

// Number of grouping sets of an Agg node (and its chained phases): every row
// feeds one group of each grouping set.

bool FindPrivateWindowFunction(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, WindowFunc)) {
    auto* window_function = reinterpret_cast<WindowFunc*>(node);
    if (LookupPrivateAggregate(window_function->winfnoid) != nullptr) {
      *static_cast<Oid*>(context) = window_function->winfnoid;
      return true;
    }
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(FindPrivateWindowFunction), context);
}

}  // namespace

bool IsPrivateCount(const Aggref* aggref) {
  const PrivateAggregateKind* kind = LookupPrivateAggregate(aggref->aggfnoid);
  return kind != nullptr && kind->transition == dp_count_transfn;
}

void RefuseDistinctOrOrderBy(Aggref* aggref) {
  // Decided before any argument is read: the parameters are found by their
  // position in the signature, and ORDER BY / DISTINCT would add arguments
  // (sort keys) or drop rows. dp_count(DISTINCT value, ...) is the exception:
  // DISTINCT adds no argument (its sort keys are the arguments), the
  // parameters are the same for every row, and a distinct count changes by
  // at most 1 when one row is removed, so the count's calibration holds.
  if (aggref->aggorder == NIL && aggref->aggdistinct != NIL && IsPrivateCount(aggref)) return;
  if (aggref->aggorder != NIL || aggref->aggdistinct != NIL)
    ereport(
        ERROR,
        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
         errmsg("DISTINCT or ORDER BY inside %s is not supported", AggregateName(aggref->aggfnoid)),
         errdetail("A private aggregate's guarantee is stated for every row counted once, "
                   "and its order does not change the answer."),
         errhint("Remove DISTINCT and ORDER BY from the aggregate's arguments (only "
                 "dp_count takes DISTINCT).")));
}

void RefuseReexecution(Aggref* aggref, bool reexecuted) {
  if (reexecuted)
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("%s cannot run once per row of another query", AggregateName(aggref->aggfnoid)),
             errdetail("It is inside a correlated subquery, a LATERAL join or a recursive "
                       "query, so it would release a data-dependent number of answers."),
             errhint("Use GROUP BY to get one private answer per group.")));
}

void CheckPerRowExpressions(Aggref* aggref) {
  // The aggregated value (and dp_select's weight) and FILTER are evaluated
  // per row like the input.
  const int per_row = PerRowArgumentCount(aggref);
  for (int position = 0; position < per_row; ++position)
    CheckExpressions(aggref, reinterpret_cast<Node*>(list_nth(aggref->args, position)));
  CheckExpressions(aggref, reinterpret_cast<Node*>(aggref->aggfilter));
}

int CheckAggregateInput(Agg* plan, Aggref* aggref, EState* estate) {
  InputScan scan;
  CheckInput(plan->plan.lefttree, aggref, estate, &scan);
  if (scan.has_join) RequireAtMostOneProtectedTable(aggref, scan, estate);
  list_free(scan.tables);
  list_free(scan.roots);
  bms_free(scan.join_params);
  return scan.unit_groups > 0 ? scan.unit_groups : 1;
}

void RejectWindowUse(Plan* plan) {
  Oid function = InvalidOid;
  if (FindPrivateWindowFunction(reinterpret_cast<Node*>(plan->targetlist), &function))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s cannot be used as a window function", get_func_name(function)),
                    errhint("Use it as an aggregate with GROUP BY: every window frame would be a "
                            "separate noisy release of overlapping rows.")));
}

}  // namespace dp_pg
