// Catalog channels: statistics about protected tables that PostgreSQL shows
// to everyone (planner statistics, activity counters, table sizes,
// pg_class.reltuples), and settings that change or show how protected rows
// are read. Restricted roles may use none of them, in any query.
#ifndef DP_AGG_PG_CATALOG_ACCESS_H
#define DP_AGG_PG_CATALOG_ACCESS_H

#include "pg_includes.h"

namespace dp_pg {

// Refuses a query level of a restricted role that reads a statistics
// relation or the row-count columns of pg_class, calls a statistics or size
// function, or calls set_config() on a setting that is not an analyst
// setting. Subqueries in FROM are not looked at (they are levels of their
// own); sublinks and WITH queries are not either. Raises ERROR; modifies
// nothing.
void CheckCatalogAccess(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CATALOG_ACCESS_H
