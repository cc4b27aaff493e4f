#!/usr/bin/python3
"""Review of issue 14 (sql/review_accountant.sql, case 1): an analyst who
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

Usage: adaptive_certificates.py [rho1 rho_B]  (defaults: the values the
server reported on the review branch).
"""
import sys

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


def main():
    E, D = 4.0, 1e-6
    eps1, eps_a = 0.0038, 3.9962
    rho1 = float(sys.argv[1]) if len(sys.argv) > 1 else 9.1488396549535597e-7
    rho_b = float(sys.argv[2]) if len(sys.argv) > 2 else 0.31099949011311679
    s1, sb = 1 / (2 * rho1), 1 / (2 * rho_b)
    k1 = int(60 * np.sqrt(s1)) + 10
    o = np.arange(-k1, k1 + 1).astype(float)
    p1 = np.exp(dg_logpmf(o - 1, s1))
    l1 = dg_logpmf(o - 1, s1) - dg_logpmf(o, s1)
    h_a = h_rr(E - l1, eps_a)
    kb = int(60 * np.sqrt(sb)) + 10
    k = np.arange(-kb, kb + 1).astype(float)
    lp, lq = dg_logpmf(k - 1, sb), dg_logpmf(k, sb)
    lb = lp - lq
    order = np.argsort(-lb)
    cp, cq = np.cumsum(np.exp(lp)[order]), np.cumsum(np.exp(lq)[order])
    x = E - l1
    idx = np.searchsorted(-lb[order], -x, side="left")
    h_b = np.where(idx > 0, cp[np.maximum(idx - 1, 0)] - np.exp(x) * cq[np.maximum(idx - 1, 0)], 0)
    h_b = np.maximum(h_b, 0)
    a, b, m = (p1 * h_a).sum(), (p1 * h_b).sum(), (p1 * np.maximum(h_a, h_b)).sum()
    print(f"Q1 then A only: delta(4) = {a:.4g}; Q1 then B only: {b:.4g} "
          f"(CKS20 bound for Q1 + B: {cks_delta(rho1 + rho_b, E):.4g})")
    print(f"adaptive choice of A or B from Q1's answer: delta(4) = {m:.4g} "
          f"= {m / D:.3f} x the budget's 1e-6")


if __name__ == "__main__":
    main()
