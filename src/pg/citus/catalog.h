// dp_agg on Citus: Citus's catalogs (pg_dist_partition, pg_dist_shard), read
// without Citus's headers.
#ifndef DP_AGG_PG_CITUS_CATALOG_H
#define DP_AGG_PG_CITUS_CATALOG_H

#include "../pg_includes.h"

namespace dp_pg {

// Whether extension citus is installed in this database.
bool CitusInstalled();

// The table of shard `shard_id` (pg_dist_shard), or InvalidOid.
Oid ShardTable(int64 shard_id);

// The distribution column of a hash/range/append distributed table, or 0;
// *method_out is its partmethod ('h' hash, 'r' range, 'a' append, 'n' none:
// reference and single-shard tables), or '\0' for a table Citus does not know.
AttrNumber DistributionColumn(Oid relation, char* method_out = nullptr);

// The distributed table that `relation` is a shard of (Citus names shards
// <table>_<shardid> in the table's schema; pg_dist_shard maps the shard id to
// the table), or InvalidOid. Labels reach only the distributed (shell)
// tables, so a shard is protected when its table is (restriction.cpp).
Oid CitusShardParent(Oid relation);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_CATALOG_H
