#include "aggregate_rules.h"

extern "C" {
#include "utils/regproc.h"
}

#include "allow_list.h"
#include "call_sites.h"
#include "input_checks.h"
#include "refusal.h"
#include "refusal_advice.h"
#include "row_expressions.h"
#include "settings.h"

namespace dp_pg {

namespace {

struct AggregateCheck {
  bool restricted;
  bool found_private;
};

// dp_select compares each value with its candidates under the call's
// collation.
void CheckValueCollation(Aggref* aggref) {
  if (!TestFaultIs(TestFault::kIndeterminateCollation) &&
      !CollationIsTotal(type_is_collatable(exprType(reinterpret_cast<Node*>(
                            linitial_node(TargetEntry, aggref->args)->expr))),
                        aggref->inputcollid))
    Refuse(ERRCODE_INDETERMINATE_COLLATION,
           "a private aggregate over protected text needs one deterministic collation",
           "Comparing its values without a determined collation fails once a row arrives.",
           "Add COLLATE \"C\" (or another deterministic collation) to the value.");
}

// A restricted role's call of a private aggregate.
// dp_count(DISTINCT value, ...): the values are sorted and compared, so
// they must be of a type whose equality is identity of the printed value
// (as group keys) with a determined, deterministic collation.
void CheckDistinctCount(Aggref* aggref) {
  const Node* value = reinterpret_cast<Node*>(linitial_node(TargetEntry, aggref->args)->expr);
  const Oid type = exprType(value);
  if (!IsExactKeyType(type)) {
    char rule[256];
    snprintf(rule, sizeof rule,
             "dp_count(DISTINCT ...) over protected rows may not count values of type %s",
             format_type_be(type));
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
           "Equal values of this type can differ in spelling (1.0 and 1.00, -0 and 0).",
           "Count distinct integers, text, varchar, booleans, dates, timestamps, uuids, bytea or "
           "enums, e.g. dp_count(DISTINCT region, 1.0).");
  }
}

void CheckPrivateCall(Aggref* aggref) {
  const bool distinct_count =
      aggref->aggorder == NIL && aggref->aggdistinct != NIL && IsPrivateCount(aggref);
  if (distinct_count) CheckDistinctCount(aggref);
  if (!distinct_count && (aggref->aggdistinct != NIL || aggref->aggorder != NIL))
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
           "DISTINCT or ORDER BY inside a private aggregate is not supported",
           "The aggregates' guarantees are stated for every row counted once.",
           "Remove DISTINCT/ORDER BY from the aggregate's arguments; only dp_count takes "
           "DISTINCT: dp_count(DISTINCT column, epsilon).");
  // The value (and dp_select's weight) is evaluated per row; the other
  // arguments are parameters that the executor hook evaluates once,
  // before any row is read (call_sites.cpp), so they cannot fail for
  // some rows only.
  const int per_row = PerRowArgumentCount(aggref);
  int position = 0;
  ListCell* cell;
  foreach (cell, aggref->args) {
    if (position++ >= per_row) break;
    CheckRowExpression(reinterpret_cast<Node*>(static_cast<TargetEntry*>(lfirst(cell))->expr),
                       "an aggregate's value");
  }
  CheckRowExpression(reinterpret_cast<Node*>(aggref->aggfilter), "an aggregate's FILTER");
  CheckValueCollation(aggref);
}

bool CheckAggregates(Node* node, AggregateCheck* check) {
  if (node == nullptr) return false;
  if (IsA(node, Query)) return false;
  if (IsA(node, Aggref)) {
    auto* aggref = reinterpret_cast<Aggref*>(node);
    if (aggref->agglevelsup != 0) {
      if (check->restricted)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "an outer query's aggregate over protected rows",
               "An aggregate of an outer query cannot read protected rows.", kAggregateHint);
      return false;
    }
    if (LookupPrivateAggregate(aggref->aggfnoid) == nullptr) {
      if (!check->restricted) return false;
      char rule[256];
      snprintf(rule, sizeof rule, "%s is not a differentially private aggregate",
               format_procedure(aggref->aggfnoid));
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
             "Its answer about protected rows would be exact.", PlainAggregateAdvice(aggref));
    }
    check->found_private = true;
    if (check->restricted) CheckPrivateCall(aggref);
    return false;  // no aggregates inside aggregates
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckAggregates), check);
}

}  // namespace

bool CheckAggregateCalls(Query* level, bool restricted) {
  AggregateCheck check{restricted, false};
  CheckAggregates(reinterpret_cast<Node*>(level->targetList), &check);
  CheckAggregates(level->havingQual, &check);
  return check.found_private;
}

}  // namespace dp_pg
