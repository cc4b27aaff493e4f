// The public parameters of a private aggregate call: which expressions may
// be parameters, evaluating them once before execution, and reading all of a
// call's parameters by its argument layout.
#ifndef DP_AGG_PG_CALL_PARAMETERS_H
#define DP_AGG_PG_CALL_PARAMETERS_H

#include "../core/noise_mechanism.h"
#include "aggregate_catalog.h"
#include "pg_includes.h"

namespace dp_pg {

// Whether `expression` is the same for every row: constants, query
// parameters ($1) and built-in IMMUTABLE functions of those.
bool IsRowInvariant(Node* expression);

// Argument `position` of a private aggregate call, which must be the same
// for every row (ERROR 22023 otherwise), evaluated once before execution.
// The value lives in the per-tuple memory of `estate`: copy it before the
// next reset.
Datum EvaluateParameter(Aggref* aggref, int position, const char* role, EState* estate,
                        bool* is_null);

// Argument `position` of a private aggregate call, a float8 that must be the
// same for every row, evaluated once before execution (ERROR 22023 if NULL
// or if it could vary between rows).
double EvaluateDoubleParameter(Aggref* aggref, int position, const char* role, EState* estate);

// Every parameter of one call, evaluated (in argument order) but not yet
// validated. Bounds of numeric type are rounded inward to doubles.
struct CallParameters {
  dp::PublicParameters values;
  Datum candidates = 0;  // dp_select: the candidate array (per-tuple memory)
};

// Reads every parameter of `aggref` that `layout` names; the caller then
// validates them all at once with ValidateCallParameters.
CallParameters ReadCallParameters(Aggref* aggref, const PrivateAggregateKind& kind,
                                  const ArgumentLayout& layout, EState* estate);

// Over privacy units (unit_rewrite.h) a call runs at epsilon / m and
// delta / m per group and is charged m times that: the whole call's epsilon
// and delta must be within dp_agg.max_epsilon and dp_agg.max_delta, as at
// row level (ERROR 22023 otherwise).
void ValidateUnitLevelLimits(double epsilon, double delta);

// The one validation path (dp::ValidatePublicParameters under the caps of
// dp_agg.max_epsilon and dp_agg.max_delta); ERROR 22023 with a hint for the
// first invalid parameter. Returns the effective privacy parameters.
dp::PrivacyParameters ValidateCallParameters(const dp::PublicParameters& parameters);

}  // namespace dp_pg

#endif  // DP_AGG_PG_CALL_PARAMETERS_H
