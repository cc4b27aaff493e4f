#include "refusal.h"

namespace dp_pg {

[[noreturn]] void Refuse(int code, const char* rule, const char* detail, const char* hint) {
  ereport(ERROR, (errcode(code), errmsg("dp_agg: %s", rule), errdetail("%s", detail),
                  errhint("%s", hint)));
  pg_unreachable();
}

const char* const kAggregateHint =
    "Restricted roles see protected tables only through dp_agg's private aggregates "
    "(dp_count, dp_sum, dp_avg, dp_percentile, dp_select, ...); transform their answers in an "
    "outer query.";

const char* const kTotalHint =
    "On protected rows use comparisons of integers, floats, numerics, text (with one "
    "deterministic collation), dates and timestamps, AND/OR/NOT, CASE, COALESCE, IS NULL and "
    "widening casts; compute anything else from the released answers in an outer query.";

const char* const kJoinHint =
    "Join a protected table only to public tables, on equality with every column of a unique "
    "index or primary key of the public table, so that each protected row meets at most one "
    "row of each; aggregate first and join the answers otherwise.";

}  // namespace dp_pg
