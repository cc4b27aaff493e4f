// What a query costs: the sum over its private aggregate call sites of the
// requested epsilon (and delta) times their number of releases, as exact
// numerics, charged to the ledger once per execution before any row is read
// (see input_checks.h for when that is sound).
#ifndef DP_AGG_PG_QUERY_COST_H
#define DP_AGG_PG_QUERY_COST_H

#include "initial_state.h"
#include "pg_includes.h"

namespace dp_pg {

struct QueryCost {
  bool leader_paid;  // this is a parallel worker's share of its leader's plan
  // The plan's constants are the query's own (no bound parameters), so a
  // subtree that they prove never runs is free (call_sites.cpp). With bound
  // parameters, whether a constant is folded into the plan depends on the
  // plan cache's choice between a custom and a generic plan, which is made
  // from cost estimates, i.e. table statistics: such queries always pay.
  bool constants_decide;
  // Build every call site's plans as it is prepared (site_plans.h): not for
  // dp_agg.query_cost(), which never runs the query.
  bool plan_sites;
  // The partial steps prepared so far, for their finalize steps: a List of
  // PreparedPartial (call_sites.cpp).
  List* partial_sites;
  int sites;  // call sites charged by this process
  Datum epsilon;  // numeric: sum of every release's epsilon (basic composition)
  Datum delta;  // numeric: sum of every release's delta
  // The same releases in approximate zCDP (README "Privacy budgets"), exact
  // numerics, never below the true cost: rho (Gaussian releases: the rho of
  // the noise calibrated; every other release: epsilon^2 / 2) and zCDP delta
  // (group selection's delta; 0 for every other release).
  Datum rho;
  Datum zcdp_delta;
  StringInfoData description;
};

// An empty cost (palloc'd description in the current memory context).
void StartQueryCost(QueryCost* cost, bool leader_paid);

// Number of grouping sets of an Agg node (and its chained phases): every row
// feeds one group of each grouping set.
int GroupingSetCount(Agg* plan);

// Adds one call site of `aggref` with the requested parameters, each release
// of which is made `unit_groups` times over privacy units (unit_rewrite.h),
// released `multiplier` times.
void AddCost(QueryCost* cost, Aggref* aggref, const RequestedPrivacy& requested, int unit_groups,
             int multiplier);

// `value` (numeric, >= 0) rounded up (or down) to `digits` significant
// digits, exactly.
Datum NumericRoundSignificant(Datum value, int digits, bool up);
Datum NumericCeilSignificant(Datum value, int digits);

// The rho the ledger charges for one pure epsilon-DP release requested at
// `requested_epsilon`: c^2 / 2 of the epsilon charged c, rounded up to the
// ledger's significant digits (AddCost; dp_agg.zcdp_pure_epsilon).
Datum PureReleaseRho(double requested_epsilon);

// Charges the ledger if any call site was added, and frees the description.
void ChargeQueryCost(QueryCost* cost);

}  // namespace dp_pg

#endif  // DP_AGG_PG_QUERY_COST_H
