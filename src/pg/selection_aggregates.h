// dp_select (selection_aggregates.cpp).
#ifndef DP_AGG_PG_SELECTION_AGGREGATES_H
#define DP_AGG_PG_SELECTION_AGGREGATES_H

#include "call_parameters.h"
#include "pg_includes.h"

namespace dp_pg {

// Checks the candidate array of a dp_select call (1 to 100000 distinct
// non-NULL values; its other parameters are validated already) and returns
// its initial state (palloc'd in the current memory context).
Datum PrepareSelectionInitialState(Aggref* aggref, const CallParameters& call,
                                   const dp::PrivacyParameters& effective);

}  // namespace dp_pg

extern "C" {
PGDLLEXPORT Datum dp_select_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_select_final(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_SELECTION_AGGREGATES_H
