// dp_agg on Citus: this server's part in a Citus cluster and the
// authenticated coordinator. See README, "Scaling out with Citus".
#ifndef DP_AGG_PG_CITUS_NODE_ROLE_H
#define DP_AGG_PG_CITUS_NODE_ROLE_H

#include "../pg_includes.h"

namespace dp_pg {

// dp_agg.node_role, dp_agg.coordinator_cn and dp_agg.citus_direct_partials.
void DefineDistributedSettings();

// dp_agg.node_role = worker.
bool IsWorkerNode();

// The connection presented the coordinator's client certificate
// (dp_agg.coordinator_cn), verified by PostgreSQL against ssl_ca_file, and
// authenticated without a password (peer_certificate.h).
bool IsAuthenticatedCoordinator();

// ERROR 42501 unless this server is a worker and the connection is the
// authenticated coordinator's.
void RequireAuthenticatedCoordinator();

// dp_agg.citus_direct_partials (shard_partials.h).
bool DirectShardPartialsEnabled();

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_NODE_ROLE_H
