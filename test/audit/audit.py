#!/usr/bin/python3
"""Black-box privacy audit of dp_agg, through SQL only (project issue 6).

The unit and regression suites check the code; this suite checks what the
database *releases*. For neighbouring tables D and D' (one row added) it draws
many independent releases of each aggregate and looks for an output event S
whose probability ratio exceeds what epsilon-DP allows:

    epsilon-DP  <=>  P[M(D) in S] <= exp(epsilon) * P[M(D') in S]  for every S
                     (and with D, D' swapped).

Sampling: a table holds the dataset once in each of 50,000 groups (plus one
NULL per group, which every aggregate skips), and
    SELECT dp_...(x, ...) FROM dataset WHERE g <= n GROUP BY g
returns n independent releases (every group of a GROUP BY is a separate
release, and the privacy ledger charges the statement its epsilon once).

Method (in the spirit of Google's stochastic DP tester, StatDP and DP-Sniper):

1. Half of the draws (the "selection half") choose, for each direction, the
   event S among thresholds {Y >= t}, {Y <= t}, histogram bins, point masses
   and low-order-bit classes that looks most privacy-violating.
2. The other half (the "certification half"), independent of that choice,
   gives a one-sided Clopper-Pearson interval for each probability (Clopper &
   Pearson, Biometrika 1934: the exact binomial interval via Beta quantiles).
   Their combination is a certified lower bound on
   ln P[M(D) in S] - ln P[M(D') in S] that holds with probability >= 1 - alpha.
3. The audit FAILS when that certified lower bound exceeds the claimed epsilon.

All statistical tests of a run share a Bonferroni budget (Bonferroni's
inequality: P[any false alarm] <= sum of the per-test levels), so that a run
on a correct implementation fails with probability at most 1e-6.

Besides, the suite compares the released noise with its exact distribution
(chi-square against the discrete Laplace pmf), checks that float answers lie
on the documented power-of-two grid, tests that the low-order bits do not
tell neighbours apart, and runs a self-check: under the superuser-only faults
dp_agg.insecure_test_fault = halve_noise / skip_clamping the relevant audits
must FAIL, which shows that the suite can catch a broken mechanism.

Usage: see run_audit.sh (or --help). Needs PG* environment variables for a
superuser connection to a server with dp_agg in shared_preload_libraries.
"""

import argparse
import concurrent.futures
import dataclasses
import fractions
import math
import os
import queue
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import psycopg2
from scipy import stats

# Probability that a whole run on a correct implementation reports a failure.
FALSE_FAILURE_BUDGET = 1e-6

# Noise of a release is scaled so that the grid is 2^-40 of the noise scale
# (README "Secure noise"; src/core/laplace_mechanism.h kGridBitsBelowScale).
GRID_BITS_BELOW_SCALE = 40

AUDIT_DIR = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------
# Exact facts about the mechanisms, from the documented construction.
# ---------------------------------------------------------------------------

def epsilon_rounded_down(epsilon: float) -> fractions.Fraction:
    """epsilon rounded DOWN to 24 significant bits, exactly as the extension
    does before planning the noise (README "Secure noise", RoundEpsilonDown)."""
    fraction, exponent = math.frexp(epsilon)  # epsilon = fraction * 2^exponent
    mantissa = math.floor(math.ldexp(fraction, 24))
    return fractions.Fraction(mantissa) * fractions.Fraction(2) ** (exponent - 24)


def bound_units_exponent(lower: float, upper: float) -> int:
    """Exponent e of the fixed-point units 2^e of a float sum: chosen from the
    bounds so that a clamped value takes at most 62 bits (README "Exact
    accumulation"; ChooseUnitExponent)."""
    largest = max(abs(lower), abs(upper))
    if largest == 0.0:
        return 0
    _, exponent = math.frexp(largest)  # largest < 2^exponent
    return exponent - 62


def grid_shift_for(sensitivity_units: int, epsilon: float) -> Tuple[int, int]:
    """The release grid R = 2^shift units and the sensitivity ceil(D / R) in
    grid steps: the finest R with ceil(D / R) / epsilon' <= 2^40 (README
    "Secure noise"; PlanLaplace)."""
    eps = epsilon_rounded_down(epsilon)
    shift = 0
    while True:
        steps = -(-sensitivity_units // (1 << shift))  # ceil(D / 2^shift)
        if steps <= eps * 2 ** GRID_BITS_BELOW_SCALE or steps <= 1:
            return shift, steps
        shift += 1


def sum_release_grid(value_kind: str, lower: float, upper: float,
                     epsilon: float) -> Tuple[int, int]:
    """(grid exponent k, sensitivity in grid steps) of dp_sum: every answer is
    a multiple of 2^k, and the noise is discrete Laplace with scale
    steps / epsilon' grid steps."""
    if value_kind == "integer":
        units_exponent = 0
        sensitivity_units = max(abs(int(lower)), abs(int(upper)))
    else:
        units_exponent = bound_units_exponent(lower, upper)
        # |bound| * 2^-e is an integer below 2^62 (53-bit mantissa), exactly.
        largest = fractions.Fraction(max(abs(lower), abs(upper)))
        sensitivity_units = int(largest * fractions.Fraction(2) ** -units_exponent)
    shift, steps = grid_shift_for(sensitivity_units, epsilon)
    return units_exponent + shift, steps


def discrete_laplace_decay(scale_in_steps: float) -> float:
    """q = exp(-1/scale): P[Z = k] = (1-q)/(1+q) q^|k| (the discrete Laplace
    or two-sided geometric distribution; Ghosh, Roughgarden & Sundararajan
    2009; Canonne, Kamath & Steinke 2020, Definition 1)."""
    return math.exp(-1.0 / scale_in_steps)


def discrete_laplace_pmf(k: np.ndarray, q: float) -> np.ndarray:
    return (1.0 - q) / (1.0 + q) * np.power(q, np.abs(k))


def discrete_laplace_cdf(k: np.ndarray, scale_in_steps: float) -> np.ndarray:
    """P[Z <= k] for integer k, computed without cancellation for q near 1:
    P[Z <= k] = q^-k / (1+q) for k < 0 and 1 - q^(k+1) / (1+q) for k >= 0."""
    k = np.asarray(k, dtype=float)
    q = discrete_laplace_decay(scale_in_steps)
    below = np.exp(np.minimum(k, 0) / scale_in_steps) / (1.0 + q)
    above = 1.0 - np.exp(-(np.maximum(k, 0) + 1) / scale_in_steps) / (1.0 + q)
    return np.where(k < 0, below, above)


# ---------------------------------------------------------------------------
# Clopper-Pearson bounds and the certified privacy loss.
# ---------------------------------------------------------------------------

def clopper_pearson_lower(successes, trials, alpha):
    """One-sided lower bound p_lo with P[p < p_lo] <= alpha (Clopper & Pearson
    1934): the alpha quantile of Beta(k, n - k + 1), and 0 for k = 0. Should
    the Beta quantile ever fail to converge (NaN), 0 is used: more
    conservative, never a false failure."""
    successes = np.asarray(successes, dtype=float)
    safe = np.maximum(successes, 1.0)
    with np.errstate(all="ignore"):
        bound = stats.beta.ppf(alpha, safe, trials - safe + 1.0)
    return np.where((successes > 0) & np.isfinite(bound), bound, 0.0)


def clopper_pearson_upper(successes, trials, alpha):
    """One-sided upper bound p_hi with P[p > p_hi] <= alpha: the 1 - alpha
    quantile of Beta(k + 1, n - k), and 1 for k = n (or if the quantile fails)."""
    successes = np.asarray(successes, dtype=float)
    safe = np.minimum(successes, trials - 1.0)
    with np.errstate(all="ignore"):
        bound = stats.beta.isf(alpha, safe + 1.0, trials - safe)
    return np.where((successes < trials) & np.isfinite(bound), bound, 1.0)


def certified_log_ratio(hits_a, trials_a, hits_b, trials_b, alpha):
    """Lower bound on ln P_a(S) - ln P_b(S) that is wrong with probability at
    most alpha: ln(CP lower of P_a at alpha/2) - ln(CP upper of P_b at alpha/2)
    (a union bound over the two one-sided intervals)."""
    lower_a = clopper_pearson_lower(hits_a, trials_a, alpha / 2.0)
    upper_b = clopper_pearson_upper(hits_b, trials_b, alpha / 2.0)
    with np.errstate(divide="ignore"):
        return np.log(lower_a) - np.log(upper_b)


# ---------------------------------------------------------------------------
# Candidate events S, chosen from the selection half only.
# ---------------------------------------------------------------------------

@dataclass
class EventFamily:
    """Output events of a few kinds, counted in vectorised form.

    at_least[t]: Y >= t      at_most[t]: Y <= t      point[v]: Y == v
    interval[j]: bin_low[j] <= Y < bin_high[j] (equal-mass histogram bins)
    grid_block[j]: (Y / 2^k mod 2^10) in [16 j, 16 j + 16): Y mod 2^(k+10)
                   in 64 classes, for answers on the grid 2^k
    grid_residue[r]: Y / 2^k mod 64 == r: the lowest 6 bits of the grid mantissa
    mantissa_bits[r]: lowest 6 bits of the IEEE-754 double mantissa == r
    """
    at_least: np.ndarray
    at_most: np.ndarray
    points: np.ndarray
    bin_low: np.ndarray
    bin_high: np.ndarray
    grid_exponent: Optional[int]
    with_mantissa_bits: bool

    LOW_BIT_CLASSES = 64

    @classmethod
    def from_selection(cls, values_a: np.ndarray, values_b: np.ndarray,
                       grid_exponent: Optional[int], is_float: bool) -> "EventFamily":
        pooled = np.concatenate([values_a, values_b])
        pooled = pooled[np.isfinite(pooled)]
        distinct, frequency = np.unique(pooled, return_counts=True)
        if len(distinct) <= 5000:  # discrete output: every value is a threshold
            thresholds = distinct
            points = distinct
        else:
            thresholds = np.unique(np.quantile(pooled, np.linspace(0, 1, 2001)))
            points = distinct[frequency >= max(5, len(pooled) // 1000)]  # atoms
            thresholds = np.union1d(thresholds, points)
        edges = np.unique(np.quantile(pooled, np.linspace(0, 1, 101))) if len(pooled) else []
        return cls(at_least=thresholds, at_most=thresholds, points=points,
                   bin_low=np.asarray(edges[:-1]), bin_high=np.asarray(edges[1:]),
                   grid_exponent=grid_exponent, with_mantissa_bits=is_float)

    def _grid_mantissa_mod(self, values: np.ndarray, modulus: int) -> np.ndarray:
        # Multiplying by a power of two and fmod are exact in binary floating point.
        scaled = np.ldexp(values, -self.grid_exponent)
        scaled = np.where(np.isfinite(scaled), scaled, 0.0)  # +-inf only under a fault
        return np.mod(scaled, modulus).astype(np.int64)

    def counts(self, values: np.ndarray) -> np.ndarray:
        """Number of values in each event, in the order of describe()."""
        ordered = np.sort(values)
        n = len(values)
        parts = [
            n - np.searchsorted(ordered, self.at_least, side="left"),
            np.searchsorted(ordered, self.at_most, side="right"),
            np.searchsorted(ordered, self.points, side="right")
            - np.searchsorted(ordered, self.points, side="left"),
            np.searchsorted(ordered, self.bin_high, side="left")
            - np.searchsorted(ordered, self.bin_low, side="left"),
        ]
        classes = self.LOW_BIT_CLASSES
        if self.grid_exponent is not None:
            parts.append(np.bincount(self._grid_mantissa_mod(values, 1024) // 16,
                                     minlength=classes))
            parts.append(np.bincount(self._grid_mantissa_mod(values, classes),
                                     minlength=classes))
        if self.with_mantissa_bits:
            bits = (values.astype(np.float64).view(np.uint64) & np.uint64(classes - 1))
            parts.append(np.bincount(bits.astype(np.int64), minlength=classes))
        return np.concatenate(parts)

    def _layout(self) -> List[Tuple[str, int]]:
        layout = [("at_least", len(self.at_least)), ("at_most", len(self.at_most)),
                  ("point", len(self.points)), ("interval", len(self.bin_low))]
        if self.grid_exponent is not None:
            layout += [("grid_block", self.LOW_BIT_CLASSES),
                       ("grid_residue", self.LOW_BIT_CLASSES)]
        if self.with_mantissa_bits:
            layout.append(("mantissa_bits", self.LOW_BIT_CLASSES))
        return layout

    def locate(self, index: int) -> Tuple[str, int]:
        for kind, size in self._layout():
            if index < size:
                return kind, index
            index -= size
        raise IndexError(index)

    def describe(self, index: int) -> str:
        kind, i = self.locate(index)
        if kind == "at_least":
            return f"Y >= {self.at_least[i]:.6g}"
        if kind == "at_most":
            return f"Y <= {self.at_most[i]:.6g}"
        if kind == "point":
            return f"Y == {self.points[i]:.6g}"
        if kind == "interval":
            return f"{self.bin_low[i]:.6g} <= Y < {self.bin_high[i]:.6g}"
        if kind == "grid_block":
            return f"Y mod 2^{self.grid_exponent + 10} in block {i}/64"
        if kind == "grid_residue":
            return f"Y/2^{self.grid_exponent} mod 64 == {i}"
        return f"low 6 mantissa bits == {i}"

    def contains(self, index: int, values: np.ndarray) -> np.ndarray:
        kind, i = self.locate(index)
        if kind == "at_least":
            return values >= self.at_least[i]
        if kind == "at_most":
            return values <= self.at_most[i]
        if kind == "point":
            return values == self.points[i]
        if kind == "interval":
            return (values >= self.bin_low[i]) & (values < self.bin_high[i])
        if kind == "grid_block":
            return self._grid_mantissa_mod(values, 1024) // 16 == i
        if kind == "grid_residue":
            return self._grid_mantissa_mod(values, self.LOW_BIT_CLASSES) == i
        bits = values.astype(np.float64).view(np.uint64) & np.uint64(self.LOW_BIT_CLASSES - 1)
        return bits == np.uint64(i)


@dataclass
class DirectionalBound:
    """Certified lower bound on ln P[M(first) in S] - ln P[M(second) in S]."""
    direction: str  # "D over D'" or "D' over D"
    event: str
    certified: float
    empirical: float  # the same log-ratio from the certification half, uncorrected
    hits: Tuple[int, int]


def certify_privacy_loss(samples_d: np.ndarray, samples_d_prime: np.ndarray,
                         alpha_per_test: float, grid_exponent: Optional[int],
                         is_float: bool) -> List[DirectionalBound]:
    """Both directions; each is one test at level alpha_per_test."""
    half_d, half_dp = len(samples_d) // 2, len(samples_d_prime) // 2
    select_d, certify_d = samples_d[:half_d], samples_d[half_d:]
    select_dp, certify_dp = samples_d_prime[:half_dp], samples_d_prime[half_dp:]
    family = EventFamily.from_selection(select_d, select_dp, grid_exponent, is_float)
    counts_d, counts_dp = family.counts(select_d), family.counts(select_dp)
    bounds = []
    for direction, sel_a, sel_b, n_a, n_b, cert_a, cert_b in (
            ("D over D'", counts_d, counts_dp, len(select_d), len(select_dp), certify_d, certify_dp),
            ("D' over D", counts_dp, counts_d, len(select_dp), len(select_d), certify_dp, certify_d)):
        # Choose S by the same criterion that certification will apply: the
        # Clopper-Pearson bound on the selection half. This prefers the largest
        # empirical log-ratio among events frequent enough to be certified.
        score = certified_log_ratio(sel_a, n_a, sel_b, n_b, alpha_per_test)
        best = int(np.argmax(score))
        hits_a = int(np.count_nonzero(family.contains(best, cert_a)))
        hits_b = int(np.count_nonzero(family.contains(best, cert_b)))
        certified = float(certified_log_ratio(hits_a, len(cert_a), hits_b, len(cert_b),
                                              alpha_per_test))
        with np.errstate(divide="ignore"):
            empirical = float(np.log(hits_a / len(cert_a)) - np.log(max(hits_b, 0.5) / len(cert_b)))
        bounds.append(DirectionalBound(direction, family.describe(best), certified,
                                       empirical, (hits_a, hits_b)))
    return bounds


# ---------------------------------------------------------------------------
# What to audit.
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Mechanism:
    """An aggregate call over column x of a given SQL type."""
    label: str  # e.g. "dp_sum int4 [0,10]"
    function: str  # dp_count, dp_sum, dp_avg
    column_type: str  # SQL type of x
    lower: Optional[float] = None
    upper: Optional[float] = None
    output: str = "integer"  # integer, float8, float4, numeric (fetched as text)

    @property
    def value_kind(self) -> str:
        return "integer" if self.column_type in ("smallint", "integer", "bigint") else "float"

    def call(self, epsilon: float) -> str:
        eps = f"{epsilon!r}::float8"
        if self.function == "dp_count":
            return f"dp_count(x, {eps})"
        bound = lambda v: (f"{int(v)}::{self.column_type}" if self.value_kind == "integer"
                           else f"'{v!r}'::{self.column_type}")
        return f"{self.function}(x, {bound(self.lower)}, {bound(self.upper)}, {eps})"

    def release_grid(self, epsilon: float) -> Optional[Tuple[int, int]]:
        """(grid exponent, sensitivity in steps) of dp_sum answers, else None."""
        if self.function != "dp_sum":
            return None
        return sum_release_grid(self.value_kind, self.lower, self.upper, epsilon)

    def exact_float_grid(self, epsilon: float) -> Optional[int]:
        """Grid exponent when answers are doubles exactly on the grid."""
        grid = self.release_grid(epsilon)
        return grid[0] if grid is not None and self.output == "float8" else None


@dataclass(frozen=True)
class NeighbourPair:
    """D and D' = D plus one row (add/remove-one-row neighbours)."""
    rows_d: Tuple
    added_row: object

    @property
    def rows_d_prime(self) -> Tuple:
        return self.rows_d + (self.added_row,)

    @property
    def label(self) -> str:
        def show(rows):
            if not rows:
                return "{}"
            if len(set(rows)) == 1 and len(rows) > 2:
                return "{" + f"{rows[0]!r} x{len(rows)}" + "}"
            return "{" + ", ".join(repr(r) for r in rows) + "}"
        return f"{show(self.rows_d)} vs +{self.added_row!r}"


@dataclass(frozen=True)
class PrivacyLossAudit:
    key: str
    mechanism: Mechanism
    pair: NeighbourPair
    claimed_epsilon: float
    purpose: str
    # Faults under which this audit must FAIL (the self-check). skip_clamping
    # still keeps float values within +-2^(e+62), e the units exponent of
    # the bounds (see AddDouble), which is at most twice the largest bound and
    # only ~1.07-1.33x for the bounds 7.5, 1e-300, 1e300: there the fault barely
    # changes the answer, and those audits are not expected to catch it.
    detects: Tuple[str, ...] = ()


COUNT = Mechanism("dp_count", "dp_count", "integer")
SUM_INT = Mechanism("dp_sum int4 [0,10]", "dp_sum", "integer", 0, 10)
SUM_INT_NEG = Mechanism("dp_sum int4 [-10,2]", "dp_sum", "integer", -10, 2)
SUM_INT2 = Mechanism("dp_sum int2 [-100,100]", "dp_sum", "smallint", -100, 100)
SUM_INT8_WIDE = Mechanism("dp_sum int8 [0,2^62]", "dp_sum", "bigint", 0, 2 ** 62, "numeric")
SUM_FLOAT8 = Mechanism("dp_sum float8 [0,1]", "dp_sum", "double precision", 0.0, 1.0, "float8")
SUM_FLOAT8_ODD = Mechanism("dp_sum float8 [-7.5,3]", "dp_sum", "double precision", -7.5, 3.0, "float8")
SUM_FLOAT8_TINY = Mechanism("dp_sum float8 [0,1e-300]", "dp_sum", "double precision", 0.0, 1e-300, "float8")
SUM_FLOAT8_HUGE = Mechanism("dp_sum float8 [0,1e300]", "dp_sum", "double precision", 0.0, 1e300, "float8")
SUM_FLOAT4 = Mechanism("dp_sum float4 [0,1]", "dp_sum", "real", 0.0, 1.0, "float4")
SUM_NUMERIC = Mechanism("dp_sum numeric [0,1]", "dp_sum", "numeric", 0.0, 1.0, "numeric")
SUM_FLOAT8_NARROW = Mechanism("dp_sum float8 [0.99,1]", "dp_sum", "double precision", 0.99, 1.0,
                              "float8")
AVG_FLOAT8 = Mechanism("dp_avg float8 [0,1]", "dp_avg", "double precision", 0.0, 1.0, "float8")
AVG_FLOAT8_NARROW = Mechanism("dp_avg float8 [0.99,1]", "dp_avg", "double precision", 0.99, 1.0,
                              "float8")
AVG_INT = Mechanism("dp_avg int4 [0,10]", "dp_avg", "integer", 0, 10, "numeric")

HALVE, SKIP = "halve_noise", "skip_clamping"

PRIVACY_LOSS_AUDITS = [
    PrivacyLossAudit("count_empty", COUNT, NeighbourPair((), 1), 1.0,
                     "empty vs one row: the count's worst case", (HALVE,)),
    PrivacyLossAudit("count_small_eps", COUNT, NeighbourPair((1,) * 5, 1), 0.5,
                     "another epsilon, non-empty table", (HALVE,)),
    PrivacyLossAudit("sum_int_clamp", SUM_INT, NeighbourPair((), 10000), 1.0,
                     "one row at 1000x the upper bound: clamping", (HALVE, SKIP)),
    PrivacyLossAudit("sum_int_negative", SUM_INT_NEG, NeighbourPair((), -10000), 1.0,
                     "sensitivity is max(|L|,|U|) = 10, not U-L or |U|", (HALVE, SKIP)),
    PrivacyLossAudit("sum_int2_clamp", SUM_INT2, NeighbourPair((), -32768), 1.0,
                     "smallint path, value at the type's limit", (HALVE, SKIP)),
    PrivacyLossAudit("sum_int8_wide", SUM_INT8_WIDE, NeighbourPair((), 2 ** 62), 1.0,
                     "integer sum on a grid of 2^22 (numeric answer)", (HALVE,)),
    PrivacyLossAudit("sum_float8_clamp", SUM_FLOAT8, NeighbourPair((), 1000.0), 1.0,
                     "float sum, one row at 1000x the upper bound", (HALVE, SKIP)),
    PrivacyLossAudit("sum_float8_low_bits", SUM_FLOAT8, NeighbourPair((), 0.1), 1.0,
                     "a row with many low-order bits: float grid leaks"),
    PrivacyLossAudit("sum_float8_narrow", SUM_FLOAT8_NARROW, NeighbourPair((), 1.0), 1.0,
                     "narrow bounds far from 0: sensitivity is max(|L|,|U|), not U-L",
                     (HALVE,)),
    PrivacyLossAudit("sum_float8_odd_bounds", SUM_FLOAT8_ODD, NeighbourPair((), -1e6), 0.5,
                     "non-power-of-two negative-dominated bounds", (HALVE,)),
    PrivacyLossAudit("sum_float8_tiny", SUM_FLOAT8_TINY, NeighbourPair((), 1.0), 1.0,
                     "bounds near the subnormal range", (HALVE,)),
    PrivacyLossAudit("sum_float8_huge", SUM_FLOAT8_HUGE, NeighbourPair((), 1e308), 1.0,
                     "bounds near the top of the double range", (HALVE,)),
    PrivacyLossAudit("sum_float4_clamp", SUM_FLOAT4, NeighbourPair((), 1000.0), 1.0,
                     "real path (answer rounded to float4)", (HALVE, SKIP)),
    PrivacyLossAudit("sum_numeric_clamp", SUM_NUMERIC, NeighbourPair((), 1000.0), 1.0,
                     "numeric path (exact decimal answer)", (HALVE, SKIP)),
    PrivacyLossAudit("avg_empty", AVG_FLOAT8, NeighbourPair((), 1.0), 1.0,
                     "mean of 0 vs 1 rows"),
    PrivacyLossAudit("avg_one_two", AVG_FLOAT8, NeighbourPair((0.0,), 1.0), 1.0,
                     "mean of 1 vs 2 rows", (HALVE,)),
    PrivacyLossAudit("avg_clamp", AVG_FLOAT8, NeighbourPair((0.0,) * 10, 1000.0), 1.0,
                     "mean, one row at 1000x the upper bound", (SKIP,)),
    PrivacyLossAudit("avg_narrow", AVG_FLOAT8_NARROW, NeighbourPair((), 1.0), 1.0,
                     "narrow bounds far from 0: the sum must be centred on the midpoint"),
    PrivacyLossAudit("avg_narrow_clamp", AVG_FLOAT8_NARROW,
                     NeighbourPair((0.99,) * 10, 1000.0), 1.0,
                     "narrow bounds, one row at 1000x the upper bound", (SKIP,)),
    PrivacyLossAudit("avg_int_empty", AVG_INT, NeighbourPair((), 10), 1.0,
                     "integer mean (numeric answer), 0 vs 1 rows"),
    PrivacyLossAudit("avg_int_clamp", AVG_INT, NeighbourPair((0,) * 10, 10000), 1.0,
                     "integer mean, one row at 1000x the upper bound", (SKIP,)),
]

# Exact-distribution audits: a fixed table whose true answer is known.
@dataclass(frozen=True)
class ExactNoiseAudit:
    key: str
    mechanism: Mechanism
    rows: Tuple
    epsilon: float

    @property
    def true_answer(self) -> float:
        if self.mechanism.function == "dp_count":
            return float(len(self.rows))
        return float(sum(min(max(r, self.mechanism.lower), self.mechanism.upper)
                         for r in self.rows))

    def noise_in_steps(self, answers: np.ndarray) -> np.ndarray:
        grid = self.mechanism.release_grid(self.epsilon)
        exponent = 0 if grid is None else grid[0]
        return np.ldexp(answers - self.true_answer, -exponent)

    @property
    def scale_in_steps(self) -> float:
        """Noise scale ceil(D/R) / epsilon' in grid steps (D = 1 for a count)."""
        grid = self.mechanism.release_grid(self.epsilon)
        steps = 1 if grid is None else grid[1]
        return float(steps / epsilon_rounded_down(self.epsilon))


EXACT_NOISE_AUDITS = [
    ExactNoiseAudit("count_noise", COUNT, (1,) * 10, 1.0),
    ExactNoiseAudit("sum_int_noise", Mechanism("dp_sum int4 [-3,5]", "dp_sum", "integer", -3, 5),
                    (-10, 2, 4, 100), 1.0),
    ExactNoiseAudit("sum_float8_noise", SUM_FLOAT8, (0.25, 0.5, 7.0), 1.0),
]


@dataclass(frozen=True)
class RunPlan:
    mode: str
    samples_per_dataset: int  # privacy-loss audits, per table (half selects, half certifies)
    exact_samples: int  # exact-noise audits
    # (audit key, fault, epsilon factor): released with epsilon x factor under
    # the fault, audited against the claimed epsilon; must FAIL.
    self_checks: Tuple[Tuple[str, str, float], ...]
    exact_self_checks: Tuple[Tuple[str, str], ...]  # (exact audit key, fault): chi-square must fail
    # Also run the audits under faults they are not expected to catch (INFO lines).
    informational_faults: bool = False
    # Repeat the CI self-checks at the CI size this many times, to measure
    # their margin (how far above the claim a broken mechanism lands).
    ci_self_check_replicates: int = 0


CI_SAMPLES = 100_000
# Released with epsilon 1.25 x the claim: the noise scale divided by 1.25, a
# gap four times smaller than halve_noise's (REPORT.md: samples it needs).
CI_SELF_CHECKS = (("count_empty", HALVE, 1.0), ("count_empty", "none", 1.25),
                  ("sum_int_clamp", SKIP, 1.0), ("sum_float8_clamp", SKIP, 1.0),
                  ("sum_float8_clamp", "none", 1.25), ("avg_narrow_clamp", SKIP, 1.0))
ALL_EXACT_SELF_CHECKS = tuple((a.key, HALVE) for a in EXACT_NOISE_AUDITS)


def ci_plan() -> RunPlan:
    return RunPlan("ci", CI_SAMPLES, CI_SAMPLES, CI_SELF_CHECKS, (("count_noise", HALVE),))


def fault_self_checks(epsilon_factors: Sequence[float] = ()) -> Tuple:
    """Every audit under every fault it must catch; and every count and sum
    audit that halve_noise must fail, released at epsilon x factor against a
    claim of 1 (the case the sample sizes in REPORT.md are computed for)."""
    checks = [(a.key, fault, 1.0) for a in PRIVACY_LOSS_AUDITS for fault in a.detects]
    checks += [(a.key, "none", factor) for factor in epsilon_factors
               for a in PRIVACY_LOSS_AUDITS if HALVE in a.detects and a.claimed_epsilon == 1.0
               and a.mechanism.function != "dp_avg"]
    return tuple(checks)


def long_plan() -> RunPlan:
    return RunPlan("long", 500_000, 500_000, fault_self_checks((1.25, 1.1)),
                   ALL_EXACT_SELF_CHECKS, informational_faults=True,
                   ci_self_check_replicates=10)


def self_check_plan(samples: int) -> RunPlan:
    return RunPlan("self-check", samples, samples, fault_self_checks((1.25,)),
                   ALL_EXACT_SELF_CHECKS, informational_faults=True)


# ---------------------------------------------------------------------------
# Database access.
# ---------------------------------------------------------------------------

class AuditSetupError(Exception):
    """The server cannot run the audit (exit status 2)."""


class AuditDatabase:
    """A database of the audit's own, with one connection per parallel job.

    The database (default dp_agg_audit) is reserved for this suite: one left
    over by an interrupted run is dropped, a fresh one is created with the
    extension and a privacy budget for the session user, and it is dropped at
    the end. Its budget is not anyone's: every query of the audit is paid
    from it (README "Privacy budgets"; a role without a budget is refused).
    """

    # Groups per table: each statement releases at most this many answers.
    GROUPS_PER_TABLE = 50_000
    # Far more than a run spends: a statement costs its epsilon, not per group.
    AUDIT_BUDGET = 1_000_000

    def __init__(self, database: str, jobs: int):
        self.database = database
        maintenance_db = os.environ.get("PGDATABASE", "postgres")
        if maintenance_db == database:
            maintenance_db = "postgres"
        self.admin = psycopg2.connect(dbname=maintenance_db)
        self.admin.autocommit = True
        self.connections: "queue.Queue" = queue.Queue()
        self.main = None
        with self.admin.cursor() as cur:
            cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            if not cur.fetchone()[0]:
                raise AuditSetupError("needs a superuser connection (the test faults are "
                                      "superuser-only settings)")
            cur.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            cur.execute(f'CREATE DATABASE "{database}"')
        try:
            self.main = psycopg2.connect(dbname=database)
            self.main.autocommit = True
            with self.main.cursor() as cur:
                try:
                    cur.execute("CREATE EXTENSION dp_agg")
                    cur.execute("SELECT dp_agg.set_budget(session_user::regrole, %s)",
                                (float(self.AUDIT_BUDGET),))
                    cur.execute("CREATE SCHEMA audit")
                    cur.execute("SELECT dp_count(1, 1.0)")
                except psycopg2.Error as error:
                    raise AuditSetupError(f"dp_agg does not work here "
                                          f"({(error.pgerror or str(error)).strip()}); "
                                          "is it in shared_preload_libraries?") from error
            for _ in range(jobs):
                self.connections.put(psycopg2.connect(dbname=database))
        except BaseException:
            self.close()
            raise
        self.tables: Dict[Tuple[str, Tuple], str] = {}
        self.releases_drawn = 0

    def table_for(self, column_type: str, rows: Tuple) -> str:
        """A table holding the dataset `rows` once in every group g: each group
        of `GROUP BY g` is a separate release (README), so one statement draws
        one independent answer per group. Every group also holds one NULL,
        which every aggregate skips (so an empty dataset still has a group)."""
        key = (column_type, rows)
        if key not in self.tables:
            name = f"audit.dataset_{len(self.tables)}"
            values = ", ".join(["(NULL)"] + [f"(%s::{column_type})"] * len(rows))
            with self.main.cursor() as cur:
                cur.execute(f"CREATE UNLOGGED TABLE {name} AS "
                            f"SELECT g, v.x::{column_type} AS x "
                            f"FROM generate_series(1, {self.GROUPS_PER_TABLE}) AS g, "
                            f"(VALUES {values}) AS v(x)", [repr(r) for r in rows])
                cur.execute(f"ANALYZE {name}")
            self.tables[key] = name
        return self.tables[key]

    def _draw_chunk(self, query: str, fault: str, exact_text: bool):
        connection = self.connections.get()
        try:
            with connection, connection.cursor() as cur:
                # Explicit per transaction: the CSPRNG (never a test seed) and the fault.
                cur.execute("SET LOCAL dp_agg.insecure_test_seed = 0")
                cur.execute("SET LOCAL dp_agg.insecure_test_fault = %s", (fault,))
                cur.execute("SET LOCAL dp_agg.max_epsilon = 10")  # the default
                cur.execute("SET LOCAL extra_float_digits = 3")  # exact round trip
                cur.execute("SET LOCAL work_mem = '128MB'")  # one hash table for all groups
                cur.execute("SET LOCAL max_parallel_workers_per_gather = 0")  # jobs = cores
                cur.execute(query)
                column = [row[0] for row in cur.fetchall()]
        finally:
            self.connections.put(connection)
        values = np.array([float(v) for v in column]) if exact_text else np.asarray(column, float)
        return values, (column if exact_text else None)

    def releases(self, mechanism: Mechanism, rows: Tuple, epsilon: float, count: int,
                 fault: str, executor) -> "PendingReleases":
        """`count` independent releases on the dataset `rows`, drawn in the
        background by statements of the form
            SELECT dp_...(x, ...) FROM dataset WHERE g <= n GROUP BY g
        (every group draws fresh noise, and so does every statement)."""
        table = self.table_for(mechanism.column_type, rows)
        # float4 answers are fetched as float8 (exact), numeric ones as text (exact).
        cast = {"numeric": "::text", "float4": "::float8"}.get(mechanism.output, "")
        exact_text = mechanism.output == "numeric" and mechanism.function == "dp_sum"
        chunk = self.GROUPS_PER_TABLE
        sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
        futures = [executor.submit(
            self._draw_chunk,
            f"SELECT {mechanism.call(epsilon)}{cast} FROM {table} WHERE g <= {size} GROUP BY g",
            fault, exact_text) for size in sizes]
        self.releases_drawn += count
        return PendingReleases(futures)

    def close(self):
        for connection in [self.main] + list(self.connections.queue):
            try:
                if connection is not None:
                    connection.close()
            except psycopg2.Error:
                pass
        with self.admin.cursor() as cur:
            try:  # ours alone: FORCE ends any straggling session
                cur.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            except psycopg2.Error as error:
                print(f"audit: cleanup incomplete: {error.pgerror}", file=sys.stderr)
        self.admin.close()


class PendingReleases:
    """Releases being drawn; result() waits for them."""

    def __init__(self, futures):
        self.futures = futures

    def result(self) -> "Releases":
        parts = [f.result() for f in self.futures]
        values = np.concatenate([p[0] for p in parts])
        text = None if parts[0][1] is None else [t for p in parts for t in p[1]]
        return Releases(values, text)


@dataclass
class Releases:
    """Answers as float64 (exact for integer, float4 and float8 answers) and,
    for numeric dp_sum answers, their exact decimal text."""
    values: np.ndarray
    exact_text: Optional[List[str]] = None

    def __len__(self):
        return len(self.values)


# ---------------------------------------------------------------------------
# Results and reporting.
# ---------------------------------------------------------------------------

@dataclass
class Outcome:
    section: str  # privacy-loss, float-grid, avg-range, low-bits, exact-noise, self-check
    mechanism: str
    pair: str
    claimed_epsilon: Optional[float]
    statistic: str  # what was measured, printed as is
    samples: int
    passed: bool
    detail: str = ""
    certified: Optional[float] = None  # certified lower bound (privacy-loss audits)
    informational: bool = False  # printed as INFO, counted neither way

    def line(self) -> str:
        eps = "-" if self.claimed_epsilon is None else f"{self.claimed_epsilon:g}"
        verdict = "INFO" if self.informational else ("PASS" if self.passed else "FAIL")
        return (f"{verdict}  {self.section:<12} {self.mechanism:<26} {self.pair:<26} "
                f"eps={eps:<5} {self.statistic:<30} n={self.samples:<9} {self.detail}")


def format_bound(value: float) -> str:
    return "-inf" if value == -math.inf else f"{value:.3f}"


@dataclass
class NoiseBins:
    """Bins of the integer noise (in grid steps) and their exact probabilities."""
    edges: np.ndarray  # half-integers; bins: below edges[0], between edges, above edges[-1]
    probabilities: np.ndarray

    @classmethod
    def for_scale(cls, scale: float, samples: int) -> "NoiseBins":
        if scale < 5:
            # One bin per value k with an expected count >= 1000, tails pooled:
            # the test runs at a level near 1e-8, far in the tail of the
            # chi-square law, where Pearson's statistic needs large counts to
            # follow it.
            largest = 0
            q = discrete_laplace_decay(scale)
            while samples * discrete_laplace_pmf(np.array([largest + 1]), q)[0] >= 1000:
                largest += 1
            edges = np.arange(-largest, largest + 2) - 0.5
        else:
            # About 40 bins of equal probability at the Laplace quantiles.
            levels = np.linspace(0.0, 1.0, 41)[1:-1]
            quantiles = np.where(levels < 0.5, scale * np.log(2 * levels),
                                 -scale * np.log(2 * (1 - levels)))
            edges = np.unique(np.round(quantiles)) + 0.5
        cdf = discrete_laplace_cdf(np.floor(edges), scale)  # exact pmf summed (closed form)
        probabilities = np.concatenate([[cdf[0]], np.diff(cdf), [1.0 - cdf[-1]]])
        return cls(edges, probabilities)

    def histogram(self, noise: np.ndarray) -> np.ndarray:
        return np.bincount(np.searchsorted(self.edges, noise), minlength=len(self.edges) + 1)

    def probabilities_of(self, pmf_on: Callable[[np.ndarray], np.ndarray], reach: int):
        """Bin probabilities of another integer pmf, summed over |k| <= reach."""
        k = np.arange(-reach, reach + 1)
        return np.bincount(np.searchsorted(self.edges, k), weights=pmf_on(k),
                           minlength=len(self.edges) + 1)


def chi_square_power(null: np.ndarray, alternative: np.ndarray, samples: int,
                     alpha: float) -> float:
    """Power of Pearson's test at level alpha when the data follow
    `alternative`: the statistic is approximately noncentral chi-square with
    noncentrality n * sum (p_alt - p_0)^2 / p_0 (Cochran 1952; Mitra 1958)."""
    dof = len(null) - 1
    noncentrality = samples * float(np.sum((alternative - null) ** 2 / null))
    return float(stats.ncx2.sf(stats.chi2.isf(alpha, dof), dof, noncentrality))


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
        "detected" means exactly "a real run would fail". (The grid checks are
        deterministic, except "some answer is an odd multiple of r", which a
        correct implementation fails with probability 2^-n, n > 10^4:
        negligible next to the budget.)"""
        privacy_loss_tests = 2 * len(PRIVACY_LOSS_AUDITS)  # two directions each
        exact_tests = 2 * len(EXACT_NOISE_AUDITS)  # chi-square and sign test each
        low_bit_tests = 2  # two homogeneity tests on the float grid's low bits
        return privacy_loss_tests + exact_tests + low_bit_tests

    def record(self, outcome: Outcome):
        self.outcomes.append(outcome)
        print(outcome.line(), flush=True)

    def run(self):
        if self.run_main_audits:
            self.run_privacy_loss_audits()
            self.run_exact_noise_audits()
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
        """The larger of the two directions' certified bounds (each a test)."""
        mechanism = audit.mechanism
        bounds = certify_privacy_loss(
            d.values, d_prime.values, self.alpha_per_test,
            mechanism.exact_float_grid(audit.claimed_epsilon * epsilon_factor),
            mechanism.output in ("float8", "float4"))
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
                       lambda audit: self.draw_pair(audit, self.plan.samples_per_dataset),
                       self.finish_privacy_loss_audit)

    def finish_privacy_loss_audit(self, audit: PrivacyLossAudit, draws):
        d, d_prime = draws[0].result(), draws[1].result()
        worst = self.worst_bound(audit, d, d_prime)
        self.record(Outcome(
            "privacy-loss", audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
            f"certified lower bound {format_bound(worst.certified)}", 2 * len(d),
            worst.certified <= audit.claimed_epsilon,
            f"[{worst.event}, {worst.direction}; empirical {worst.empirical:.3f}]",
            certified=worst.certified))
        if audit.key in PLOTTED_AUDITS:
            self.curves[audit.key] = (d.values, d_prime.values)
        self.check_float_safety(audit, d, d_prime)

    # --- float safety -----------------------------------------------------
    def check_float_safety(self, audit: PrivacyLossAudit, d: "Releases", d_prime: "Releases"):
        mechanism = audit.mechanism
        if mechanism.function == "dp_avg":
            self.check_within_bounds(audit, d, d_prime)
        grid = mechanism.release_grid(audit.claimed_epsilon)
        if grid is not None:
            self.check_grid(audit, d, d_prime, grid[0])
        if audit.key == LOW_BITS_AUDIT:
            self.check_low_bits(audit, d, d_prime, grid[0])

    def check_grid(self, audit: PrivacyLossAudit, d: "Releases", d_prime: "Releases",
                   exponent: int):
        """Every dp_sum answer must be an exact multiple of r = 2^exponent
        (README "Secure noise"), r computed from the documented rule:
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

    def check_within_bounds(self, audit, d: "Releases", d_prime: "Releases"):
        """README: the mean is "always within [lower, upper]" (deterministic)."""
        values = np.concatenate([d.values, d_prime.values])
        outside = int(np.count_nonzero((values < audit.mechanism.lower)
                                       | (values > audit.mechanism.upper) | ~np.isfinite(values)))
        self.record(Outcome("avg-range", audit.mechanism.label, audit.pair.label,
                            audit.claimed_epsilon, f"{outside} answers outside [L,U]",
                            len(values), outside == 0))

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

    # --- exact noise distribution -----------------------------------------
    def exact_noise_outcomes(self, audit: ExactNoiseAudit, answers: "Releases",
                             fault: str) -> Tuple[Outcome, Outcome]:
        """Pearson's chi-square of the noise (answer - true answer, in grid
        steps) against the exact discrete Laplace pmf with the mechanism's
        scale ceil(D/R)/epsilon' steps, and an exact binomial test of
        P[noise > 0] = P[noise < 0]. Catches a wrong scale, a doubled P(0)
        (the "-0" of CKS20 Algorithm 2 not rejected) and a biased sign."""
        noise = audit.noise_in_steps(answers.values)
        n = len(noise)
        bins = NoiseBins.for_scale(audit.scale_in_steps, n)
        observed = bins.histogram(noise)
        statistic, p_value = stats.chisquare(observed, bins.probabilities * n)
        off_integer = int(np.count_nonzero(noise != np.round(noise)))
        label = audit.mechanism.label + (f" [{fault}]" if fault != "none" else "")
        pair = f"fixed table, {len(audit.rows)} rows"
        chi_square = Outcome(
            "exact-noise", label, pair, audit.epsilon, f"chi2 p = {p_value:.3g}", n,
            p_value >= self.alpha_per_test and off_integer == 0,
            f"[discrete Laplace, scale {audit.scale_in_steps:.6g} steps, {len(observed)} bins, "
            f"chi2 {statistic:.1f}; {off_integer} non-integer]")
        positive, negative = int(np.count_nonzero(noise > 0)), int(np.count_nonzero(noise < 0))
        sign_p = stats.binomtest(positive, positive + negative, 0.5).pvalue
        sign = Outcome("exact-noise", label, pair, audit.epsilon, f"sign test p = {sign_p:.3g}",
                       n, sign_p >= self.alpha_per_test,
                       f"[{positive} positive, {negative} negative]")
        return chi_square, sign

    def run_exact_noise_audits(self):
        pending = [(a, self.db.releases(a.mechanism, a.rows, a.epsilon, self.plan.exact_samples,
                                        "none", self.executor)) for a in EXACT_NOISE_AUDITS]
        for audit, future in pending:
            for outcome in self.exact_noise_outcomes(audit, future.result(), "none"):
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
                       for fault in (HALVE, SKIP) if fault not in a.detects]
        self.pipelined(
            checks,
            lambda c: self.draw_pair(c[0], self.plan.samples_per_dataset, c[1], c[2]),
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
                                          f"{'detected' if detected else 'NOT detected'}]"))

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
        detected = worst.certified > audit.claimed_epsilon
        verdict = "detected" if detected else ("not detected (not expected to)" if informational
                                               else "NOT detected")
        self.record(Outcome(
            "self-check", audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
            f"certified lower bound {format_bound(worst.certified)}", 2 * len(d), detected,
            f"[{self.describe_break(fault, factor)}: {verdict}; {worst.event}]",
            certified=worst.certified, informational=informational))

    def run_self_check_replicates(self):
        """The CI self-checks, repeated at the CI size: how far above the claim
        does a broken mechanism land, and how likely is a miss? (Normal
        approximation of the certified bound's spread; a summary, not a proof.)"""
        audits = {a.key: a for a in PRIVACY_LOSS_AUDITS}
        jobs = [check for _ in range(self.plan.ci_self_check_replicates)
                for check in CI_SELF_CHECKS]

        def finish(check, draws):
            key, fault, factor = check
            d, d_prime = draws[0].result(), draws[1].result()
            bound = self.worst_bound(audits[key], d, d_prime, factor).certified
            self.replicate_bounds.setdefault(check, []).append(bound)

        self.pipelined(jobs, lambda c: self.draw_pair(audits[c[0]], CI_SAMPLES, c[1], c[2]),
                       finish)
        for (key, fault, factor), bounds in self.replicate_bounds.items():
            audit = audits[key]
            mean, spread = float(np.mean(bounds)), float(np.std(bounds, ddof=1))
            z = (mean - audit.claimed_epsilon) / spread if spread > 0 else math.inf
            miss = float(stats.norm.sf(z))
            margin = f"margin {z:.1f} sd" if z < 100 else "margin > 100 sd"
            self.record(Outcome(
                "self-check", audit.mechanism.label, audit.pair.label, audit.claimed_epsilon,
                f"bounds {mean:.3f} +- {spread:.3f}, min {min(bounds):.3f}",
                2 * CI_SAMPLES * len(bounds), min(bounds) > audit.claimed_epsilon,
                f"[{self.describe_break(fault, factor)} at the CI size, {len(bounds)} "
                f"replicates: {margin}, miss probability ~{miss:.1g}]"))


LOW_BITS_AUDIT = "sum_float8_low_bits"
# Audits whose answers go into privacy_loss.png.
PLOTTED_AUDITS = ("count_empty", "sum_int_clamp", "sum_float8_clamp", "avg_empty",
                  "avg_one_two", "avg_narrow_clamp")
PLOTTED_SELF_CHECKS = (("count_empty", HALVE, 1.0), ("count_empty", "none", 1.25),
                       ("sum_int_clamp", SKIP, 1.0), ("sum_float8_clamp", HALVE, 1.0),
                       ("sum_float8_clamp", "none", 1.25), ("avg_narrow_clamp", SKIP, 1.0))


# ---------------------------------------------------------------------------
# Sample size planning (for the --long pass and REPORT.md).
# ---------------------------------------------------------------------------

def samples_to_certify(p_a: float, p_b: float, claimed_epsilon: float, alpha: float,
                       power: float = 0.999) -> int:
    """Smallest certification-half size n per dataset such that, for an event
    with true probabilities p_a > e^claimed p_b, the certified bound exceeds
    the claim with probability >= about `power`: the counts are taken at
    their (1 - power)/2 quantiles (normal approximation), then the exact
    Clopper-Pearson bounds are applied."""
    if not p_a > math.exp(claimed_epsilon) * p_b:
        raise ValueError("this event cannot show a loss above the claim")
    z = stats.norm.isf((1.0 - power) / 2.0)

    def certified_at(n):
        hits_a = math.floor(n * p_a - z * math.sqrt(n * p_a * (1 - p_a)))
        hits_b = math.ceil(n * p_b + z * math.sqrt(n * p_b * (1 - p_b)))
        return float(certified_log_ratio(max(hits_a, 0), n, min(hits_b, n), n, alpha))

    high = 16
    while certified_at(high) <= claimed_epsilon:
        high *= 2
    low = high // 2
    while high - low > max(1, low // 200):
        middle = (low + high) // 2
        if certified_at(middle) > claimed_epsilon:
            high = middle
        else:
            low = middle
    return high


def epsilon_gap_requirements(alpha: float, actual: float) -> List[Tuple[str, float, float, int]]:
    """Sample sizes needed to catch epsilon claimed 1 but actually `actual`,
    with the best event of each mechanism (a tail event, where the loss is
    attained)."""
    rows = []
    claimed = 1.0
    # Count, empty vs one row: S = {Y >= 1}: P_D'(S) = P[Z >= 0] = 1/(1+q),
    # P_D(S) = P[Z >= 1] = q/(1+q), ratio 1/q = e^actual.
    q = math.exp(-actual)
    rows.append(("dp_count {} vs +1, S = {Y >= 1}", 1 / (1 + q), q / (1 + q)))
    # Integer sum [0,10], empty vs one clamped row: S = {Y >= 10}, q = e^(-actual/10).
    q = math.exp(-actual / 10)
    rows.append(("dp_sum int [0,10] {} vs +10000, S = {Y >= 10}", 1 / (1 + q), q ** 10 / (1 + q)))
    # Float sum [0,1] (practically continuous Laplace, scale 1/actual): S = {Y >= 1}.
    rows.append(("dp_sum float8 [0,1] {} vs +1000, S = {Y >= 1}", 0.5, 0.5 * math.exp(-actual)))
    return [(label, p_a, p_b, samples_to_certify(p_a, p_b, claimed, alpha))
            for label, p_a, p_b in rows]


# ---------------------------------------------------------------------------
# Report and plot.
# ---------------------------------------------------------------------------

def tail_log_ratios(values_d: np.ndarray, values_dp: np.ndarray):
    """Empirical ln P_D'(Y >= t) / P_D(Y >= t) and ln P_D(Y <= t) / P_D'(Y <= t)
    on a grid of thresholds t, where both counts are at least 1 in 1000 draws
    (and at least 100), so that the curves are not dominated by noise."""
    minimum_hits = max(100, len(values_d) // 1000)
    pooled = np.concatenate([values_d, values_dp])
    thresholds = np.unique(np.quantile(pooled, np.linspace(0.001, 0.999, 400)))
    sd, sdp = np.sort(values_d), np.sort(values_dp)
    upper_d = len(sd) - np.searchsorted(sd, thresholds, side="left")
    upper_dp = len(sdp) - np.searchsorted(sdp, thresholds, side="left")
    lower_d = np.searchsorted(sd, thresholds, side="right")
    lower_dp = np.searchsorted(sdp, thresholds, side="right")
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.log(upper_dp / len(sdp)) - np.log(upper_d / len(sd))
        lower = np.log(lower_d / len(sd)) - np.log(lower_dp / len(sdp))
    upper[(upper_d < minimum_hits) | (upper_dp < minimum_hits)] = np.nan
    lower[(lower_d < minimum_hits) | (lower_dp < minimum_hits)] = np.nan
    return thresholds, upper, lower


def write_plot(auditor: Auditor, path: str):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    audits = {a.key: a for a in PRIVACY_LOSS_AUDITS}
    panels = [("count_empty", ["halve_noise", "epsilon x1.25"]),
              ("sum_int_clamp", ["skip_clamping"]),
              ("sum_float8_clamp", ["halve_noise", "epsilon x1.25"]),
              ("avg_empty", []), ("avg_one_two", []),
              ("avg_narrow_clamp", ["skip_clamping"])]
    figure, axes = plt.subplots(2, 3, figsize=(15, 9))
    for axis, (key, broken_versions) in zip(axes.flat, panels):
        audit = audits[key]
        eps = audit.claimed_epsilon
        if key in auditor.curves:
            t, upper, lower = tail_log_ratios(*auditor.curves[key])
            axis.plot(t, upper, color="tab:blue", lw=2, label="ln P_D'(Y>=t) / P_D(Y>=t)")
            axis.plot(t, lower, color="tab:green", lw=2, label="ln P_D(Y<=t) / P_D'(Y<=t)")
        for broken, colour in zip(broken_versions, ["tab:red", "tab:purple"]):
            curve_key = f"{key}:{broken}"
            if curve_key in auditor.curves:
                t, upper, lower = tail_log_ratios(*auditor.curves[curve_key])
                axis.plot(t, upper, color=colour, lw=1.3, label=f"{broken}: Y>=t")
                axis.plot(t, lower, color=colour, lw=1.3, ls="--", label=f"{broken}: Y<=t")
        axis.axhline(eps, color="black", ls="--", lw=1.2, label=f"claimed epsilon = {eps:g}")
        axis.axhline(0, color="grey", lw=0.6)
        certified = [o.certified for o in auditor.outcomes
                     if o.section == "privacy-loss" and o.mechanism == audit.mechanism.label
                     and o.pair == audit.pair.label]
        title = f"{audit.mechanism.label}, D' = D + one row\nD = {audit.pair.label}"
        if certified:
            title += f"   (certified bound {format_bound(certified[0])})"
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("threshold t on the released answer Y")
        axis.set_ylabel("empirical privacy loss")
        axis.set_ylim(-0.5, max(2.5 * eps, 2.6))
        if key == "sum_int_clamp":
            axis.set_xlim(-40, 50)
        if key == "sum_float8_clamp":
            axis.set_xlim(-5, 6)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7.5, loc="best", framealpha=0.9)
    samples = len(next(iter(auditor.curves.values()))[0]) if auditor.curves else 0
    figure.suptitle("dp_agg privacy audit: empirical log-ratio of tail probabilities between "
                    "neighbouring tables (blue, green) stays below the claimed epsilon (dashed);\n"
                    "deliberately broken mechanisms (red, purple) cross it. "
                    f"{samples:,} releases per table and curve; thresholds with fewer than "
                    f"{max(100, samples // 1000)} hits on either side are not drawn.",
                    fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    figure.savefig(path, dpi=100)
    plt.close(figure)


def git_commit() -> str:
    """HEAD, marked when the extension's sources differ from it."""
    try:
        head = subprocess.run(["git", "-C", AUDIT_DIR, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", AUDIT_DIR, "diff", "--quiet", "HEAD", "--",
                                  "../../src", "../../sql"]).returncode != 0
        return head + (" with uncommitted changes to src/ or sql/" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def exact_noise_power_rows(alpha: float, samples: int) -> List[Tuple[str, str, float]]:
    """Power of the chi-square tests against the mistakes they are meant to
    catch, at `samples` draws (noncentral chi-square approximation)."""
    rows = []
    for audit in EXACT_NOISE_AUDITS:
        scale = audit.scale_in_steps
        if scale >= 5 and audit.mechanism.output != "integer":
            continue  # the float audit's alternatives are those of the integer ones, scaled
        bins = NoiseBins.for_scale(scale, samples)
        reach = int(60 * scale) + 10
        q = discrete_laplace_decay(scale)

        def laplace(scale_factor):
            return lambda k: discrete_laplace_pmf(k, discrete_laplace_decay(scale * scale_factor))

        def doubled_zero(k):  # the "-0" draw of CKS20 Algorithm 2 not rejected
            weights = np.where(k == 0, 2.0, 1.0) * np.power(q, np.abs(k))
            return weights / (2.0 + 2.0 * q / (1.0 - q))

        def sign_bias(k):  # 52 : 48 between positive and negative noise
            weights = np.where(k > 0, 1.04, np.where(k < 0, 0.96, 1.0))
            return weights * discrete_laplace_pmf(k, q)

        for name, pmf in (("scale x1.1 (epsilon / 1.1)", laplace(1.1)),
                          ("scale / 1.1 (epsilon x 1.1)", laplace(1 / 1.1)),
                          ("P(0) doubled (-0 not rejected)", doubled_zero),
                          ("sign biased 52:48", sign_bias)):
            alternative = bins.probabilities_of(pmf, reach)
            rows.append((audit.mechanism.label, name,
                         chi_square_power(bins.probabilities, alternative, samples, alpha)))
    return rows


def markdown_table(header: Sequence[str], rows: Sequence[Sequence]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def write_report(auditor: Auditor, path: str, command: str, seconds: float, commit: str):
    plan, alpha = auditor.plan, auditor.alpha_per_test
    tests = auditor.statistical_test_count()
    outcomes = auditor.outcomes
    verdict = lambda o: "PASS" if o.passed else "**FAIL**"
    out = ["# dp_agg privacy audit report", ""]
    out.append(f"Generated by `{command}` (mode `{plan.mode}`) at commit `{commit}` "
               f"on {time.strftime('%Y-%m-%d')}: {auditor.db.releases_drawn:,} releases in "
               f"{seconds:.0f} s. Result: {sum(o.passed for o in outcomes if not o.informational)} "
               f"passed, {sum(not o.passed for o in outcomes if not o.informational)} failed. "
               "Plot: [privacy_loss.png](privacy_loss.png).")
    out.append("")
    out.append("**Method.** For each pair of neighbouring tables (D' = D plus one row) the suite "
               f"draws {plan.samples_per_dataset:,} independent releases on each table through SQL. "
               "The first half of the draws chooses an output event S among thresholds, "
               "histogram bins, point masses and low-order-bit classes; the second half "
               "certifies a one-sided Clopper-Pearson lower bound on "
               "ln P[M(D) in S] - ln P[M(D') in S] (and the reverse direction). "
               "An audit fails when that bound exceeds the claimed epsilon.")
    out.append("")
    out.append(f"**False-failure probability.** {tests} statistical tests at level "
               f"alpha = {alpha:.3g} each (Bonferroni): a correct implementation fails a run "
               f"with probability at most {FALSE_FAILURE_BUDGET:g}. The same level is used in "
               "the self-checks, so \"detected\" means \"a real run would have failed\".")
    out.append("")
    out.append("## Privacy-loss audits")
    out.append("")
    out += markdown_table(
        ["mechanism", "neighbouring pair D vs +row", "claimed epsilon", "certified lower bound",
         "samples", "result", "event chosen; empirical log-ratio on the certification half"],
        [(o.mechanism, f"`{o.pair}`", f"{o.claimed_epsilon:g}", format_bound(o.certified),
          f"{o.samples:,}", verdict(o), o.detail.strip("[]"))
         for o in outcomes if o.section == "privacy-loss"])
    out.append("")
    out.append("## Self-check: broken mechanisms must be detected")
    out.append("")
    out.append("`halve_noise` and `skip_clamping` are the superuser-only settings "
               "`dp_agg.insecure_test_fault`; `epsilon xF` releases with F times the claimed "
               "epsilon (noise scale divided by F) and audits against the claim. Rows marked "
               "INFO are faults an audit is not built to catch (e.g. halve_noise on a mean, "
               "whose answer hides most of the loss); they are shown, not counted.")
    out.append("")
    out += markdown_table(
        ["mechanism", "neighbouring pair", "claimed epsilon", "certified lower bound / test",
         "samples", "detected", "broken by; event"],
        [(o.mechanism, f"`{o.pair}`", f"{o.claimed_epsilon:g}",
          format_bound(o.certified) if o.certified is not None else o.statistic,
          f"{o.samples:,}",
          "INFO: " + ("yes" if o.passed else "no") if o.informational
          else ("yes" if o.passed else "**NO**"), o.detail.strip("[]"))
         for o in outcomes if o.section == "self-check"])
    out.append("")
    out.append("## Exact noise distribution, float grid, low-order bits")
    out.append("")
    out += markdown_table(
        ["check", "mechanism", "table", "epsilon", "result", "samples", "verdict", "detail"],
        [(o.section, o.mechanism, f"`{o.pair}`", f"{o.claimed_epsilon:g}", o.statistic,
          f"{o.samples:,}", verdict(o), o.detail.strip("[]"))
         for o in outcomes
         if o.section in ("exact-noise", "float-grid", "avg-range", "low-bits")])
    out.append("")
    out.append(f"Power of the chi-square tests at the CI size ({CI_SAMPLES:,} draws, "
               f"alpha = {alpha:.3g}; noncentral chi-square approximation):")
    out.append("")
    out += markdown_table(["mechanism", "mistake", "power"],
                          [(m, name, f"{p:.6f}") for m, name, p in
                           exact_noise_power_rows(alpha, CI_SAMPLES)])
    out.append("")
    out.append("## Sample size to catch a smaller gap: epsilon claimed 1, actually 1.25 or 1.1")
    out.append("")
    out.append("Certification-half size per table for the certified bound to exceed 1 with "
               f"probability about 0.999 at alpha = {alpha:.3g}, for the best event "
               "(counts at their 0.0005 / 0.9995 normal quantiles, then exact Clopper-Pearson "
               "bounds). The selection half doubles it.")
    out.append("")
    out += markdown_table(["true epsilon", "pair and event", "P_D'(S)", "P_D(S)",
                           "certification samples per table"],
                          [(f"{actual:g}", label, f"{p_a:.4f}", f"{p_b:.4f}", f"{n:,}")
                           for actual in (1.25, 1.1)
                           for label, p_a, p_b, n in epsilon_gap_requirements(alpha, actual)])
    out.append("")
    out.append(f"This run certified with {plan.samples_per_dataset // 2:,} releases per table; "
               f"the CI pass certifies with {CI_SAMPLES // 2:,}.")
    out.append("")
    out.append("## Notes")
    out.append("")
    out += [
        "- **How tight the audits are.** For counts and sums the worst-case loss is "
        "attained by a tail event, so a correct mechanism certifies close to epsilon "
        "(the gap is the Clopper-Pearson width at alpha). A mean is post-processing of a "
        "noisy count and a noisy sum, each at epsilon/2; no single threshold on its answer "
        "shows the whole loss, so its audits certify well below epsilon (table above). "
        "They catch a missing clamp or an uncentred sum (narrow bounds [0.99, 1] far from "
        "zero), not a small scale error.",
        "- **dp_avg's low mantissa bits.** For the mean the most telling events are often "
        "classes of the lowest mantissa bits of the double answer, not thresholds: "
        "mid + S / C in double precision leaves a bit pattern that depends on the noisy "
        "count C (e.g. 0101... when 3 divides C). This is still post-processing of the two "
        "epsilon/2 releases, so the loss stays below epsilon, but the answer carries the "
        "noisy count as well as the mean.",
        "- **skip_clamping on floats** still limits values to +-2^(e+62), e the units "
        "exponent chosen from the bounds (AddDouble), i.e. to less than twice the largest "
        "bound. A row at 1000 x the bound therefore counts as 2 for bounds [0, 1] (loss 2 x "
        "epsilon), and only as about 1.07-1.33 x the bound for the bounds 7.5, 1e-300 and "
        "1e300; those audits are not expected to catch it (INFO rows).",
        "- **Event selection.** On the selection half every candidate event is scored "
        "with the same Clopper-Pearson bound that certification uses, which prefers the "
        "largest empirical log-ratio among events frequent enough to be certified.",
        "- **float4 answers** are the grid value rounded to 24 bits: still multiples of r, "
        "but hardly ever odd multiples, so only membership is checked.",
        "- **Low-order bits.** On the 2^-40 grid the noise (2^40 grid steps) makes the "
        "low bits of Y / r uniform to within about 2^-30 on both tables, so a homogeneity "
        "test between D and D' has its nominal level; the same bit classes are also "
        "candidate events of the privacy-loss audits (and the low mantissa bits of dp_avg "
        "answers).",
    ]
    out.append("")
    with open(path, "w") as handle:
        handle.write("\n".join(out) + "\n")


# ---------------------------------------------------------------------------
# Entry point.
# ---------------------------------------------------------------------------

def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true",
                        help="500,000 releases per table, every fault self-check, releases at "
                             "1.25 and 1.1 x the claimed epsilon, replicated CI self-checks "
                             "(about 6 minutes on 2 cores)")
    parser.add_argument("--self-check", action="store_true",
                        help="only the self-check: every audit under each fault it must catch "
                             "(and, as INFO, the faults it need not catch)")
    parser.add_argument("--report", action="store_true",
                        help="write test/audit/REPORT.md and test/audit/privacy_loss.png")
    parser.add_argument("--samples", type=int, help="releases per table (overrides the mode)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel connections (default 2)")
    parser.add_argument("--database", default=os.environ.get("DP_AGG_AUDIT_DB", "dp_agg_audit"),
                        help="database reserved for the audit: (re)created at the start, "
                             "dropped at the end (default dp_agg_audit)")
    parser.add_argument("--command-label", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.self_check:
        plan = self_check_plan(args.samples or 60_000)
    elif args.long:
        plan = long_plan()
    else:
        plan = ci_plan()
    if args.samples:
        plan = dataclasses.replace(plan, samples_per_dataset=args.samples,
                                   exact_samples=args.samples)
    if args.report and args.self_check:
        parser.error("--report needs the audits: use it without --self-check")

    started = time.monotonic()
    commit = git_commit()  # what the installed build most likely is, taken at the start
    try:
        database = AuditDatabase(args.database, args.jobs)
    except (AuditSetupError, psycopg2.Error) as error:
        print(f"audit: cannot run: {str(error).strip()}", file=sys.stderr)
        return 2
    try:
        auditor = Auditor(plan, database, args.jobs, run_main_audits=not args.self_check)
        print(f"audit: mode {plan.mode}, {plan.samples_per_dataset:,} releases per table; "
              f"{auditor.statistical_test_count()} statistical tests at alpha = "
              f"{auditor.alpha_per_test:.3g} each (Bonferroni): false-failure probability "
              f"of this run <= {FALSE_FAILURE_BUDGET:g}", flush=True)
        try:
            auditor.run()
        finally:
            auditor.executor.shutdown(wait=True, cancel_futures=True)
    finally:
        database.close()
    seconds = time.monotonic() - started
    counted = [o for o in auditor.outcomes if not o.informational]
    passed = sum(o.passed for o in counted)
    failed = len(counted) - passed
    rate = database.releases_drawn / max(seconds, 1e-9)
    print(f"audit: {database.releases_drawn:,} releases in {seconds:.1f} s "
          f"({rate:,.0f} per second overall)")
    for o in counted:
        if not o.passed:
            print(f"audit: FAILED: {o.section} {o.mechanism} {o.pair}: {o.statistic} {o.detail}")
    if args.report:
        command = args.command_label or "test/audit/run_audit.sh " + " ".join(argv)
        write_report(auditor, os.path.join(AUDIT_DIR, "REPORT.md"), command.strip(), seconds,
                     commit)
        write_plot(auditor, os.path.join(AUDIT_DIR, "privacy_loss.png"))
        print("audit: wrote test/audit/REPORT.md and test/audit/privacy_loss.png")
    print(f"audit: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
