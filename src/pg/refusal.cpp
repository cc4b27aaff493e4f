#include "refusal.h"

extern "C" {
#include "mb/pg_wchar.h"
#include "tcop/tcopprot.h"
}

namespace dp_pg {

namespace {

// The 1-based character position of byte offset `location` in the query
// text, or 0 (none) unless the text there starts with `spelling`: a cached
// plan made again for EXECUTE carries offsets into the text of PREPARE, not
// into the statement running now, and a wrong position would mislead.
int PositionOf(int location, const char* spelling) {
  if (location < 0 || debug_query_string == nullptr || spelling == nullptr) return 0;
  const size_t length = strlen(debug_query_string);
  if (static_cast<size_t>(location) >= length) return 0;
  if (pg_strncasecmp(debug_query_string + location, spelling, strlen(spelling)) != 0) return 0;
  return pg_mbstrlen_with_len(debug_query_string, location) + 1;
}

}  // namespace

[[noreturn]] void RefuseAt(int code, const char* rule, const char* detail, const char* hint,
                           int location, const char* spelling) {
  const int position = PositionOf(location, spelling);
  // The advice goes into DETAIL too: psqlODBC (Excel, Power BI, Tableau)
  // shows message and DETAIL and drops the HINT.
  ereport(ERROR, (errcode(code), errmsg("dp_agg: %s", rule), errdetail("%s %s", detail, hint),
                  errhint("%s", hint), position > 0 ? errposition(position) : 0));
  pg_unreachable();
}

[[noreturn]] void Refuse(int code, const char* rule, const char* detail, const char* hint) {
  RefuseAt(code, rule, detail, hint, -1, nullptr);
}

const char* const kAggregateHint =
    "Ask for private aggregates instead, such as SELECT region, dp_count(1.0) FROM t GROUP BY "
    "region (dp_count, dp_sum, dp_avg, dp_variance, dp_stddev, dp_median, dp_percentile, "
    "dp_select), and transform their answers in an outer query.";

const char* const kJoinHint =
    "Join a protected table only to public tables, on equality with every column of a unique "
    "index or primary key of the public table, so that each protected row meets at most one "
    "row of each; aggregate first and join the answers otherwise.";

}  // namespace dp_pg
