// The initial state of a private aggregate call: its parameters read by the
// argument layout, validated once, and written into a fresh state of its
// family before the first row is read.
#ifndef DP_AGG_PG_INITIAL_STATE_H
#define DP_AGG_PG_INITIAL_STATE_H

#include "../core/noise_mechanism.h"
#include "aggregate_catalog.h"
#include "pg_includes.h"

namespace dp_pg {

// What a call costs: the parameters as requested (the ledger charges these,
// see query_cost.h).
struct RequestedPrivacy {
  double epsilon = 0;
  double delta = 0;
  // How the release composes (README "Privacy budgets"): a Gaussian release
  // (a statistic with delta > 0) is charged in zCDP its rho (of the noise
  // actually calibrated, GaussianPlanRho, rounded up); partition selection
  // (approximate) is delta-approximately (epsilon^2 / 2)-zCDP; everything
  // else is pure, (epsilon^2 / 2)-zCDP (query_cost.cpp).
  bool gaussian = false;
  bool approximate = false;
  double rho = 0;
};

// Checks the call's parameters and returns its initial state, palloc'd in
// the current memory context; *requested is what the call costs.
// leader_prepared: a parallel worker's share of its leader's plan, whose
// leader prepared the same call site with the same parameters (and charged
// it): the Gaussian calibrations that only check the parameters and size the
// charge (rho) are skipped there (each would be a fresh calibration in the
// new process, milliseconds per worker per query; issue 31), and
// requested->rho is left 0. A final function calibrates its own noise.
Datum PrepareInitialState(Aggref* aggref, const AggregateCacheEntry& entry, EState* estate,
                          RequestedPrivacy* requested, bool leader_prepared);

// The epsilon every state keeps, for every family alike: the effective one
// (the request rounded down to 24 bits, EffectivePrivacyParameter), which is
// the value the noise is calibrated to. Laplace, permute-and-flip and the
// partition-selection threshold round the request the same way themselves,
// and rounding is idempotent, so keeping the effective value changes no
// noise; the discrete Gaussian is calibrated to exactly the value given, so
// it must be given the effective one, which ChargeFor (query_cost.cpp)
// always covers. Under the superuser-only test fault halve_noise, twice that
// (the only place the fault is applied).
double StateEpsilon(const dp::PrivacyParameters& effective);

}  // namespace dp_pg

#endif  // DP_AGG_PG_INITIAL_STATE_H
