// dp_variance and dp_stddev (variance_aggregates.cpp).
#ifndef DP_AGG_PG_VARIANCE_AGGREGATES_H
#define DP_AGG_PG_VARIANCE_AGGREGATES_H

#include "../core/noise_mechanism.h"
#include "aggregate_catalog.h"
#include "pg_includes.h"

namespace dp_pg {

// The initial state of a dp_variance / dp_stddev call from its validated
// parameters (palloc'd in the current memory context); *gaussian_rho is the
// zCDP cost of its Gaussian form (0 for Laplace).
Datum PrepareVarianceInitialState(const PrivateAggregateKind& kind,
                                  const dp::PublicParameters& parameters,
                                  const dp::PrivacyParameters& effective, double* gaussian_rho);

}  // namespace dp_pg

extern "C" {
PGDLLEXPORT Datum dp_variance_int2_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_variance_int4_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_variance_int8_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_variance_float4_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_variance_float8_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_variance_numeric_transfn(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_VARIANCE_AGGREGATES_H
