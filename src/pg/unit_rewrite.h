// Privacy units: a column labelled 'privacy_unit' (restriction.h) says that
// all rows with one value belong to one person, and neighbouring databases
// differ by all rows of one unit. A private aggregation level that reads such
// a table directly is rewritten into two levels (README "Privacy units"):
//
//   SELECT keys, dp_sum(s, L, U, eps / m)             -- outer: private
//   FROM (SELECT keys, unit, sum(v) AS s,             -- inner: per unit
//                dp_agg.unit_group_sample(m)
//                  OVER (PARTITION BY unit) AS kept
//         FROM ... WHERE ... GROUP BY unit, keys) dp_agg_units
//   WHERE kept GROUP BY keys
//
// so that each unit contributes one bounded row to at most m groups (m =
// dp_agg.max_groups_contributed), chosen uniformly at random per query from
// the CSPRNG. Each group's release is then (eps/m)-DP with respect to one
// unit and a unit reaches at most m groups: eps in all (basic composition),
// which is what the call site is charged (the executor multiplies the
// charge by the m it finds in the marker, input_checks.h).
#ifndef DP_AGG_PG_UNIT_REWRITE_H
#define DP_AGG_PG_UNIT_REWRITE_H

#include "pg_includes.h"

namespace dp_pg {

// The unit column of a FROM item of `query` at range-table index `item`, or
// InvalidAttrNumber (a table without one, or not a table).
AttrNumber UnitColumnOfItem(const Query* query, Index item);

// Whether `subquery` (in FROM of a private aggregation level) is a plain
// projection and filter of one table with a privacy unit column, possibly
// inner-joined to tables without one: no aggregates, GROUP BY, DISTINCT,
// LIMIT, ORDER BY, set operations, window functions, set-returning
// functions, sublinks, WITH, FOR UPDATE, TABLESAMPLE, outer joins or volatile
// functions. Then each of its rows is one row of the table with the same
// unit, and the level bounds the units as for the table itself (the unit is
// carried out as an extra output column the query cannot name). The table's
// range-table index in `subquery` and its unit column are returned.
bool UnitSubquery(const Query* subquery, Index* inner_item, AttrNumber* inner_column);

// The WITH query of `level` that its FROM item `entry` (RTE_CTE) reads, when
// it is defined at this level, referenced once, not recursive and a
// UnitSubquery: the rewrite inlines it as a subquery. nullptr otherwise.
CommonTableExpr* UnitWithQuery(const Query* level, const RangeTblEntry* entry);

// Checks a private aggregation level over the unit table at `item` (column
// `column`; or a UnitSubquery or UnitWithQuery at `item`, column 0): only dp_count (also
// DISTINCT unit), dp_sum, dp_avg, their _interval forms, the quantiles and
// the unweighted dp_select (and group selection), no other aggregates, no
// unit column (or column computed from it) as group key, every column
// outside the aggregates a group key. ERROR 0A000 with the reason in DETAIL
// otherwise.
void CheckUnitLevel(Query* query, Index item, AttrNumber column);

// Rewrites `level` in place into the two levels above. `max_groups` >= 1.
// When `item` is a subquery (UnitSubquery; `column` is then unused), the unit
// is first carried out of it; a UnitWithQuery is first inlined as one.
void RewriteForPrivacyUnits(Query* level, Index item, AttrNumber column, int max_groups);

// The OID of dp_agg.unit_group_sample(integer), the window function that
// samples each unit's groups: the marker of the per-unit level.
Oid UnitGroupSampleFunction();

// Whether `function` is dp_agg.unit_sum, the sum that never raises which
// the rewrite uses for one unit's float and numeric rows.
bool IsUnitSumAggregate(Oid function);

}  // namespace dp_pg

#endif  // DP_AGG_PG_UNIT_REWRITE_H
