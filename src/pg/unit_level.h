// What the privacy-unit checks (unit_checks.cpp) and the rewrite
// (unit_rewrite.cpp) share about a private aggregation level over privacy
// units (unit_rewrite.h): how each private aggregate combines one unit's
// rows, the level's shape, and the refusal. Internal to those two files.
#ifndef DP_AGG_PG_UNIT_LEVEL_H
#define DP_AGG_PG_UNIT_LEVEL_H

#include "pg_includes.h"

namespace dp_pg {
namespace unit_level {

// A level over privacy units that is not supported: ERROR 0A000 with the
// README's section as the hint.
[[noreturn]] void RefuseUnitLevel(const char* message, const char* detail);

// How the unit level combines one unit's rows for a private aggregate
// before the private aggregate runs over one row per unit and group
// (README "Privacy units", the table of per-unit values).
enum class UnitCombination {
  kUnsupported,
  kCount,  // 1 if the unit has a counted row (count, NULL when zero)
  kSum,  // the unit's total, clamped to [lower, upper]
  kMean,  // the unit's mean (BigQuery's AVG)
  kQuantile,  // the unit's lower median (a value it has)
  kVote,  // the unit's most frequent value (one vote per unit)
  kUnitRows,  // group selection: counts the outer level's rows, one per unit kept
};

UnitCombination UnitCombinationOf(Aggref* aggref);

// The expression of the aggregate's argument at `position`.
Expr* ArgumentAt(Aggref* aggref, int position);

struct LevelShape {
  List* keys;  // Expr* of the group keys, in groupClause order
  Index item;
  AttrNumber column;  // the unit column of a table; 0 for a subquery
  // For a subquery (UnitSubquery): its output columns computed from the
  // unit, and those that are the unit column itself.
  Bitmapset* unit_derived = nullptr;
  Bitmapset* unit_itself = nullptr;
};

// The expressions of the level's group keys, in groupClause order.
List* GroupKeyExpressions(Query* query);

// The position of `node` among the level's group keys, or -1.
int KeyPosition(const LevelShape& shape, Node* node);

// Fills the subquery's output columns computed from its unit (join alias
// variables flattened first), and those that are the unit itself.
void DescribeSubqueryColumns(Query* subquery, Index inner_item, AttrNumber inner_column,
                             LevelShape* shape);

}  // namespace unit_level
}  // namespace dp_pg

#endif  // DP_AGG_PG_UNIT_LEVEL_H
