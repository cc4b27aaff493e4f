// information_schema for restricted roles (issue 27): tools that discover
// tables through information_schema.tables and information_schema.columns
// (dbt, Looker, generic JDBC/ODBC connectors, Metabase's field description)
// saw no protected table, because those views list a table only to a role
// holding a privilege on it, and a restricted role holds none (fail closed).
//
// Granting one would open a channel: REFERENCES lets the analyst create a
// foreign key from a table of their own to the protected table, and every
// insert into their table then tests whether a key exists there; TRIGGER
// lets them attach code to its writes. So no privilege is granted. Instead,
// in a restricted session, a query's references to those two views are
// pointed, at parse analysis, to dp_agg's copies of them
// (dp_agg.information_schema_tables, dp_agg.information_schema_columns, made
// from the server's own definitions when the extension is created), whose
// only difference is one more reason to list a table:
// dp_agg.lists_protected_table(oid), true for a protected table (or a
// partition or child of one) whose schema the restricted role may use.
// What they show (names, columns, types) is what pg_catalog already shows
// every role (psql's \d); the rows stay unreadable.
#ifndef DP_AGG_PG_INFORMATION_SCHEMA_H
#define DP_AGG_PG_INFORMATION_SCHEMA_H

#include "pg_includes.h"

namespace dp_pg {

// After parse analysis (hooks.cpp): in a restricted session, points the
// query's references to the two views to dp_agg's copies.
void PointRestrictedQueryToListingViews(Query* query);

}  // namespace dp_pg

#endif  // DP_AGG_PG_INFORMATION_SCHEMA_H
