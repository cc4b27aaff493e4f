// Judging the expressions a query evaluates on protected rows (WHERE, JOIN
// ... ON, select lists of row levels, GROUP BY keys, HAVING, an aggregate's
// per-row arguments and FILTER) against the allow list (allow_list.h):
// default deny, every node left after constant folding must be unable to
// fail, because an error raised only for some rows reveals them.
#ifndef DP_AGG_PG_ROW_EXPRESSIONS_H
#define DP_AGG_PG_ROW_EXPRESSIONS_H

#include "pg_includes.h"

namespace dp_pg {

// Refuses `expression` (which may be nullptr or a List) unless every node of
// it, after constant folding, is total. `place` names where it runs, for
// messages ("WHERE", "GROUP BY", ...). Raises ERROR; modifies nothing.
void CheckRowExpression(Node* expression, const char* place);

// Starts the counts of expression nodes and of work-capped calls (README
// "Work per row") for a new statement: CheckRowExpression and
// CheckHavingExpression refuse a statement whose expressions over protected
// rows pass either limit. Called by JudgeQuery.
void ResetRowExpressionCounts();

// The same for a HAVING clause, where aggregates are leaves. When the level's
// groups are not gated by partition selection (`groups_gated` false: every
// group is released anyway), a function of aggregate answers alone is
// post-processing and need not be total.
void CheckHavingExpression(Node* having, bool groups_gated);

// Refuses a call of `function`, which is not total, in `place`.
[[noreturn]] void RefuseNonTotalFunction(Oid function, const char* place);

// The same, naming `call` (the FuncExpr, OpExpr, ... that calls `function`,
// or nullptr) as the user wrote it, with its position in the query text.
[[noreturn]] void RefuseNonTotalCall(Oid function, const Node* call, const char* place);

}  // namespace dp_pg

#endif  // DP_AGG_PG_ROW_EXPRESSIONS_H
