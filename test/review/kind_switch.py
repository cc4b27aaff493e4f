#!/usr/bin/python3
"""Review of issue 14, second round (sql/review_accountant2.sql, finding 1):
a change of budget kind after spending must not let the analyst choose the
certificate again.

acct's dp_agg.apply_charge admitted by the budget's CURRENT kind only, and
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
  - the implemented rule (README "Switching kinds"; apply_charge and the
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
from adaptive_certificates import admitted, add, dg_logpmf, h_rr  # noqa: E402


def hockey_sticks(rho1, rho_b, eps_a, big_e):
    """P1(o1) and, per o1, the conditional hockey-stick contributions of
    continuing with A, with B, or stopping (adaptive_certificates.main)."""
    s1, sb = 1 / (2 * rho1), 1 / (2 * rho_b)
    k1 = int(60 * np.sqrt(s1)) + 10
    o = np.arange(-k1, k1 + 1).astype(float)
    p1 = np.exp(dg_logpmf(o - 1, s1))
    x = big_e - (dg_logpmf(o - 1, s1) - dg_logpmf(o, s1))
    h_a = h_rr(x, eps_a)
    kb = int(60 * np.sqrt(sb)) + 10
    k = np.arange(-kb, kb + 1).astype(float)
    lp, lq = dg_logpmf(k - 1, sb), dg_logpmf(k, sb)
    order = np.argsort(-(lp - lq))
    cp, cq = np.cumsum(np.exp(lp)[order]), np.cumsum(np.exp(lq)[order])
    idx = np.searchsorted(-(lp - lq)[order], -x, side="left")
    h_b = np.where(idx > 0, cp[np.maximum(idx - 1, 0)] - np.exp(x) * cq[np.maximum(idx - 1, 0)], 0)
    return p1, {"A": h_a, "B": np.maximum(h_b, 0), "stop": np.maximum(1 - np.exp(x), 0)}


def main():
    big_e, big_d = 4.0, 1e-6
    rho1 = float(sys.argv[1]) if len(sys.argv) > 1 else 9.1488396549535597e-7
    rho_b = float(sys.argv[2]) if len(sys.argv) > 2 else 0.31099949011311679
    rho_budget = sys.argv[3] if len(sys.argv) > 3 else "0.31106495494"
    p1, h = hockey_sticks(rho1, rho_b, 3.9962, big_e)
    F = Fraction
    charges = {
        "Q1": {"eps": F("0.0038"), "delta": F("0.000001"), "rho": F(rho1), "zdelta": F(0)},
        "A": {"eps": F("3.9962"), "delta": F(0), "rho": F("3.9962") ** 2 / 2, "zdelta": F(0)},
        "B": {"eps": F("4.6562"), "delta": F("0.000000001"), "rho": F(rho_b), "zdelta": F(0)},
    }
    totals = {
        "epsilon_delta": {"eps": F(4), "delta": F("0.000001"), "rho": F(0), "zdelta": F(0)},
        "zcdp": {"eps": F(0), "delta": F(0), "rho": F(rho_budget), "zdelta": F(0)},
    }
    failures = 0

    def check(ok, text):
        nonlocal failures
        print(("ok " if ok else "not ok ") + text)
        failures += 0 if ok else 1

    for before, after in (("zcdp", "epsilon_delta"), ("epsilon_delta", "zcdp")):
        zero = {key: F(0) for key in totals[before]}
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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
