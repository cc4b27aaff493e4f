// dp_agg on Citus: privacy units on distributed tables, on the analyst's
// query tree (the worker job's shape is contract.h's).
#ifndef DP_AGG_PG_CITUS_UNITS_H
#define DP_AGG_PG_CITUS_UNITS_H

#include "../pg_includes.h"

namespace dp_pg {

// The per-unit level that the private aggregation level `query` reads: its
// only FROM item, a subquery with dp_agg.unit_group_sample. nullptr otherwise.
Query* PerUnitLevel(Query* query);

// The table column that column `column` of FROM item `item` of `query` is,
// through subqueries that pass it on as a plain column.
bool BaseColumn(Query* query, Index item, AttrNumber column, Oid* table, AttrNumber* table_column);

// The expression a per-unit level's window is partitioned by (the unit), or
// nullptr when it is not one expression of one window.
Node* UnitPartitionKey(Query* level);

// The table and column of a per-unit level's unit.
bool UnitOfLevel(Query* level, Oid* table, AttrNumber* column);

// Whether the private aggregation level `query` reads the rewrite's per-unit
// level over a Citus distributed table (then it is split like a level that
// reads the table itself). Refuses, before anything is charged, a unit
// table that is not hash-distributed by its unit column.
bool ReadsDistributedUnitLevel(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_UNITS_H
