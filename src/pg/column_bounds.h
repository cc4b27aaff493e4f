// Public column bounds: the range an administrator declares for a numeric
// column, once, so that plain sum() and avg() over protected rows can be
// answered as dp_sum and dp_avg (plain_aggregates.h).
//
//   SELECT dp_agg.set_column_bounds('hr.patients', 'age', 0, 110);
//   -- stored as SECURITY LABEL FOR dp_agg ON COLUMN hr.patients.age
//   --           IS 'bounds [0, 110]'
//
// Bounds are public parameters, like the bounds written into a dp_sum call:
// the administrator's declaration, never derived from the data. Values
// outside them are clamped (the sensitivity of a sum is max(|lower|,
// |upper|), of a mean (upper - lower); Dwork and Roth 2014, 3.3). Kept as a
// security label, so pg_dump carries them with the table, a renamed column
// keeps them and a dropped column takes them along.
#ifndef DP_AGG_PG_COLUMN_BOUNDS_H
#define DP_AGG_PG_COLUMN_BOUNDS_H

#include "pg_includes.h"

namespace dp_pg {

// Whether `label` is a bounds label ('bounds [...]'), valid or not.
bool IsBoundsLabel(const char* label);

// Checks a bounds label for column `column` of `relation` (ERROR 22023 with
// the fix when the column is not numeric, the text is not 'bounds [lower,
// upper]' with finite lower <= upper, or an integer column gets bounds that
// are not integers of its type).
void CheckBoundsLabel(Oid relation, AttrNumber column, const char* label);

// The declared bounds of `column` of `relation` as constants of type `as`
// (the column's type, or a wider numeric type it is cast to); false if none
// are declared.
bool DeclaredColumnBounds(Oid relation, AttrNumber column, Oid as, Const** lower, Const** upper);

// Whether a cast from numeric type `from` to `to` keeps every value of
// `from` exactly or rounds it monotonically and never fails (integers to
// wider integers, numeric, real or double precision; real to double
// precision): clamping the cast value to the cast bounds then equals
// casting the clamped value.
bool IsWideningCast(Oid from, Oid to);

}  // namespace dp_pg

#endif  // DP_AGG_PG_COLUMN_BOUNDS_H
