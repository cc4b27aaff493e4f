// dp_percentile and dp_median (quantile_aggregates.cpp).
#ifndef DP_AGG_PG_QUANTILE_AGGREGATES_H
#define DP_AGG_PG_QUANTILE_AGGREGATES_H

#include "pg_includes.h"

namespace dp_pg {

// Checks the parameters of a dp_percentile / dp_median call and returns its
// initial state (palloc'd in the current memory context).
Datum PrepareQuantileInitialState(Aggref* aggref, EState* estate, double* requested_epsilon);

}  // namespace dp_pg

extern "C" {
PGDLLEXPORT Datum dp_quantile_transfn(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_QUANTILE_AGGREGATES_H
