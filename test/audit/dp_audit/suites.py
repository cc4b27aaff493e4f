"""What to audit: the mechanisms as SQL calls, the neighbouring datasets, the
privacy-loss, exact-noise and group-selection audits, the self-checks under
the test faults, and the run plans (CI, --long, --self-check).
"""

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from .constants import QUANTILE_BINS
from .laws import (discrete_gaussian_pmf, epsilon_rounded_down, gaussian_sigma2_for,
                   optimal_partition_selection, optimal_release_probability,
                   permute_and_flip_law, smith_cell_law, smith_cell_of, sum_release_grid)
from .statistics import NoiseBins


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
    # Privacy units (docs/analyst_guide.md "Privacy units"): rows are (u, k, x), u the unit
    # (labelled privacy_unit, made distinct per group g), k a group key; the
    # release is the answer of group k = 1 of GROUP BY g, k.
    unit: bool = False
    # dp_count(DISTINCT u, epsilon): the distinct count of the unit column.
    distinct_unit: bool = False

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
        if self.unit:
            return (("u", "integer"), ("k", "integer"), ("x", self.column_type))
        return (("x", self.column_type),) + ((("w", "double precision"),) if self.weighted else ())

    @property
    def faults(self) -> Tuple[str, ...]:
        """The test faults that act on this mechanism: skip_clamping is wired
        into the count/sum/mean states only (call_sites.cpp); dp_select and
        the quantiles clamp in their own transition functions, and so do
        dp_variance and dp_stddev (variance_aggregates.cpp)."""
        if self.function in ("dp_variance", "dp_stddev"):
            return (HALVE,)
        if self.unit:
            return (HALVE, SKIP, SKIP_UNITS)
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
            return f"dp_count(DISTINCT u, {eps})" if self.distinct_unit else f"dp_count(x, {eps})"
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
        """dp_select: every answer it can give, in increasing order. Quantiles:
        the lower edges of the cells [i, i + 1) that exact_law describes."""
        if self.kind == "selection":
            return np.sort(np.asarray(self.candidates, dtype=float))
        return self.lower + (self.upper - self.lower) / QUANTILE_BINS * np.arange(QUANTILE_BINS)

    def answer_classes(self, values: np.ndarray) -> np.ndarray:
        """Index in answer_set() of each answer's class (the candidate, or the
        quantile's cell), -1 for an answer the mechanism cannot give."""
        if self.kind == "quantile":
            return smith_cell_of(values, self.lower, self.upper, QUANTILE_BINS)
        allowed = self.answer_set()
        position = np.clip(np.searchsorted(allowed, values), 0, len(allowed) - 1)
        return np.where(allowed[position] == values, position, -1)

    def exact_law(self, rows: Tuple, epsilon: float) -> np.ndarray:
        """P[answer = answer_set()[i]] on the dataset `rows`. Over privacy
        units (docs/analyst_guide.md "Privacy units"), the rows (u, k, x) of the released
        group k = 1 are first combined into one value per unit: its lower
        median (percentile_disc(0.5)) for the quantiles, its most frequent
        value (mode(), the least among ties) for dp_select. A unit with rows
        in j groups keeps group 1 with probability 1 / j
        (max_groups_contributed 1, uniform sampling), so the law is the
        mixture over which of those units keep it."""
        if not self.unit:
            return self.row_law(rows, epsilon)
        groups_of_unit = {}
        for unit, group, value in rows:
            groups_of_unit.setdefault(unit, {}).setdefault(group, []).append(value)
        kept, optional = [], []
        for groups in groups_of_unit.values():
            if 1 not in groups:
                continue
            values = sorted(groups[1])
            if self.kind == "quantile":
                combined = values[math.ceil(len(values) / 2) - 1]
            else:
                combined = min(set(values), key=lambda v: (-values.count(v), v))
            if len(groups) == 1:
                kept.append(combined)
            else:
                optional.append((combined, 1.0 / len(groups)))
        law = 0.0
        for choice in itertools.product((False, True), repeat=len(optional)):
            probability = math.prod(p if keep else 1.0 - p
                                    for keep, (_, p) in zip(choice, optional))
            values = tuple(kept) + tuple(v for keep, (v, _) in zip(choice, optional) if keep)
            law = law + probability * self.row_law(values, epsilon)
        return law

    def row_law(self, rows: Tuple, epsilon: float) -> np.ndarray:
        """P[answer = answer_set()[i]] on the dataset `rows`, by the documented
        construction (README; selection.h, quantile.h), with epsilon rounded
        down to 24 bits as the server does (the further rounding of the rate
        to 64 bits changes it by < 2^-63, invisible here)."""
        eps = float(epsilon_rounded_down(epsilon))
        if self.kind == "quantile":
            # Smith's mechanism (laws.smith_cell_law): utility sensitivity
            # max(f, 1 - f), not monotonic: exp(-epsilon gap / (2 max(f, 1 - f))).
            fraction = 0.5 if self.function == "dp_median" else self.fraction
            return smith_cell_law(rows, self.lower, self.upper, fraction, eps, QUANTILE_BINS)
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
    """D and D' = D plus one row (add/remove-one-row neighbours), or, for
    privacy units, plus every row of one unit (added_row and more_rows)."""
    rows_d: Tuple
    added_row: object
    more_rows: Tuple = ()

    @property
    def rows_d_prime(self) -> Tuple:
        return self.rows_d + (self.added_row,) + self.more_rows

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
        if self.more_rows:
            return f"{show(self.rows_d)} vs +unit {show((self.added_row,) + self.more_rows)}"
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

HALVE, SKIP, SKIP_UNITS = "halve_noise", "skip_clamping", "skip_unit_bounding"
ONE_SIDED = "optimal_one_sided"  # partition selection without inequality (2)

# Privacy units: neighbours differ by all rows of one unit. Unit 1 keeps
# group k = 1 in existence in D; the added unit 2 has 10 rows in k = 1 and 10
# in k = 2 (max_groups_contributed 1: one of the two groups is kept, at
# random). The release of group 1 must stay epsilon-DP; with the bounding
# skipped (skip_unit_bounding) its 10 rows there move a count by 10.
UNIT_COUNT = Mechanism("dp_count units", "dp_count", "integer", unit=True)
UNIT_SUM = Mechanism("dp_sum units int4 [0,10]", "dp_sum", "integer", 0, 10, unit=True)
UNIT_PAIR = NeighbourPair(((1, 1, 1),), (2, 1, 10), ((2, 1, 10),) * 9 + ((2, 2, 10),) * 10)

# dp_count(DISTINCT u, e) at unit level counts units like dp_count(x, e);
# row by row (skip_unit_bounding) it would count distinct units too, so only
# halve_noise is a fault it must catch.
UNIT_DISTINCT = Mechanism("dp_count DISTINCT unit", "dp_count", "integer", unit=True,
                          distinct_unit=True)

# dp_avg at unit level averages each unit's mean in the group (BigQuery's
# AVG): the added unit is one value, 1000 clamped to 1, in one group. Row by
# row (skip_unit_bounding) its 10 rows there move the count by 10 and the
# centred sum by 5.
UNIT_AVG = Mechanism("dp_avg units float8 [0,1]", "dp_avg", "double precision", 0.0, 1.0,
                     "float8", unit=True)
UNIT_AVG_PAIR = NeighbourPair(((1, 1, 0.0),), (2, 1, 1000.0),
                              ((2, 1, 1000.0),) * 9 + ((2, 2, 1000.0),) * 10)

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
    PrivacyLossAudit("unit_count", UNIT_COUNT, UNIT_PAIR, 1.0,
                     "a unit of 20 rows in two groups removed: counted once, one group",
                     (HALVE, SKIP_UNITS)),
    PrivacyLossAudit("unit_sum", UNIT_SUM, UNIT_PAIR, 1.0,
                     "a unit of 20 rows at the upper bound in two groups: its total clamped",
                     (HALVE, SKIP_UNITS)),
    PrivacyLossAudit("unit_distinct", UNIT_DISTINCT, UNIT_PAIR, 1.0,
                     "dp_count(DISTINCT unit): a unit of 20 rows in two groups counted once",
                     (HALVE,)),
    PrivacyLossAudit("unit_avg", UNIT_AVG, UNIT_AVG_PAIR, 1.0,
                     "dp_avg: a unit of 20 rows far above the bounds in two groups: "
                     "one mean, one group", (SKIP_UNITS,)),
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
# Quantiles over [0, 1024] (Smith's mechanism on the lattice of units 2^-51):
# the utility -max(0, below - f n, f n - upto) changes by at most
# max(f, 1 - f) rows between neighbours, and the mechanism runs at
# exp(-epsilon gap / (2 max(f, 1 - f))): the loss is at most epsilon. The
# exact-law test puts the answers in the cells [i, i + 1) (laws.smith_cell_law).
MEDIAN = Mechanism("dp_median [0,1024]", "dp_median", "double precision", 0.0, 1024.0, "float8")
PERCENTILE_75 = Mechanism("dp_percentile 0.75 [0,1024]", "dp_percentile", "double precision",
                          0.0, 1024.0, "float8", fraction=0.75)
# Privacy units: dp_median over each unit's lower median and dp_select over
# each unit's most frequent value in the group (docs/analyst_guide.md "Privacy units"). The
# added unit has 20 rows, 10 in each of groups 1 and 2; row by row
# (skip_unit_bounding) its 10 rows at 1000.5 would move the median from 512.5
# to 1000.5, and its 10 votes (8 for 2, 2 for 1) would turn a tie into 7 to 13.
UNIT_MEDIAN = Mechanism("dp_median units [0,1024]", "dp_median", "double precision", 0.0,
                        1024.0, "float8", unit=True)
UNIT_MEDIAN_PAIR = NeighbourPair(((1, 1, 512.5), (3, 1, 512.5), (4, 1, 512.5)), (2, 1, 1000.5),
                                 ((2, 1, 1000.5),) * 9 + ((2, 2, 1000.5),) * 10)
UNIT_SELECT = Mechanism("dp_select units int4 {1,2}", "dp_select", "integer", output="integer",
                        candidates=(1, 2), unit=True)
UNIT_SELECT_PAIR = NeighbourPair(tuple((u, 1, 1) for u in range(1, 6))
                                 + tuple((u, 1, 2) for u in range(6, 11)), (11, 1, 2),
                                 ((11, 1, 2),) * 7 + ((11, 1, 1),) * 2 + ((11, 2, 2),) * 10)
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
    # The empty table's answer is uniform at any epsilon, and one row clamped
    # to the upper bound changes the utility by 1/2 almost everywhere, i.e.
    # not the answer's law (only the single point U differs): nothing to catch.
    PrivacyLossAudit("median_empty", MEDIAN, NeighbourPair((), 1e9), 1.0,
                     "empty vs one row far above the bounds (clamped)"),
    PrivacyLossAudit("median_concentrated", MEDIAN, NeighbourPair((512.5,) * 3, 1000.5), 1.0,
                     "data at one value vs one more row elsewhere", law_detects=(HALVE,)),
    PrivacyLossAudit("unit_median", UNIT_MEDIAN, UNIT_MEDIAN_PAIR, 1.0,
                     "a unit of 20 rows far from the median in two groups: one value, one group",
                     (SKIP_UNITS,), law_detects=(HALVE,)),
    PrivacyLossAudit("unit_select", UNIT_SELECT, UNIT_SELECT_PAIR, 1.0,
                     "a unit of 20 rows (most for 2) in two groups after a tie: one vote",
                     (SKIP_UNITS,), law_detects=(HALVE,)),
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

# dp_variance and dp_stddev (core/variance.h): three releases at epsilon/3
# each (or rho/3 each for the Gaussian form); the answer, clamped to
# [0, ((U - L)/2)^2], is post-processing of them. The worst cases are the
# count's (0 vs 1 row) and one row far above the bounds, which moves the
# centred sum by h and the centred squares by h^2 at once.
VAR_FLOAT8 = Mechanism("dp_variance float8 [0,1]", "dp_variance", "double precision", 0.0, 1.0,
                       "float8")
VAR_INT = Mechanism("dp_variance int4 [0,10]", "dp_variance", "integer", 0, 10, "numeric")
SD_FLOAT8 = Mechanism("dp_stddev float8 [0,1]", "dp_stddev", "double precision", 0.0, 1.0,
                      "float8")
GAUSS_VAR_FLOAT8 = Mechanism("dp_variance gauss float8 [0,1]", "dp_variance", "double precision",
                             0.0, 1.0, "float8", delta=GAUSS_DELTA)

PRIVACY_LOSS_AUDITS += [
    PrivacyLossAudit("variance_one_two", VAR_FLOAT8, NeighbourPair((0.0,), 1.0), 1.0,
                     "variance of 1 vs 2 rows (0 vs 0.25)"),
    PrivacyLossAudit("variance_clamp", VAR_FLOAT8, NeighbourPair((0.0, 1.0) * 5, 1000.0), 1.0,
                     "variance, one row at 1000x the upper bound (clamped)"),
    PrivacyLossAudit("variance_int_empty", VAR_INT, NeighbourPair((), 10), 1.0,
                     "integer variance (numeric answer), 0 vs 1 rows"),
    PrivacyLossAudit("stddev_clamp", SD_FLOAT8, NeighbourPair((0.0, 1.0) * 5, -1000.0), 1.0,
                     "standard deviation, one row far below the lower bound"),
    PrivacyLossAudit("gauss_variance_one_two", GAUSS_VAR_FLOAT8, NeighbourPair((0.0,), 1.0), 1.0,
                     "Gaussian variance of 1 vs 2 rows"),
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
# rows against c - 1 rows, or a group of one row against no group at all.
# The optimal rule (laws.optimal_partition_selection) releases a group of c
# rows with pi(c), and attains delta at epsilon in EVERY pair c - 1 vs c
# below n* (on {released} while pi grows by e^eps, on {not released} near 1):
# each pair is a delta audit at the claimed epsilon. The audit draws groups
# of every size c = 1 .. n* + 2 at once from one table.
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
    def table(self) -> Tuple[float, ...]:
        return optimal_partition_selection(self.epsilon, self.delta)

    @property
    def always_released(self) -> int:
        """n*: groups of n* rows or more are always released."""
        return len(self.table)

    @property
    def counts(self) -> Tuple[int, ...]:
        """Group sizes of the exact-law check: 1 .. n* + 2."""
        return tuple(range(1, self.always_released + 3))

    @property
    def pair_counts(self) -> Tuple[int, ...]:
        """c of the neighbouring pairs (c - 1 rows vs c rows): c = 2 (delta
        attained on {released}) and c = n* (on {not released})."""
        return tuple(sorted({2, self.always_released}))

    def release_probability(self, count: int) -> float:
        return optimal_release_probability(count, self.table)

    @property
    def statistical_tests(self) -> int:
        """Exact law (one test: a union of binomial tests), two directions per
        pair, and the delta bound of the one-row group."""
        return 1 + 2 * len(self.pair_counts) + 1


GROUP_SELECTION_AUDITS = [
    GroupSelectionAudit("groups_eps1", 1.0, 0.1,
                        "n* = 5 (0.1, 0.372, 0.806, 0.965); a one-row group is released "
                        "with delta exactly"),
    GroupSelectionAudit("groups_eps0.3", 0.3, 0.1,
                        "epsilon off the 24-bit grid, n* = 7; one-row group 0.1"),
]
GROUP_SELECTION_MAX_COUNT = max(max(a.counts) for a in GROUP_SELECTION_AUDITS)


# Partition selection over privacy units (docs/analyst_guide.md "Privacy units"): a key is
# selected on the number of distinct units kept in its group, at
# group_selection_epsilon / m (m = max_groups_contributed, 1 here).
# Neighbours differ by every row of one unit: the heavy unit has heavy_rows
# rows in the audited group G and as many in a group of its own, and keeps
# one of the two, each with probability 1/2. D = G with c - 1 one-row units,
# D' = G with the heavy unit too: P_D = p(c - 1) and P_D' = (p(c - 1) +
# p(c)) / 2, a mixture whose delta at epsilon is at most half that of c - 1
# vs c units (P_D' - e^eps P_D = (p(c) - e^eps p(c - 1)) / 2 + (1 - e^eps)
# p(c - 1) / 2 <= delta / 2, the same for {not released}); for c = 1, D has
# no group G and D' releases it with p(1) / 2 <= delta / 2. Row by row
# (skip_unit_bounding) G holds c - 1 + heavy_rows rows, and a group of
# 1 + heavy_rows rows is released surely (n* = 5 at (1, 0.1)).
@dataclass(frozen=True)
class UnitGroupSelectionAudit:
    key: str
    rows: GroupSelectionAudit  # the same (epsilon, delta) over rows: n*, p(c)
    purpose: str
    heavy_rows: int = 10

    @property
    def label(self) -> str:
        return f"group_selection units d={self.rows.delta:g}"

    @property
    def sizes(self) -> Tuple[int, ...]:
        """c of the audited groups: c one-row units (plain), or c - 1 one-row
        units and the heavy unit (heavy), c = 1 .. n* + 1."""
        return tuple(range(1, self.rows.always_released + 2))

    @property
    def pair_counts(self) -> Tuple[int, ...]:
        return self.rows.pair_counts

    def release_probability(self, units: int, heavy: bool, fault: str = "none") -> float:
        p = lambda c: self.rows.release_probability(c) if c > 0 else 0.0
        if not heavy:
            return p(units)
        if fault == SKIP_UNITS:
            return p(units - 1 + self.heavy_rows)
        return 0.5 * (p(units - 1) + p(units))

    @property
    def statistical_tests(self) -> int:
        """Exact law (one union test over plain and heavy groups), two
        directions per pair, and the delta bound of the heavy unit alone."""
        return 1 + 2 * len(self.pair_counts) + 1


UNIT_GROUP_SELECTION_AUDITS = [
    UnitGroupSelectionAudit("unit_groups_eps1", GROUP_SELECTION_AUDITS[0],
                            "a unit of 20 rows in two groups: one unit in one of them"),
]
# Drawn per group kind and size; the self-check (skip_unit_bounding, pair
# c = 2: p(1) = 0.1 against p(11) = 1) needs far fewer.
UNIT_GROUP_SELECTION_SAMPLES = 20_000
UNIT_GROUP_SELECTION_SELF_CHECK_SAMPLES = 4_000

# Broken partition selection for the self-check: (audit key, fault, epsilon
# factor, delta released with or None), audited against the claim.
# halve_noise doubles the effective epsilon in group_selection's state
# (initial_state.cpp PrepareGroupSelectionState): the table is planned for
# 2 epsilon (at (1, 0.1): 0.1, 0.839, 1 instead of 0.1, 0.372, 0.806, 0.965,
# 1; the pair 1 vs 2 rows has delta 0.57 at the claimed epsilon).
# epsilon x1.25 is a smaller gap (0.1, 0.449: delta 0.18); a larger delta
# releases a one-row group with it (0.15 at epsilon 0.3, 0.3 at epsilon 1).
# optimal_one_sided (fault 56) drops the rule's second inequality: groups
# reach 1 too early (at (1, 0.1): 0.1, 0.372, 1), and the pair of n* - 1 vs
# n* rows has delta 1 - 0.372 = 0.63 on {not released}.
CI_GROUP_SELECTION_SELF_CHECKS = (("groups_eps1", HALVE, 1.0, None),
                                  ("groups_eps0.3", "none", 1.0, 0.15),
                                  ("groups_eps1", ONE_SIDED, 1.0, None))
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
# Per group size; a release of group_selection costs well under 1 us (one
# 64-bit draw). The self-checks draw twice as many (REPORT.md).
CI_GROUP_SELECTION_SAMPLES = 20_000
CI_GROUP_SELECTION_SELF_CHECK_SAMPLES = 40_000
# Released with epsilon 1.25 x the claim: the noise scale divided by 1.25, a
# gap four times smaller than halve_noise's (REPORT.md: samples it needs).
CI_SELF_CHECKS = (("count_empty", HALVE, 1.0), ("count_empty", "none", 1.25),
                  ("sum_int_clamp", SKIP, 1.0), ("sum_float8_clamp", SKIP, 1.0),
                  ("sum_float8_clamp", "none", 1.25), ("avg_narrow_clamp", SKIP, 1.0),
                  ("select_tie", HALVE, 1.0), ("select_tie", "none", 1.25),
                  ("percentile_extreme", HALVE, 1.0), ("gauss_count_empty", HALVE, 1.0),
                  ("gauss_sum_int_clamp", SKIP, 1.0), ("unit_count", SKIP_UNITS, 1.0),
                  ("unit_sum", SKIP_UNITS, 1.0), ("unit_median", SKIP_UNITS, 1.0),
                  ("unit_avg", SKIP_UNITS, 1.0),
                  ("unit_select", SKIP_UNITS, 1.0))
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
