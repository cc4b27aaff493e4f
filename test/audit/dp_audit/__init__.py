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
which releases a group of c rows with probability pi(c) of the optimal rule
of Desfontaines et al., PoPETs 2022, until pi reaches 1 at n*) is audited on
one table of groups of every size c = 1 .. n* + 2: each group of one
statement is an independent release. The suite computes pi itself from the
definition (50-digit decimals), compares the release frequency of each size
with pi(c) (exact binomial tests); certifies delta at the claimed epsilon
between groups of c - 1 and c rows (c = 2 and c = n*; the rule attains delta
in both) as above; and, for a group of one row against no group (never
released), certifies a lower bound on P[released] and FAILS when it exceeds
delta. Its self-check: under halve_noise (the table for 2 epsilon), at
epsilon x1.25, with a larger delta, and under optimal_one_sided (the rule
without its second inequality, fault 56), the audits must FAIL.

Privacy units (docs/analyst_guide.md "Privacy units"): neighbours differ by all rows of one
unit. The table's rows are (u, k, x) with u labelled privacy_unit (made
distinct per group g), and the release is group k = 1 of
    SELECT k, dp_...(x, ...) FROM dataset WHERE g <= n GROUP BY g, k
D' adds a unit with 10 rows in k = 1 and 10 in k = 2; the certified loss of
dp_count, dp_count(DISTINCT u), dp_sum, dp_median and dp_select must stay
below epsilon, the quantile and selection answers must follow the exact law
of one value per unit (its lower median, its most frequent value) mixed over
whether the added unit keeps group 1 (probability 1/2), and under the fault
skip_unit_bounding (the per-unit rewrite left out, rows counted one by one)
the self-check of dp_count, dp_sum, dp_median and dp_select must FAIL
(dp_count(DISTINCT u) row by row still counts each unit once in the group).

The release cache (docs/analyst_guide.md "Reusing released answers"): a statement of 1,000
releases asked twice, and again after a row is added to its table (D becomes
D') inside the period, must give exactly the same answers, be charged once and
leave 'reused' ledger rows of epsilon 0; with the period 0 (as every other
audit draws) it must draw afresh; under the fault cache_invalidated_by_writes
the added row must make a fresh release, which the self-check must detect
(reuse.py).

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

Layout of the package:
    constants    the audit's failure budget, and the extension's constants read
                 from its C++ source (never copied)
    laws         the mechanisms' exact laws, recomputed from their definitions
    statistics   Clopper-Pearson bounds, certified loss and delta, events, chi-square
    suites       what to audit: mechanisms, neighbours, audits, self-checks, plans
    database     sampling releases from the reserved audit database
    auditor      runs a plan and records its outcomes
    reuse        the release cache: a reuse is the same release, free, also after a
                 neighbour's row is added
    accountant   a sequence of Gaussian releases sharing (1, 1e-6), audited as a whole
                 against the zCDP accountant's reported loss (exact composition,
                 chi-square of the sufficient statistic, certified delta)
    sample_size  sample sizes needed to catch a violation (--long, REPORT.md)
    report       REPORT.md and privacy_loss.png
    cli          the command line (run_audit.sh runs test/audit/audit.py, which calls it)
"""


class ExtensionConstantError(Exception):
    """A constant the audit reads from the extension's source was not found."""
