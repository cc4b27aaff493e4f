// What the judge prepares for the total versions of total_functions.cpp.
#ifndef DP_AGG_PG_TOTAL_FUNCTIONS_H
#define DP_AGG_PG_TOTAL_FUNCTIONS_H

namespace dp_pg {

// Builds PostgreSQL's lc_time name cache for the session's lc_time (raising
// while planning if it cannot) and records that lc_time as verified: the
// total to_char then runs the built-in only while lc_time is unchanged.
// Called by the rewrite for every to_char it replaces by its total version.
void PinLcTimeForToChar();

}  // namespace dp_pg

#endif  // DP_AGG_PG_TOTAL_FUNCTIONS_H
