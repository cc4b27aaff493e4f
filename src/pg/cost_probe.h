// dp_agg.query_cost(query): what a query would be charged, learnt without
// running it. The query is parsed, judged, planned and started as the caller,
// exactly as if it were run (so it is refused exactly when it would be), and
// the executor hook (call_sites.cpp) computes its cost with the same code as
// for a real execution; then it is ended without reading a row, and nothing
// is charged.
#ifndef DP_AGG_PG_COST_PROBE_H
#define DP_AGG_PG_COST_PROBE_H

#include "pg_includes.h"
#include "query_cost.h"

namespace dp_pg {

struct CostProbe {
  QueryDesc* query;  // the one executor start this probe is for
  MemoryContext context;  // where the results are copied
  bool measured;
  int sites;
  Datum epsilon;  // numeric
  Datum delta;  // numeric
  Datum rho;  // numeric: the zCDP cost (query_cost.h)
  Datum zcdp_delta;  // numeric: its approximate-zCDP delta
  char* description;
};

// The probe waiting for the executor start of its query, or nullptr. Set by
// query_cost() only around ExecutorStart of the probed query, and taken by
// the executor hook only for that very QueryDesc: any other executor (a
// query run while the probed one starts) is charged as always.
CostProbe* TakeCostProbe(QueryDesc* query);

// Copies `cost` into the probe (instead of charging it) and frees its
// description.
void RecordCostProbe(CostProbe* probe, QueryCost* cost);

}  // namespace dp_pg

#endif  // DP_AGG_PG_COST_PROBE_H
