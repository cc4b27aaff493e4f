// How the query rules refuse a query: one ERROR with a SQLSTATE, a message
// naming the rule, a DETAIL saying why and what to write instead, and that
// advice again as HINT (psqlODBC drops HINTs, so DETAIL must carry both). The hints that
// several rules share are defined once here.
#ifndef DP_AGG_PG_REFUSAL_H
#define DP_AGG_PG_REFUSAL_H

#include "pg_includes.h"

namespace dp_pg {

// Raises ERROR `code` with message "dp_agg: <rule>". It longjmps: call it only
// where no C++ object with a destructor is live.
// The DETAIL is `detail` followed by `hint`, which is also the HINT.
[[noreturn]] void Refuse(int code, const char* rule, const char* detail, const char* hint);

// Refuse, with the error position of the user's expression at byte offset
// `location` of the query text (a node's location, -1 for none), given only
// if the text there starts with `spelling` (case-insensitive).
[[noreturn]] void RefuseAt(int code, const char* rule, const char* detail, const char* hint,
                           int location, const char* spelling);

// For rules that only private aggregates satisfy.
extern const char* const kAggregateHint;

// For joins that could repeat a protected row.
extern const char* const kJoinHint;

}  // namespace dp_pg

#endif  // DP_AGG_PG_REFUSAL_H
