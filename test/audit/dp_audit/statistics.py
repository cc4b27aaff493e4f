"""Statistics: Clopper-Pearson bounds, the certified privacy loss and delta
of an event chosen on the selection half, candidate events, and the
chi-square helpers (pooled groups, noise bins, power).
"""

import math
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy as np
from scipy import stats

from .laws import discrete_laplace_cdf, discrete_laplace_decay, discrete_laplace_pmf


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
