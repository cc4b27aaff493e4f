"""The accountant audited as a whole (docs/administrator_guide.md "Privacy budgets"): a sequence of
K Gaussian counts that share a budget of (1, 1e-6) by the recipe the README
gives (each at dp_agg.gaussian_count_epsilon(dp_agg.zcdp_rho(1, 1e-6) / K,
1e-6)) must certify no more loss than the accountant reports for it.

Neighbours: every group holds one row (D) or two (D'), so each of the K
counts of a group shifts by 1 and the group's vector of K answers is one
sample of the composed mechanism. The likelihood ratio of K independent
discrete Gaussians shifted by 1 depends on the answers only through their
sum S (it is exp((2 sum y_i - ...) / (2 sigma^2))), so S is sufficient: the
composition's exact privacy profile is the hockey-stick divergence of the law
of S (the K-fold convolution of N_Z(0, sigma^2)) against itself shifted by K.

Checks:
  accountant   deterministic: the exact composition's epsilon at delta 1e-6
               (that law, sigma^2 from the suite's own calibration, which
               the gauss-calibration check ties to the server) is at most the
               accountant's guarantee for those K charges under a zCDP
               budget (dp_agg.zcdp_epsilon of the sum of the rho that
               dp_agg.query_cost reports, at 1e-6), which is at most the
               budget's 1; and their rho fits dp_agg.zcdp_rho(1, 1e-6).
  accountant   statistical: S - K on D follows that law (chi-square), so
               the law used above is the one released (independent noise per
               call, the claimed sigma).
  accountant   statistical, both directions: the certified lower bound on
               delta(epsilon_guarantee) of the sampled S is at most 1e-6.
Self-check: under halve_noise the chi-square must fail.
"""

import math
from typing import List, Tuple

import numpy as np
from scipy import stats

from .laws import discrete_gaussian_pmf, gaussian_sigma2_for, hockey_stick_delta
from .statistics import NoiseBins, certify_delta

RELEASES = 10  # Gaussian counts per sample
BUDGET_EPSILON, BUDGET_DELTA = 1.0, 1e-6
STATISTICAL_TESTS = 3  # chi-square, and delta in two directions


def composed_law(sigma2: float, releases: int) -> Tuple[np.ndarray, np.ndarray]:
    """Support and pmf of the sum of `releases` independent N_Z(0, sigma2)."""
    k, pmf = discrete_gaussian_pmf(sigma2)
    law = pmf
    for _ in range(releases - 1):
        law = np.convolve(law, pmf)
    reach = (len(law) - 1) // 2
    return np.arange(-reach, reach + 1), law / law.sum()


def exact_epsilon(law: np.ndarray, shift: int, delta: float) -> float:
    """The smallest epsilon (bisection to 1e-9) with hockey-stick delta of the
    law against itself shifted by `shift` at most `delta` (symmetric law:
    both directions are the same)."""
    shifted = np.concatenate([np.zeros(shift), law[:-shift]])
    low, high = 0.0, 10.0
    for _ in range(60):
        middle = (low + high) / 2
        if hockey_stick_delta(shifted, law, middle) <= delta:
            high = middle
        else:
            low = middle
    return high


class AccountantAudit:
    def __init__(self, auditor):
        self.auditor = auditor
        self.db = auditor.db

    def _server(self, query: str, arguments=()):
        with self.db.main.cursor() as cur:
            cur.execute(query, arguments)
            return cur.fetchone()

    def share_epsilon(self) -> float:
        return float(self._server(
            "SELECT dp_agg.gaussian_count_epsilon(dp_agg.zcdp_rho(%s, %s) / %s, %s)",
            (BUDGET_EPSILON, BUDGET_DELTA, RELEASES, BUDGET_DELTA))[0])

    def draw(self, epsilon: float, fault: str, samples: int):
        """S - K true (the noise sum) on D and on D', one statement each."""
        one = self.db.table_for((("x", "integer"),), (1,))
        two = self.db.table_for((("x", "integer"),), (1, 2))
        calls = ", ".join(f"dp_count(x, {epsilon!r}, {BUDGET_DELTA!r})" for _ in range(RELEASES))
        futures = []
        for table, truth in ((one, 1), (two, 2)):
            query = (f"SELECT ARRAY[{calls}]::bigint[] FROM {table} WHERE g <= {samples} "
                     f"GROUP BY g")
            futures.append((truth, self.auditor.executor.submit(
                self.db._execute, query, fault, RELEASES * BUDGET_DELTA)))
        self.db.releases_drawn += 2 * samples * RELEASES
        sums = []
        for truth, future in futures:
            rows = future.result()
            values = np.array([row[0] for row in rows], dtype=np.int64)
            sums.append(values.sum(axis=1) - RELEASES * truth)
        return sums[0], sums[1]

    def chi_square(self, noise: np.ndarray, k: np.ndarray, law: np.ndarray):
        bins = NoiseBins.for_pmf(k, law, len(noise))
        observed = bins.histogram(noise)
        statistic, p_value = stats.chisquare(observed, bins.probabilities * len(noise))
        return statistic, p_value, len(observed)

    def run(self, samples: int) -> List:
        from .auditor import Outcome  # (auditor imports this module)
        alpha = self.auditor.alpha_per_test
        epsilon = self.share_epsilon()
        rho = self._server(
            "SELECT rho FROM dp_agg.query_cost(%s)",
            (f"SELECT dp_count(x, {epsilon!r}, {BUDGET_DELTA!r}) FROM "
             f"{self.db.table_for((('x', 'integer'),), (1,))}",))[0]
        # What a zCDP budget of dp_agg.zcdp_rho(1, 1e-6) certifies for these
        # K charges: their rho adds up (the ledger's sum) and converts to
        # (zcdp_epsilon(sum, 1e-6), 1e-6); admitted iff the sum fits.
        guarantee, admitted = self._server(
            "SELECT dp_agg.zcdp_epsilon((%s * %s::numeric)::float8, %s), "
            "       %s * %s::numeric <= dp_agg.zcdp_rho(%s, %s)",
            (RELEASES, rho, BUDGET_DELTA, RELEASES, rho, BUDGET_EPSILON, BUDGET_DELTA))
        guarantee = float(guarantee)
        sigma2 = gaussian_sigma2_for(epsilon, BUDGET_DELTA, 1)
        k, law = composed_law(sigma2, RELEASES)
        exact = exact_epsilon(law, RELEASES, BUDGET_DELTA)
        label = f"{RELEASES} x dp_count(eps {epsilon:.4g}, d 1e-6)"
        pair = "1 vs 2 rows per group"
        outcomes = [Outcome(
            "accountant", label, pair, BUDGET_EPSILON,
            f"exact eps {exact:.4f} <= {guarantee:.4f}", RELEASES,
            exact <= guarantee <= BUDGET_EPSILON and bool(admitted),
            f"[sigma {math.sqrt(sigma2):.6g} each, rho {float(rho):.6g} each; exact "
            f"composition's epsilon at delta 1e-6 vs the conversion of the charged rho; "
            f"admitted by the zCDP budget zcdp_rho(1, 1e-6): {admitted}]", claimed_delta=BUDGET_DELTA)]
        noise_d, noise_d_prime = self.draw(epsilon, "none", samples)
        statistic, p_value, bins = self.chi_square(noise_d, k, law)
        outcomes.append(Outcome(
            "accountant", label, "D: noise sum vs exact law", BUDGET_EPSILON,
            f"chi2 p = {p_value:.3g}", len(noise_d), p_value >= alpha,
            f"[{bins} bins, chi2 {statistic:.1f}]", claimed_delta=BUDGET_DELTA))
        # delta certified at the accountant's epsilon, on the sufficient
        # statistic S (answers on D' are S + K).
        for bound in certify_delta(noise_d, noise_d_prime + RELEASES, guarantee, alpha, False):
            outcomes.append(Outcome(
                "accountant", label, f"{pair}, {bound.direction}", guarantee,
                f"delta >= {bound.certified:.4f}", len(noise_d),
                bound.certified <= BUDGET_DELTA,
                f"[delta_hat {bound.empirical:.4f} on {bound.event}]",
                certified=bound.certified, claimed_delta=BUDGET_DELTA,
                empirical=bound.empirical))
        return outcomes

    def self_check(self, samples: int) -> List:
        from .auditor import Outcome
        epsilon = self.share_epsilon()
        sigma2 = gaussian_sigma2_for(epsilon, BUDGET_DELTA, 1)
        k, law = composed_law(sigma2, RELEASES)
        noise_d, _ = self.draw(epsilon, "halve_noise", samples)
        statistic, p_value, bins = self.chi_square(noise_d, k, law)
        detected = p_value < self.auditor.alpha_per_test
        return [Outcome("self-check", f"{RELEASES} x dp_count [halve_noise]",
                        "D: noise sum vs exact law", BUDGET_EPSILON, f"chi2 p = {p_value:.3g}",
                        len(noise_d), detected,
                        f"[halve_noise: chi-square {'detected' if detected else 'NOT detected'}]",
                        claimed_delta=BUDGET_DELTA)]
