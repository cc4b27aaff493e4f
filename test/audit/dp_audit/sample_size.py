"""Sample-size planning (for the --long pass and REPORT.md): how many
releases the certification half needs to catch a given violation.
"""

import math
from typing import Callable, List, Tuple

import numpy as np
from scipy import stats

from .laws import (discrete_gaussian_pmf, gaussian_sigma2_for, hockey_stick_delta,
                   optimal_partition_selection, optimal_release_probability)
from .statistics import certified_delta, certified_log_ratio
from .suites import GAUSS_DELTA


def smallest_certifying_size(p_a: float, p_b: float,
                              certified_bound: Callable[[int, int, int, int], float],
                              claim: float, power: float = 0.999) -> int:
    """Smallest certification-half size n per dataset such that, for an event
    with true probabilities p_a and p_b, the certified bound
    certified_bound(hits_a, n, hits_b, n) exceeds `claim` with probability
    >= about `power`: the counts are taken at their (1 - power)/2 quantiles
    (normal approximation), then the exact bound is applied. Doubling, then
    bisection to within 0.5%."""
    z = stats.norm.isf((1.0 - power) / 2.0)

    def certified_at(n):
        hits_a = math.floor(n * p_a - z * math.sqrt(n * p_a * (1 - p_a)))
        hits_b = math.ceil(n * p_b + z * math.sqrt(n * p_b * (1 - p_b)))
        return float(certified_bound(max(hits_a, 0), n, min(hits_b, n), n))

    high = 16
    while certified_at(high) <= claim:
        high *= 2
    low = high // 2
    while high - low > max(1, low // 200):
        middle = (low + high) // 2
        if certified_at(middle) > claim:
            high = middle
        else:
            low = middle
    return high


def samples_to_certify(p_a: float, p_b: float, claimed_epsilon: float, alpha: float,
                       power: float = 0.999) -> int:
    """The certification-half size at which the certified privacy loss of an
    event with p_a > e^claimed p_b exceeds the claim (smallest_certifying_size)."""
    if not p_a > math.exp(claimed_epsilon) * p_b:
        raise ValueError("this event cannot show a loss above the claim")
    return smallest_certifying_size(
        p_a, p_b, lambda hits_a, n_a, hits_b, n_b: certified_log_ratio(
            hits_a, n_a, hits_b, n_b, alpha), claimed_epsilon, power)


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
    # P = pi(2) vs pi(1) of the optimal rule (0.1 e^actual + 0.1 vs 0.1).
    table = optimal_partition_selection(actual, 0.1)
    rows.append((f"group_selection d=0.1, group of 1 vs 2 rows (n* = {len(table)}), "
                 "S = {released}",
                 optimal_release_probability(2, table), optimal_release_probability(1, table)))
    return [(label, p_a, p_b, samples_to_certify(p_a, p_b, claimed, alpha))
            for label, p_a, p_b in rows]


def samples_to_certify_delta(p_a: float, p_b: float, epsilon: float, delta: float,
                             alpha: float, power: float = 0.999) -> int:
    """As samples_to_certify, for the delta audits: the certification-half
    size at which the certified delta exceeds the claim."""
    if not p_a - math.exp(epsilon) * p_b > delta:
        raise ValueError("this event cannot show a delta above the claim")
    return smallest_certifying_size(
        p_a, p_b, lambda hits_a, n_a, hits_b, n_b: certified_delta(
            hits_a, n_a, hits_b, n_b, epsilon, alpha), delta, power)


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
