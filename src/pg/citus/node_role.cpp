// dp_agg on Citus: this server's part in the cluster (dp_agg.node_role) and
// whether a connection is the authenticated coordinator (node_role.h).
#include "node_role.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

#include "peer_certificate.h"
namespace dp_pg {

namespace {

// --- settings --------------------------------------------------------------

enum class NodeRole { kStandalone, kCoordinator, kWorker };
int node_role = static_cast<int>(NodeRole::kStandalone);
char* coordinator_cn = nullptr;
bool direct_shard_partials = true;  // dp_agg.citus_direct_partials

const struct config_enum_entry kNodeRoles[] = {
    {"standalone", static_cast<int>(NodeRole::kStandalone), false},
    {"coordinator", static_cast<int>(NodeRole::kCoordinator), false},
    {"worker", static_cast<int>(NodeRole::kWorker), false},
    {nullptr, 0, false},
};

}  // namespace

bool IsWorkerNode() { return node_role == static_cast<int>(NodeRole::kWorker); }

// The connection presented a client certificate that PostgreSQL verified
// against the worker's ssl_ca_file, with the configured common name, and
// authenticated without a password. An analyst connecting to a worker from
// outside does not hold the coordinator's key, and application_name (Citus's
// own marker) can be set by anyone. But the coordinator's server processes
// read that key, so a connection an analyst opens from a coordinator backend
// (dblink, postgres_fdw) can present it too; PostgreSQL lets a non-superuser
// open one only with a password, which Citus's connections never send (the
// README requires cert, or trust with clientcert=verify-full, for them).
// Adversarial review of privacy units on Citus, finding R2.
bool IsAuthenticatedCoordinator() {
  if (coordinator_cn == nullptr || coordinator_cn[0] == '\0') return false;
  const char* peer = dp_citus_verified_peer_cn();
  return peer != nullptr && std::strcmp(peer, coordinator_cn) == 0 &&
         dp_citus_authenticated_without_password();
}

void DefineDistributedSettings() {
  DefineCustomEnumVariable(
      "dp_agg.node_role", "This server's part in a Citus cluster.",
      "standalone: no Citus; coordinator: charges and releases distributed private aggregates; "
      "worker: computes partial states only, for the authenticated coordinator.",
      &node_role, static_cast<int>(NodeRole::kStandalone), kNodeRoles, PGC_SIGHUP, 0, nullptr,
      nullptr, nullptr);
  DefineCustomStringVariable(
      "dp_agg.coordinator_cn",
      "On a worker: the common name of the client certificate the coordinator connects with.",
      "Private partial aggregation runs only for connections whose certificate PostgreSQL "
      "verified against ssl_ca_file and whose common name is this one.",
      &coordinator_cn, "", PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
  DefineCustomBoolVariable(
      "dp_agg.citus_direct_partials",
      "On a worker: runs the partial step of a private aggregate with its own transition "
      "function instead of Citus's generic worker_partial_agg.",
      "Both compute the same partial state for the coordinator; the direct step is several "
      "times faster per row. Off only to compare the two (benchmarks and tests).",
      &direct_shard_partials, true, PGC_SUSET, 0, nullptr, nullptr, nullptr);
}

void RequireAuthenticatedCoordinator() {
  if (!IsWorkerNode() || !IsAuthenticatedCoordinator())
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("dp_agg computes partial states only on a worker, for the coordinator"),
             errdetail("This connection did not present the coordinator's client certificate "
                       "(dp_agg.coordinator_cn), or this server is not a worker "
                       "(dp_agg.node_role)."),
             errhint("Run private aggregates on the coordinator.")));
}

bool DirectShardPartialsEnabled() { return direct_shard_partials; }

}  // namespace dp_pg
