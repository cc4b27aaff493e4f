// dp_agg on Citus: the fragment shapes the coordinator sends and the workers
// accept (contract.h).
#include "contract.h"

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

#include "../unit_rewrite.h"
#include "catalog.h"
#include "units.h"
#include "wrappers.h"
namespace dp_pg {

// --- Constants --------------------------------------------------------------
// One predicate for both sides: the coordinator lets Citus ship a constant
// output (CoordinatorUnshippedColumn) exactly when a worker accepts it
// (WorkerAcceptsOutputs).

// A constant output of a restricted role's grouped query that the workers may
// send along. Citus puts it into every group row of every worker's result,
// and the coordinator converts each row back (binary or text) with its own
// session settings, which the analyst may change (xmloption, DateStyle,
// lc_monetary, search_path): a conversion that can fail there fails only when
// some worker has a group, that is, depending on the rows (adversarial review
// of e9ca489, finding C1: 'abc'::xml prepared, then SET xmloption =
// document). And Citus prints the constant into the fragment with the
// analyst's settings, which the worker reads with its own (DateStyle,
// finding C3; extra_float_digits rounds a float). Only types that print and
// read back the same whatever the settings are shipped (no float, no
// date), and short ones: a long constant copied
// into each group row turns the number of groups into response time and
// memory.
constexpr int kMaxShippedConstantBytes = 1024;
bool PrintsPortably(const Const* constant) {
  switch (constant->consttype) {
    case BOOLOID:
    case INT2OID:
    case INT4OID:
    case INT8OID:
      return true;
    case TEXTOID:
    case VARCHAROID: {
      if (constant->constisnull) return true;
      // Citus doubles a backslash when the analyst's
      // standard_conforming_strings is off, and the workers (on) keep both:
      // the value a\b (one backslash) became a\\b there (finding C4).
      const auto* value = DatumGetTextPP(constant->constvalue);
      const int bytes = VARSIZE_ANY_EXHDR(value);
      return bytes <= kMaxShippedConstantBytes &&
             memchr(VARDATA_ANY(value), '\\', bytes) == nullptr;
    }
    default:
      return false;
  }
}

bool IsShippableConstant(Node* node) {
  node = StripRelabel(node);
  if (node == nullptr || !IsA(node, Const)) return false;
  const auto* constant = reinterpret_cast<Const*>(node);
  // And one that the worker parses back as a constant, so that it accepts
  // the fragment exactly when the coordinator did (issue 25, finding 4 (b)).
  // The coordinator judges the folded query, where 'x'::varchar(1) is a
  // constant with a typmod and 'x' COLLATE "C" one with a collation; Citus
  // prints them as 'x'::character varying(1) and 'x'::text COLLATE "C",
  // which the worker parses as a length coercion (varchar(text, 5, true))
  // and a COLLATE expression: not a constant, so every worker refused the
  // fragment after the coordinator charged 1+1. A plain constant (typmod -1,
  // the type's own collation) is printed as 'x'::character varying and
  // parsed back as the same constant.
  if (constant->consttypmod != -1 || constant->constcollid != get_typcollation(constant->consttype))
    return false;
  return PrintsPortably(constant);
}

// --- Outputs ------------------------------------------------------------------

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

TargetEntry* CoordinatorUnshippedColumn(Query* query) {
  ListCell* cell;
  foreach (cell, query->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    if (contain_agg_clause(reinterpret_cast<Node*>(entry->expr))) continue;
    // A short constant of a portable type is accepted by the workers
    // (WorkerAcceptsOutputs; IsShippableConstant says why only those).
    if (IsShippableConstant(reinterpret_cast<Node*>(entry->expr))) continue;
    // A constant group key is printed by Citus into the workers' fragment
    // with the analyst's settings and read back there with the worker's:
    // SET DateStyle = 'SQL, DMY' made '2020-03-02'::date the workers' 3
    // February and '2020-02-13'::date an error on every worker after the
    // charge (finding C3). Only the shipped types print the same everywhere.
    Node* stripped = StripRelabel(reinterpret_cast<Node*>(entry->expr));
    const bool grouped =
        entry->ressortgroupref != 0 &&
        get_sortgroupref_clause_noerr(entry->ressortgroupref, query->groupClause) != nullptr;
    if (grouped && (stripped == nullptr || !IsA(stripped, Const))) continue;
    // A constant group key stays a group key in the fragment however Citus
    // prints it (the worker accepts any expression among its group keys), so
    // it needs only to print the same whatever the settings: with a length
    // or a collation too ('x'::varchar(1) in GROUP BY was answered before).
    if (grouped && PrintsPortably(reinterpret_cast<Const*>(stripped))) continue;
    return entry;
  }
  return nullptr;
}

bool WorkerAcceptsOutputs(Query* query) {
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
  return has_partial && !OnlyPartialAggregates(query->havingQual, nullptr);
}

// --- Clauses ------------------------------------------------------------------

const char* CoordinatorJobClauseProblem(const Query* query) {
  const char* problem = nullptr;
  if (query->hasSubLinks) problem = "A condition in the tasks depends on a subquery.";
  if (query->limitCount != nullptr || query->limitOffset != nullptr)
    problem = "The tasks contain LIMIT or OFFSET below the aggregation.";
  if (query->setOperations != nullptr) problem = "The tasks contain set operations.";
  if (query->hasWindowFuncs) problem = "The tasks contain window functions.";
  if (query->hasTargetSRFs) problem = "The tasks contain set-returning functions.";
  if (query->groupingSets != NIL) problem = "The tasks contain grouping sets.";
  if (query->hasDistinctOn || query->distinctClause != NIL) problem = "The tasks contain DISTINCT.";
  return problem;
}

bool WorkerAcceptsFragmentClauses(const Query* query) {
  return query->commandType == CMD_SELECT && query->hasAggs && !query->hasSubLinks &&
         query->cteList == NIL && query->setOperations == nullptr && !query->hasWindowFuncs &&
         !query->hasTargetSRFs && query->groupingSets == NIL && query->rowMarks == NIL;
}

// --- FROM ---------------------------------------------------------------------

// In a worker job, Citus stands for "the shard of this task" with a function
// range-table entry calling pg_catalog.citus_extradata_container(...).
bool IsShardPlaceholder(RangeTblEntry* entry) {
  if (entry->rtekind == RTE_RELATION) return true;
  if (entry->rtekind != RTE_FUNCTION || list_length(entry->functions) != 1) return false;
  Node* call = static_cast<RangeTblFunction*>(linitial(entry->functions))->funcexpr;
  if (call == nullptr || !IsA(call, FuncExpr)) return false;
  const Oid function = reinterpret_cast<FuncExpr*>(call)->funcid;
  if (get_func_namespace(function) != PG_CATALOG_NAMESPACE) return false;
  char* name = get_func_name(function);
  const bool placeholder = name != nullptr && std::strcmp(name, "citus_extradata_container") == 0;
  return placeholder;
}

bool CoordinatorJobReadsOneShard(Query* query) {
  bool one_table = list_length(query->jointree->fromlist) == 1 &&
                   IsA(linitial(query->jointree->fromlist), RangeTblRef);
  if (one_table) {
    const int index = reinterpret_cast<RangeTblRef*>(linitial(query->jointree->fromlist))->rtindex;
    one_table = IsShardPlaceholder(rt_fetch(index, query->rtable));
  }
  ListCell* entry_cell;
  foreach (entry_cell, query->rtable) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(entry_cell));
    if (entry->rtekind != RTE_RESULT && !IsShardPlaceholder(entry)) one_table = false;
  }
  return one_table;
}

bool WorkerFragmentShards(Query* query, List** shards) {
  *shards = NIL;
  // Over privacy units the fragment reads its shard through the rewrite's
  // per-unit level (WorkerUnitFragmentShard).
  List* tables = query->rtable;
  if (list_length(query->rtable) == 1 &&
      static_cast<RangeTblEntry*>(linitial(query->rtable))->rtekind == RTE_SUBQUERY) {
    RangeTblEntry* shard = WorkerUnitFragmentShard(query);
    if (shard == nullptr) return false;
    tables = list_make1(shard);
  }
  ListCell* cell;
  foreach (cell, tables) {
    auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind == RTE_RESULT) continue;
    if (entry->rtekind != RTE_RELATION ||
        (entry->relkind != RELKIND_RELATION && entry->relkind != RELKIND_PARTITIONED_TABLE))
      return false;
    if (!OidIsValid(CitusShardParent(entry->relid))) return false;
    *shards = lappend(*shards, entry);
  }
  return true;
}

// --- Privacy units --------------------------------------------------------------

namespace {

// A job level that only filters and projects the rows of its one FROM item.
// A job level that reads its one FROM item with none of the clauses that
// change which rows or how many reach the level's output (set-returning
// functions, sublinks, DISTINCT, grouping sets, LIMIT/OFFSET, set
// operations, WITH, row locks). Its GROUP BY, aggregates and windows are
// for the caller to check.
bool ReadsOneItemPlainly(const Query* level) {
  return !level->hasTargetSRFs && !level->hasSubLinks && !level->hasDistinctOn &&
         level->groupingSets == NIL && level->limitCount == nullptr &&
         level->limitOffset == nullptr && level->setOperations == nullptr &&
         level->distinctClause == NIL && level->cteList == NIL && level->rowMarks == NIL &&
         list_length(level->rtable) == 1 && level->jointree != nullptr &&
         list_length(level->jointree->fromlist) == 1;
}

bool PassesRowsOn(const Query* level) {
  return level->commandType == CMD_SELECT && !level->hasAggs && !level->hasWindowFuncs &&
         level->groupClause == NIL && level->havingQual == nullptr && ReadsOneItemPlainly(level) &&
         IsA(linitial(level->jointree->fromlist), RangeTblRef);
}

struct SamplerCount {
  Oid function;
  int samplers;
  int max_groups;
  bool other;
};

bool CountSamplers(Node* node, void* context) {
  if (node == nullptr) return false;
  auto* count = static_cast<SamplerCount*>(context);
  if (IsA(node, WindowFunc)) {
    const auto* window = reinterpret_cast<WindowFunc*>(node);
    Node* argument = list_length(window->args) == 1
                         ? StripRelabel(static_cast<Node*>(linitial(window->args)))
                         : nullptr;
    if (window->winfnoid != count->function || argument == nullptr || !IsA(argument, Const) ||
        reinterpret_cast<Const*>(argument)->constisnull) {
      count->other = true;
      return false;
    }
    ++count->samplers;
    count->max_groups = DatumGetInt32(reinterpret_cast<Const*>(argument)->constvalue);
    return false;
  }
  if (IsA(node, Query)) return false;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CountSamplers), context);
}

}  // namespace

// Privacy units (see "privacy units on distributed tables" above), checked
// on the worker job the coordinator is about to send: the tasks' query reads
// the per-unit level of the rewrite, through levels that only filter and
// project (Citus's worker_subquery, the rewrite's WHERE kept), and that level
// is one window of dp_agg.unit_group_sample(m) partitioned by a column it
// groups by, which is the hash distribution column of the job's one table,
// read through plain projections only. Returns m, or 0 with *problem set.
int UnitJobGroups(Query* query, const char** problem) {
  *problem = "Each task reads more than one table or subquery.";
  if (query->jointree == nullptr || list_length(query->jointree->fromlist) != 1 ||
      list_length(query->rtable) != 1 || !IsA(linitial(query->jointree->fromlist), RangeTblRef))
    return 0;
  RangeTblEntry* entry = static_cast<RangeTblEntry*>(linitial(query->rtable));
  for (int depth = 0; depth < 64; ++depth) {
    if (entry->rtekind != RTE_SUBQUERY || entry->subquery == nullptr) return 0;
    Query* level = entry->subquery;
    if (level->hasWindowFuncs) {
      SamplerCount samplers{UnitGroupSampleFunction(), 0, 0, false};
      if (!OidIsValid(samplers.function)) return 0;
      (void)CountSamplers(reinterpret_cast<Node*>(level->targetList), &samplers);
      (void)CountSamplers(level->havingQual, &samplers);
      (void)CountSamplers(reinterpret_cast<Node*>(level->jointree), &samplers);
      *problem = "The tasks contain window functions.";
      if (samplers.other || samplers.samplers != 1 || samplers.max_groups < 1) return 0;
      *problem = "The tasks' per-unit level is not the one dp_agg's privacy-unit rewrite writes.";
      if (level->groupClause == NIL || !ReadsOneItemPlainly(level) ||
          !IsA(linitial(level->jointree->fromlist), RangeTblRef))
        return 0;
      // Below it: the table, directly or through plain projections.
      for (RangeTblEntry* below = static_cast<RangeTblEntry*>(linitial(level->rtable));
           below->rtekind != RTE_RELATION;
           below = static_cast<RangeTblEntry*>(linitial(below->subquery->rtable)))
        if (below->rtekind != RTE_SUBQUERY || below->subquery == nullptr ||
            !PassesRowsOn(below->subquery))
          return 0;
      Oid table = InvalidOid;
      AttrNumber unit = 0;
      if (!UnitOfLevel(level, &table, &unit)) return 0;
      char method = '\0';
      const AttrNumber distribution = DistributionColumn(table, &method);
      *problem =
          "The privacy unit table is not hash-distributed by its privacy unit column, so a "
          "unit's rows may be in several shards, each bounding them separately.";
      if (method != 'h' || distribution != unit) return 0;
      *problem = nullptr;
      return samplers.max_groups;
    }
    if (!PassesRowsOn(level)) return 0;
    entry = static_cast<RangeTblEntry*>(linitial(level->rtable));
  }
  return 0;
}

namespace {

bool OnlyBuiltinAggregates(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    const Oid function = reinterpret_cast<Aggref*>(node)->aggfnoid;
    if (function >= FirstNormalObjectId && !IsUnitSumAggregate(function)) return true;
  }
  if (IsA(node, Query) || IsA(node, SubLink)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(OnlyBuiltinAggregates), context);
}

// On a worker: the shard that a fragment of Citus's partial aggregation over
// the privacy-unit rewrite reads (see UnitJobGroups, which the coordinator
// checked before sending it), or nullptr when `query`'s one FROM item is not
// such a chain: plain projections, the per-unit level (one window of the
// sampler, built-in aggregates and dp_agg.unit_sum only, grouped and
// partitioned by the unit), plain projections, one shard whose table is
// hash-distributed by that column (compared by name: a shard's column
// numbers may differ from its table's).
// Whether `node` reads, at its own level, column `column` of range table
// entry `varno` (any column in `columns` when that is not null).
struct ColumnReference {
  Index varno;
  AttrNumber column;
  Bitmapset* columns;
};

bool ReadsColumn(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) {
    const auto* var = reinterpret_cast<Var*>(node);
    const auto* reference = static_cast<ColumnReference*>(context);
    return var->varlevelsup == 0 && var->varno == static_cast<int>(reference->varno) &&
           (reference->columns != nullptr ? bms_is_member(var->varattno, reference->columns)
                                          : var->varattno == reference->column);
  }
  if (IsA(node, Query)) return true;  // fail closed
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ReadsColumn), context);
}

// Whether `above` (the level whose one FROM item is the per-unit level
// `level`) keeps only the rows the sampler marked: its WHERE is exactly the
// sampler's output column, as the privacy-unit rewrite writes it
// (RewriteUnitLevel's `WHERE unit_group_kept`).
bool KeepsOnlySampledRows(Query* above, Query* level) {
  Node* quals = StripRelabel(above->jointree->quals);
  if (quals == nullptr || !IsA(quals, Var)) return false;
  const auto* var = reinterpret_cast<Var*>(quals);
  if (var->varno != 1 || var->varlevelsup != 0) return false;
  TargetEntry* entry = get_tle_by_resno(level->targetList, var->varattno);
  if (entry == nullptr || entry->resjunk) return false;
  Node* sampler = StripRelabel(reinterpret_cast<Node*>(entry->expr));
  return sampler != nullptr && IsA(sampler, WindowFunc) &&
         reinterpret_cast<WindowFunc*>(sampler)->winfnoid == UnitGroupSampleFunction();
}

// Whether a group key of the fragment `chain` (the levels above the per-unit
// level `level`, top first) depends on the unit: the rewrite never groups
// the private level by it (the coordinator refuses the unit column as a
// group key), and a per-unit group key would hand out one exact state per
// unit.
bool GroupsByUnit(List* chain, Query* level) {
  Node* key = UnitPartitionKey(level);
  if (key == nullptr || !IsA(key, Var)) return true;
  const auto* unit = reinterpret_cast<Var*>(key);
  // The per-unit level's outputs that depend on the unit, then those of
  // each level above that read one of them.
  Bitmapset* unit_columns = nullptr;
  ColumnReference reference{static_cast<Index>(unit->varno), unit->varattno, nullptr};
  ListCell* cell;
  foreach (cell, level->targetList) {
    auto* entry = static_cast<TargetEntry*>(lfirst(cell));
    if (ReadsColumn(reinterpret_cast<Node*>(entry->expr), &reference))
      unit_columns = bms_add_member(unit_columns, entry->resno);
  }
  for (int index = list_length(chain) - 1; index >= 0; --index) {
    auto* above = static_cast<Query*>(list_nth(chain, index));
    if (unit_columns == nullptr) return false;
    ColumnReference below{1, 0, unit_columns};
    if (index == 0) {
      foreach (cell, above->groupClause) {
        TargetEntry* entry =
            get_sortgroupclause_tle(static_cast<SortGroupClause*>(lfirst(cell)), above->targetList);
        if (ReadsColumn(reinterpret_cast<Node*>(entry->expr), &below)) return true;
      }
      return false;
    }
    Bitmapset* next = nullptr;
    foreach (cell, above->targetList) {
      auto* entry = static_cast<TargetEntry*>(lfirst(cell));
      if (ReadsColumn(reinterpret_cast<Node*>(entry->expr), &below))
        next = bms_add_member(next, entry->resno);
    }
    unit_columns = next;
  }
  return false;
}

}  // namespace

RangeTblEntry* WorkerUnitFragmentShard(Query* query) {
  if (list_length(query->rtable) != 1) return nullptr;
  auto* entry = static_cast<RangeTblEntry*>(linitial(query->rtable));
  Query* level = nullptr;
  List* chain = list_make1(query);  // the levels above the per-unit level, top first
  for (int depth = 0; depth < 64 && level == nullptr; ++depth) {
    if (entry->rtekind != RTE_SUBQUERY || entry->subquery == nullptr) return nullptr;
    Query* candidate = entry->subquery;
    if (candidate->hasWindowFuncs) {
      level = candidate;
      break;
    }
    if (!PassesRowsOn(candidate)) return nullptr;
    chain = lappend(chain, candidate);
    entry = static_cast<RangeTblEntry*>(linitial(candidate->rtable));
  }
  if (level == nullptr) return nullptr;
  SamplerCount samplers{UnitGroupSampleFunction(), 0, 0, false};
  if (!OidIsValid(samplers.function)) return nullptr;
  (void)CountSamplers(reinterpret_cast<Node*>(level->targetList), &samplers);
  if (samplers.other || samplers.samplers != 1 || samplers.max_groups < 1) return nullptr;
  if (level->groupClause == NIL || !ReadsOneItemPlainly(level) ||
      OnlyBuiltinAggregates(reinterpret_cast<Node*>(level->targetList), nullptr) ||
      OnlyBuiltinAggregates(level->havingQual, nullptr) ||
      OnlyBuiltinAggregates(reinterpret_cast<Node*>(level->jointree), nullptr))
    return nullptr;
  // Exactly the coordinator's rewrite above it: only the sampled rows, and
  // no group key per unit (review of privacy units on Citus, finding R2).
  if (!KeepsOnlySampledRows(static_cast<Query*>(llast(chain)), level) || GroupsByUnit(chain, level))
    return nullptr;
  RangeTblEntry* shard = static_cast<RangeTblEntry*>(linitial(level->rtable));
  while (shard->rtekind != RTE_RELATION) {
    if (shard->rtekind != RTE_SUBQUERY || shard->subquery == nullptr ||
        !PassesRowsOn(shard->subquery))
      return nullptr;
    shard = static_cast<RangeTblEntry*>(linitial(shard->subquery->rtable));
  }
  Oid table = InvalidOid;
  AttrNumber unit = 0;
  if (!UnitOfLevel(level, &table, &unit) || table != shard->relid) return nullptr;
  const Oid parent = CitusShardParent(shard->relid);
  if (!OidIsValid(parent)) return nullptr;
  char method = '\0';
  const AttrNumber distribution = DistributionColumn(parent, &method);
  if (method != 'h' || distribution <= 0) return nullptr;
  char* unit_name = get_attname(shard->relid, unit, true);
  char* distribution_name = get_attname(parent, distribution, true);
  if (unit_name == nullptr || distribution_name == nullptr ||
      std::strcmp(unit_name, distribution_name) != 0)
    return nullptr;
  return shard;
}

}  // namespace dp_pg
