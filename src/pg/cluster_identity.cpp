// dp_agg.system_identifier(): which cluster a budget or ledger row was
// written in (src/sql/40_budgets_ledger.sql, 42_budget_restores.sql). Role
// OIDs mean something only in the cluster that assigned them; the system
// identifier, chosen by initdb and kept by physical copies (standbys, base
// backups, PITR), tells a row restored from another cluster's dump from one
// written here.
#include "pg_includes.h"

extern "C" {
#include "access/xlog.h"

PG_FUNCTION_INFO_V1(dp_agg_system_identifier);

// As pg_control_system() shows it: the unsigned identifier as a bigint.
Datum dp_agg_system_identifier(PG_FUNCTION_ARGS) {
  return Int64GetDatum(static_cast<int64>(GetSystemIdentifier()));
}

}  // extern "C"
