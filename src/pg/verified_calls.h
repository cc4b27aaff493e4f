// Calls of a non-total function whose arguments are all constants, made
// total by running them once while planning (issue 27): Superset's time-range
// filters compare a column with TO_TIMESTAMP('2026-01-01 00:00:00.000000',
// 'YYYY-MM-DD HH24:MI:SS.US') and TO_DATE('2026-01-01', 'YYYY-MM-DD').
//
// to_timestamp(text, text) and to_date(text, text) raise for malformed input
// and, near the ends of the range, depending on the session's TimeZone. They
// are STABLE, so PostgreSQL evaluates them at execution, once per row that
// reaches them: with constant arguments the outcome is the same for every
// row, but a CASE, a FILTER or an AND before it decides whether any row
// reaches the call, and an error would then tell that such a row exists.
//
// So the judge accepts them only with constant arguments (constant_arguments.h)
// and the rewrite runs the built-in once, while planning (an error then
// depends on the query and the session's settings only, and comes before
// anything is charged), and puts dp_agg.total_to_timestamp(text, text,
// result, settings) or dp_agg.total_to_date(...) in its place: they return
// the recorded result while the settings it depends on (TimeZone, lc_time)
// are those it was computed under, and NULL otherwise (a plan kept by
// PREPARE and run after SET TimeZone). They never parse anything at run time.
#ifndef DP_AGG_PG_VERIFIED_CALLS_H
#define DP_AGG_PG_VERIFIED_CALLS_H

#include "pg_includes.h"

namespace dp_pg {

// Whether `function` is run once while planning when its arguments are
// constants (to_timestamp(text, text), to_date(text, text)).
bool IsVerifiedCallFunction(Oid function);

// The call's total replacement: the built-in evaluated now (raising if it
// raises), recorded with the settings it read. `call`'s arguments must be
// constants (the judge checked them); a NULL constant gives a NULL constant.
Node* VerifiedCall(FuncExpr* call);

// The settings the recorded result depends on, as one text (TimeZone and
// lc_time), compared at every call of the replacement.
text* VerifiedCallSettings();

}  // namespace dp_pg

#endif  // DP_AGG_PG_VERIFIED_CALLS_H
