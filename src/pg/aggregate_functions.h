// SQL-callable support functions of the private aggregates (aggregates.cpp).
// The executor hook recognises a private aggregate by its transition
// function's address, so these declarations are shared with call_sites.cpp.
#ifndef DP_AGG_PG_AGGREGATE_FUNCTIONS_H
#define DP_AGG_PG_AGGREGATE_FUNCTIONS_H

#include "pg_includes.h"

extern "C" {
PGDLLEXPORT Datum dp_count_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_int2_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_int4_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_int8_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_float4_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_float8_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_numeric_transfn(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_group_selection_transfn(PG_FUNCTION_ARGS);
// Final functions that return the value with its confidence interval.
PGDLLEXPORT Datum dp_count_interval_final(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_sum_interval_final(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_avg_interval_final(PG_FUNCTION_ARGS);
// The other final functions (which release each makes).
PGDLLEXPORT Datum dp_count_final(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_sum_final_int8(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_sum_final_numeric(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_sum_final_float4(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_sum_final_float8(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_avg_final_float8(PG_FUNCTION_ARGS);
PGDLLEXPORT Datum dp_avg_final_numeric(PG_FUNCTION_ARGS);
}

#endif  // DP_AGG_PG_AGGREGATE_FUNCTIONS_H
