// dp_select (selection_aggregates.cpp).
#ifndef DP_AGG_PG_SELECTION_AGGREGATES_H
#define DP_AGG_PG_SELECTION_AGGREGATES_H

#include "pg_includes.h"

namespace dp_pg {

// Checks the parameters of a dp_select call (epsilon, weight bounds, the
// candidate array: 1 to 100000 distinct non-NULL values) and returns its
// initial state (palloc'd in the current memory context).
Datum PrepareSelectionInitialState(Aggref* aggref, EState* estate, double* requested_epsilon);

}  // namespace dp_pg

extern "C" {
PGDLLEXPORT Datum dp_select_transfn(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_SELECTION_AGGREGATES_H
