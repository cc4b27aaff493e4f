// A CustomScan node put above a finished plan, with the same output
// columns: the release replay above a releasing Agg (release_replay.h) and
// the release cache at the top of a private SELECT (release_cache.h). One
// place for their target lists, plan node ids and the emission of a row.
#ifndef DP_AGG_PG_SCAN_ABOVE_H
#define DP_AGG_PG_SCAN_ABOVE_H

#include "pg_includes.h"

namespace dp_pg {

// The largest plan node id of `statement` (main plan and subplans): a node
// added to it takes the next one (EXPLAIN ANALYZE and parallel query find
// nodes by their ids, which must stay unique).
int MaxPlanNodeId(PlannedStmt* statement);

// Makes `scan` (methods, flags and private data are the caller's) a node
// above `below`, its lefttree: the same output columns (the scan tuple is the
// row of `below`, OUTER_VAR, so that EXPLAIN VERBOSE shows its expressions;
// the output is the scan tuple as it is), costs from `below`'s total (it runs
// to its first row at least before this node returns one), its parameters.
void PlaceScanAbove(CustomScan* scan, Plan* below, int plan_node_id, bool parallel_safe);

// Returns the row `from` (a row of the plan below, or of a tuplestore of
// them) as the node's output: copied into its virtual scan slot (its values
// point into `from`, which stays valid until the next call) and projected.
TupleTableSlot* EmitRowAbove(CustomScanState* node, TupleTableSlot* from);

}  // namespace dp_pg

#endif  // DP_AGG_PG_SCAN_ABOVE_H
