"""REPORT.md and privacy_loss.png, written by --report.
"""

import math
import subprocess
import time
from typing import List, Sequence, Tuple

import numpy as np
from scipy import stats

from .auditor import Auditor, format_bound, format_delta
from .constants import AUDIT_DIR, FALSE_FAILURE_BUDGET
from .laws import (discrete_gaussian_pmf, discrete_laplace_decay, discrete_laplace_pmf,
                   gaussian_sigma2_for)
from .sample_size import epsilon_gap_requirements, gaussian_gap_requirements
from .statistics import NoiseBins, chi_square_power, pooled_groups
from .suites import (CI_GROUP_SELECTION_SAMPLES, CI_GROUP_SELECTION_SELF_CHECK_SAMPLES,
                     CI_QUANTILE_SAMPLES, CI_SAMPLES, EXACT_NOISE_AUDITS, ExactNoiseAudit,
                     GAUSS_DELTA, PRIVACY_LOSS_AUDITS)


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
               "(`dp_agg.group_selection(epsilon, delta)`: a group of c rows is released with "
               "probability pi(c) of the optimal rule of Desfontaines et al., PoPETs 2022).")
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
               "n* + 2 against pi(c) (exact two-sided binomial tests, Bonferroni over the "
               "sizes), pi computed by the suite from the definition in 50-digit arithmetic. "
               "reuse: the "
               "release cache (README \"Reusing released answers\"): a statement of 1,000 "
               "releases asked twice, and again after a row is added to its table, gives the "
               "same answers, charged once, with 'reused' ledger rows of epsilon 0 "
               "(deterministic); fresh: with the period 0, the same statement draws afresh.")
    out.append("")
    sections = ("gauss-calibration", "exact-noise", "exact-selection", "exact-groups",
                "answer-set", "float-grid", "avg-range", "low-bits", "reuse", "fresh")
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
        "the events are {released} and {not released}. The optimal rule attains delta at "
        "epsilon between c - 1 and c rows for every c below n* (on {released} while pi "
        "grows by e^epsilon, on {not released} as it approaches 1), so every pair is a "
        "delta audit at the claimed epsilon, and the true delta equals the claim: the "
        "certified lower bounds stay below delta by the Clopper-Pearson margin. A larger "
        "delta, halve_noise (the table for 2 epsilon: 0.1, 0.839, 1 at (1, 0.1), delta 0.57 "
        "between 1 and 2 rows) and optimal_one_sided (fault 56: 0.1, 0.372, 1, delta 0.63 "
        "on {not released} between 2 and 3 rows) are caught by the pair or one-row audits "
        "and by the exact law.",
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
