// What the judge prepares for the total versions of total_functions.cpp.
#ifndef DP_AGG_PG_TOTAL_FUNCTIONS_H
#define DP_AGG_PG_TOTAL_FUNCTIONS_H

#include "pg_includes.h"

namespace dp_pg {

// Work the total functions of this backend have done since it started: text
// bytes read by the text functions, and digits (or scaled digit products)
// of numeric operands (total_functions.cpp). A count, not a stopwatch: the
// same query over the same rows counts the same. The neighbour fuzzer reads
// it through the superuser-only setting dp_agg.insecure_test_work_units
// (settings.cpp) and compares it between neighbouring databases.
extern uint64 total_work_units;

// Builds PostgreSQL's lc_time name cache for the session's lc_time (raising
// while planning if it cannot) and records that lc_time as verified: the
// total to_char then runs the built-in only while lc_time is unchanged.
// Called by the rewrite for every to_char it replaces by its total version.
void PinLcTimeForToChar();

}  // namespace dp_pg

#endif  // DP_AGG_PG_TOTAL_FUNCTIONS_H
