#!/usr/bin/python3
"""One certificate per budget kind (sql/budget_certificates.sql, part 1; found by the
review of issue 14): an analyst who
picks the next query from a noisy answer exceeds an (epsilon, delta) budget
that admits by EITHER basic composition OR the zCDP accountant.

Budget (4, 1e-6). Q1 = dp_count(id, 0.0038, 1e-6): a discrete Gaussian,
sensitivity 1, sigma^2 = 1 / (2 rho1) with rho1 what dp_agg.query_cost
reports. Then, on the answer o1:
  path A: dp_count(id, 3.9962), pure (two-sided geometric: its privacy loss
          is +-epsilon, the randomized-response profile); admitted by basic
          composition (4, 1e-6 exactly), refused by the accountant.
  path B: dp_count(id, 4.6562, 1e-9), a discrete Gaussian of rho_B; admitted
          by the accountant (CKS20 on rho1 + rho_B), refused by basic
          composition (delta 1e-6 + 1e-9).
Each path alone is (4, 1e-6)-DP. The analyst who takes, for each o1, the
path whose conditional hockey-stick contribution is larger releases
  delta(4) = sum_o1 P1(o1) max(H^A_{4 - L1(o1)}, H^B_{4 - L1(o1)})
(the exact hockey-stick divergence of the adaptive mechanism, neighbours
c vs c + 1), which this script computes exactly over the discrete laws:
about 1.20e-6 > 1e-6. A filter must be valid under adaptively chosen
parameters (Rogers, Roth, Ullman, Vadhan 2016; Feldman and Zrnic 2021 for a
fixed Renyi order); the OR of two valid filters is not one.

Since the fix, every budget has ONE certificate, fixed by its kind before
any query (docs/administrator_guide.md "Why admission never picks a certificate"). This script
is now a check of that rule against the same strategy: with the admission
rules of dp_agg.apply_charge (reproduced in admitted() below, exactly, in
fractions), it computes which continuations each kind of budget admits
after Q1 and the exact delta of the best adaptive strategy among the
admitted continuations and stopping, and checks that it never exceeds what
the budget certifies:
  - (epsilon, delta) budget (4, 1e-6): only A is admitted; the adaptive
    choice between A and stopping has delta(4) <= 1e-6;
  - zCDP budget dp_agg.zcdp_rho(4, 1e-6): only B is admitted; the adaptive
    choice between B and stopping has delta(4) <= 1e-6;
and that the old rule (either certificate) still computes above 1e-6, so
the check can fail. Prints "ok ..." / "not ok ..." lines; exit status 1 on
any failure. Run by test/scripts/run_all_tests.sh.

Usage: adaptive_certificates.py [rho1 rho_B rho_budget]  (defaults: the
values the server reports: dp_agg.query_cost's rho of Q1 and of path B,
and dp_agg.zcdp_rho(4, 1e-6); sql/budget_certificates.sql checks the same
admissions on the server).
"""
import sys
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp


def dg_logpmf(k, s2):
    lw = -k * k / (2 * s2)
    return lw - logsumexp(lw)


def cks_delta(rho, eps):
    def f(t):
        a = 1 + np.exp(t)
        return np.exp(t) * (a * rho - eps) + a * np.log1p(-1 / a) - t
    r = minimize_scalar(f, bounds=(-30, 30), method="bounded", options={"xatol": 1e-12})
    return min(1.0, float(np.exp(r.fun)))


def h_rr(x, a):
    p = np.exp(a) / (1 + np.exp(a))
    return np.maximum(p - np.exp(x) * (1 - p), 0) + np.maximum((1 - p) - np.exp(x) * p, 0)


def admitted(kind, total, spent, charge):
    """dp_agg.apply_charge's certificate for one budget kind, exactly:
    total, spent and charge are dicts of Fractions (eps, delta, rho, zdelta)."""
    if kind == "epsilon_delta":
        return (spent["eps"] + charge["eps"] <= total["eps"]
                and spent["delta"] + charge["delta"] <= total["delta"])
    return (spent["rho"] + charge["rho"] <= total["rho"]
            and spent["zdelta"] + charge["zdelta"] <= total["zdelta"])


def add(a, b):
    return {k: a[k] + b[k] for k in a}


def hockey_sticks(rho1, rho_b, eps_a, big_e):
    """The strategy's laws, exactly over the discrete Gaussians: P1(o1), Q1's
    answer distribution, and per o1 the conditional hockey-stick
    contributions at epsilon big_e of continuing with A (an eps_a-DP release,
    at its worst case: randomized response), with B (a discrete Gaussian of
    rho_b), or stopping (a point mass)."""
    s1, sb = 1 / (2 * rho1), 1 / (2 * rho_b)
    k1 = int(60 * np.sqrt(s1)) + 10
    o = np.arange(-k1, k1 + 1).astype(float)
    p1 = np.exp(dg_logpmf(o - 1, s1))
    x = big_e - (dg_logpmf(o - 1, s1) - dg_logpmf(o, s1))
    kb = int(60 * np.sqrt(sb)) + 10
    k = np.arange(-kb, kb + 1).astype(float)
    lp, lq = dg_logpmf(k - 1, sb), dg_logpmf(k, sb)
    order = np.argsort(-(lp - lq))
    cp, cq = np.cumsum(np.exp(lp)[order]), np.cumsum(np.exp(lq)[order])
    idx = np.searchsorted(-(lp - lq)[order], -x, side="left")
    h_b = np.where(idx > 0, cp[np.maximum(idx - 1, 0)] - np.exp(x) * cq[np.maximum(idx - 1, 0)], 0)
    return p1, {"A": h_rr(x, eps_a), "B": np.maximum(h_b, 0), "stop": np.maximum(1 - np.exp(x), 0)}


def strategy_amounts(rho1, rho_b, rho_budget):
    """The ledger's charges of Q1, A and B and the totals of two budgets that
    both promise (4, 1e-6), as exact Fractions (eps, delta, rho, zdelta)."""
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
    return charges, totals


def strategy_arguments(argv):
    """rho1, rho_B and rho_budget from the command line, or what the server
    reports."""
    rho1 = float(argv[1]) if len(argv) > 1 else 9.1488396549535597e-7
    rho_b = float(argv[2]) if len(argv) > 2 else 0.31099949011311679
    rho_budget = argv[3] if len(argv) > 3 else "0.31106495494"
    return rho1, rho_b, rho_budget


class Checks:
    """Prints "ok ..." / "not ok ..." lines and counts the failures."""

    def __init__(self):
        self.failures = 0

    def __call__(self, ok, text):
        print(("ok " if ok else "not ok ") + text)
        self.failures += 0 if ok else 1


def main():
    E, D = 4.0, 1e-6
    rho1, rho_b, rho_budget = strategy_arguments(sys.argv)
    p1, h = hockey_sticks(rho1, rho_b, 3.9962, E)
    a, b = (p1 * h["A"]).sum(), (p1 * h["B"]).sum()
    either = (p1 * np.maximum(h["A"], h["B"])).sum()
    print(f"Q1 then A only: delta(4) = {a:.4g}; Q1 then B only: {b:.4g} "
          f"(CKS20 bound for Q1 + B: {cks_delta(rho1 + rho_b, E):.4g})")

    charges, budgets = strategy_amounts(rho1, rho_b, rho_budget)
    check = Checks()
    check(either > D, f"the old rule (either certificate) loses delta(4) = {either:.4g} > 1e-6 "
                      "(so this check can fail)")
    for kind, total in budgets.items():
        zero = {key: Fraction(0) for key in total}
        if not admitted(kind, total, zero, charges["Q1"]):
            check(False, f"{kind}: Q1 admitted")
            continue
        spent = add(zero, charges["Q1"])
        paths = [name for name in ("A", "B") if admitted(kind, total, spent, charges[name])]
        best = (p1 * np.maximum.reduce([h["stop"]] + [h[name] for name in paths])).sum()
        check(len(paths) <= 1, f"{kind}: continuations admitted after Q1: {paths or 'none'}")
        check(best <= D * (1 + 1e-9),
              f"{kind}: best adaptive choice among {paths + ['stop']}: delta(4) = {best:.4g} "
              "<= 1e-6")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
