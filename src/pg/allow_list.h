// What a restricted query may evaluate on protected rows: an explicit,
// audited list of total functions, and the types whose group keys print the
// same for every member of a group. Default deny: what is not listed here is
// refused by the query rules (row_expressions.h, group_keys.h).
#ifndef DP_AGG_PG_ALLOW_LIST_H
#define DP_AGG_PG_ALLOW_LIST_H

#include "pg_includes.h"

namespace dp_pg {

// Whether built-in function `function` is total: for every input it returns
// a value and never raises an error, provided that a collation-sensitive
// call gets a determined, deterministic collation (CollationIsTotal). That a
// function is LEAKPROOF in pg_proc is not enough: texteq is LEAKPROOF and
// still raises "could not determine which collation to use" when the query
// gives it an indeterminate collation, and an error that can happen for a
// reason decided by the query becomes a one-bit oracle as soon as a
// condition on protected rows guards its evaluation (CASE, FILTER, AND).
bool IsTotalFunction(Oid function) noexcept;

// Whether built-in function `function` can raise for some inputs but has a
// total version dp_agg.total_<its name> with the same signature
// (total_functions.cpp), which the query rewrite puts in its place on
// protected rows (RewriteKind::kTotalArithmetic): + - * / % and unary minus
// of integers, + - * / of floats, + - * / % of numerics, numeric -> float8,
// date +- integer and timestamp[tz] +- interval, date_trunc, lower/upper,
// LIKE, ILIKE, length, substring, floor/ceil/round/trunc of numeric and
// width_bucket.
bool HasTotalReplacement(Oid function) noexcept;

// Whether the total version of `function` bounds its work per call by a cap
// (total_functions.cpp: texts of 64 KiB, numeric operands of 1000
// base-10000 digits) and costs up to about a millisecond or more at it: the
// text functions, numeric * / % and numeric -> float8, rounding and
// width_bucket of numeric. The judge counts these calls in the expressions
// a query evaluates on protected rows (row_expressions.h).
bool HasWorkCap(Oid function) noexcept;

// Whether a call with input collation `collation` over arguments of types
// that include a collatable one (`needs_collation`) cannot fail for lack of
// a collation: the collation is determined (not InvalidOid, which the parser
// leaves when two different implicit collations meet) and deterministic.
bool CollationIsTotal(bool needs_collation, Oid collation);

// Whether a cast to text through the type's output function (CoerceViaIO)
// is total for every value of `type` (a domain counts as its base type):
// integers, bool, uuid, floats, numeric, date, timestamp, timestamptz. The
// text's spelling follows the session's settings (DateStyle, TimeZone,
// extra_float_digits), the same for every row of one query.
bool IsTotalTextCastSource(Oid type);

// Whether released group keys of type `type` (a domain counts as its base
// type) print the same text for all members of a group: equality on the
// type is identity of the printed value. interval ('1 day' = '24:00:00'),
// float (-0 = 0), numeric (1.0 = 1.00), bpchar (trailing blanks), timetz
// and jsonb are not, so one row's own spelling would be released.
bool IsExactKeyType(Oid type);

}  // namespace dp_pg

#endif  // DP_AGG_PG_ALLOW_LIST_H
