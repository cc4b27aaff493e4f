// The judge: the rules a query must meet before it may read protected
// tables, decided on the rewritten query tree (views are expanded by then,
// and every plan, including generic plans of prepared statements, is made
// by the planner hook that calls it).
//
// Every query level is classified by what it returns:
//   public          touches no protected row, or only through private
//                   aggregates (their answers are differentially private);
//   protected rows  returns values of protected rows, one output row per
//                   protected row at most.
// A level that reads protected rows must be either
//   * a row level: filters and projections of one protected source, joined
//     to public tables on a unique key of theirs; its output may only feed
//     another such level or an aggregation level; or
//   * an aggregation level: only dp_agg's private aggregates over the same
//     kind of input, grouped by keys that are released only if DP partition
//     selection lets their group through (partition_selection.h).
// For restricted roles everything evaluated on protected rows must be total
// (row_expressions.h, allow_list.h), released group keys must print the
// same for every row of their group and released rows are ordered by their
// keys (group_keys.h), statistics in the catalogs stay closed
// (catalog_access.h), and protected rows may never reach the client. A query
// that passes reads the protected tables it names, and those that views of
// restricted roles name, as their owner (RangeTblEntry.checkAsUser, as for
// a view); nothing else does.
//
// Unrestricted roles keep their privileges; for them only the sensitivity
// rules of private aggregation levels over protected tables apply (one
// protected source, public tables joined on a unique key), which is what
// lets call_sites.cpp accept those joins.
#ifndef DP_AGG_PG_QUERY_JUDGEMENT_H
#define DP_AGG_PG_QUERY_JUDGEMENT_H

#include "pg_includes.h"

namespace dp_pg {

// An accepted query: what must change before it is planned.
struct Verdict {
  // Some level reads a protected table: the verdict depends on who runs the
  // query, so its plan must be made again when the current user changes.
  bool reads_protected;
  // Rewrite* (query_rewrites.h), in the order ApplyRewrites applies them.
  List* rewrites;
};

// Judges `query` for the current session. A refused query raises ERROR (a
// SQLSTATE, the rule in the message, why in DETAIL, what to do in HINT);
// an accepted one returns its verdict. Does not modify `query`: every change
// it needs is listed in the verdict's rewrites, whose nodes point into it.
Verdict JudgeQuery(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_QUERY_JUDGEMENT_H
