// Catalog channels: statistics about protected tables that PostgreSQL shows
// to everyone (planner statistics, activity counters, table sizes,
// pg_class.reltuples), and settings that change or show how protected rows
// are read. Restricted roles may use none of them, in any query.
#ifndef DP_AGG_PG_CATALOG_ACCESS_H
#define DP_AGG_PG_CATALOG_ACCESS_H

#include "pg_includes.h"

namespace dp_pg {

// Refuses a query level of a restricted role that reads a statistics
// relation, calls a statistics or size function, or calls set_config() on a
// setting that is not an analyst setting. Subqueries in FROM are not looked
// at (they are levels of their own); sublinks and WITH queries are not
// either. Raises ERROR; modifies nothing. Returns the level's pg_class
// entries (RangeTblEntry*) that read reltuples, relpages or relallvisible:
// they must be masked (MaskPlannerStatistics) before the query is planned.
// A pg_class entry that reads a system column or is sampled is refused.
List* CheckCatalogAccess(Query* query);

// Turns `entry`, a pg_class entry of a restricted role's query, into a
// subquery that returns every column of pg_class with reltuples -1,
// relpages 0 and relallvisible 0: what PostgreSQL shows for a table never
// vacuumed or analyzed, so clients (JDBC getIndexInfo, DBeaver, psql's \d+)
// go on working and learn no row count. Changes the entry in place.
void MaskPlannerStatistics(RangeTblEntry* entry);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CATALOG_ACCESS_H
