// Allow-listed functions that are total only for some values of an argument
// that the query gives as a constant: a LIKE or ILIKE pattern (an escape at
// its end raises "LIKE pattern must not end with escape character" only once
// a row matches up to it), the field of extract/date_part/date_trunc (an
// unsupported field raises for finite values only, or for infinite ones
// only), substring's length (negative raises), width_bucket's bounds and
// count, and to_char's format (TM reads lc_time's names). The judge checks
// those constants from the query alone, before any row is read.
#ifndef DP_AGG_PG_CONSTANT_ARGUMENTS_H
#define DP_AGG_PG_CONSTANT_ARGUMENTS_H

#include "pg_includes.h"

namespace dp_pg {

// Refuses (42501, naming `call` and its position) unless every argument of
// `function` that must be a checked constant is one; does nothing for other
// functions. `arguments` are the call's arguments after constant folding.
void CheckConstantArguments(Oid function, List* arguments, const Node* call, const char* place);

// Whether group key `key` is extract(field FROM ...) or date_part(field,
// ...) with a constant field whose values print the same for equal values
// (a fixed number of decimals: every field but julian, whose numeric scale
// follows the value), so that its numeric or float8 result may be released.
bool IsExactDatePartKey(Node* key);

// Whether group key `key` is floor, ceil, ceiling, round or trunc of a
// numeric (round and trunc with a constant scale): every value of such a
// key has the same number of decimals (dscale), so equal values print the
// same and the numeric result may be released.
bool IsExactRoundingKey(Node* key);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CONSTANT_ARGUMENTS_H
