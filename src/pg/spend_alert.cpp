// The budget alert (see spend_alert.h).
#include "spend_alert.h"

#include <cstring>

#include "settings.h"

extern "C" {
#include "commands/dbcommands.h"
#include "lib/stringinfo.h"
}

namespace dp_pg {

namespace {

Datum Number(const char* text) {
  return DirectFunctionCall3(numeric_in, CStringGetDatum(text), ObjectIdGetDatum(InvalidOid),
                             Int32GetDatum(-1));
}

int Compare(Datum a, Datum b) { return DatumGetInt32(DirectFunctionCall2(numeric_cmp, a, b)); }

struct Currency {
  const char* name;
  const char* charge;
  const char* total;
  const char* spent;
};

}  // namespace

void AlertIfBudgetLow(const BudgetAfterCharge& budget) {
  if (!(budget_alert_fraction > 0)) return;
  // The certificates that bind (README "Switching kinds"): the kind's own,
  // and a zCDP certificate that still binds after a switch (its totals are
  // reported only then).
  Currency currencies[4];
  int count = 0;
  if (std::strcmp(budget.budget_kind, "epsilon_delta") == 0) {
    currencies[count++] = {"epsilon", budget.epsilon, budget.epsilon_total, budget.epsilon_spent};
    currencies[count++] = {"delta", budget.delta, budget.delta_total, budget.delta_spent};
  }
  if (budget.rho_total[0] != '\0' && budget.zcdp_delta_total[0] != '\0') {
    currencies[count++] = {"rho", budget.rho, budget.rho_total, budget.rho_spent};
    currencies[count++] = {"zCDP delta", budget.zcdp_delta, budget.zcdp_delta_total,
                           budget.zcdp_delta_spent};
  }
  const Datum fraction = DirectFunctionCall1(float8_numeric, Float8GetDatum(budget_alert_fraction));
  const Datum zero = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
  StringInfoData low;
  initStringInfo(&low);
  bool crossed = false;
  for (int i = 0; i < count; ++i) {
    const Currency& currency = currencies[i];
    if (currency.total[0] == '\0' || currency.spent[0] == '\0' || currency.charge[0] == '\0')
      continue;
    // Only what this charge spent: a pure query says nothing about delta.
    if (Compare(Number(currency.charge), zero) <= 0) continue;
    const Datum total = Number(currency.total);
    if (Compare(total, zero) <= 0) continue;  // no such budget: nothing to run low
    const Datum threshold = DirectFunctionCall2(numeric_mul, fraction, total);
    const Datum left = DirectFunctionCall2(numeric_sub, total, Number(currency.spent));
    if (Compare(left, threshold) >= 0) continue;
    const Datum left_before = DirectFunctionCall2(numeric_add, left, Number(currency.charge));
    crossed = crossed || Compare(left_before, threshold) >= 0;
    const Datum shown = Compare(left, zero) < 0 ? zero : left;
    appendStringInfo(&low, "%s%s %s of %s", low.len > 0 ? ", " : "", currency.name,
                     DatumGetCString(DirectFunctionCall1(numeric_out, shown)), currency.total);
  }
  if (low.len == 0) return;
  ereport(NOTICE,
          (errmsg("the privacy budget of role \"%s\" is running low: %s left", budget.role_name,
                  low.data),
           errdetail("After this query's charge, less than dp_agg.budget_alert_fraction (%g) of "
                     "a budget total is left. dp_agg.remaining_budget() shows what is left.",
                     budget_alert_fraction)));
  if (crossed) {
    const char* database = get_database_name(MyDatabaseId);
    ereport(LOG, (errmsg("dp_agg budget alert: role \"%s\" in database \"%s\" has less than %g "
                         "of its privacy budget left: %s left",
                         budget.role_name, database != nullptr ? database : "?",
                         budget_alert_fraction, low.data),
                  errhidestmt(true)));
  }
}

}  // namespace dp_pg
