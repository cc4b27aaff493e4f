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

Mechanisms audited: dp_count, dp_sum and dp_avg (Laplace, epsilon-DP);
dp_select, counted and weighted (permute-and-flip; the event is "the answer
is candidate X"); dp_median and dp_percentile (permute-and-flip over 1024
fixed bins; events are thresholds on the answer); and the (epsilon, delta)
Gaussian forms of dp_count, dp_sum and dp_avg. For those the loss is not
bounded, so the suite certifies instead a lower bound on
    delta_hat(S) = P[M(D) in S] - exp(epsilon) P[M(D') in S]
(Clopper-Pearson lower bound on the first probability minus exp(epsilon)
times an upper bound on the second) and FAILS when it exceeds delta.

DP partition selection (dp_agg.group_selection(epsilon, delta) in HAVING,
which releases a group iff its row count plus discrete Laplace noise reaches
a threshold T) is audited on one table of groups of every size
c = 1 .. T + 3: each group of one statement is an independent release. The
suite computes T itself from the definition, compares the release frequency
of each size with its exact probability P[Z >= T - c] (exact binomial tests)
and checks that the answers imply the same T; certifies the privacy loss
between groups of c - 1 and c rows (c = 2 and c = T) as above; and, for a
group of one row against no group (never released), certifies a lower bound
on P[released] and FAILS when it exceeds delta. Its self-check: under
halve_noise (noise and threshold for 2 epsilon), at epsilon x1.25, and with
a threshold one too low (a larger delta), the audits must FAIL.

Besides, the suite compares the released noise with its exact distribution
(chi-square against the discrete Laplace pmf, and against the discrete
Gaussian pmf whose variance it calibrates independently and checks through
dp_count_margin), compares dp_select and quantile answers with the exact
permute-and-flip law of their table, checks that float answers lie on the
documented power-of-two grid and quantile answers on the bin midpoints,
tests that the low-order bits do not tell neighbours apart, and runs a
self-check: under the superuser-only faults dp_agg.insecure_test_fault =
halve_noise / skip_clamping the relevant audits must FAIL, which shows that
the suite can catch a broken mechanism.

Usage: see run_audit.sh (or --help). Needs PG* environment variables for a
superuser connection to a server with dp_agg in shared_preload_libraries.
"""

import argparse
import concurrent.futures
import dataclasses
import decimal
import fractions
import math
import os
import queue
import subprocess
import sys
import threading
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


# The (epsilon, delta) variants add discrete Gaussian noise N_Z(0, sigma^2),
# P[X = k] proportional to exp(-k^2 / (2 sigma^2)), calibrated on the exact
# privacy curve of the discrete distribution (README; CKS20 Theorem 7). The
# suite recomputes that calibration on its own (below) and checks it against
# the server through dp_count_margin, an exact quantile of the noise.

def discrete_gaussian_pmf(sigma2: float) -> Tuple[np.ndarray, np.ndarray]:
    """Support k (|k| <= 40 sigma + 40: the rest is below 1e-300) and pmf of
    N_Z(0, sigma2) (Canonne, Kamath & Steinke, NeurIPS 2020, Definition 1)."""
    reach = int(40 * math.sqrt(sigma2) + 40)
    k = np.arange(-reach, reach + 1)
    weights = np.exp(-(k.astype(float) ** 2) / (2.0 * sigma2))
    return k, weights / weights.sum()


def discrete_gaussian_delta(sigma2: float, epsilon: float, sensitivity: int) -> float:
    """The smallest delta for which q + N_Z(0, sigma2) is (epsilon, delta)-DP,
    q an integer query of sensitivity D (CKS20 Theorem 7):
        P[Y > c] - e^epsilon P[Y > c + D],  c = epsilon sigma2 / D - D / 2,
    summed as sum_{k > c} P(k) (1 - exp(-D (k - c) / sigma2)), a sum of
    positive terms (P(k + D) e^epsilon = P(k) exp(-D (k - c) / sigma2))."""
    k, pmf = discrete_gaussian_pmf(sigma2)
    c = epsilon * sigma2 / sensitivity - sensitivity / 2.0
    above = k > c
    return float(np.sum(pmf[above] * -np.expm1(-sensitivity * (k[above] - c) / sigma2)))


def discrete_gaussian_sigma2(epsilon: float, delta: float, sensitivity: int) -> float:
    """A boundary point of {sigma2 : delta(sigma2) <= delta (1 - 2^-30)}
    (README: "the calibration is exact"; gaussian_mechanism.h: the same
    safety factor), by doubling and bisection; the smallest such sigma2
    wherever the curve is monotone, as it is for the parameters audited here
    (it fails to be only for tiny sigma). Checked against the server by
    Auditor.check_gaussian_calibration."""
    target = delta * (1.0 - 2.0 ** -30)
    ok = lambda s2: discrete_gaussian_delta(s2, epsilon, sensitivity) <= target
    high = float(sensitivity) ** 2
    while not ok(high):
        high *= 2.0
    low = high / 2.0
    while ok(low) and low > 1e-6:
        high, low = low, low / 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if ok(middle):
            high = middle
        else:
            low = middle
    return high


def gaussian_sigma2_for(epsilon: float, delta: float, sensitivity: int) -> float:
    """sigma^2 in grid steps of the server's Gaussian noise: epsilon and
    delta are both rounded down to 24 significant bits first, as every
    mechanism does (README "How much a query costs"; EffectivePrivacyParameter)."""
    return discrete_gaussian_sigma2(float(epsilon_rounded_down(epsilon)),
                                    float(epsilon_rounded_down(delta)), sensitivity)


# DP partition selection, dp_agg.group_selection(epsilon, delta) (README;
# partition_selection.h): a group of c rows is released iff c + Z >= T, Z
# discrete Laplace with q = exp(-epsilon'), and T = k + 1 for the smallest
# k >= 1 with P[Z >= k] = q^k / (1 + q) <= delta' (epsilon', delta' the
# requests rounded down to 24 bits), the inequality demanded with a margin of
# 1e-9 in log space. A group of one row, absent from the neighbour, is then
# released with probability q^(T-1) / (1 + q) <= delta'.
PARTITION_SELECTION_LOG_MARGIN = decimal.Decimal("1e-9")


def _as_decimal(value: fractions.Fraction) -> decimal.Decimal:
    return decimal.Decimal(value.numerator) / decimal.Decimal(value.denominator)


def partition_selection_threshold(epsilon: float, delta: float,
                                  margin: decimal.Decimal = PARTITION_SELECTION_LOG_MARGIN) -> int:
    """T from the definition, in 50-digit decimal arithmetic (independent of
    the server's long double code): the smallest k >= 1 with
        -k epsilon' - ln(1 + e^-epsilon') <= ln delta' - margin,
    plus one. margin = 0 gives the threshold of the exact inequality."""
    with decimal.localcontext() as context:
        context.prec = 50
        eps = _as_decimal(epsilon_rounded_down(epsilon))
        bound = _as_decimal(epsilon_rounded_down(delta)).ln() - margin
        log_one_plus_q = (1 + (-eps).exp()).ln()
        log_tail = lambda k: -eps * k - log_one_plus_q  # ln P[Z >= k]
        estimate = ((-bound - log_one_plus_q) / eps).to_integral_value(decimal.ROUND_CEILING)
        k = max(1, int(estimate))
        while log_tail(k) > bound:
            k += 1
        while k > 1 and log_tail(k - 1) <= bound:
            k -= 1
        return k + 1


def partition_selection_release_probability(count: int, threshold: int, epsilon: float) -> float:
    """P[count + Z >= T] = P[Z >= j], j = T - count: q^j / (1 + q) for j >= 1
    and 1 - q^(1 - j) / (1 + q) for j <= 0 (symmetry of Z)."""
    q = math.exp(-float(epsilon_rounded_down(epsilon)))
    j = threshold - count
    return q ** j / (1.0 + q) if j >= 1 else 1.0 - q ** (1 - j) / (1.0 + q)


def hockey_stick_delta(pmf_a: np.ndarray, pmf_b: np.ndarray, epsilon: float) -> float:
    """sup_S P_a(S) - e^epsilon P_b(S) = sum of the positive parts."""
    return float(np.sum(np.maximum(pmf_a - math.exp(epsilon) * pmf_b, 0.0)))


# dp_select and the quantiles use permute-and-flip (McKenna & Sheldon 2020):
# visit the candidates in a uniformly random order and accept candidate r
# with probability p_r = exp(-rate (u* - u_r)). Give every candidate an
# independent uniform arrival time; given r's time t, each other candidate
# j comes before it with probability t and must then be rejected, so
#     P[answer = r] = p_r * integral_0^1 prod_{j != r} (1 - t p_j) dt.
# That is the exact law, which the suite integrates numerically (Gauss-
# Legendre on geometrically shrinking pieces near 0, where the integrand of
# 1024 candidates falls fastest; relative error below 1e-12).
_LEGENDRE_NODES, _LEGENDRE_WEIGHTS = np.polynomial.legendre.leggauss(100)
_PIECES = np.concatenate([[0.0], np.geomspace(1e-10, 1.0, 50)])
PF_NODES = np.concatenate([(a + b) / 2 + (b - a) / 2 * _LEGENDRE_NODES
                           for a, b in zip(_PIECES[:-1], _PIECES[1:])])
PF_WEIGHTS = np.concatenate([(b - a) / 2 * _LEGENDRE_WEIGHTS
                             for a, b in zip(_PIECES[:-1], _PIECES[1:])])
# selection.h: acceptance exponents are capped at 64 (probabilities below
# e^-64 per visit are raised to it); mirrored here though never reached.
MAX_SELECTION_EXPONENT = 64.0


def permute_and_flip_law(scores: Sequence[float], rate: float) -> np.ndarray:
    """P[permute-and-flip chooses r] for every candidate r, exactly up to the
    quadrature (candidates with equal scores are grouped)."""
    scores = np.asarray(scores, dtype=float)
    accept = np.exp(-np.minimum(rate * (scores.max() - scores), MAX_SELECTION_EXPONENT))
    values, inverse, multiplicity = np.unique(accept, return_inverse=True, return_counts=True)
    logs = np.log1p(-np.minimum(np.outer(PF_NODES, values), 1.0 - 1e-300))
    total = logs @ multiplicity
    per_value = np.array([values[g] * np.sum(PF_WEIGHTS * np.exp(total - logs[:, g]))
                          for g in range(len(values))])
    law = per_value[inverse]
    return law / law.sum()


QUANTILE_BINS = 1024  # README: "a fixed grid of 1024 bins between the bounds"


def quantile_grid(lower: float, upper: float) -> Tuple[int, int, int]:
    """(unit exponent e, lower in units, width W in units): values are put in
    units of 2^e chosen from the bounds (the sums' rule, quantile.h), and bin
    i holds the units [ceil(i W / B), ceil((i + 1) W / B)) above lower."""
    exponent = bound_units_exponent(lower, upper)
    scale = fractions.Fraction(2) ** -exponent
    low = int(fractions.Fraction(lower) * scale)
    return exponent, low, int(fractions.Fraction(upper) * scale) - low


def quantile_bin_of(value: float, lower: float, upper: float) -> int:
    """Bin of a row (clamped to the bounds): floor(p B / W), B - 1 for p = W."""
    exponent, low, width = quantile_grid(lower, upper)
    clamped = min(max(value, lower), upper)
    units = int(fractions.Fraction(clamped) * fractions.Fraction(2) ** -exponent) - low
    return min(units * QUANTILE_BINS // width, QUANTILE_BINS - 1)


def quantile_bin_points(lower: float, upper: float) -> np.ndarray:
    """The answer released for each bin: the midpoint (e_i + e_{i+1}) / 2 of
    its edges, as the nearest double (quantile.h BinPoint)."""
    exponent, low, width = quantile_grid(lower, upper)
    edge = lambda j: -(-j * width // QUANTILE_BINS)  # ceil(j W / B)
    unit = fractions.Fraction(2) ** exponent
    return np.array([min(max(float((low + fractions.Fraction(edge(i) + edge(i + 1), 2)) * unit),
                             lower), upper) for i in range(QUANTILE_BINS)])


def quantile_utilities(bin_counts: np.ndarray, fraction: float) -> np.ndarray:
    """u(i) = -max(0, C_i - f n, f n - C_{i+1}), C_i the rows below bin i
    (quantile.h), in rows."""
    n = bin_counts.sum()
    target = fraction * n
    below = np.concatenate([[0.0], np.cumsum(bin_counts)])
    return -np.maximum(0.0, np.maximum(below[:-1] - target, target - below[1:]))


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


def certified_delta(hits_a, trials_a, hits_b, trials_b, epsilon, alpha):
    """Lower bound on delta(S) = P_a(S) - e^epsilon P_b(S) that is wrong with
    probability at most alpha: (CP lower of P_a at alpha/2) - e^epsilon (CP
    upper of P_b at alpha/2), a union bound over the two one-sided intervals."""
    return (clopper_pearson_lower(hits_a, trials_a, alpha / 2.0)
            - math.exp(epsilon) * clopper_pearson_upper(hits_b, trials_b, alpha / 2.0))


def certify_delta(samples_d: np.ndarray, samples_d_prime: np.ndarray, epsilon: float,
                  alpha_per_test: float, is_float: bool) -> List[DirectionalBound]:
    """For (epsilon, delta) mechanisms: in each direction, the event S chosen
    on the selection half, and its certified lower bound on delta(S) from the
    certification half (each direction one test at level alpha_per_test).
    `empirical` is the plain estimate delta_hat = hits_a / n - e^epsilon
    hits_b / n on the certification half; delta_hat minus the certified bound
    is the confidence margin.

    S maximises delta_hat minus one standard error on the selection half,
    not the certified bound that the privacy-loss audits select by: at a
    correct mechanism's delta (0.01) the Clopper-Pearson margin at alpha ~1e-8
    (~0.03 at the CI size) exceeds delta itself, and that criterion would
    settle on empty events (bound ~ -0.001) and report nothing about the
    real one. Either choice is valid (the certification half is independent);
    this one finds the event where delta is attained, so that delta_hat
    estimates the mechanism's delta at epsilon."""
    half_d, half_dp = len(samples_d) // 2, len(samples_d_prime) // 2
    select_d, certify_d = samples_d[:half_d], samples_d[half_d:]
    select_dp, certify_dp = samples_d_prime[:half_dp], samples_d_prime[half_dp:]
    family = EventFamily.from_selection(select_d, select_dp, None, is_float)
    counts_d, counts_dp = family.counts(select_d), family.counts(select_dp)
    bounds = []
    for direction, sel_a, sel_b, n_a, n_b, cert_a, cert_b in (
            ("D over D'", counts_d, counts_dp, len(select_d), len(select_dp), certify_d, certify_dp),
            ("D' over D", counts_dp, counts_d, len(select_dp), len(select_d), certify_dp, certify_d)):
        p_a, p_b, e = sel_a / n_a, sel_b / n_b, math.exp(epsilon)
        score = (p_a - e * p_b) - np.sqrt(p_a * (1 - p_a) / n_a + e * e * p_b * (1 - p_b) / n_b)
        best = int(np.argmax(score))
        hits_a = int(np.count_nonzero(family.contains(best, cert_a)))
        hits_b = int(np.count_nonzero(family.contains(best, cert_b)))
        certified = float(certified_delta(hits_a, len(cert_a), hits_b, len(cert_b), epsilon,
                                          alpha_per_test))
        empirical = hits_a / len(cert_a) - math.exp(epsilon) * hits_b / len(cert_b)
        bounds.append(DirectionalBound(direction, family.describe(best), certified,
                                       empirical, (hits_a, hits_b)))
    return bounds


# ---------------------------------------------------------------------------
# What to audit.
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Mechanism:
    """An aggregate call over column x (and, for the weighted dp_select, a
    weight column w) of a given SQL type."""
    label: str  # e.g. "dp_sum int4 [0,10]"
    function: str  # dp_count, dp_sum, dp_avg, dp_select, dp_median, dp_percentile
    column_type: str  # SQL type of x
    lower: Optional[float] = None  # bounds (of the weight, for dp_select)
    upper: Optional[float] = None
    output: str = "integer"  # integer, float8, float4, numeric (fetched as text)
    delta: Optional[float] = None  # the (epsilon, delta) Gaussian form
    fraction: Optional[float] = None  # dp_percentile
    candidates: Tuple = ()  # dp_select
    weighted: bool = False  # dp_select(x, w, lower, upper, ...): rows are (x, w)

    @property
    def value_kind(self) -> str:
        return "integer" if self.column_type in ("smallint", "integer", "bigint") else "float"

    @property
    def kind(self) -> str:
        """laplace, gaussian, selection or quantile."""
        if self.function == "dp_select":
            return "selection"
        if self.function in ("dp_median", "dp_percentile"):
            return "quantile"
        return "laplace" if self.delta is None else "gaussian"

    @property
    def columns(self) -> Tuple[Tuple[str, str], ...]:
        return (("x", self.column_type),) + ((("w", "double precision"),) if self.weighted else ())

    @property
    def faults(self) -> Tuple[str, ...]:
        """The test faults that act on this mechanism: skip_clamping is wired
        into the count/sum/mean states only (call_sites.cpp); dp_select and
        the quantiles clamp in their own transition functions."""
        return (HALVE, SKIP) if self.kind in ("laplace", "gaussian") else (HALVE,)

    def call(self, epsilon: float) -> str:
        eps = f"{epsilon!r}::float8"
        if self.delta is not None:
            eps += f", {self.delta!r}::float8"
        float_bound = lambda v: f"'{float(v)!r}'::float8"
        if self.function == "dp_select":
            candidates = ("ARRAY[" + ", ".join(repr(c) for c in self.candidates)
                          + f"]::{self.column_type}[]")
            if self.weighted:
                return (f"dp_select(x, w, {float_bound(self.lower)}, {float_bound(self.upper)}, "
                        f"{candidates}, {eps})")
            return f"dp_select(x, {candidates}, {eps})"
        if self.function == "dp_median":
            return f"dp_median(x, {float_bound(self.lower)}, {float_bound(self.upper)}, {eps})"
        if self.function == "dp_percentile":
            return (f"dp_percentile(x, {self.fraction!r}::float8, {float_bound(self.lower)}, "
                    f"{float_bound(self.upper)}, {eps})")
        if self.function == "dp_count":
            return f"dp_count(x, {eps})"
        bound = lambda v: (f"{int(v)}::{self.column_type}" if self.value_kind == "integer"
                           else f"'{v!r}'::{self.column_type}")
        return f"{self.function}(x, {bound(self.lower)}, {bound(self.upper)}, {eps})"

    def release_grid(self, epsilon: float) -> Optional[Tuple[int, int]]:
        """(grid exponent, sensitivity in steps) of Laplace dp_sum answers, else None."""
        if self.function != "dp_sum" or self.delta is not None:
            return None
        return sum_release_grid(self.value_kind, self.lower, self.upper, epsilon)

    def exact_float_grid(self, epsilon: float) -> Optional[int]:
        """Grid exponent when answers are doubles exactly on the grid."""
        grid = self.release_grid(epsilon)
        return grid[0] if grid is not None and self.output == "float8" else None

    # --- dp_select and quantiles: the exact law of the answer -----------------
    def answer_set(self) -> np.ndarray:
        """Every answer the mechanism can give, in increasing order."""
        if self.kind == "selection":
            return np.sort(np.asarray(self.candidates, dtype=float))
        return quantile_bin_points(self.lower, self.upper)

    def exact_law(self, rows: Tuple, epsilon: float) -> np.ndarray:
        """P[answer = answer_set()[i]] on the dataset `rows`, by the documented
        construction (README; selection.h, quantile.h), with epsilon rounded
        down to 24 bits as the server does (the further rounding of the rate
        to 64 bits changes it by < 2^-63, invisible here)."""
        eps = float(epsilon_rounded_down(epsilon))
        if self.kind == "quantile":
            counts = np.zeros(QUANTILE_BINS)
            for r in rows:
                counts[quantile_bin_of(r, self.lower, self.upper)] += 1
            fraction = 0.5 if self.function == "dp_median" else self.fraction
            # Utility sensitivity 1 row, not monotonic: exp(-epsilon gap / 2).
            return permute_and_flip_law(quantile_utilities(counts, fraction), eps / 2.0)
        order = np.argsort(np.asarray(self.candidates, dtype=float))
        candidates = [self.candidates[i] for i in order]
        if not self.weighted:
            # Counts: sensitivity 1, all scores move the same way: exp(-epsilon gap).
            scores = [sum(1 for r in rows if r == c) for c in candidates]
            return permute_and_flip_law(scores, eps)
        # Sums of weights clamped to [L, U]: sensitivity max(|L|, |U|). One row
        # moves only its own candidate's score, so the monotonic rate
        # epsilon / Delta holds whatever the sign of the weights.
        sensitivity = max(abs(self.lower), abs(self.upper))
        scores = [sum(min(max(w, self.lower), self.upper) for x, w in rows if x == c)
                  for c in candidates]
        return permute_and_flip_law(scores, eps / sensitivity)


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
            runs = []  # consecutive equal rows, shown as "row xN" when N > 2
            for row in rows:
                if runs and runs[-1][0] == row:
                    runs[-1][1] += 1
                else:
                    runs.append([row, 1])
            parts = []
            for row, n in runs:
                parts += [f"{row!r} x{n}"] if n > 2 else [repr(row)] * n
            return "{" + ", ".join(parts) + "}"
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
    # dp_select and quantiles: faults that the chi-square of the answers
    # against the exact law must catch, also where the privacy-loss audit
    # cannot (besides those in `detects`).
    law_detects: Tuple[str, ...] = ()

    @property
    def claimed_delta(self) -> Optional[float]:
        return self.mechanism.delta

    def exceeds_claim(self, certified: float) -> bool:
        """The test: a certified lower bound above the claim (epsilon for
        epsilon-DP mechanisms, delta at the claimed epsilon for Gaussian ones)."""
        if self.claimed_delta is not None:
            return certified > self.claimed_delta
        return certified > self.claimed_epsilon


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

# dp_select. Under add/remove-one-row neighbours a row adds to the score of
# at most one candidate (the one it equals), so only one score ever moves.
# Permute-and-flip is report-noisy-max with exponential noise (selection.h);
# with one score moving by Delta the loss is at most rate x Delta. Counts and
# one-sign weights use rate epsilon / Delta: the loss can reach epsilon, and
# does for the event {answer = X} when X's score moves (a near-tie, or a rare
# candidate, whose probability is proportional to its acceptance probability).
# Mixed-sign weights use rate epsilon / (2 Delta), whose loss then stays at
# epsilon / 2: halve_noise there gives exactly epsilon, which no audit can
# tell from a correct mechanism (INFO in the self-check).
SELECT_PAIR = Mechanism("dp_select int4 {1,2}", "dp_select", "integer", output="integer",
                        candidates=(1, 2))
SELECT_THREE = Mechanism("dp_select int4 {1,2,3}", "dp_select", "integer", output="integer",
                         candidates=(1, 2, 3))
SELECT_WEIGHTED = Mechanism("dp_select weighted [0,10]", "dp_select", "integer", 0.0, 10.0,
                            candidates=(1, 2), weighted=True)
SELECT_WEIGHTED_NEG = Mechanism("dp_select weighted [-10,0]", "dp_select", "integer", -10.0, 0.0,
                                candidates=(1, 2), weighted=True)
SELECT_WEIGHTED_MIXED = Mechanism("dp_select weighted [-10,2]", "dp_select", "integer", -10.0,
                                  2.0, candidates=(1, 2), weighted=True)
# Quantiles over [0, 1024]: bin i is [i, i + 1), its answer i + 0.5. The
# utility -max(0, C_i - f n, f n - C_{i+1}) changes by at most max(f, 1 - f)
# rows between neighbours (the documented sensitivity is 1), and permute-and-
# flip runs at exp(-epsilon gap / 2): the loss is at most max(f, 1 - f) x
# epsilon, e.g. epsilon / 2 for the median. The 0.75-quantile audit is the one
# on which halve_noise shows (loss up to 1.5 x the claim).
MEDIAN = Mechanism("dp_median [0,1024]", "dp_median", "double precision", 0.0, 1024.0, "float8")
PERCENTILE_75 = Mechanism("dp_percentile 0.75 [0,1024]", "dp_percentile", "double precision",
                          0.0, 1024.0, "float8", fraction=0.75)
# (epsilon, delta) = (1, 0.01): delta is large enough to measure (the audit
# raises dp_agg.max_delta to 0.01 for its own transactions), and halve_noise,
# which calibrates sigma for epsilon 2, gives delta(1) = 0.105 for a count.
GAUSS_DELTA = 0.01
GAUSS_COUNT = Mechanism("dp_count gauss", "dp_count", "integer", delta=GAUSS_DELTA)
GAUSS_SUM_INT = Mechanism("dp_sum gauss int4 [0,10]", "dp_sum", "integer", 0, 10,
                          delta=GAUSS_DELTA)
GAUSS_SUM_FLOAT8 = Mechanism("dp_sum gauss float8 [0,1]", "dp_sum", "double precision", 0.0, 1.0,
                             "float8", delta=GAUSS_DELTA)
GAUSS_AVG_FLOAT8 = Mechanism("dp_avg gauss float8 [0,1]", "dp_avg", "double precision", 0.0, 1.0,
                             "float8", delta=GAUSS_DELTA)
GAUSS_AVG_NARROW = Mechanism("dp_avg gauss float8 [0.99,1]", "dp_avg", "double precision", 0.99,
                             1.0, "float8", delta=GAUSS_DELTA)

PRIVACY_LOSS_AUDITS += [
    PrivacyLossAudit("select_tie", SELECT_PAIR, NeighbourPair((1,) * 5 + (2,) * 5, 2), 1.0,
                     "near-tie: counts (5,5) vs (5,6); {answer = 1} has loss exactly epsilon",
                     (HALVE,)),
    # Under halve_noise the loss doubles, but on P[answer = 1] ~ 0.002-0.006,
    # which takes ~100,000 certification draws per table (only --long has
    # them): INFO for the privacy-loss audit, required for the chi-square.
    PrivacyLossAudit("select_rare", SELECT_THREE, NeighbourPair((2,) * 3 + (3,), 1), 1.0,
                     "large gap: candidate 1 absent vs once, 3 below the leader",
                     law_detects=(HALVE,)),
    PrivacyLossAudit("select_weighted_clamp", SELECT_WEIGHTED,
                     NeighbourPair(((1, 10.0),) * 5 + ((2, 10.0),) * 5, (2, 1000.0)), 1.0,
                     "weights [0,10], tie vs one row at 100x the upper bound (clamped)",
                     (HALVE,)),
    PrivacyLossAudit("select_weighted_negative", SELECT_WEIGHTED_NEG,
                     NeighbourPair((), (1, -1000.0)), 1.0,
                     "weights [-10,0] (monotonic: all scores fall), one row at the lower bound",
                     (HALVE,)),
    PrivacyLossAudit("select_weighted_mixed", SELECT_WEIGHTED_MIXED,
                     NeighbourPair(((2, 2.0),) * 2, (1, -1000.0)), 1.0,
                     "weights [-10,2]: rate epsilon / Delta (one score moves), "
                     "Delta = max(|L|,|U|) = 10",
                     (HALVE,)),
    # The empty table's answer is uniform at any epsilon, and one row adds a
    # bump of 1.28 / 1024 (1.6 / 1024 under halve_noise): nothing to catch.
    PrivacyLossAudit("median_empty", MEDIAN, NeighbourPair((), 1e9), 1.0,
                     "empty vs one row far above the bounds (clamped)"),
    PrivacyLossAudit("median_concentrated", MEDIAN, NeighbourPair((512.5,) * 3, 1000.5), 1.0,
                     "data in one bin vs one more row elsewhere", law_detects=(HALVE,)),
    PrivacyLossAudit("percentile_extreme", PERCENTILE_75,
                     NeighbourPair((0.5, 512.5, 512.5), 1e9), 2.0,
                     "small dataset plus one row far above the bounds (clamped)", (HALVE,)),
    PrivacyLossAudit("gauss_count_empty", GAUSS_COUNT, NeighbourPair((), 1), 1.0,
                     "Gaussian count, empty vs one row", (HALVE,)),
    PrivacyLossAudit("gauss_sum_int_clamp", GAUSS_SUM_INT, NeighbourPair((), 10000), 1.0,
                     "Gaussian integer sum, one row at 1000x the upper bound", (HALVE, SKIP)),
    PrivacyLossAudit("gauss_sum_float8_clamp", GAUSS_SUM_FLOAT8, NeighbourPair((), 1000.0), 1.0,
                     "Gaussian float sum, one row at 1000x the upper bound", (HALVE, SKIP)),
    PrivacyLossAudit("gauss_avg_one_two", GAUSS_AVG_FLOAT8, NeighbourPair((0.0,), 1.0), 1.0,
                     "Gaussian mean of 1 vs 2 rows"),
    PrivacyLossAudit("gauss_avg_narrow_clamp", GAUSS_AVG_NARROW,
                     NeighbourPair((0.99,) * 10, 1000.0), 1.0,
                     "Gaussian mean, narrow bounds, one row at 1000x the upper bound", (SKIP,)),
]

# Exact-distribution audits: a fixed table whose true answer is known.
@dataclass(frozen=True)
class ExactNoiseAudit:
    key: str
    mechanism: Mechanism
    rows: Tuple
    epsilon: float

    @property
    def gaussian(self) -> bool:
        return self.mechanism.delta is not None

    @property
    def law(self) -> str:
        return "discrete Gaussian" if self.gaussian else "discrete Laplace"

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

    @property
    def gaussian_sensitivity(self) -> int:
        """D in grid steps of a Gaussian count or integer sum: 1 or
        max(|L|, |U|). The grid is one unit: sigma is far below 2^30 units
        (gaussian_mechanism.h kGaussianGridBitsBelowSigma)."""
        m = self.mechanism
        assert m.function == "dp_count" or m.value_kind == "integer"
        return 1 if m.function == "dp_count" else int(max(abs(m.lower), abs(m.upper)))

    @property
    def sigma2_in_steps(self) -> float:
        return gaussian_sigma2_for(self.epsilon, self.mechanism.delta, self.gaussian_sensitivity)

    def bins(self, samples: int) -> "NoiseBins":
        if not self.gaussian:
            return NoiseBins.for_scale(self.scale_in_steps, samples)
        return NoiseBins.for_pmf(*discrete_gaussian_pmf(self.sigma2_in_steps), samples)

    def describe_law(self) -> str:
        if self.gaussian:
            return f"discrete Gaussian, sigma {math.sqrt(self.sigma2_in_steps):.6g} steps"
        return f"discrete Laplace, scale {self.scale_in_steps:.6g} steps"


SUM_INT_SMALL = Mechanism("dp_sum int4 [-3,5]", "dp_sum", "integer", -3, 5)
EXACT_NOISE_AUDITS = [
    ExactNoiseAudit("count_noise", COUNT, (1,) * 10, 1.0),
    ExactNoiseAudit("sum_int_noise", SUM_INT_SMALL, (-10, 2, 4, 100), 1.0),
    ExactNoiseAudit("sum_float8_noise", SUM_FLOAT8, (0.25, 0.5, 7.0), 1.0),
    ExactNoiseAudit("gauss_count_noise", GAUSS_COUNT, (1,) * 10, 1.0),
    ExactNoiseAudit("gauss_sum_int_noise",
                    dataclasses.replace(SUM_INT_SMALL, label="dp_sum gauss int4 [-3,5]",
                                        delta=GAUSS_DELTA), (-10, 2, 4, 100), 1.0),
]

# The Gaussian calibration, checked through dp_count_margin(epsilon, delta,
# confidence): the smallest k with P[|X| <= k] >= confidence. For each k the
# suite asks at its own P[|X| <= k] -+ 1e-7 and must get k and k + 1: the
# server's sigma agrees with the independent calibration to ~1e-6.
GAUSS_CALIBRATIONS = ((1.0, 0.01), (1.0, 1e-5), (0.5, 1e-5), (0.25, 1e-6))


# DP partition selection, dp_agg.group_selection(epsilon, delta) in HAVING:
# every group of a GROUP BY is an independent release (released or not),
# and the statement is charged epsilon and delta once. Under add/remove-one-
# row neighbours only the changed row's group can differ: a group of c >= 2
# rows against c - 1 rows (the noisy count is epsilon-DP), or a group of one
# row against no group at all (released with probability <= delta). The
# audit draws groups of every size c = 1 .. T + 3 at once from one table.
@dataclass(frozen=True)
class GroupSelectionAudit:
    key: str
    epsilon: float
    delta: float
    purpose: str

    @property
    def label(self) -> str:
        return f"group_selection d={self.delta:g}"

    @property
    def threshold(self) -> int:
        return partition_selection_threshold(self.epsilon, self.delta)

    @property
    def counts(self) -> Tuple[int, ...]:
        """Group sizes of the exact-law check: 1 .. T + 3."""
        return tuple(range(1, self.threshold + 4))

    @property
    def pair_counts(self) -> Tuple[int, ...]:
        """c of the neighbouring pairs (c - 1 rows vs c rows): c = 2 (the
        smallest pair of existing groups) and c = T. {released} attains the
        loss epsilon exactly for c <= T, {not released} for c >= T."""
        return tuple(sorted({2, self.threshold}))

    def release_probability(self, count: int, threshold: Optional[int] = None) -> float:
        return partition_selection_release_probability(
            count, self.threshold if threshold is None else threshold, self.epsilon)

    @property
    def statistical_tests(self) -> int:
        """Exact law (one test: a union of binomial tests), two directions per
        pair, and the delta bound of the one-row group."""
        return 1 + 2 * len(self.pair_counts) + 1


GROUP_SELECTION_AUDITS = [
    GroupSelectionAudit("groups_eps1", 1.0, 0.1,
                        "T = 3; a one-row group is released with 0.0989, just below delta"),
    GroupSelectionAudit("groups_eps0.3", 0.3, 0.1,
                        "epsilon off the 24-bit grid, T = 7; one-row group 0.0950"),
]
GROUP_SELECTION_MAX_COUNT = max(max(a.counts) for a in GROUP_SELECTION_AUDITS)

# Broken partition selection for the self-check: (audit key, fault, epsilon
# factor, delta released with or None), audited against the claim.
# halve_noise doubles the effective epsilon in group_selection's state
# (call_sites.cpp PrepareGroupSelectionInitialState): noise and threshold
# planned for 2 epsilon (T stays 3 at epsilon 1, 7 -> 5 at epsilon 0.3, with
# a one-row group then released less often: only the loss shows it).
# epsilon x1.25 is a smaller gap; a larger delta gives a threshold one too
# low (T = 6 instead of 7 at epsilon 0.3: a one-row group is released with
# 0.128 instead of 0.095; T = 2 instead of 3 at epsilon 1: 0.269).
CI_GROUP_SELECTION_SELF_CHECKS = (("groups_eps1", HALVE, 1.0, None),
                                  ("groups_eps0.3", "none", 1.0, 0.15))
ALL_GROUP_SELECTION_SELF_CHECKS = CI_GROUP_SELECTION_SELF_CHECKS + (
    ("groups_eps0.3", HALVE, 1.0, None), ("groups_eps1", "none", 1.25, None),
    ("groups_eps1", "none", 1.0, 0.3))


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
    # Quantile releases cost ~50-100 us each (1024 acceptance tests), about
    # ten times a count's: their audits draw this many per table instead.
    quantile_samples: int = 40_000
    # dp_agg.group_selection: releases per group size (main audits), the
    # self-check breaks (GROUP_SELECTION_SELF_CHECKS entries) and their size.
    group_selection_samples: int = 20_000
    group_selection_self_checks: Tuple[Tuple[str, str, float, Optional[float]], ...] = ()
    group_selection_self_check_samples: int = 20_000

    def samples_for(self, audit: "PrivacyLossAudit") -> int:
        if audit.mechanism.kind == "quantile":
            return min(self.quantile_samples, self.samples_per_dataset)
        return self.samples_per_dataset


CI_SAMPLES = 100_000
CI_QUANTILE_SAMPLES = 40_000
# Per group size; a release of group_selection costs ~6 us (the noise). The
# self-checks draw twice as many: halve_noise and the threshold one too low
# then fail by about 8 standard deviations of the certified bound (REPORT.md).
CI_GROUP_SELECTION_SAMPLES = 20_000
CI_GROUP_SELECTION_SELF_CHECK_SAMPLES = 40_000
# Released with epsilon 1.25 x the claim: the noise scale divided by 1.25, a
# gap four times smaller than halve_noise's (REPORT.md: samples it needs).
CI_SELF_CHECKS = (("count_empty", HALVE, 1.0), ("count_empty", "none", 1.25),
                  ("sum_int_clamp", SKIP, 1.0), ("sum_float8_clamp", SKIP, 1.0),
                  ("sum_float8_clamp", "none", 1.25), ("avg_narrow_clamp", SKIP, 1.0),
                  ("select_tie", HALVE, 1.0), ("select_tie", "none", 1.25),
                  ("percentile_extreme", HALVE, 1.0), ("gauss_count_empty", HALVE, 1.0),
                  ("gauss_sum_int_clamp", SKIP, 1.0))
CI_EXACT_SELF_CHECKS = (("count_noise", HALVE), ("gauss_count_noise", HALVE))
ALL_EXACT_SELF_CHECKS = tuple((a.key, HALVE) for a in EXACT_NOISE_AUDITS)
# Releases at epsilon x factor that a selection audit must catch: those whose
# loss reaches the claim (one-sign scores, certifiable event probabilities).
SELECTION_FACTOR_AUDITS = ("select_tie", "select_weighted_clamp", "select_weighted_negative")
# Gaussian mechanisms released with sigma calibrated for 1.5 x the claimed
# epsilon: delta(1) = 0.044 instead of 0.01 for a count, which takes about
# 100,000 certification draws per table to show (REPORT.md).
GAUSS_FACTOR_AUDITS = ("gauss_count_empty",)


def ci_plan() -> RunPlan:
    return RunPlan("ci", CI_SAMPLES, CI_SAMPLES, CI_SELF_CHECKS, CI_EXACT_SELF_CHECKS,
                   quantile_samples=CI_QUANTILE_SAMPLES,
                   group_selection_samples=CI_GROUP_SELECTION_SAMPLES,
                   group_selection_self_checks=CI_GROUP_SELECTION_SELF_CHECKS,
                   group_selection_self_check_samples=CI_GROUP_SELECTION_SELF_CHECK_SAMPLES)


def fault_self_checks(epsilon_factors: Sequence[float] = (),
                      gaussian_factors: Sequence[float] = ()) -> Tuple:
    """Every audit under every fault it must catch; every Laplace count and
    sum audit that halve_noise must fail, and the selection audits whose loss
    reaches epsilon, released at epsilon x factor against a claim of 1 (the
    case the sample sizes in REPORT.md are computed for); the Gaussian ones
    at the gaussian_factors."""
    checks = [(a.key, fault, 1.0) for a in PRIVACY_LOSS_AUDITS for fault in a.detects]
    checks += [(a.key, "none", factor) for factor in epsilon_factors
               for a in PRIVACY_LOSS_AUDITS if HALVE in a.detects and a.claimed_epsilon == 1.0
               and ((a.mechanism.kind == "laplace" and a.mechanism.function != "dp_avg")
                    or a.key in SELECTION_FACTOR_AUDITS)]
    checks += [(key, "none", factor) for factor in gaussian_factors for key in GAUSS_FACTOR_AUDITS]
    return tuple(checks)


def long_plan() -> RunPlan:
    return RunPlan("long", 500_000, 500_000, fault_self_checks((1.25, 1.1), (1.5,)),
                   ALL_EXACT_SELF_CHECKS, informational_faults=True,
                   ci_self_check_replicates=10, quantile_samples=150_000,
                   group_selection_samples=100_000,
                   group_selection_self_checks=ALL_GROUP_SELECTION_SELF_CHECKS,
                   group_selection_self_check_samples=100_000)


def self_check_plan(samples: int) -> RunPlan:
    return RunPlan("self-check", samples, samples, fault_self_checks((1.25,)),
                   ALL_EXACT_SELF_CHECKS, informational_faults=True,
                   quantile_samples=min(samples, CI_QUANTILE_SAMPLES),
                   group_selection_self_checks=ALL_GROUP_SELECTION_SELF_CHECKS,
                   group_selection_self_check_samples=100_000)


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

    The delta budget is below 1 (a CHECK on dp_agg.role_budget), and every
    Gaussian statement costs its delta (0.01), a partition-selection one
    0.1 to 0.3, so the audit resets its own spent amounts
    (dp_agg.reset_spent, on a connection of its own, in autocommit) whenever
    the delta charged since the last reset would pass DELTA_RESET_AT. The
    statements in flight at a reset are counted as charged after it, and a
    reset waits until they leave room for the next statement, so the delta
    charged between resets never passes DELTA_RESET_AT, whatever `jobs` is.
    """

    # Groups per table: each statement releases at most this many answers.
    GROUPS_PER_TABLE = 50_000
    # A quantile state is 8 KiB: 10,000 groups keep one statement's hash table
    # (80 MB) within work_mem.
    QUANTILE_GROUPS_PER_STATEMENT = 10_000
    # Far more than a run spends: a statement costs its epsilon, not per group.
    AUDIT_BUDGET = 1_000_000
    AUDIT_DELTA_BUDGET = 0.99
    DELTA_RESET_AT = 0.5
    # dp_agg.max_delta for the audit's transactions: large enough to measure
    # (raised to the statement's own delta for partition selection).
    MAX_DELTA = GAUSS_DELTA
    # Groups of each size in the partition-selection table: one statement
    # releases (or not) this many groups of each size.
    GROUP_SELECTION_GROUPS = 10_000

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
                    cur.execute("SELECT dp_agg.set_budget(session_user::regrole, %s, %s)",
                                (float(self.AUDIT_BUDGET), self.AUDIT_DELTA_BUDGET))
                    cur.execute("CREATE SCHEMA audit")
                    cur.execute("SELECT dp_count(1, 1.0)")
                except psycopg2.Error as error:
                    raise AuditSetupError(f"dp_agg does not work here "
                                          f"({(error.pgerror or str(error)).strip()}); "
                                          "is it in shared_preload_libraries?") from error
            for _ in range(jobs):
                self.connections.put(psycopg2.connect(dbname=database))
            self.budget_connection = psycopg2.connect(dbname=database)
            self.budget_connection.autocommit = True
        except BaseException:
            self.close()
            raise
        self.jobs = jobs
        self.budget_lock = threading.Condition()
        self.delta_since_reset = 0.0
        self.delta_in_flight = 0.0
        self.tables: Dict[Tuple, str] = {}
        self.releases_drawn = 0

    def table_for(self, columns: Tuple[Tuple[str, str], ...], rows: Tuple) -> str:
        """A table holding the dataset `rows` once in every group g: each group
        of `GROUP BY g` is a separate release (README), so one statement draws
        one independent answer per group. Every group also holds one row of
        NULLs, which every aggregate skips (so an empty dataset still has a
        group). `columns` is ((name, SQL type), ...); with more than one
        column, each row is a tuple."""
        key = (columns, rows)
        if key not in self.tables:
            name = f"audit.dataset_{len(self.tables)}"
            tuple_rows = rows if len(columns) > 1 else tuple((r,) for r in rows)
            placeholders = "(" + ", ".join(f"%s::{t}" for _, t in columns) + ")"
            values = ", ".join(["(" + ", ".join(["NULL"] * len(columns)) + ")"]
                               + [placeholders] * len(rows))
            names = ", ".join(n for n, _ in columns)
            selected = ", ".join(f"v.{n}::{t} AS {n}" for n, t in columns)
            with self.main.cursor() as cur:
                cur.execute(f"CREATE UNLOGGED TABLE {name} AS "
                            f"SELECT g, {selected} "
                            f"FROM generate_series(1, {self.GROUPS_PER_TABLE}) AS g, "
                            f"(VALUES {values}) AS v({names})",
                            [repr(v) for r in tuple_rows for v in r])
                cur.execute(f"ANALYZE {name}")
            self.tables[key] = name
        return self.tables[key]

    def _pay_delta(self, delta: float):
        """Keeps the delta spent below the budget: see the class comment."""
        with self.budget_lock:
            if self.delta_since_reset + delta > self.DELTA_RESET_AT:
                # Statements in flight may be charged after the reset.
                self.budget_lock.wait_for(
                    lambda: self.delta_in_flight + delta <= self.DELTA_RESET_AT)
                with self.budget_connection.cursor() as cur:
                    cur.execute("SELECT dp_agg.reset_spent(session_user::regrole)")
                self.delta_since_reset = self.delta_in_flight
            self.delta_since_reset += delta
            self.delta_in_flight += delta

    def _settle_delta(self, delta: float):
        with self.budget_lock:
            self.delta_in_flight -= delta
            self.budget_lock.notify_all()

    def _execute(self, query: str, fault: str, delta: Optional[float]) -> List[Tuple]:
        """Runs one private statement on a connection of the pool: its rows."""
        connection = self.connections.get()
        try:
            if delta is not None:
                self._pay_delta(delta)
            try:
                with connection, connection.cursor() as cur:
                    # Explicit per transaction: the CSPRNG (never a test seed) and the fault.
                    cur.execute("SET LOCAL dp_agg.insecure_test_seed = 0")
                    cur.execute("SET LOCAL dp_agg.insecure_test_fault = %s", (fault,))
                    cur.execute("SET LOCAL dp_agg.max_epsilon = 10")  # the default
                    cur.execute("SET LOCAL dp_agg.max_delta = %s",
                                (max(self.MAX_DELTA, delta or 0.0),))
                    cur.execute("SET LOCAL extra_float_digits = 3")  # exact round trip
                    cur.execute("SET LOCAL work_mem = '128MB'")  # one hash table for all groups
                    cur.execute("SET LOCAL max_parallel_workers_per_gather = 0")  # jobs = cores
                    cur.execute(query)
                    return cur.fetchall()
            finally:
                if delta is not None:
                    self._settle_delta(delta)
        finally:
            self.connections.put(connection)

    def _draw_chunk(self, query: str, fault: str, exact_text: bool, delta: Optional[float]):
        column = [row[0] for row in self._execute(query, fault, delta)]
        values = np.array([float(v) for v in column]) if exact_text else np.asarray(column, float)
        return values, (column if exact_text else None)

    def releases(self, mechanism: Mechanism, rows: Tuple, epsilon: float, count: int,
                 fault: str, executor) -> "PendingReleases":
        """`count` independent releases on the dataset `rows`, drawn in the
        background by statements of the form
            SELECT dp_...(x, ...) FROM dataset WHERE g <= n GROUP BY g
        (every group draws fresh noise, and so does every statement)."""
        table = self.table_for(mechanism.columns, rows)
        # float4 answers are fetched as float8 (exact), numeric ones as text (exact).
        cast = {"numeric": "::text", "float4": "::float8"}.get(mechanism.output, "")
        exact_text = mechanism.output == "numeric" and mechanism.function == "dp_sum"
        chunk = (self.QUANTILE_GROUPS_PER_STATEMENT if mechanism.kind == "quantile"
                 else self.GROUPS_PER_TABLE)
        sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
        futures = [executor.submit(
            self._draw_chunk,
            f"SELECT {mechanism.call(epsilon)}{cast} FROM {table} WHERE g <= {size} GROUP BY g",
            fault, exact_text, mechanism.delta) for size in sizes]
        self.releases_drawn += count
        return PendingReleases(futures)

    def group_size_table(self) -> str:
        """A table of groups (c, g): GROUP_SELECTION_GROUPS groups g of each
        size c = 1 .. GROUP_SELECTION_MAX_COUNT, a group of size c holding
        exactly c rows."""
        key = ("group sizes", GROUP_SELECTION_MAX_COUNT)
        if key not in self.tables:
            name = "audit.group_sizes"
            with self.main.cursor() as cur:
                cur.execute(f"CREATE UNLOGGED TABLE {name} AS "
                            f"SELECT c, g FROM generate_series(1, {GROUP_SELECTION_MAX_COUNT}) "
                            f"AS c, generate_series(1, {self.GROUP_SELECTION_GROUPS}) AS g, "
                            f"generate_series(1, {GROUP_SELECTION_MAX_COUNT}) AS r WHERE r <= c")
                cur.execute(f"ANALYZE {name}")
            self.tables[key] = name
        return self.tables[key]

    def group_selections(self, epsilon: float, delta: float, largest: int, count: int,
                         fault: str, executor) -> "PendingGroupSelections":
        """`count` independent releases of group_selection(epsilon, delta) for
        each group size 1 .. largest, by statements of the form
            SELECT c, g FROM group_sizes WHERE c <= largest AND g <= n
            GROUP BY c, g HAVING dp_agg.group_selection(epsilon, delta)
        (every group draws fresh noise; the rows are the released groups)."""
        table = self.group_size_table()
        assert largest <= GROUP_SELECTION_MAX_COUNT
        chunk = self.GROUP_SELECTION_GROUPS
        sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
        futures = [executor.submit(
            self._execute,
            f"SELECT c, g FROM {table} WHERE c <= {largest} AND g <= {size} GROUP BY c, g "
            f"HAVING dp_agg.group_selection({epsilon!r}::float8, {delta!r}::float8)",
            fault, delta) for size in sizes]
        self.releases_drawn += count * largest
        return PendingGroupSelections(futures, sizes, largest)

    def close(self):
        for connection in ([self.main, getattr(self, "budget_connection", None)]
                           + list(self.connections.queue)):
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


class PendingGroupSelections:
    """Partition-selection releases being drawn; result() waits for them and
    returns a (largest, count) array: 1.0 where the group of that size (row
    c - 1) was released in that draw, else 0.0."""

    def __init__(self, futures, sizes: List[int], largest: int):
        self.futures, self.sizes, self.largest = futures, sizes, largest

    def result(self) -> np.ndarray:
        parts = []
        for future, size in zip(self.futures, self.sizes):
            released = np.zeros((self.largest, size))
            rows = np.array(future.result(), dtype=np.int64).reshape(-1, 2)
            released[rows[:, 0] - 1, rows[:, 1] - 1] = 1.0
            parts.append(released)
        return np.concatenate(parts, axis=1)


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
    # privacy-loss, delta, float-grid, avg-range, answer-set, low-bits, exact-noise,
    # exact-selection, gauss-calibration, self-check
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


def pooled_groups(probabilities: np.ndarray, samples: int,
                  minimum_expected: float = 1000.0) -> np.ndarray:
    """Group index of each outcome (in the given order): consecutive outcomes
    are pooled until the group's expected count is at least minimum_expected
    (the chi-square tests run at a level near 1e-8, far in the tail, where
    Pearson's statistic needs large counts to follow its law); a remainder is
    pooled with the last group."""
    groups = np.zeros(len(probabilities), dtype=np.int64)
    group, mass = 0, 0.0
    for i, p in enumerate(probabilities):
        groups[i] = group
        mass += p
        if mass * samples >= minimum_expected:
            group, mass = group + 1, 0.0
    if mass > 0 and group > 0:  # the last group is short: pool it with the previous one
        groups[groups == group] = group - 1
    return groups


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

    @classmethod
    def for_pmf(cls, k: np.ndarray, pmf: np.ndarray, samples: int) -> "NoiseBins":
        """Bins of consecutive integers, each with an expected count of at
        least max(1000, samples / 40), for any integer pmf (the Gaussian's)."""
        groups = pooled_groups(pmf, samples, max(1000.0, samples / 40.0))
        last = np.nonzero(np.diff(groups))[0]  # the last k of every group but the last
        edges = k[last].astype(float) + 0.5
        return cls(edges, np.bincount(groups, weights=pmf))

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
        return privacy_loss_tests + exact_tests + low_bit_tests + law_tests + group_tests

    def record(self, outcome: Outcome):
        self.outcomes.append(outcome)
        print(outcome.line(), flush=True)

    def run(self):
        if self.run_main_audits:
            self.check_gaussian_calibration()
            self.run_privacy_loss_audits()
            self.run_exact_noise_audits()
            self.run_group_selection_audits()
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
                            len(values), outside == 0, claimed_delta=audit.claimed_delta))

    def check_answer_set(self, audit, d: "Releases", d_prime: "Releases"):
        """README: dp_select's answer "is always a candidate", a quantile's is
        the midpoint of the chosen bin, always in [lower, upper]
        (deterministic)."""
        values = np.concatenate([d.values, d_prime.values])
        allowed = audit.mechanism.answer_set()
        position = np.clip(np.searchsorted(allowed, values), 0, len(allowed) - 1)
        outside = int(np.count_nonzero(allowed[position] != values))
        what = "candidates" if audit.mechanism.kind == "selection" else "bin midpoints"
        self.record(Outcome("answer-set", audit.mechanism.label, audit.pair.label,
                            audit.claimed_epsilon, f"{outside} answers not {what}",
                            len(values), outside == 0,
                            f"[{len(np.unique(values))} distinct answers of {len(allowed)}]"))

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
        position = np.clip(np.searchsorted(allowed, answers.values), 0, len(allowed) - 1)
        valid = allowed[position] == answers.values
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
        seen = float(np.count_nonzero(answers.values == allowed[top])) / max(n, 1)
        outcome = Outcome("exact-selection", label, f"{side} = {self.show_rows(rows)}",
                          audit.claimed_epsilon, f"chi2 p = {p_value:.3g}", n,
                          p_value >= self.alpha_per_test,
                          f"[permute-and-flip law, {len(expected)} groups, chi2 {statistic:.1f}; "
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
        `released`) against its exact probability P[Z >= T - c] under the
        claimed parameters: an exact two-sided binomial test per size, each
        at level alpha / (number of sizes), so that the union is one test at
        alpha. Also the threshold the answers imply: the T' of largest
        likelihood, which must be the T computed here from the definition
        (deterministic in practice: neighbouring thresholds move some release
        probability by more than 0.03, dozens of standard errors)."""
        sizes = range(1, released.shape[0] + 1)
        n = released.shape[1]
        hits = released.sum(axis=1)
        exact = np.array([audit.release_probability(c) for c in sizes])
        p_values = [stats.binomtest(int(k), n, p).pvalue for k, p in zip(hits, exact)]
        adjusted = min(1.0, min(p_values) * len(exact))
        pearson = float(np.sum((hits - n * exact) ** 2 / (n * exact * (1.0 - exact))))

        def log_likelihood(threshold):
            p = np.clip([audit.release_probability(c, threshold) for c in sizes],
                        1e-300, 1.0 - 1e-16)
            return float(np.sum(hits * np.log(p) + (n - hits) * np.log1p(-p)))

        candidates = range(1, max(released.shape[0], audit.threshold) + 5)
        implied = max(candidates, key=log_likelihood)
        label = audit.label + (f" [{broken_by.split(' (')[0]}]" if broken_by != "none" else "")
        exact_threshold = partition_selection_threshold(audit.epsilon, audit.delta,
                                                        decimal.Decimal(0))
        note = ("" if exact_threshold == audit.threshold
                else f" (margin: {exact_threshold} without it)")
        outcome = Outcome(
            "exact-groups", label, f"sizes 1..{len(exact)}, T = {audit.threshold}",
            audit.epsilon, f"binomial p x{len(exact)} = {adjusted:.3g}", n * len(exact),
            adjusted >= self.alpha_per_test and implied == audit.threshold,
            f"[T = {audit.threshold}{note}, implied by the answers {implied}; "
            "released / exact: " + ", ".join(f"{c}: {k / n:.4f}/{p:.4f}"
                                              for c, k, p in zip(sizes, hits, exact))
            + f"; chi2 {pearson:.1f} on {len(exact)} df]",
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
        one more row: the suite's privacy-loss certification on the 0/1
        answers (events {released}, {not released}, chosen on the selection
        half, certified on the other), against the claimed epsilon."""
        d, d_prime = released[count - 2], released[count - 1]
        bounds = certify_privacy_loss(d, d_prime, self.alpha_per_test, None, False)
        worst = max(bounds, key=lambda b: b.certified)
        p, p_prime = audit.release_probability(count - 1), audit.release_probability(count)
        exact_loss = max(math.log(p_prime / p), math.log((1.0 - p) / (1.0 - p_prime)))
        event = self.GROUP_EVENTS.get(worst.event, worst.event)
        return Outcome(
            "privacy-loss", audit.label, f"group of {count - 1} vs {count} rows", audit.epsilon,
            f"certified lower bound {format_bound(worst.certified)}", len(d) + len(d_prime),
            not worst.certified > audit.epsilon,
            f"[{event}, {worst.direction}; empirical {worst.empirical:.3f}; "
            f"exact loss {exact_loss:.3f}]", certified=worst.certified,
            empirical=worst.empirical)

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

    @staticmethod
    def group_break_law(audit: GroupSelectionAudit, fault: str, factor: float,
                        delta: Optional[float]) -> Tuple[float, int]:
        """(effective epsilon, threshold) of a broken release: halve_noise
        doubles the rounded epsilon (exact), so it equals epsilon x 2."""
        epsilon = audit.epsilon * factor * (2.0 if fault == HALVE else 1.0)
        return epsilon, partition_selection_threshold(epsilon,
                                                      audit.delta if delta is None else delta)

    @classmethod
    def describe_group_break(cls, audit: GroupSelectionAudit, fault: str, factor: float,
                             delta: Optional[float]) -> str:
        _, threshold = cls.group_break_law(audit, fault, factor, delta)
        parts = (([fault] if fault != "none" else []) + (
            [f"epsilon x{factor:g}"] if factor != 1.0 else []) + (
            [f"delta {delta:g}"] if delta is not None else []))
        return " ".join(parts) + f" (T = {threshold})"

    def group_break_outcomes(self, audit: GroupSelectionAudit, fault: str, factor: float,
                             delta: Optional[float], released: np.ndarray) -> List[Outcome]:
        """Partition selection released under a fault, with epsilon x factor
        and/or another delta, audited against the claim: where the broken
        law's loss between 1 and 2 rows exceeds the claimed epsilon the
        privacy-loss audit must FAIL; where it releases a one-row group with
        probability above the claimed delta the delta audit must FAIL; the
        exact-law test against the claimed law must FAIL in every case."""
        name = self.describe_group_break(audit, fault, factor, delta)
        epsilon, threshold = self.group_break_law(audit, fault, factor, delta)
        p1, p2 = (partition_selection_release_probability(c, threshold, epsilon) for c in (1, 2))
        tests = []
        if max(math.log(p2 / p1), math.log((1.0 - p1) / (1.0 - p2))) > audit.epsilon:
            tests.append(self.group_pair_outcome(audit, released[:2], 2))
        if p1 > audit.delta:
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
            audit.epsilon * factor, audit.delta if delta is None else delta, 2, samples, fault,
            self.executor)

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


LOW_BITS_AUDIT = "sum_float8_low_bits"
# Audits whose answers go into privacy_loss.png.
PLOTTED_AUDITS = ("count_empty", "sum_int_clamp", "sum_float8_clamp", "avg_empty",
                  "avg_one_two", "avg_narrow_clamp", "select_tie", "percentile_extreme",
                  "gauss_count_empty")
PLOTTED_SELF_CHECKS = (("count_empty", HALVE, 1.0), ("count_empty", "none", 1.25),
                       ("sum_int_clamp", SKIP, 1.0), ("sum_float8_clamp", HALVE, 1.0),
                       ("sum_float8_clamp", "none", 1.25), ("avg_narrow_clamp", SKIP, 1.0),
                       ("select_tie", HALVE, 1.0), ("select_tie", "none", 1.25),
                       ("percentile_extreme", HALVE, 1.0), ("gauss_count_empty", HALVE, 1.0),
                       ("gauss_count_empty", "none", 1.5))


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
    # dp_select, counts (5,5) vs (5,6): S = {answer = 1}, P_D(S) = 1/2 and
    # P_D'(S) = e^-actual / 2 (1 first in the random order, then accepted).
    rows.append(("dp_select {1 x5, 2 x5} vs +2, S = {answer = 1}", 0.5, 0.5 * math.exp(-actual)))
    # group_selection(epsilon, 0.1), a group of 1 vs 2 rows: S = {released},
    # P = P[Z >= T - 2] vs P[Z >= T - 1], ratio e^actual (T = 3 at these epsilons).
    threshold = partition_selection_threshold(actual, 0.1)
    rows.append((f"group_selection d=0.1, group of 1 vs 2 rows (T = {threshold}), S = {{released}}",
                 partition_selection_release_probability(2, threshold, actual),
                 partition_selection_release_probability(1, threshold, actual)))
    return [(label, p_a, p_b, samples_to_certify(p_a, p_b, claimed, alpha))
            for label, p_a, p_b in rows]


def samples_to_certify_delta(p_a: float, p_b: float, epsilon: float, delta: float,
                             alpha: float, power: float = 0.999) -> int:
    """As samples_to_certify, for the delta audits: the smallest
    certification-half size with a certified delta above the claim with
    probability about `power`."""
    if not p_a - math.exp(epsilon) * p_b > delta:
        raise ValueError("this event cannot show a delta above the claim")
    z = stats.norm.isf((1.0 - power) / 2.0)

    def certified_at(n):
        hits_a = math.floor(n * p_a - z * math.sqrt(n * p_a * (1 - p_a)))
        hits_b = math.ceil(n * p_b + z * math.sqrt(n * p_b * (1 - p_b)))
        return float(certified_delta(max(hits_a, 0), n, min(hits_b, n), n, epsilon, alpha))

    high = 16
    while certified_at(high) <= delta:
        high *= 2
    low = high // 2
    while high - low > max(1, low // 200):
        middle = (low + high) // 2
        if certified_at(middle) > delta:
            high = middle
        else:
            low = middle
    return high


def gaussian_gap_requirements(alpha: float) -> List[Tuple[str, float, str, float, float, int]]:
    """The Gaussian count (epsilon 1, delta 0.01 claimed, empty vs one row)
    released with sigma calibrated for epsilon x factor: its true delta at
    epsilon 1 (hockey-stick divergence of the two exact pmfs) and the
    certification samples per table its best tail event needs."""
    rows = []
    for factor, label in ((2.0, "halve_noise (sigma for epsilon 2)"),
                          (1.5, "sigma for epsilon 1.5"), (1.25, "sigma for epsilon 1.25")):
        k, pmf = discrete_gaussian_pmf(gaussian_sigma2_for(factor, GAUSS_DELTA, 1))
        shifted = np.concatenate([[0.0], pmf[:-1]])  # D' = D + 1: the pmf moved up by one
        true_delta = hockey_stick_delta(shifted, pmf, 1.0)
        best = None
        for t in range(-3, 8):
            p_a, p_b = float(shifted[k >= t].sum()), float(pmf[k >= t].sum())
            if p_a - math.e * p_b > GAUSS_DELTA:
                n = samples_to_certify_delta(p_a, p_b, 1.0, GAUSS_DELTA, alpha)
                if best is None or n < best[-1]:
                    best = (f"Y >= {t}", p_a, p_b, n)
        rows.append((label, true_delta) + best)
    return rows


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


def tail_deltas(values_d: np.ndarray, values_dp: np.ndarray, epsilon: float):
    """Empirical delta_hat of the tail events on every integer threshold t:
    P_D'(Y >= t) - e^eps P_D(Y >= t) and P_D(Y <= t) - e^eps P_D'(Y <= t)."""
    pooled = np.concatenate([values_d, values_dp])
    thresholds = np.arange(np.floor(np.quantile(pooled, 0.0005)),
                           np.ceil(np.quantile(pooled, 0.9995)) + 1)
    sd, sdp = np.sort(values_d), np.sort(values_dp)
    e = math.exp(epsilon)
    upper = ((len(sdp) - np.searchsorted(sdp, thresholds, side="left")) / len(sdp)
             - e * (len(sd) - np.searchsorted(sd, thresholds, side="left")) / len(sd))
    lower = (np.searchsorted(sd, thresholds, side="right") / len(sd)
             - e * np.searchsorted(sdp, thresholds, side="right") / len(sdp))
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
              ("avg_narrow_clamp", ["skip_clamping"]),
              ("select_tie", ["halve_noise", "epsilon x1.25"]),
              ("percentile_extreme", ["halve_noise"]),
              ("gauss_count_empty", ["halve_noise", "epsilon x1.5"])]
    figure, axes = plt.subplots(3, 3, figsize=(16, 14))

    def certified_of(audit):
        found = [o.certified for o in auditor.outcomes
                 if o.section in ("privacy-loss", "delta") and o.mechanism == audit.mechanism.label
                 and o.pair == audit.pair.label]
        return found[0] if found else None

    for axis, (key, broken_versions) in zip(axes.flat, panels):
        audit = audits[key]
        eps = audit.claimed_epsilon
        certified = certified_of(audit)
        title = f"{audit.mechanism.label}, D' = D + one row\nD = {audit.pair.label}"
        versions = [(key, "correct", "tab:blue")] + [
            (f"{key}:{b}", b, c) for b, c in zip(broken_versions, ["tab:red", "tab:purple"])]
        if audit.mechanism.kind == "selection":
            # Bars: ln P_D(answer = c) / P_D'(answer = c) for each candidate c.
            candidates = audit.mechanism.answer_set()
            width = 0.8 / len(versions)
            for i, (curve_key, name, colour) in enumerate(versions):
                if curve_key not in auditor.curves:
                    continue
                d, dp = auditor.curves[curve_key]
                with np.errstate(divide="ignore"):
                    ratios = [math.log(np.mean(d == c) / np.mean(dp == c)) for c in candidates]
                axis.bar(np.arange(len(candidates)) + i * width, ratios, width,
                         color=colour, label=name)
            axis.set_xticks(np.arange(len(candidates)) + 0.4 - width / 2)
            axis.set_xticklabels([f"answer = {c:g}" for c in candidates])
            axis.set_ylabel("empirical ln P_D(S) / P_D'(S)")
            axis.axhline(eps, color="black", ls="--", lw=1.2, label=f"claimed epsilon = {eps:g}")
            axis.set_ylim(-2.5, max(2.5 * eps, 2.6))
            if certified is not None:
                title += f"   (certified bound {format_bound(certified)})"
        elif audit.claimed_delta is not None:
            for curve_key, name, colour in versions:
                if curve_key in auditor.curves:
                    t, upper, lower = tail_deltas(*auditor.curves[curve_key], eps)
                    prefix = "" if name == "correct" else f"{name}: "
                    axis.plot(t, upper, color=colour, lw=2 if name == "correct" else 1.3,
                              label=f"{prefix}P_D'(Y>=t) - e^eps P_D(Y>=t)")
                    axis.plot(t, lower, color=colour, lw=2 if name == "correct" else 1.3, ls="--",
                              label=f"{prefix}P_D(Y<=t) - e^eps P_D'(Y<=t)")
            axis.axhline(audit.claimed_delta, color="black", ls="--", lw=1.2,
                         label=f"claimed delta = {audit.claimed_delta:g} at epsilon {eps:g}")
            axis.set_ylabel("empirical delta_hat of the event")
            axis.set_ylim(-0.05, 0.15)
            if certified is not None:
                title += f"   (certified delta {format_delta(certified)})"
        else:
            for curve_key, name, colour in versions:
                if curve_key not in auditor.curves:
                    continue
                t, upper, lower = tail_log_ratios(*auditor.curves[curve_key])
                if name == "correct":
                    axis.plot(t, upper, color="tab:blue", lw=2, label="ln P_D'(Y>=t) / P_D(Y>=t)")
                    axis.plot(t, lower, color="tab:green", lw=2,
                              label="ln P_D(Y<=t) / P_D'(Y<=t)")
                else:
                    axis.plot(t, upper, color=colour, lw=1.3, label=f"{name}: Y>=t")
                    axis.plot(t, lower, color=colour, lw=1.3, ls="--", label=f"{name}: Y<=t")
            axis.axhline(eps, color="black", ls="--", lw=1.2, label=f"claimed epsilon = {eps:g}")
            axis.set_ylabel("empirical privacy loss")
            axis.set_ylim(-0.5, max(2.5 * eps, 2.6))
            if certified is not None:
                title += f"   (certified bound {format_bound(certified)})"
        axis.axhline(0, color="grey", lw=0.6)
        axis.set_title(title, fontsize=10)
        if audit.mechanism.kind != "selection":
            axis.set_xlabel("threshold t on the released answer Y")
        if key == "sum_int_clamp":
            axis.set_xlim(-40, 50)
        if key == "sum_float8_clamp":
            axis.set_xlim(-5, 6)
        if key == "gauss_count_empty":
            axis.set_xlim(-7, 8)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7.5, loc="best", framealpha=0.9)
    samples = len(auditor.curves["count_empty"][0]) if "count_empty" in auditor.curves else 0
    quantile = (len(auditor.curves["percentile_extreme"][0])
                if "percentile_extreme" in auditor.curves else 0)
    figure.suptitle("dp_agg privacy audit: empirical privacy loss between neighbouring tables "
                    "(blue, green) stays below the claimed epsilon (dashed), and for the Gaussian "
                    "count delta_hat below the claimed delta;\n"
                    "deliberately broken mechanisms (red, purple) cross it. "
                    f"{samples:,} releases per table and curve ({quantile:,} for the percentile); "
                    f"thresholds with fewer than {max(100, samples // 1000)} hits on either side "
                    "are not drawn.", fontsize=11)
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
        if audit.gaussian:
            rows += gaussian_noise_power_rows(audit, alpha, samples)
            continue
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


def gaussian_noise_power_rows(audit: ExactNoiseAudit, alpha: float,
                              samples: int) -> List[Tuple[str, str, float]]:
    sigma2 = audit.sigma2_in_steps
    bins = audit.bins(samples)

    def gaussian(s2, bias=1.0):
        k, pmf = discrete_gaussian_pmf(s2)
        pmf = pmf * np.where(k > 0, bias, np.where(k < 0, 2.0 - bias, 1.0))
        table = dict(zip(k.tolist(), pmf.tolist()))
        return lambda values: np.array([table.get(int(v), 0.0) for v in values])

    def continuous_calibration():
        # sigma of the continuous analytic Gaussian (Balle & Wang 2018,
        # Theorem 8), found by bisection, used for the discrete noise.
        D, eps, delta = audit.gaussian_sensitivity, 1.0, audit.mechanism.delta
        curve = lambda s: (stats.norm.cdf(D / (2 * s) - eps * s / D)
                           - math.exp(eps) * stats.norm.cdf(-D / (2 * s) - eps * s / D))
        low, high = 1e-3, 1e3
        for _ in range(200):
            middle = (low + high) / 2
            low, high = (low, middle) if curve(middle) <= delta else (middle, high)
        return high ** 2

    reach = int(40 * math.sqrt(sigma2 * 1.21) + 40)
    rows = []
    for name, pmf in (("sigma x1.1", gaussian(sigma2 * 1.21)),
                      ("sigma / 1.1", gaussian(sigma2 / 1.21)),
                      ("calibrated for delta 0.02",
                       gaussian(gaussian_sigma2_for(audit.epsilon, 2 * audit.mechanism.delta,
                                                    audit.gaussian_sensitivity))),
                      ("continuous calibration (sigma^2 "
                       f"{continuous_calibration() / sigma2:.4f} x)", gaussian(continuous_calibration())),
                      ("sign biased 52:48", gaussian(sigma2, 1.04))):
        alternative = bins.probabilities_of(pmf, reach)
        rows.append((audit.mechanism.label, name,
                     chi_square_power(bins.probabilities, alternative, samples, alpha)))
    return rows


def exact_law_power_rows(alpha: float) -> List[Tuple[str, str, float]]:
    """Power of the exact-law chi-square (on one table, at the CI size)
    against a wrong rate: epsilon x 1.1, the factor 2 of the non-monotonic
    rule applied to counts (rate halved), or dropped from the quantiles'
    non-monotonic utility (rate doubled)."""
    audits = {a.key: a for a in PRIVACY_LOSS_AUDITS}
    rows = []
    for key, side, samples, factors in (
            ("select_tie", "D'", CI_SAMPLES, ((1.1, "epsilon x1.1"),
                                              (0.5, "rate epsilon / 2 (2 Delta rule)"))),
            ("select_rare", "D", CI_SAMPLES, ((1.1, "epsilon x1.1"),
                                              (0.5, "rate epsilon / 2 (2 Delta rule)"))),
            ("percentile_extreme", "D", CI_QUANTILE_SAMPLES,
             ((1.1, "epsilon x1.1"), (2.0, "rate epsilon (monotonic rule misapplied)")))):
        audit = audits[key]
        rows_of = audit.pair.rows_d if side == "D" else audit.pair.rows_d_prime
        null = audit.mechanism.exact_law(rows_of, audit.claimed_epsilon)
        groups = pooled_groups(null, samples)
        null_groups = np.bincount(groups, weights=null)
        for factor, name in factors:
            alternative = np.bincount(groups, weights=audit.mechanism.exact_law(
                rows_of, audit.claimed_epsilon * factor))
            rows.append((f"{audit.mechanism.label}, {side} = {Auditor.show_rows(rows_of)}, "
                         f"{samples:,} draws", name,
                         chi_square_power(null_groups, alternative, samples, alpha)))
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
    out.append("Mechanisms: `dp_count`, `dp_sum`, `dp_avg` (Laplace, epsilon-DP); `dp_select` "
               "(counted and weighted; permute-and-flip); `dp_median`, `dp_percentile` "
               "(permute-and-flip over 1024 bins); the (epsilon, delta) Gaussian forms of "
               "`dp_count`, `dp_sum`, `dp_avg`; DP partition selection of GROUP BY keys "
               "(`dp_agg.group_selection(epsilon, delta)`: a group is released iff its row count "
               "plus discrete Laplace noise reaches a threshold T).")
    out.append("")
    out.append("**Method.** For each pair of neighbouring tables (D' = D plus one row) the suite "
               f"draws {plan.samples_per_dataset:,} independent releases on each table through SQL "
               f"({plan.quantile_samples:,} for the quantiles, whose releases cost ten times "
               "more). The first half of the draws chooses an output event S among thresholds, "
               "histogram bins, point masses (for dp_select: {answer = X}) and low-order-bit "
               "classes; the second half certifies a one-sided Clopper-Pearson lower bound on "
               "ln P[M(D) in S] - ln P[M(D') in S] (and the reverse direction). An epsilon-DP "
               "audit fails when that bound exceeds the claimed epsilon. For the (epsilon, delta) "
               "mechanisms the certified quantity is delta(S) = P[M(D) in S] - e^epsilon "
               "P[M(D') in S] (Clopper-Pearson lower bound on the first probability minus "
               "e^epsilon times an upper bound on the second), and the audit fails when it "
               "exceeds the claimed delta.")
    out.append("")
    out.append(f"**False-failure probability.** {tests} statistical tests at level "
               f"alpha = {alpha:.3g} each (Bonferroni): a correct implementation fails a run "
               f"with probability at most {FALSE_FAILURE_BUDGET:g}. The same level is used in "
               "the self-checks, so \"detected\" means \"a real run would have failed\".")
    out.append("")
    out.append("## Privacy-loss audits (epsilon-DP)")
    out.append("")
    out += markdown_table(
        ["mechanism", "neighbouring pair D vs +row", "claimed epsilon", "certified lower bound",
         "samples", "result", "event chosen; empirical log-ratio on the certification half"],
        [(o.mechanism, f"`{o.pair}`", f"{o.claimed_epsilon:g}", format_bound(o.certified),
          f"{o.samples:,}", verdict(o), o.detail.strip("[]"))
         for o in outcomes if o.section == "privacy-loss"])
    out.append("")
    out.append("## (epsilon, delta) audits: the Gaussian mechanisms and partition selection")
    out.append("")
    out.append(f"Gaussian forms: claimed epsilon 1 and delta {GAUSS_DELTA:g} "
               "(the audit sets `dp_agg.max_delta` to 0.01 in its own transactions). "
               "delta_hat is the plain estimate on the certification half for the chosen event, "
               "the margin its distance to the certified lower bound (alpha as above). "
               "Partition selection (`group_selection`): a group of one row against no group, "
               "which is never released, so delta(S) for S = {released} is P[released] itself; "
               "its certified lower bound is the one-sided Clopper-Pearson bound on all the "
               "draws (`dp_agg.max_delta` is raised to the statement's delta).")
    out.append("")
    out += markdown_table(
        ["mechanism", "neighbouring pair D vs +row", "epsilon", "claimed delta",
         "certified lower bound on delta", "delta_hat - margin", "samples", "result",
         "event chosen"],
        [(o.mechanism, f"`{o.pair}`", f"{o.claimed_epsilon:g}", f"{o.claimed_delta:g}",
          format_delta(o.certified), f"{o.empirical:.4f} - {o.empirical - o.certified:.4f}",
          f"{o.samples:,}", verdict(o), o.detail.strip("[]").split(";")[0])
         for o in outcomes if o.section == "delta"])
    out.append("")
    out.append("## Self-check: broken mechanisms must be detected")
    out.append("")
    out.append("`halve_noise` and `skip_clamping` are the superuser-only settings "
               "`dp_agg.insecure_test_fault` (halve_noise doubles the epsilon used internally, "
               "also by dp_select, the quantiles, the Gaussian calibration and partition "
               "selection, whose noise and threshold are then planned for 2 epsilon; "
               "skip_clamping acts on count, sum and mean only); "
               "`epsilon xF` releases with F times the claimed epsilon and audits against the "
               "claim; `delta D (T = t)` releases partition selection with delta D, whose "
               "threshold t is below the claim's. Rows marked INFO are faults an audit is "
               "not built to catch (e.g. halve_noise on a mean, whose answer hides most of the "
               "loss, or on a median, whose loss is at most epsilon / 2); they are shown, not "
               "counted. For dp_select and the quantiles every break is also tested by the "
               "chi-square of the answers against the claimed exact law (rows `[fault]`), a "
               "required detection even where the privacy-loss audit is INFO.")
    out.append("")

    def self_check_statistic(o):
        if o.certified is None:
            return o.statistic
        if o.claimed_delta is not None:
            return f"delta >= {format_delta(o.certified)} (claim {o.claimed_delta:g})"
        return format_bound(o.certified)

    out += markdown_table(
        ["mechanism", "neighbouring pair", "claimed epsilon", "certified lower bound / test",
         "samples", "detected", "broken by; event"],
        [(o.mechanism, f"`{o.pair}`", f"{o.claimed_epsilon:g}", self_check_statistic(o),
          f"{o.samples:,}",
          "INFO: " + ("yes" if o.passed else "no") if o.informational
          else ("yes" if o.passed else "**NO**"), o.detail.strip("[]"))
         for o in outcomes if o.section == "self-check"])
    out.append("")
    out.append("## Exact distributions, grids, answer sets, low-order bits")
    out.append("")
    out.append("exact-noise: chi-square of the noise against the exact discrete Laplace or "
               "discrete Gaussian pmf, and a sign test. gauss-calibration: the suite computes "
               "the discrete Gaussian's sigma on its own (smallest sigma^2 meeting CKS20 "
               "Theorem 7's delta at the claimed epsilon) and checks it against the server "
               "through `dp_count_margin`, an exact noise quantile: asked at the suite's "
               "P[|X| <= k] -+ 1e-7, it must answer k and k + 1 (deterministic). "
               "exact-selection: chi-square of dp_select and quantile answers on each table of "
               "each audit against the exact permute-and-flip law (P[r] = p_r times the "
               "integral over t in [0, 1] of the product over j != r of (1 - t p_j)), outcomes "
               "pooled to expected counts >= 1000. answer-set: every dp_select answer is a "
               "candidate, every quantile answer a bin midpoint (deterministic). exact-groups: "
               "for partition selection, the release frequency of groups of each size c = 1 .. "
               "T + 3 against P[Z >= T - c] (exact two-sided binomial tests, Bonferroni over the "
               "sizes), T computed by the suite from the definition in 50-digit arithmetic; the "
               "threshold of largest likelihood given the answers must be that T.")
    out.append("")
    sections = ("gauss-calibration", "exact-noise", "exact-selection", "exact-groups",
                "answer-set", "float-grid", "avg-range", "low-bits")
    out += markdown_table(
        ["check", "mechanism", "table", "epsilon", "result", "samples", "verdict", "detail"],
        [(o.section, o.mechanism, f"`{o.pair}`",
          f"{o.claimed_epsilon:g}" + (f", delta {o.claimed_delta:g}"
                                      if o.claimed_delta is not None else ""),
          o.statistic, f"{o.samples:,}", verdict(o), o.detail.strip("[]"))
         for section in sections for o in outcomes if o.section == section])
    out.append("")
    out.append(f"Power of the chi-square tests at the CI size ({CI_SAMPLES:,} draws, "
               f"alpha = {alpha:.3g}; noncentral chi-square approximation):")
    out.append("")
    out += markdown_table(["mechanism", "mistake", "power"],
                          [(m, name, f"{p:.6f}") for m, name, p in
                           exact_noise_power_rows(alpha, CI_SAMPLES)
                           + exact_law_power_rows(alpha)])
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
    out.append("(For dp_select the columns are P_D(S) and P_D'(S): the loss is attained by "
               "D over D'.)")
    out.append("")
    out.append(f"Gaussian count, claimed (1, {GAUSS_DELTA:g}), empty vs one row, released with "
               "sigma calibrated for a larger epsilon: its true delta at epsilon 1 and the "
               "certification samples per table for the certified delta to exceed 0.01 with "
               "probability about 0.999, for its best tail event.")
    out.append("")
    out += markdown_table(["released with", "true delta at epsilon 1", "event", "P_D'(S)",
                           "P_D(S)", "certification samples per table"],
                          [(label, f"{true_delta:.4f}", event, f"{p_a:.4f}", f"{p_b:.4f}",
                            f"{n:,}")
                           for label, true_delta, event, p_a, p_b, n
                           in gaussian_gap_requirements(alpha)])
    out.append("")
    out.append(f"This run certified with {plan.samples_per_dataset // 2:,} releases per table "
               f"({plan.quantile_samples // 2:,} for quantiles); the CI pass certifies with "
               f"{CI_SAMPLES // 2:,} ({CI_QUANTILE_SAMPLES // 2:,}). Partition selection: "
               f"{plan.group_selection_samples:,} releases per group size in this run (half of "
               f"them certify a pair), {CI_GROUP_SELECTION_SAMPLES:,} in the CI pass "
               f"({CI_GROUP_SELECTION_SELF_CHECK_SAMPLES:,} for its self-checks).")
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
        "- **dp_select: only one score moves.** Under add/remove-one-row neighbours a row "
        "adds to the score of the one candidate it equals, so between neighbours exactly one "
        "score changes, by at most Delta. Permute-and-flip is report-noisy-max with "
        "exponential noise; with one score moving its loss is at most rate x Delta. For "
        "counts and one-sign weights (rate epsilon / Delta) the loss reaches epsilon, and "
        "the event {answer = X} attains it exactly when X's score moves in a near-tie or X "
        "is rare (P[X] is then proportional to X's acceptance probability): those audits "
        "certify close to epsilon. dp_agg therefore uses the rate epsilon / Delta for "
        "mixed-sign weights too (two scores moving in opposite directions would need "
        "replace-one-row neighbours, which the README does not claim); the mixed-sign "
        "audit `[-10,2]` checks it reaches but does not exceed epsilon, and that "
        "Delta = max(|L|, |U|) = 10: with |U| = 2 its loss would be 5.",
        "- **Quantiles: the loss is at most max(f, 1 - f) x epsilon.** The utility "
        "-max(0, C_i - f n, f n - C_{i+1}) changes by at most max(f, 1 - f) rows between "
        "neighbours (adding a row moves f n by f and each C_i by 0 or 1), not by the "
        "documented 1, and the best bin always has utility 0. With the non-monotonic rate "
        "epsilon / 2 per row, the median's loss is at most epsilon / 2 (audits certify "
        "~0.2 of 1, empirical 0.27), and halve_noise on a median stays below the claim (INFO). "
        "The "
        "0.75-quantile (bound 0.75 epsilon, ~0.59 attained on the extreme-row pair) is the "
        "audit that catches halve_noise. An empty table against one row is uniform over "
        "1024 bins against a 1.3/1024 bump, which no event of useful probability shows.",
        "- **Gaussian delta audits.** Events are chosen on the selection half by delta_hat "
        "minus one standard error, then certified on the other half. At a correct "
        "mechanism's delta (0.01) the certified bound is below delta by the confidence "
        "margin (~0.01 at the CI size), so these audits bound delta from below; they catch "
        "a calibration for a larger epsilon (halve_noise: true delta 0.105; epsilon x1.5: "
        "0.044) and a missing clamp, not a few per cent in sigma. The exact-noise chi-square "
        "with the independently calibrated sigma, and the dp_count_margin check of that "
        "sigma, cover the calibration itself. The grid of Gaussian float sums (2^-30 sigma) "
        "is not checked here, and the Gaussian mean, like the Laplace mean, shows only part "
        "of its loss in its answer.",
        "- **Partition selection (`group_selection`).** A group's release is one bit, so "
        "the events are {released} and {not released}. Between c - 1 and c rows the loss is "
        "exactly epsilon on {released} for c <= T and on {not released} for c >= T "
        "(P[Z >= j] / P[Z >= j + 1] = e^epsilon for j >= 0), so the pair audits certify close "
        "to epsilon where the probabilities are large (epsilon 1); at epsilon 0.3 and the CI "
        "size the Clopper-Pearson width is about the loss itself. The delta audit is tight: "
        "a one-row group is released with 0.0989 (epsilon 1) and 0.0950 (epsilon 0.3) against "
        "delta 0.1, so a threshold one too low (0.269, 0.128) is caught. "
        "halve_noise plans noise and threshold for 2 epsilon: at epsilon 0.3 that lowers T "
        "from 7 to 5 but releases a one-row group less often (0.059), so only the loss "
        "between 1 and 2 rows (0.6) and the exact law show it.",
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
                        help="500,000 releases per table (150,000 for quantiles), every fault "
                             "self-check, releases at 1.25 and 1.1 x the claimed epsilon (1.5 x "
                             "for the Gaussian forms), replicated CI self-checks (about 9 "
                             "minutes on 2 cores)")
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
                                   exact_samples=args.samples,
                                   group_selection_samples=args.samples,
                                   group_selection_self_check_samples=args.samples)
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
