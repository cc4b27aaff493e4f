// dp_percentile and dp_median (quantile_aggregates.cpp).
#ifndef DP_AGG_PG_QUANTILE_AGGREGATES_H
#define DP_AGG_PG_QUANTILE_AGGREGATES_H

#include "../core/noise_mechanism.h"
#include "pg_includes.h"

namespace dp_pg {

// The initial state of a dp_percentile / dp_median call from its validated
// parameters (palloc'd in the current memory context).
Datum PrepareQuantileInitialState(const dp::PublicParameters& parameters,
                                  const dp::PrivacyParameters& effective);

}  // namespace dp_pg

extern "C" {
PGDLLEXPORT Datum dp_quantile_transfn(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_QUANTILE_AGGREGATES_H
