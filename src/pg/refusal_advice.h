// The specific fix a refusal gives for the construct it refuses (issue 27):
// a BI user reads one short sentence that says what to write instead, not a
// list of everything dp_agg accepts. Each function returns a static string
// (or one palloc'd in the current memory context) of at most a few hundred
// bytes; the caller puts it into the HINT and, because psqlODBC drops HINTs,
// after the reason in the DETAIL (refusal.h).
#ifndef DP_AGG_PG_REFUSAL_ADVICE_H
#define DP_AGG_PG_REFUSAL_ADVICE_H

#include "pg_includes.h"

namespace dp_pg {

// For a built-in aggregate (count, sum, avg, min, max, ...) over protected
// rows: the private aggregate to write instead.
const char* PlainAggregateAdvice(const Aggref* aggref);

// For a function or operator that is not total (`call` the FuncExpr, OpExpr
// or similar, or nullptr): how to write the condition with what is accepted.
const char* NonTotalCallAdvice(Oid function, const Node* call);

// For an expression node of a kind that is not accepted on protected rows
// (a cast through text, a domain check, GREATEST/LEAST, an array, ...).
const char* ExpressionAdvice(const Node* node);

// The name of a call as the query wrote it: "cast from numeric to integer"
// for a cast (CAST(x AS integer), x::integer, and the casts drivers write,
// such as psqlODBC's {fn YEAR(x)}), or "" when the call is not a cast.
// palloc'd.
const char* CastSpelling(const Node* call);

}  // namespace dp_pg

#endif  // DP_AGG_PG_REFUSAL_ADVICE_H
