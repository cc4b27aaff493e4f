"""The auditor: runs every audit of a plan against the database and records
its outcome (PASS/FAIL lines) under the run's Bonferroni budget.
"""

import concurrent.futures
import decimal
import fractions
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np
from scipy import stats

from .constants import FALSE_FAILURE_BUDGET
from .database import AuditDatabase, Releases
from .laws import (discrete_gaussian_pmf, epsilon_rounded_down, gaussian_sigma2_for,
                   optimal_partition_selection, optimal_release_probability, pair_delta)
from .statistics import (DirectionalBound, certify_delta, certify_privacy_loss,
                         clopper_pearson_lower, pooled_groups)
from .accountant import STATISTICAL_TESTS as ACCOUNTANT_STATISTICAL_TESTS, AccountantAudit
from .reuse import ReuseAudit
from .public_keys import (PublicKeyAudit, PublicLeftJoinAudit,
                          STATISTICAL_TESTS as PUBLIC_KEY_STATISTICAL_TESTS)
from .suites import (CI_GROUP_SELECTION_SELF_CHECKS, CI_SELF_CHECKS, EXACT_NOISE_AUDITS,
                     ExactNoiseAudit, GAUSS_CALIBRATIONS, GROUP_SELECTION_AUDITS,
                     GroupSelectionAudit, HALVE, LOW_BITS_AUDIT, ONE_SIDED, NeighbourPair,
                     PLOTTED_AUDITS, PLOTTED_SELF_CHECKS, PRIVACY_LOSS_AUDITS, PrivacyLossAudit, RunPlan,
                     SKIP_UNITS, UNIT_GROUP_SELECTION_AUDITS, UNIT_GROUP_SELECTION_SAMPLES,
                     UNIT_GROUP_SELECTION_SELF_CHECK_SAMPLES, UnitGroupSelectionAudit, ci_plan)


@dataclass
class Outcome:
    # privacy-loss, delta, float-grid, avg-range, answer-set, low-bits, exact-noise,
    # exact-selection, gauss-calibration, reuse, fresh, self-check
    section: str
    mechanism: str
    pair: str
    claimed_epsilon: Optional[float]
    statistic: str  # what was measured, printed as is
    samples: int
    passed: bool
    detail: str = ""
    certified: Optional[float] = None  # certified lower bound (privacy-loss and delta audits)
    informational: bool = False  # printed as INFO, counted neither way
    claimed_delta: Optional[float] = None  # (epsilon, delta) audits: certified is a delta
    empirical: Optional[float] = None  # uncorrected log-ratio, delta_hat, or a chi-square p

    def line(self) -> str:
        eps = "-" if self.claimed_epsilon is None else f"{self.claimed_epsilon:g}"
        if self.claimed_delta is not None:
            eps += f",d={self.claimed_delta:g}"
        verdict = "INFO" if self.informational else ("PASS" if self.passed else "FAIL")
        return (f"{verdict}  {self.section:<12} {self.mechanism:<26} {self.pair:<26} "
                f"eps={eps:<5} {self.statistic:<30} n={self.samples:<9} {self.detail}")


def format_bound(value: float) -> str:
    return "-inf" if value == -math.inf else f"{value:.3f}"


def format_delta(value: float) -> str:
    return f"{value:.4f}"



class Auditor:
    def __init__(self, plan: RunPlan, database: AuditDatabase, jobs: int,
                 run_main_audits: bool):
        self.plan = plan
        self.db = database
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=jobs * 4)
        self.run_main_audits = run_main_audits
        self.outcomes: List[Outcome] = []
        self.curves: Dict[str, Tuple[np.ndarray, np.ndarray]] = {}
        self.replicate_bounds: Dict[Tuple[str, str, float], List[float]] = {}
        self.alpha_per_test = FALSE_FAILURE_BUDGET / self.statistical_test_count()

    @staticmethod
    def statistical_test_count() -> int:
        """Bonferroni: every test that can fail on a correct implementation is
        counted here, and each runs at level FALSE_FAILURE_BUDGET / count. The
        count is that of a full run in every mode, so that a self-check
        "detected" means exactly "a real run would fail". (The grid, answer-set
        and calibration checks are deterministic, except "some answer is an odd
        multiple of r", which a correct implementation fails with probability
        2^-n, n > 10^4: negligible next to the budget.)"""
        privacy_loss_tests = 2 * len(PRIVACY_LOSS_AUDITS)  # two directions each (epsilon or delta)
        exact_tests = 2 * len(EXACT_NOISE_AUDITS)  # chi-square and sign test each
        low_bit_tests = 2  # two homogeneity tests on the float grid's low bits
        # Chi-square of the answers against the exact permute-and-flip law, on
        # D and on D' of every dp_select and quantile audit.
        law_tests = 2 * sum(1 for a in PRIVACY_LOSS_AUDITS
                            if a.mechanism.kind in ("selection", "quantile"))
        # Partition selection: exact law, pairs (two directions), delta.
        group_tests = sum(a.statistical_tests for a in GROUP_SELECTION_AUDITS)
        group_tests += sum(a.statistical_tests for a in UNIT_GROUP_SELECTION_AUDITS)
        # The accountant audited as a whole (accountant.py).
        accountant_tests = ACCOUNTANT_STATISTICAL_TESTS
        return (privacy_loss_tests + exact_tests + low_bit_tests + law_tests + group_tests
                + accountant_tests + PUBLIC_KEY_STATISTICAL_TESTS)

    def record(self, outcome: Outcome):
        self.outcomes.append(outcome)
        print(outcome.line(), flush=True)

    def run(self):
        if self.run_main_audits:
            self.check_gaussian_calibration()
            self.run_privacy_loss_audits()
            self.run_exact_noise_audits()
            self.run_group_selection_audits()
            self.run_unit_group_selection_audits()
            self.run_accountant_audit()
            self.run_reuse_audit()
            self.run_public_key_audit()
        self.run_self_checks()
        if self.plan.ci_self_check_replicates:
            self.run_self_check_replicates()

    # --- privacy loss -----------------------------------------------------
    def draw_pair(self, audit: PrivacyLossAudit, samples: int, fault: str = "none",
                  epsilon_factor: float = 1.0):
        epsilon = audit.claimed_epsilon * epsilon_factor
        return (self.db.releases(audit.mechanism, audit.pair.rows_d, epsilon, samples,
                                 fault, self.executor),
                self.db.releases(audit.mechanism, audit.pair.rows_d_prime, epsilon, samples,
                                 fault, self.executor))

    def worst_bound(self, audit: PrivacyLossAudit, d: "Releases", d_prime: "Releases",
                    epsilon_factor: float = 1.0) -> DirectionalBound:
        """The larger of the two directions' certified bounds (each a test):
        on the privacy loss, or for (epsilon, delta) mechanisms on delta at
        the claimed epsilon."""
        mechanism = audit.mechanism
        if audit.claimed_delta is not None:
            bounds = certify_delta(d.values, d_prime.values, audit.claimed_epsilon,
                                   self.alpha_per_test, mechanism.output in ("float8", "float4"))
        else:
            bounds = certify_privacy_loss(
                d.values, d_prime.values, self.alpha_per_test,
                mechanism.exact_float_grid(audit.claimed_epsilon * epsilon_factor),
                mechanism.output in ("float8", "float4") and mechanism.kind != "quantile")
        return max(bounds, key=lambda b: b.certified)

    def pipelined(self, jobs, draw, finish):
        """Draws the next job's releases while the current one is analysed
        (bounded memory, both cores busy)."""
        pending = None
        for job in list(jobs) + [None]:
            upcoming = (job, draw(job)) if job is not None else None
            if pending is not None:
                finish(*pending)
            pending = upcoming

    def run_privacy_loss_audits(self):
        self.pipelined(PRIVACY_LOSS_AUDITS,
                       lambda audit: self.draw_pair(audit, self.plan.samples_for(audit)),
                       self.finish_privacy_loss_audit)

    def finish_privacy_loss_audit(self, audit: PrivacyLossAudit, draws):
        d, d_prime = draws[0].result(), draws[1].result()
        worst = self.worst_bound(audit, d, d_prime)
        if audit.claimed_delta is not None:
            self.record(Outcome(
                "delta", audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
                f"certified delta >= {format_delta(worst.certified)}", 2 * len(d),
                not audit.exceeds_claim(worst.certified),
                f"[{worst.event}, {worst.direction}; delta_hat {worst.empirical:.4f} "
                f"- margin {worst.empirical - worst.certified:.4f}]",
                certified=worst.certified, claimed_delta=audit.claimed_delta,
                empirical=worst.empirical))
        else:
            self.record(Outcome(
                "privacy-loss", audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
                f"certified lower bound {format_bound(worst.certified)}", 2 * len(d),
                not audit.exceeds_claim(worst.certified),
                f"[{worst.event}, {worst.direction}; empirical {worst.empirical:.3f}]",
                certified=worst.certified, empirical=worst.empirical))
        if audit.key in PLOTTED_AUDITS:
            self.curves[audit.key] = (d.values, d_prime.values)
        self.check_float_safety(audit, d, d_prime)
        if audit.mechanism.kind in ("selection", "quantile"):
            self.check_answer_set(audit, d, d_prime)
            for rows, answers, side in ((audit.pair.rows_d, d, "D"),
                                        (audit.pair.rows_d_prime, d_prime, "D'")):
                self.record(self.exact_law_outcome(audit, rows, side, answers,
                                                   audit.claimed_epsilon, "none"))

    # --- float safety -----------------------------------------------------
    def check_float_safety(self, audit: PrivacyLossAudit, d: "Releases", d_prime: "Releases"):
        mechanism = audit.mechanism
        if mechanism.function == "dp_avg":
            self.check_within_bounds(audit, d, d_prime)
        grid = mechanism.release_grid(audit.claimed_epsilon)
        if grid is not None and d.exact_text is not None:
            self.check_decimal_rounding(audit, d, d_prime, grid)
        elif grid is not None:
            self.check_grid(audit, d, d_prime, grid[0])
        if audit.key == LOW_BITS_AUDIT:
            self.check_low_bits(audit, d, d_prime, grid[0])

    def check_grid(self, audit: PrivacyLossAudit, d: "Releases", d_prime: "Releases",
                   exponent: int):
        """Every dp_sum answer must be an exact multiple of r = 2^exponent
        (docs/privacy_guarantees.md "Secure noise"), r computed from the documented rule:
        deterministic, no false failures. Double and numeric answers must also
        use the grid: noise of 2^40 steps makes the last grid bit a fair coin,
        so a correct implementation shows no odd multiple with probability
        2^-n. (float4 answers are rounded to 24 bits: on the grid, rarely odd.)"""
        if d.exact_text is not None:  # numeric: exact decimal text
            r = fractions.Fraction(2) ** exponent
            multiples = [fractions.Fraction(v) / r for v in d.exact_text + d_prime.exact_text]
            off_grid = sum(1 for m in multiples if m.denominator != 1)
            odd = sum(1 for m in multiples if m.denominator == 1 and m.numerator % 2 != 0)
            total = len(multiples)
        else:  # doubles: scaling by a power of two and fmod are exact
            scaled = np.ldexp(np.concatenate([d.values, d_prime.values]), -exponent)
            off_grid = int(np.count_nonzero(np.mod(scaled, 1.0) != 0))
            odd = int(np.count_nonzero(np.mod(scaled, 2.0) == 1.0))
            total = len(scaled)
        passed = off_grid == 0 and (audit.mechanism.output == "float4" or odd > 0)
        self.record(Outcome("float-grid", audit.mechanism.label, audit.pair.label,
                            audit.claimed_epsilon, f"{off_grid} answers off r = 2^{exponent}",
                            total, passed, f"[{odd} odd multiples of r]"))

    def check_decimal_rounding(self, audit: PrivacyLossAudit, d: "Releases",
                               d_prime: "Releases", grid: Tuple[int, int]):
        """Numeric dp_sum answers are the grid value rounded to P decimal
        places (docs/privacy_guarantees.md "Secure noise"), P = max(0, -floor(log10(s / 10))) for
        the noise's standard deviation s: for discrete Laplace of scale b
        steps, s = sqrt(2q) / (1 - q) steps of 2^k, q = exp(-1/b). Every answer
        must carry exactly P places (numeric_round pads to them):
        deterministic, no false failures. And they must be noisy."""
        exponent, steps = grid
        scale_in_steps = float(fractions.Fraction(steps) /
                               epsilon_rounded_down(audit.claimed_epsilon))
        q = math.exp(-1.0 / scale_in_steps)
        stddev = math.ldexp(math.sqrt(2.0 * q) / -math.expm1(-1.0 / scale_in_steps), exponent)
        places = max(0, -math.floor(math.log10(stddev / 10)))
        texts = d.exact_text + d_prime.exact_text
        wrong = sum(1 for v in texts if -decimal.Decimal(v).as_tuple().exponent != places)
        distinct = len(set(texts))
        self.record(Outcome("float-grid", audit.mechanism.label, audit.pair.label,
                            audit.claimed_epsilon,
                            f"{wrong} answers not rounded to {places} places", len(texts),
                            wrong == 0 and distinct > 1, f"[{distinct} distinct answers]"))

    def check_within_bounds(self, audit, d: "Releases", d_prime: "Releases"):
        """README: the mean is "always within [lower, upper]" (deterministic)."""
        values = np.concatenate([d.values, d_prime.values])
        outside = int(np.count_nonzero((values < audit.mechanism.lower)
                                       | (values > audit.mechanism.upper) | ~np.isfinite(values)))
        self.record(Outcome("avg-range", audit.mechanism.label, audit.pair.label,
                            audit.claimed_epsilon, f"{outside} answers outside [L,U]",
                            len(values), outside == 0, claimed_delta=audit.claimed_delta))

    def check_answer_set(self, audit, d: "Releases", d_prime: "Releases"):
        """README: dp_select's answer "is always a candidate", a quantile's is
        always in [lower, upper] (deterministic)."""
        values = np.concatenate([d.values, d_prime.values])
        allowed = audit.mechanism.answer_set()
        outside = int(np.count_nonzero(audit.mechanism.answer_classes(values) < 0))
        selection = audit.mechanism.kind == "selection"
        what = "candidates" if selection else "in [lower, upper]"
        detail = (f"[{len(np.unique(values))} distinct answers of {len(allowed)}]" if selection
                  else f"[{len(np.unique(values))} distinct answers]")
        self.record(Outcome("answer-set", audit.mechanism.label, audit.pair.label,
                            audit.claimed_epsilon, f"{outside} answers not {what}",
                            len(values), outside == 0, detail))

    def check_low_bits(self, audit, d: "Releases", d_prime: "Releases", exponent: int):
        """Two-sample chi-square homogeneity tests: do the low-order bits of
        the answers differ between D and D'? On the grid, noise of 2^40 steps
        makes Y / r mod 2^10 uniform to within ~2^-30 on both, so a correct
        implementation fails only at the test's level. Floating-point Laplace
        noise would leave data-dependent low bits (Mironov, CCS 2012)."""
        for label, classes_of in (
                ("Y mod 2^-30 (64 classes)",
                 lambda v: np.mod(np.ldexp(v, -exponent), 1024).astype(np.int64) // 16),
                ("lowest 6 grid-mantissa bits",
                 lambda v: np.mod(np.ldexp(v, -exponent), 64).astype(np.int64))):
            table = np.array([np.bincount(classes_of(d.values), minlength=64),
                              np.bincount(classes_of(d_prime.values), minlength=64)])
            table = table[:, table.sum(axis=0) > 0]  # classes that never occur
            if table.shape[1] < 2:  # one class on both sides: nothing differs
                statistic, p_value, dof = 0.0, 1.0, 0
            else:
                statistic, p_value, dof, _ = stats.chi2_contingency(table, correction=False)
            self.record(Outcome("low-bits", audit.mechanism.label, audit.pair.label,
                                audit.claimed_epsilon, f"chi2 p = {p_value:.3g}",
                                int(table.sum()), p_value >= self.alpha_per_test,
                                f"[{label}, chi2 {statistic:.1f} on {dof} df]"))

    # --- exact law of dp_select and quantile answers ------------------------
    def exact_law_outcome(self, audit: PrivacyLossAudit, rows: Tuple, side: str,
                          answers: "Releases", epsilon: float, fault: str) -> Outcome:
        """Pearson's chi-square of the answers on one table against the exact
        permute-and-flip law at `epsilon` (Mechanism.exact_law), outcomes pooled
        in order to expected counts >= 1000. Catches a wrong rate (epsilon vs
        epsilon / 2: the monotonic rule misapplied, or the reverse), a wrong
        sensitivity, a utility off by one bin, a biased permutation. Answers
        outside the answer set are left to check_answer_set."""
        allowed = audit.mechanism.answer_set()
        law = audit.mechanism.exact_law(rows, epsilon)
        position = audit.mechanism.answer_classes(answers.values)
        valid = position >= 0
        n = int(np.count_nonzero(valid))
        groups = pooled_groups(law, n)
        observed = np.bincount(groups[position[valid]], minlength=groups[-1] + 1)
        expected = np.bincount(groups, weights=law) * n
        if len(expected) < 2:
            statistic, p_value = 0.0, 1.0
        else:
            statistic, p_value = stats.chisquare(observed, expected)
        label = audit.mechanism.label + (f" [{fault}]" if fault != "none" else "")
        top = int(np.argmax(law))
        seen = float(np.count_nonzero(position == top)) / max(n, 1)
        law_name = ("permute-and-flip" if audit.mechanism.kind == "selection"
                    else "Smith exponential-mechanism cell")
        outcome = Outcome("exact-selection", label, f"{side} = {self.show_rows(rows)}",
                          audit.claimed_epsilon, f"chi2 p = {p_value:.3g}", n,
                          p_value >= self.alpha_per_test,
                          f"[{law_name} law, {len(expected)} groups, chi2 {statistic:.1f}; "
                          f"P[{allowed[top]:g}] = {law[top]:.4f}, observed {seen:.4f}]")
        outcome.empirical = p_value
        return outcome

    @staticmethod
    def show_rows(rows: Tuple) -> str:
        return NeighbourPair(rows, None).label.split(" vs ")[0]

    # --- exact noise distribution -----------------------------------------
    def exact_noise_outcomes(self, audit: ExactNoiseAudit, answers: "Releases",
                             fault: str) -> Tuple[Outcome, Outcome]:
        """Pearson's chi-square of the noise (answer - true answer, in grid
        steps) against its exact pmf: discrete Laplace with the mechanism's
        scale ceil(D/R)/epsilon' steps, or discrete Gaussian with the sigma of
        discrete_gaussian_sigma2; and an exact binomial test of
        P[noise > 0] = P[noise < 0]. Catches a wrong scale, a doubled P(0)
        (the "-0" of CKS20 Algorithm 2 not rejected) and a biased sign."""
        noise = audit.noise_in_steps(answers.values)
        n = len(noise)
        bins = audit.bins(n)
        observed = bins.histogram(noise)
        statistic, p_value = stats.chisquare(observed, bins.probabilities * n)
        off_integer = int(np.count_nonzero(noise != np.round(noise)))
        label = audit.mechanism.label + (f" [{fault}]" if fault != "none" else "")
        pair = f"fixed table, {len(audit.rows)} rows"
        delta = audit.mechanism.delta
        chi_square = Outcome(
            "exact-noise", label, pair, audit.epsilon, f"chi2 p = {p_value:.3g}", n,
            p_value >= self.alpha_per_test and off_integer == 0,
            f"[{audit.describe_law()}, {len(observed)} bins, "
            f"chi2 {statistic:.1f}; {off_integer} non-integer]", claimed_delta=delta)
        positive, negative = int(np.count_nonzero(noise > 0)), int(np.count_nonzero(noise < 0))
        sign_p = stats.binomtest(positive, positive + negative, 0.5).pvalue
        sign = Outcome("exact-noise", label, pair, audit.epsilon, f"sign test p = {sign_p:.3g}",
                       n, sign_p >= self.alpha_per_test,
                       f"[{positive} positive, {negative} negative]", claimed_delta=delta)
        return chi_square, sign

    def run_exact_noise_audits(self):
        pending = [(a, self.db.releases(a.mechanism, a.rows, a.epsilon, self.plan.exact_samples,
                                        "none", self.executor)) for a in EXACT_NOISE_AUDITS]
        for audit, future in pending:
            for outcome in self.exact_noise_outcomes(audit, future.result(), "none"):
                self.record(outcome)

    def check_gaussian_calibration(self):
        """The server's discrete Gaussian sigma for a count against the
        suite's own calibration (discrete_gaussian_sigma2): for k = 0, 1, ...
        dp_count_margin(epsilon, delta, c) must be k just below c = P[|X| <= k]
        and k + 1 just above (offsets 1e-7). Deterministic; it shows that the
        pmf the exact-noise test uses is the server's. dp_count_margin is
        computed from public parameters only and costs no budget."""
        for epsilon, delta in GAUSS_CALIBRATIONS:
            sigma2 = gaussian_sigma2_for(epsilon, delta, 1)
            k, pmf = discrete_gaussian_pmf(sigma2)
            queries = []
            for m in range(64):
                covered = float(pmf[np.abs(k) <= m].sum())
                if covered > 1.0 - 1e-5:
                    break
                queries += [(covered - 1e-7, m), (covered + 1e-7, m + 1)]
            with self.db.main.cursor() as cur:
                cur.execute("SET dp_agg.max_delta = %s", (max(delta, 1e-5),))
                cur.execute("SELECT dp_count_margin(%s::float8, %s::float8, c) "
                            "FROM unnest(%s::float8[]) WITH ORDINALITY AS u(c, i) ORDER BY i",
                            (epsilon, delta, [q for q, _ in queries]))
                margins = [row[0] for row in cur.fetchall()]
                cur.execute("RESET dp_agg.max_delta")
            wrong = [(q, want, got) for (q, want), got in zip(queries, margins) if got != want]
            self.record(Outcome(
                "gauss-calibration", "dp_count_margin", f"eps {epsilon:g}, delta {delta:g}",
                epsilon, f"{len(wrong)} of {len(queries)} quantiles differ", len(queries),
                not wrong, f"[sigma {math.sqrt(sigma2):.9g}; "
                           + (f"first: c = {wrong[0][0]!r} gave {wrong[0][2]}, "
                              f"expected {wrong[0][1]}" if wrong
                              else f"P[|X| <= k] for k = 0..{len(queries) // 2 - 1}") + "]",
                claimed_delta=delta))

    # --- the accountant (a sequence of Gaussian releases as a whole) --------
    # 20,000 samples of 10 counts per table: the exact-noise audits' size in
    # releases (200,000), a few seconds.
    ACCOUNTANT_SAMPLES = 20_000

    def run_accountant_audit(self):
        for outcome in AccountantAudit(self).run(self.ACCOUNTANT_SAMPLES):
            self.record(outcome)

    # --- the release cache: a reuse is the same release, free (reuse.py) ----
    def run_reuse_audit(self):
        for outcome in ReuseAudit(self).run():
            self.record(outcome)

    # --- public key sets: no selection, exactly the declared keys -----------
    def run_public_key_audit(self):
        for audit in (PublicKeyAudit, PublicLeftJoinAudit):
            for outcome in audit(self).run():
                self.record(outcome)

    # --- partition selection (dp_agg.group_selection) ---------------------
    def run_group_selection_audits(self):
        """For each setting, groups of every size 1 .. T + 3, drawn together:
        the exact law of the release decision, the privacy loss between
        groups of c - 1 and c rows (c = 2 and c = T), and delta for a group
        of one row against no group."""
        pending = [(audit, self.db.group_selections(
            audit.epsilon, audit.delta, max(audit.counts), self.plan.group_selection_samples,
            "none", self.executor)) for audit in GROUP_SELECTION_AUDITS]
        for audit, future in pending:
            released = future.result()
            self.record(self.group_law_outcome(audit, released, "none"))
            for count in audit.pair_counts:
                self.record(self.group_pair_outcome(audit, released, count))
            self.record(self.group_delta_outcome(audit, released))

    def group_law_outcome(self, audit: GroupSelectionAudit, released: np.ndarray,
                          broken_by: str) -> Outcome:
        """The release frequency of each group size c (row c - 1 of
        `released`) against its exact probability pi(c) under the claimed
        parameters (the optimal rule, laws.optimal_partition_selection): an
        exact two-sided binomial test per size, each at level alpha / (number
        of sizes), so that the union is one test at alpha. Sizes of
        probability 0 or 1 must be answered so every time."""
        sizes = range(1, released.shape[0] + 1)
        n = released.shape[1]
        hits = released.sum(axis=1)
        exact = np.array([audit.release_probability(c) for c in sizes])
        p_values = [stats.binomtest(int(k), n, p).pvalue for k, p in zip(hits, exact)]
        adjusted = min(1.0, min(p_values) * len(exact))
        inner = (exact > 0) & (exact < 1)
        pearson = float(np.sum((hits[inner] - n * exact[inner]) ** 2
                               / (n * exact[inner] * (1.0 - exact[inner]))))
        label = audit.label + (f" [{broken_by.split(' (')[0]}]" if broken_by != "none" else "")
        outcome = Outcome(
            "exact-groups", label, f"sizes 1..{len(exact)}, n* = {audit.always_released}",
            audit.epsilon, f"binomial p x{len(exact)} = {adjusted:.3g}", n * len(exact),
            adjusted >= self.alpha_per_test,
            f"[optimal rule, n* = {audit.always_released}; "
            "released / exact: " + ", ".join(f"{c}: {k / n:.4f}/{p:.4f}"
                                              for c, k, p in zip(sizes, hits, exact))
            + f"; chi2 {pearson:.1f} on {int(inner.sum())} df]",
            claimed_delta=audit.delta)
        outcome.empirical = adjusted
        return outcome

    # Events of certify_privacy_loss on 0/1 answers (1 = released), by name.
    GROUP_EVENTS = {"Y >= 1": "released", "Y == 1": "released", "Y <= 0": "not released",
                    "Y == 0": "not released", "0 <= Y < 1": "not released",
                    "Y >= 0": "any answer", "Y <= 1": "any answer"}

    def group_pair_outcome(self, audit: GroupSelectionAudit, released: np.ndarray,
                           count: int) -> Outcome:
        """Neighbours D = a group of count - 1 rows, D' = the same group with
        one more row: the optimal rule attains delta at epsilon in every such
        pair, so the pair is a delta audit (certify_delta on the 0/1 answers,
        events {released} and {not released}, chosen on the selection half,
        certified on the other), against the claimed (epsilon, delta)."""
        d, d_prime = released[count - 2], released[count - 1]
        return self.one_bit_delta_outcome(
            audit.label, f"group of {count - 1} vs {count} rows", audit.epsilon, audit.delta,
            d, d_prime, audit.release_probability(count - 1), audit.release_probability(count))

    def one_bit_delta_outcome(self, label: str, pair: str, epsilon: float, delta: float,
                              d: np.ndarray, d_prime: np.ndarray, p: float,
                              p_prime: float) -> Outcome:
        bounds = certify_delta(d, d_prime, epsilon, self.alpha_per_test, False)
        worst = max(bounds, key=lambda b: b.certified)
        event = self.GROUP_EVENTS.get(worst.event, worst.event)
        return Outcome(
            "delta", label, pair, epsilon,
            f"certified delta >= {format_delta(worst.certified)}", len(d) + len(d_prime),
            not worst.certified > delta,
            f"[{event}, {worst.direction}; delta_hat {worst.empirical:.4f}; "
            f"exact {pair_delta(p, p_prime, epsilon):.4f}]", certified=worst.certified,
            claimed_delta=delta, empirical=worst.empirical)

    def group_delta_outcome(self, audit: GroupSelectionAudit, released: np.ndarray) -> Outcome:
        """Neighbours D = no group, D' = a group of one row: the event
        {released} has P_D = 0 exactly (GROUP BY has no empty groups), so
        delta(S) = P_D'(S) - e^epsilon P_D(S) = P_D'(S), and its certified
        lower bound is the one-sided Clopper-Pearson bound at alpha. (The
        other event, {not released}, has delta(S) = 1 - e^epsilon (1 - P_D'(S)),
        below 0 unless a one-row group is released with probability above
        1 - e^-epsilon (1 - delta), which the first event shows far sooner.)"""
        hits, n = int(released[0].sum()), released.shape[1]
        certified = float(clopper_pearson_lower(hits, n, self.alpha_per_test))
        estimate = hits / n
        return Outcome(
            "delta", audit.label, "no group vs 1 row", audit.epsilon,
            f"certified delta >= {format_delta(certified)}", n, not certified > audit.delta,
            f"[released, D' over D; delta_hat {estimate:.4f} - margin "
            f"{estimate - certified:.4f}; exact {audit.release_probability(1):.4f}]",
            certified=certified, claimed_delta=audit.delta, empirical=estimate)

    # --- partition selection over privacy units ----------------------------
    def draw_unit_groups(self, audit: UnitGroupSelectionAudit, samples: int, fault: str):
        return self.db.unit_group_selections(audit.rows.epsilon, audit.rows.delta,
                                             max(audit.sizes), samples, fault, self.executor)

    def run_unit_group_selection_audits(self):
        """Groups of c one-row units and groups of c - 1 one-row units plus a
        unit of many rows in two groups (suites.UnitGroupSelectionAudit): the
        exact law of the release decisions, the privacy loss between c - 1
        units and c - 1 units plus the heavy unit (c = 2 and c = T), and
        delta for the heavy unit alone against no group."""
        pending = [(audit, self.draw_unit_groups(audit, UNIT_GROUP_SELECTION_SAMPLES, "none"))
                   for audit in UNIT_GROUP_SELECTION_AUDITS]
        for audit, future in pending:
            released = future.result()
            self.record(self.unit_group_law_outcome(audit, released))
            for count in audit.pair_counts:
                self.record(self.unit_group_pair_outcome(audit, released, count))
            self.record(self.unit_group_delta_outcome(audit, released))

    def unit_group_law_outcome(self, audit: UnitGroupSelectionAudit,
                               released: np.ndarray) -> Outcome:
        """The release frequency of every (kind, size) against its exact
        probability: exact two-sided binomial tests, Bonferroni over them, so
        that the union is one test at alpha."""
        n = released.shape[2]
        cells = [(heavy, c) for heavy in (False, True) for c in audit.sizes]
        exact = [audit.release_probability(c, heavy) for heavy, c in cells]
        hits = [int(released[int(heavy), c - 1].sum()) for heavy, c in cells]
        p_values = [stats.binomtest(k, n, p).pvalue for k, p in zip(hits, exact)]
        adjusted = min(1.0, min(p_values) * len(cells))
        shown = ", ".join(f"{'+u' if heavy else ''}{c}: {k / n:.4f}/{p:.4f}"
                          for (heavy, c), k, p in zip(cells, hits, exact))
        outcome = Outcome(
            "exact-groups", audit.label, f"1..{max(audit.sizes)} units, +u: one unit fewer "
            f"plus one of {2 * audit.heavy_rows} rows in two groups", audit.rows.epsilon,
            f"binomial p x{len(cells)} = {adjusted:.3g}", n * len(cells),
            adjusted >= self.alpha_per_test,
            f"[n* = {audit.rows.always_released}; released / exact: {shown}]",
            claimed_delta=audit.rows.delta)
        outcome.empirical = adjusted
        return outcome

    def unit_group_pair_outcome(self, audit: UnitGroupSelectionAudit, released: np.ndarray,
                                count: int) -> Outcome:
        """D = a group of count - 1 one-row units, D' = the same group with
        the heavy unit: the delta audit on the 0/1 answers."""
        d, d_prime = released[0, count - 2], released[1, count - 1]
        return self.one_bit_delta_outcome(
            audit.label, f"{count - 1} units vs {count - 1} + a unit of "
            f"{2 * audit.heavy_rows} rows", audit.rows.epsilon, audit.rows.delta, d, d_prime,
            audit.release_probability(count - 1, False), audit.release_probability(count, True))

    def unit_group_delta_outcome(self, audit: UnitGroupSelectionAudit,
                                 released: np.ndarray) -> Outcome:
        """D = no group, D' = the heavy unit alone in it (released with
        p(1) / 2): as group_delta_outcome, P_D = 0 exactly."""
        hits, n = int(released[1, 0].sum()), released.shape[2]
        certified = float(clopper_pearson_lower(hits, n, self.alpha_per_test))
        estimate = hits / n
        return Outcome(
            "delta", audit.label, f"no group vs a unit of {2 * audit.heavy_rows} rows",
            audit.rows.epsilon, f"certified delta >= {format_delta(certified)}", n,
            not certified > audit.rows.delta,
            f"[released, D' over D; delta_hat {estimate:.4f} - margin "
            f"{estimate - certified:.4f}; exact {audit.release_probability(1, True):.4f}]",
            certified=certified, claimed_delta=audit.rows.delta, empirical=estimate)

    def run_unit_group_selection_self_checks(self):
        """skip_unit_bounding (rows counted one by one): the pair c = 2 must
        fail, and so must the exact law."""
        pending = [(audit, self.draw_unit_groups(audit, UNIT_GROUP_SELECTION_SELF_CHECK_SAMPLES,
                                                 SKIP_UNITS))
                   for audit in UNIT_GROUP_SELECTION_AUDITS]
        for audit, future in pending:
            released = future.result()
            for test in (self.unit_group_pair_outcome(audit, released, 2),
                         self.unit_group_law_outcome(audit, released)):
                detected = not test.passed
                self.record(Outcome(
                    "self-check", test.mechanism, test.pair, audit.rows.epsilon, test.statistic,
                    test.samples, detected,
                    f"[{SKIP_UNITS}: {'detected' if detected else 'NOT detected'}]",
                    certified=test.certified, claimed_delta=test.claimed_delta,
                    empirical=test.empirical))

    @staticmethod
    def group_break_law(audit: GroupSelectionAudit, fault: str, factor: float,
                        delta: Optional[float]) -> Tuple[float, ...]:
        """The release table of a broken release: halve_noise doubles the
        rounded epsilon (exact), so it equals epsilon x 2; optimal_one_sided
        drops the rule's second inequality."""
        epsilon = audit.epsilon * factor * (2.0 if fault == HALVE else 1.0)
        return optimal_partition_selection(epsilon, audit.delta if delta is None else delta,
                                           one_sided=fault == ONE_SIDED)

    @classmethod
    def describe_group_break(cls, audit: GroupSelectionAudit, fault: str, factor: float,
                             delta: Optional[float]) -> str:
        table = cls.group_break_law(audit, fault, factor, delta)
        parts = (([fault] if fault != "none" else []) + (
            [f"epsilon x{factor:g}"] if factor != 1.0 else []) + (
            [f"delta {delta:g}"] if delta is not None else []))
        return " ".join(parts) + f" (n* = {len(table)})"

    def group_break_outcomes(self, audit: GroupSelectionAudit, fault: str, factor: float,
                             delta: Optional[float], released: np.ndarray) -> List[Outcome]:
        """Partition selection released under a fault, with epsilon x factor
        and/or another delta, audited against the claim: each pair c - 1 vs c
        rows (c = 2 .. the broken n*) whose broken law has a delta at the
        claimed epsilon above the claimed delta must FAIL its delta audit
        (the one of largest such delta is run); a one-row group released with
        probability above the claimed delta must FAIL the delta audit of no
        group vs one row; the exact-law test against the claimed law must
        FAIL in every case."""
        name = self.describe_group_break(audit, fault, factor, delta)
        table = self.group_break_law(audit, fault, factor, delta)
        p = lambda c: optimal_release_probability(c, table)
        tests = []
        pairs = [(pair_delta(p(c - 1), p(c), audit.epsilon), c)
                 for c in range(2, min(len(table), released.shape[0]) + 1)]
        worst_delta, worst_count = max(pairs) if pairs else (0.0, 2)
        if worst_delta > audit.delta:
            tests.append(self.group_pair_outcome(audit, released, worst_count))
        if p(1) > audit.delta:
            tests.append(self.group_delta_outcome(audit, released[:1]))
        outcomes = []
        for test in tests:
            detected = not test.passed
            event = test.detail.strip("[]").split(",")[0]
            outcomes.append(Outcome(
                "self-check", audit.label, test.pair, audit.epsilon, test.statistic,
                test.samples, detected,
                f"[{name}: {'detected' if detected else 'NOT detected'}; {event}]",
                certified=test.certified, claimed_delta=test.claimed_delta,
                empirical=test.empirical))
        law = self.group_law_outcome(audit, released, name)
        detected = not law.passed
        outcomes.append(Outcome(
            "self-check", law.mechanism, law.pair, audit.epsilon, law.statistic, law.samples,
            detected, f"[{name}: exact-law test {'detected' if detected else 'NOT detected'}]",
            claimed_delta=audit.delta))
        return outcomes

    def draw_group_break(self, check, samples: int):
        key, fault, factor, delta = check
        audit = {a.key: a for a in GROUP_SELECTION_AUDITS}[key]
        return audit, self.db.group_selections(
            audit.epsilon * factor, audit.delta if delta is None else delta, max(audit.counts),
            samples, fault, self.executor)

    def run_group_selection_self_checks(self):
        pending = [(check, self.draw_group_break(check,
                                                 self.plan.group_selection_self_check_samples))
                   for check in self.plan.group_selection_self_checks]
        for check, (audit, future) in pending:
            for outcome in self.group_break_outcomes(audit, *check[1:], future.result()):
                self.record(outcome)

    # --- self-check -------------------------------------------------------
    def run_self_checks(self):
        """Broken mechanisms must be caught: each listed audit, run under a
        fault (or released with epsilon larger than claimed), must FAIL."""
        audits = {a.key: a for a in PRIVACY_LOSS_AUDITS}
        checks = [(audits[key], fault, factor, False)
                  for key, fault, factor in self.plan.self_checks]
        if self.plan.informational_faults:
            checks += [(a, fault, 1.0, True) for a in PRIVACY_LOSS_AUDITS
                       for fault in a.mechanism.faults if fault not in a.detects]
        self.pipelined(
            checks,
            lambda c: self.draw_pair(c[0], self.plan.samples_for(c[0]), c[1], c[2]),
            lambda c, draws: self.finish_self_check(*c, draws))
        exact = {a.key: a for a in EXACT_NOISE_AUDITS}
        pending_exact = [(exact[key], fault,
                          self.db.releases(exact[key].mechanism, exact[key].rows,
                                           exact[key].epsilon, self.plan.exact_samples, fault,
                                           self.executor))
                         for key, fault in self.plan.exact_self_checks]
        for audit, fault, future in pending_exact:
            chi_square, _ = self.exact_noise_outcomes(audit, future.result(), fault)
            detected = not chi_square.passed
            self.record(Outcome("self-check", chi_square.mechanism, chi_square.pair,
                                audit.epsilon, chi_square.statistic, chi_square.samples,
                                detected, f"[{fault}: chi-square "
                                          f"{'detected' if detected else 'NOT detected'}]",
                                claimed_delta=audit.mechanism.delta))
        self.run_group_selection_self_checks()
        self.run_unit_group_selection_self_checks()
        for outcome in AccountantAudit(self).self_check(self.ACCOUNTANT_SAMPLES):
            self.record(outcome)
        for outcome in ReuseAudit(self).self_check():
            self.record(outcome)
        for audit in (PublicKeyAudit, PublicLeftJoinAudit):
            for outcome in audit(self).self_check():
                self.record(outcome)

    @staticmethod
    def describe_break(fault: str, factor: float) -> str:
        return fault if factor == 1.0 else f"epsilon x{factor:g}"

    def finish_self_check(self, audit: PrivacyLossAudit, fault: str, factor: float,
                          informational: bool, draws):
        d, d_prime = draws[0].result(), draws[1].result()
        worst = self.worst_bound(audit, d, d_prime, factor)
        if (audit.key, fault, factor) in PLOTTED_SELF_CHECKS:
            self.curves[f"{audit.key}:{self.describe_break(fault, factor)}"] = (d.values,
                                                                                 d_prime.values)
        detected = audit.exceeds_claim(worst.certified)
        verdict = "detected" if detected else ("not detected (not expected to)" if informational
                                               else "NOT detected")
        if audit.claimed_delta is not None:
            statistic = f"certified delta >= {format_delta(worst.certified)}"
        else:
            statistic = f"certified lower bound {format_bound(worst.certified)}"
        self.record(Outcome(
            "self-check", audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
            statistic, 2 * len(d), detected,
            f"[{self.describe_break(fault, factor)}: {verdict}; {worst.event}]",
            certified=worst.certified, informational=informational,
            claimed_delta=audit.claimed_delta, empirical=worst.empirical))
        if audit.mechanism.kind in ("selection", "quantile") and (fault == HALVE or factor != 1.0):
            # The answers' law changes under the break: the chi-square against
            # the claimed law must fail on D or on D' (a required detection
            # where the privacy-loss one is, or the fault is in law_detects).
            tests = [self.exact_law_outcome(audit, rows, side, answers, audit.claimed_epsilon,
                                            self.describe_break(fault, factor))
                     for rows, answers, side in ((audit.pair.rows_d, d, "D"),
                                                 (audit.pair.rows_d_prime, d_prime, "D'"))]
            caught = [t.pair.split(" =")[0] for t in tests if not t.passed]
            shown = min(tests, key=lambda t: t.empirical)  # the smaller p-value
            required = not informational or fault in audit.law_detects
            verdict = ("detected on " + " and ".join(caught) if caught
                       else "NOT detected" if required else "not detected (not expected to)")
            self.record(Outcome(
                "self-check", shown.mechanism, audit.pair.label, audit.claimed_epsilon,
                shown.statistic, sum(t.samples for t in tests), bool(caught),
                f"[{self.describe_break(fault, factor)}: exact-law chi-square {verdict}]",
                informational=not required))

    def run_self_check_replicates(self):
        """The CI self-checks, repeated at the CI size: how far above the claim
        does a broken mechanism land, and how likely is a miss? (Normal
        approximation of the certified bound's spread; a summary, not a proof.)"""
        audits = {a.key: a for a in PRIVACY_LOSS_AUDITS}
        jobs = [check for _ in range(self.plan.ci_self_check_replicates)
                for check in CI_SELF_CHECKS]
        ci = ci_plan()

        def finish(check, draws):
            key, fault, factor = check
            d, d_prime = draws[0].result(), draws[1].result()
            bound = self.worst_bound(audits[key], d, d_prime, factor).certified
            self.replicate_bounds.setdefault(check, []).append(bound)

        self.pipelined(jobs, lambda c: self.draw_pair(audits[c[0]], ci.samples_for(audits[c[0]]),
                                                      c[1], c[2]), finish)
        for (key, fault, factor), bounds in self.replicate_bounds.items():
            audit = audits[key]
            self.record(self.replicate_outcome(
                audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
                audit.claimed_delta, bounds, 2 * ci.samples_for(audit) * len(bounds),
                self.describe_break(fault, factor)))
        # Partition selection: the bound of the test each break must fail.
        group_bounds: Dict[Tuple, List[float]] = {}
        group_tests: Dict[Tuple, Outcome] = {}
        pending = [(check, self.draw_group_break(check, ci.group_selection_self_check_samples))
                   for _ in range(self.plan.ci_self_check_replicates)
                   for check in CI_GROUP_SELECTION_SELF_CHECKS]
        for check, (audit, future) in pending:
            for outcome in self.group_break_outcomes(audit, *check[1:], future.result()):
                if outcome.certified is not None:
                    group_bounds.setdefault((check, outcome.pair), []).append(outcome.certified)
                    group_tests[(check, outcome.pair)] = outcome
        for (check, pair), bounds in group_bounds.items():
            audit = {a.key: a for a in GROUP_SELECTION_AUDITS}[check[0]]
            test = group_tests[(check, pair)]
            self.record(self.replicate_outcome(
                audit.label, pair, audit.epsilon, test.claimed_delta, bounds,
                test.samples * len(bounds), self.describe_group_break(audit, *check[1:])))

    @staticmethod
    def replicate_outcome(mechanism: str, pair: str, claimed_epsilon: float,
                          claimed_delta: Optional[float], bounds: List[float], samples: int,
                          broken_by: str) -> Outcome:
        claim = claimed_delta if claimed_delta is not None else claimed_epsilon
        mean, spread = float(np.mean(bounds)), float(np.std(bounds, ddof=1))
        z = (mean - claim) / spread if spread > 0 else math.inf
        miss = float(stats.norm.sf(z))
        margin = f"margin {z:.1f} sd" if z < 100 else "margin > 100 sd"
        digits = 4 if claimed_delta is not None else 3
        return Outcome(
            "self-check", mechanism, pair, claimed_epsilon,
            f"bounds {mean:.{digits}f} +- {spread:.{digits}f}, min {min(bounds):.{digits}f}",
            samples, min(bounds) > claim,
            f"[{broken_by} at the CI size, {len(bounds)} "
            f"replicates: {margin}, miss probability ~{miss:.1g}]",
            claimed_delta=claimed_delta)
