// A release is computed once per execution; a rewind or rescan replays it.
//
// The final function of a private aggregate draws the noise. PostgreSQL calls
// it again whenever the Agg node above the states is scanned again: a SCROLL
// cursor's MOVE ABSOLUTE 0 / FETCH FIRST / FETCH PRIOR, the rewind of a
// WITH HOLD cursor at COMMIT (PersistHoldablePortal), a rescan from a parent
// node. On one node a SCROLL cursor gets a Material node that hides the
// rewind, but Citus plans its coordinator step without one, and a hash
// aggregate re-finalises the very same states with fresh noise: 50,000
// rewinds averaged a victim's age for one charge (issue 25, finding 2).
//
// So every Agg node that finalises a private aggregate (or Citus's
// coord_combine_agg around one) is wrapped, after planning, in a node of its
// own, "dp_agg release once", that keeps every row the Agg returns (when the
// execution may read it again) and answers every rescan, rewind and backward
// fetch from those rows: the Agg
// below runs forward once per execution, whatever the plan shape above it,
// and the noise of a group is drawn exactly once per charge. A rescan with
// changed parameters (a new execution of the aggregate, which the input
// checks already refuse before execution, rule (1) of input_checks.h) raises
// instead, before anything is drawn.
#ifndef DP_AGG_PG_RELEASE_REPLAY_H
#define DP_AGG_PG_RELEASE_REPLAY_H

#include "pg_includes.h"

namespace dp_pg {

// Registers the node's methods (plans are copied and read back by name).
void RegisterReleaseReplay();

// Wraps every releasing Agg node of `statement` (main plan and subplans);
// `cursor_options` are the planner's (CURSOR_OPT_HOLD: keep the rows
// whatever the executor flags say).
void WrapReleases(PlannedStmt* statement, int cursor_options);

// The node WrapReleases puts above a releasing Agg (its lefttree), as a plan
// and as the plan's state.
bool IsReleaseReplay(const Plan* plan);
bool IsReleaseReplayState(const PlanState* state);

}  // namespace dp_pg

#endif  // DP_AGG_PG_RELEASE_REPLAY_H
