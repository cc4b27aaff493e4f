#!/usr/bin/python3
"""Why dp_agg has no Gaussian-DP (mu-GDP) budget kind yet, and which kind to pick
(docs/administrator_guide.md "Which kind to pick" and "No Gaussian-DP kind yet").

Each "ok" line checks one claim those sections make, computed here from the
definitions (floating point; every margin checked is many orders of magnitude
above the rounding error):

1. The discrete Gaussian that dp_agg samples is NOT (Delta / sigma)-GDP at small
   sigma. mu-GDP (Dong, Roth and Su, "Gaussian Differential Privacy", JRSS-B 2022)
   asks that every test between the outputs on neighbours D, D' have type II
   error beta >= G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu). For X ~ N_Z(0, sigma^2)
   (pmf proportional to exp(-x^2 / (2 sigma^2)) on the integers) against X + 1,
   the test "reject when the output is >= 1" has alpha = beta = (1 - P[X = 0]) / 2,
   and at sigma = 1 that is below Phi(-1/2) = G_1's symmetric point: the pair
   needs mu >= 1.0458, not 1. (At sigma = 4 the excess is 0.26%.)
   The continuous Gaussian's tradeoff is exactly G_{Delta/sigma}; the lattice
   lumps the mass near the centre.
2. An epsilon-DP release is mu-GDP with mu = -2 Phi^-1(1 / (1 + e^epsilon))
   (the chord argument in the docs): checked on a grid of alpha for a few
   epsilons, with equality at the symmetric point.
3. Which kind to pick, at a total guarantee of (1, 1e-6) shared by k releases:
   - pure (Laplace) releases: basic composition gives each 1/k, zCDP
     sqrt(2 rho / k) (rho = the largest rho with CKS20 Cor. 13 delta(1) <= 1e-6):
     zCDP is better from k = 21 on, basic below;
   - GDP would give pure releases LESS than zCDP (k = 100: 0.0189 vs 0.0221),
     since the conversion of epsilon-DP to GDP is lossy;
   - Gaussian releases: GDP's exact composition gives sigma sqrt(k) / mu against
     zCDP's sqrt(k / (2 rho)), 7.2% less noise at every k.
Prints "ok ..." / "not ok ..." lines; exit status 1 on any "not ok".
"""
import math
import sys

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import norm

failures = 0


def check(ok, text):
    global failures
    print(("ok " if ok else "not ok ") + text)
    if not ok:
        failures += 1


def discrete_gaussian_p0(sigma):
    """P[X = 0] for X ~ N_Z(0, sigma^2)."""
    k = np.arange(1, int(40 * sigma) + 40, dtype=float)
    return 1.0 / (1.0 + 2.0 * np.exp(-k * k / (2 * sigma * sigma)).sum())


def needed_mu_at_median_test(sigma):
    """The smallest mu for which the test "output >= 1" meets G_mu (shift 1)."""
    alpha = (1 - discrete_gaussian_p0(sigma)) / 2  # = beta
    return norm.ppf(1 - alpha) - norm.ppf(alpha)


# 1. The discrete Gaussian at small sigma is not (1/sigma)-GDP.
alpha1 = (1 - discrete_gaussian_p0(1.0)) / 2
check(alpha1 < norm.cdf(-0.5) - 1e-3,
      f"N_Z(0,1) vs N_Z(1,1): the test 'output >= 1' has alpha = beta = {alpha1:.5f} < "
      f"Phi(-1/2) = {norm.cdf(-0.5):.5f}, so the pair is not 1-GDP")
mu1 = needed_mu_at_median_test(1.0)
check(abs(mu1 - 1.0458) < 1e-4, f"it needs mu >= {mu1:.4f} (docs: 1.0458)")
mu4 = needed_mu_at_median_test(4.0) * 4.0
check(1.002 < mu4 < 1.003, f"at sigma 4 the excess over Delta/sigma is {100 * (mu4 - 1):.2f}% "
      "(docs: 0.26%)")


# 2. epsilon-DP implies mu-GDP with mu = -2 Phi^-1(1 / (1 + e^epsilon)).
def pure_mu(epsilon):
    return -2 * norm.ppf(1 / (1 + math.exp(epsilon)))


alphas = np.linspace(0, 1, 100001)
for epsilon in (0.01, 0.1, 1.0, 3.0):
    mu = pure_mu(epsilon)
    g = norm.cdf(norm.ppf(1 - alphas) - mu)
    f = np.maximum.reduce([np.zeros_like(alphas), 1 - math.exp(epsilon) * alphas,
                           math.exp(-epsilon) * (1 - alphas)])
    star = 1 / (1 + math.exp(epsilon))
    check(bool(np.all(g <= f + 1e-12)) and abs(norm.cdf(-mu / 2) - star) < 1e-12,
          f"epsilon {epsilon}: G_mu <= f_(epsilon,0) on 100001 points, equal at "
          f"alpha = 1/(1+e^epsilon) (mu = {mu:.6f})")


# 3. Which kind to pick at (1, 1e-6).
def zcdp_delta(rho, epsilon):
    """CKS20 Corollary 13, minimised over alpha (as dp_agg's accountant)."""
    def log_delta(a):
        return ((a - 1) * (a * rho - epsilon) - math.log(a - 1)
                + a * math.log1p(-1 / a))
    best = minimize_scalar(log_delta, bounds=(1 + 1e-9, 1e6), method="bounded")
    return math.exp(best.fun)


rho = brentq(lambda r: zcdp_delta(r, 1.0) - 1e-6, 1e-6, 1.0, xtol=1e-15)
check(abs(rho - 0.0243559703592) < 1e-6, f"zcdp_rho(1, 1e-6) = {rho:.10f} (dp_agg: 0.0243559703592)")
crossover = 1 / (2 * rho)
check(20 < crossover < 21, f"pure releases: zCDP gives more epsilon each than basic composition "
      f"from k > 1/(2 rho) = {crossover:.2f} on (docs: from 21 releases)")


def gdp_delta(mu, epsilon):
    """Dong, Roth and Su, Corollary 2.13: mu-GDP is (epsilon, delta(epsilon))-DP."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


mu_total = brentq(lambda m: gdp_delta(m, 1.0) - 1e-6, 0.01, 5, xtol=1e-14)
k = 100
pure_gdp = brentq(lambda e: math.sqrt(k) * pure_mu(e) - mu_total, 1e-9, 10, xtol=1e-14)
pure_zcdp = math.sqrt(2 * rho / k)
check(pure_gdp < pure_zcdp and abs(pure_gdp - 0.0189) < 1e-4 and abs(pure_zcdp - 0.0221) < 1e-4,
      f"100 pure releases: GDP would give each epsilon {pure_gdp:.4f}, zCDP {pure_zcdp:.4f} "
      "(docs: 0.0189 vs 0.0221)")
sigma_gdp = math.sqrt(k) / mu_total
sigma_zcdp = math.sqrt(k / (2 * rho))
saving = sigma_zcdp / sigma_gdp - 1
check(abs(sigma_gdp - 42.25) < 0.01 and abs(sigma_zcdp - 45.31) < 0.01
      and abs(saving - 0.072) < 0.001,
      f"100 Gaussian counts: sigma {sigma_gdp:.2f} under GDP, {sigma_zcdp:.2f} under zCDP "
      f"({100 * saving:.1f}% more; docs: 42.25, 45.31, 7.2%)")

sys.exit(1 if failures else 0)
