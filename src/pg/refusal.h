// How the query rules refuse a query: one ERROR with a SQLSTATE, a message
// naming the rule, a DETAIL saying why (psqlODBC drops HINTs, so the reason
// must be in DETAIL) and a HINT saying what to write instead. The hints that
// several rules share are defined once here.
#ifndef DP_AGG_PG_REFUSAL_H
#define DP_AGG_PG_REFUSAL_H

#include "pg_includes.h"

namespace dp_pg {

// Raises ERROR `code` with message "dp_agg: <rule>". It longjmps: call it only
// where no C++ object with a destructor is live.
[[noreturn]] void Refuse(int code, const char* rule, const char* detail, const char* hint);

// For rules that only private aggregates satisfy.
extern const char* const kAggregateHint;

// For expressions evaluated on protected rows that are not total.
extern const char* const kTotalHint;

// For joins that could repeat a protected row.
extern const char* const kJoinHint;

}  // namespace dp_pg

#endif  // DP_AGG_PG_REFUSAL_H
