"""The mechanisms' exact laws, recomputed from their documented construction
(README, the cited papers), independently of the server's code: release grids,
discrete Laplace and Gaussian noise and the Gaussian calibration, DP partition
selection's threshold and release law, permute-and-flip, the quantile grid.
"""

import bisect
import decimal
import fractions
import math
from typing import Sequence, Tuple

import numpy as np

from .constants import (DELTA_SAFETY_MARGIN_BITS, GRID_BITS_BELOW_SCALE, MAX_SELECTION_EXPONENT,
                        PARTITION_SELECTION_LOG_MARGIN, QUANTILE_BINS)


def epsilon_rounded_down(epsilon: float) -> fractions.Fraction:
    """epsilon rounded DOWN to 24 significant bits, exactly as the extension
    does before planning the noise (docs/privacy_guarantees.md "Secure noise", RoundEpsilonDown)."""
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
    target = delta * (1.0 - 2.0 ** -DELTA_SAFETY_MARGIN_BITS)
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
    mechanism does (docs/analyst_guide.md "How much a query costs"; EffectivePrivacyParameter)."""
    return discrete_gaussian_sigma2(float(epsilon_rounded_down(epsilon)),
                                    float(epsilon_rounded_down(delta)), sensitivity)


# DP partition selection, dp_agg.group_selection(epsilon, delta) (README;
# partition_selection.h): a group of c rows is released iff c + Z >= T, Z
# discrete Laplace with q = exp(-epsilon'), and T = k + 1 for the smallest
# k >= 1 with P[Z >= k] = q^k / (1 + q) <= delta' (epsilon', delta' the
# requests rounded down to 24 bits), the inequality demanded with a margin of
# 1e-9 in log space (constants.PARTITION_SELECTION_LOG_MARGIN). A group of
# one row, absent from the neighbour, is then released with probability
# q^(T-1) / (1 + q) <= delta'.


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


# The optimal rule (the default since 0.2.0; partition_selection.h):
# Desfontaines, Voss, Gipson and Mandayam, PoPETs 2022, section 3: a group of
# n rows is released with
#   pi(0) = 0,  pi(n) = min(1, e^eps pi(n-1) + delta, 1 - e^-eps (1 - pi(n-1) - delta))
# at epsilon', delta' (the requests rounded down to 24 bits). The server uses
# dyadic M_n / 2^64 a hair below these (a lower bound of e^eps', delta'
# floored to 2^-64: relative differences below 1e-9, invisible to the audit).
# Computed here in 50-digit decimal arithmetic, independently of the server.


def optimal_partition_selection(epsilon: float, delta: float, one_sided: bool = False,
                                limit: int = 100000) -> Tuple[float, ...]:
    """(pi(0), ..., pi(n* - 1)): the release probabilities below n*, the
    smallest group size released with probability 1. one_sided drops the
    second inequality (the fault "optimal_one_sided")."""
    with decimal.localcontext() as context:
        context.prec = 50
        e = _as_decimal(epsilon_rounded_down(epsilon)).exp()
        d = _as_decimal(epsilon_rounded_down(delta))
        pi = [decimal.Decimal(0)]
        while len(pi) < limit:
            p = pi[-1]
            grown = e * p + d
            nxt = grown if one_sided else min(grown, 1 - (1 - p - d) / e)
            if nxt >= 1:
                return tuple(float(x) for x in pi)
            pi.append(nxt)
    raise ValueError("partition selection table too long")


def optimal_release_probability(count: int, table: Sequence[float]) -> float:
    """pi(count) for a table of optimal_partition_selection: 0 for no rows,
    1 from n* = len(table) on."""
    if count <= 0:
        return 0.0
    return table[count] if count < len(table) else 1.0


def pair_delta(p: float, p_prime: float, epsilon: float) -> float:
    """The delta at epsilon of a one-bit release with P = p on D and p_prime
    on D' (both directions, both events)."""
    e = math.exp(epsilon)
    return max(0.0, p_prime - e * p, (1.0 - p) - e * (1.0 - p_prime),
               p - e * p_prime, (1.0 - p_prime) - e * (1.0 - p))


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
# selection.h: acceptance exponents are capped at MAX_SELECTION_EXPONENT = 64
# (constants.py); mirrored here though never reached.


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


# dp_median / dp_percentile: Smith's exponential mechanism on the lattice of
# units 2^e between the bounds (continuous_quantile.h). A lattice point y has
# weight exp(-min(lambda d(y), 64)) with d(y) = max(0, below(y) - f n,
# f n - upto(y)) rows and lambda = epsilon' / (2 max(f, 1 - f)). The answers
# are put in cells [i, i + 1) of width one (the last one closed), and the law
# of the cell is summed exactly over the lattice points of each cell (a run of
# points without a row has one weight). The released double is the nearest
# double to y 2^e, which moves a point across a cell edge only within 2^-42 of
# a cell's width of it: invisible here.
def smith_cell_law(rows: Sequence[float], lower: float, upper: float, fraction: float,
                   epsilon: float, cells: int) -> np.ndarray:
    exponent = bound_units_exponent(lower, upper)
    scale = fractions.Fraction(2) ** -exponent
    to_units = lambda v: round(fractions.Fraction(min(max(v, lower), upper)) * scale)
    points = sorted(to_units(r) for r in rows)
    n = len(points)
    target = fraction * n
    rate = epsilon / (2.0 * max(fraction, 1.0 - fraction))
    weight = lambda d: math.exp(-min(rate * d, MAX_SELECTION_EXPONENT))
    below = lambda z: bisect.bisect_left(points, z)
    upto = lambda z: bisect.bisect_right(points, z)
    distinct = sorted(set(points))
    low_units, high_units = to_units(lower), to_units(upper)
    width = fractions.Fraction(high_units - low_units, cells)
    law = np.zeros(cells)
    for i in range(cells):
        a = low_units + math.ceil(i * width)
        b = high_units + 1 if i == cells - 1 else low_units + math.ceil((i + 1) * width)
        mass, cursor = 0.0, a
        for z in distinct[bisect.bisect_left(distinct, a):bisect.bisect_left(distinct, b)]:
            rank = below(z)
            mass += (z - cursor) * weight(abs(rank - target))
            mass += weight(max(0.0, rank - target, target - upto(z)))
            cursor = z + 1
        mass += (b - cursor) * weight(abs(below(b) - target))
        law[i] = mass
    return law / law.sum()


def smith_cell_of(values: np.ndarray, lower: float, upper: float, cells: int) -> np.ndarray:
    """The cell of each answer, as smith_cell_law numbers them (-1 outside)."""
    position = np.floor((values - lower) / (upper - lower) * cells)
    position = np.where(values == upper, cells - 1, position)
    inside = (values >= lower) & (values <= upper) & np.isfinite(values)
    return np.where(inside, position, -1).astype(np.int64)
