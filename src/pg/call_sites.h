// Executor hook that prepares every private aggregate call of a query.
#ifndef DP_AGG_PG_CALL_SITES_H
#define DP_AGG_PG_CALL_SITES_H

#include "pg_includes.h"

namespace dp_pg {

struct PrivateAggregateKind;

// The private aggregate behind pg_proc OID `aggregate`, or nullptr.
const PrivateAggregateKind* LookupPrivateAggregate(Oid aggregate);

// How many leading arguments of the call `aggref` are evaluated per row (the
// value, and the weight of weighted dp_select); the others are parameters,
// evaluated once before any row is read. Counted from the aggregate's
// signature, never from aggref->args (which also holds ORDER BY keys).
int PerRowArgumentCount(Aggref* aggref);

// The number of arguments in the signature of the private aggregate called
// by `aggref` (pg_proc.pronargs; ERROR if the call does not match it).
int DeclaredArgumentCount(Aggref* aggref);

void InstallExecutorHook();

// Whether `expression` is the same for every row: constants, query
// parameters ($1) and built-in IMMUTABLE functions of those.
bool IsRowInvariant(Node* expression);

// Argument `position` of a private aggregate call, which must be the same
// for every row (ERROR 22023 otherwise), evaluated once before execution.
// The value lives in the per-tuple memory of `estate`: copy it before the
// next reset.
Datum EvaluateParameter(Aggref* aggref, int position, const char* role, EState* estate,
                        bool* is_null);

// Argument `position` of a private aggregate call, a float8 that must be the
// same for every row, evaluated once before execution (ERROR 22023 if NULL
// or if it could vary between rows).
double EvaluateDoubleParameter(Aggref* aggref, int position, const char* role, EState* estate);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CALL_SITES_H
