#!/usr/bin/python3
"""A change of budget kind after spending (sql/budget_certificates.sql, part 2; found by
the second review of issue 14):
a change of budget kind after spending must not let the analyst choose the
certificate again.

Before the fix, dp_agg.apply_charge admitted by the budget's CURRENT kind only, and
set_budget / set_budget_zcdp switched the kind while keeping the sums. With
the strategy of adaptive_certificates.py (Q1 = dp_count(id, 0.0038, 1e-6),
then path A = dp_count(id, 3.9962) or path B = dp_count(id, 4.6562, 1e-9) on
Q1's answer), a switch between two budgets that promise the same (4, 1e-6)
made both continuations reachable from the same history: the continuation
that the old kind admits is run before the switch, the one that the new kind
admits after it. The analyst picks by timing (a scheduled migration) or by
asking for the switch. This script computes, exactly over the discrete laws
(the hockey-stick code of adaptive_certificates.py), the delta(4) of the
best adaptive strategy for both directions of the switch under:
  - the implemented rule (docs/administrator_guide.md "Switching kinds"; apply_charge and the
    binding columns of dp_agg.role_budget): after a switch with spending, a
    charge must fit the certificates of every kind the role had since its
    last reset_spent, each with its own totals. It must stay <= 1e-6 (the
    conjunction of valid filters is a valid filter): prints "ok", or "not
    ok" and exit status 1;
  - acct's rule (the current kind's certificate only), for comparison: it
    reaches 1.20e-6 > 1e-6, which the script also checks, so that the
    scenario keeps exercising the switch.
The switch here is at a fixed time, independent of every answer.
Usage: kind_switch.py [rho1 rho_B rho_budget] (defaults as in
adaptive_certificates.py: what the server reports).
"""
import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from adaptive_certificates import (  # noqa: E402
    Checks, add, admitted, hockey_sticks, strategy_amounts, strategy_arguments)


def main():
    big_e, big_d = 4.0, 1e-6
    rho1, rho_b, rho_budget = strategy_arguments(sys.argv)
    p1, h = hockey_sticks(rho1, rho_b, 3.9962, big_e)
    charges, totals = strategy_amounts(rho1, rho_b, rho_budget)
    check = Checks()

    for before, after in (("zcdp", "epsilon_delta"), ("epsilon_delta", "zcdp")):
        zero = {key: Fraction(0) for key in totals[before]}
        spent = add(zero, charges["Q1"])
        assert admitted(before, totals[before], zero, charges["Q1"])
        for rule in ("acct", "fix"):
            reachable = []
            for path in ("A", "B"):
                # Run before the switch: the old kind admits it.
                if admitted(before, totals[before], spent, charges[path]):
                    reachable.append(path)
                    continue
                # Run after the switch: acct checked the new kind only; the
                # implemented rule checks every kind the role had since its
                # last reset_spent.
                new_ok = admitted(after, totals[after], spent, charges[path])
                old_ok = admitted(before, totals[before], spent, charges[path])
                if new_ok and (rule == "acct" or old_ok):
                    reachable.append(path)
            best = (p1 * np.maximum.reduce([h["stop"]] + [h[p] for p in reachable])).sum()
            within = best <= big_d * (1 + 1e-9)
            if rule == "fix":
                check(within, f"{before} -> {after} after Q1, implemented rule (every "
                      f"certificate since the last reset binds): continuations reachable "
                      f"{reachable or 'none'}; best adaptive delta(4) = {best:.4g} <= 1e-6")
            else:
                check(not within, f"{before} -> {after} after Q1, acct's rule (current kind "
                      f"only), for comparison: continuations reachable {reachable}; best "
                      f"adaptive delta(4) = {best:.4g} > 1e-6")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
