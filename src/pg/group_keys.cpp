#include "group_keys.h"

extern "C" {
#include "optimizer/tlist.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
}

#include "allow_list.h"
#include "constant_arguments.h"
#include "refusal.h"
#include "row_expressions.h"
#include "settings.h"

namespace dp_pg {

// A group key is released as the text of one of its group's rows: its type
// must print the same for every member of the group (IsExactKeyType), and
// grouping by it must not fail: a determined, deterministic collation for
// text, and a total equality operator.
void CheckGroupKey(Node* key, const SortGroupClause* clause) {
  const Oid type = exprType(key);
  if (!TestFaultIs(TestFault::kFirstKeySpelling) && !IsExactKeyType(type) &&
      !IsExactDatePartKey(key) && !IsExactRoundingKey(key)) {
    char rule[256];
    snprintf(rule, sizeof rule, "GROUP BY over protected rows may not use a key of type %s",
             format_type_be(type));
    Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, rule,
           "Equal values of this type can print differently (interval '1 day' and '24:00:00', "
           "float -0 and 0, numeric 1.0 and 1.00, char(n) with trailing blanks), so a released "
           "key would show one person's own spelling. Group keys may be integers, text, "
           "varchar, boolean, dates, timestamps, uuids, bytea or enums.",
           "Group by an expression of one of those types (for example an integer bucket "
           "computed from the column in a subquery), or by a public table's column.");
  }
  const Oid collation = exprCollation(key);
  if (!TestFaultIs(TestFault::kIndeterminateCollation) &&
      !CollationIsTotal(type_is_collatable(type), collation))
    Refuse(ERRCODE_INDETERMINATE_COLLATION,
           "a GROUP BY key over protected rows needs one deterministic collation",
           "Grouping text without a determined collation fails once a row arrives, and a "
           "nondeterministic collation puts differently spelled values into one group.",
           "Add COLLATE \"C\" (or another deterministic collation) to the key.");
  if (OidIsValid(clause->eqop) && !IsTotalFunction(get_opcode(clause->eqop)))
    RefuseNonTotalFunction(get_opcode(clause->eqop), "GROUP BY");
}

// Without this order a HashAggregate emits groups in hash-table order, where
// groups that partition selection suppressed still occupied buckets, and
// ties of the query's own ORDER BY would follow that order.
void OrderByGroupKeys(Query* query) {
  ListCell* cell;
  foreach (cell, query->groupClause) {
    auto* clause = static_cast<SortGroupClause*>(lfirst(cell));
    TargetEntry* entry = get_sortgroupclause_tle(clause, query->targetList);
    if (targetIsInSortList(entry, InvalidOid, query->sortClause)) continue;
    auto* order = static_cast<SortGroupClause*>(copyObjectImpl(clause));
    if (!OidIsValid(order->sortop)) {
      Oid equality = InvalidOid;
      bool hashable = false;
      get_sort_group_operators(exprType(reinterpret_cast<Node*>(entry->expr)), true, true, false,
                               &order->sortop, &equality, nullptr, &hashable);
    }
    order->nulls_first = false;
    query->sortClause = lappend(query->sortClause, order);
  }
}

}  // namespace dp_pg
