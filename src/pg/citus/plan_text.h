// dp_agg on Citus: Citus's distributed plan, read from its text.
//
// Citus keeps its DistributedPlan in the CustomScan's custom_private, as an
// extensible node with its own text output. dp_agg reads the fields it needs
// from that text with PostgreSQL's node reader, so it is built without
// Citus's headers and depends only on the field names Citus writes.
#ifndef DP_AGG_PG_CITUS_PLAN_TEXT_H
#define DP_AGG_PG_CITUS_PLAN_TEXT_H

#include "../pg_includes.h"

extern "C" {
#include "nodes/extensible.h"
}

namespace dp_pg {

struct WorkerJob {
  Query* job_query = nullptr;
  int task_count = 0;
  int relation_count = 0;
  bool has_subplans = false;
  bool has_dependent_jobs = false;
  bool is_modification = false;
  // A task placed on group 0, the coordinator's own (citus_set_coordinator_host
  // with shouldhaveshards), or a task without a placement to read.
  bool runs_on_coordinator = false;
};

// The worker job of Citus's scan `scan` (false when it is not one, or its
// plan cannot be read).
bool ReadWorkerJob(CustomScan* scan, WorkerJob* job);

// Whether the text of a Citus DistributedPlan holds a release site of a
// private aggregate (a coord_combine_agg around one).
bool TextHasPrivateRelease(const char* text);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CITUS_PLAN_TEXT_H
