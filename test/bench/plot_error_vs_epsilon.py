#!/usr/bin/python3
"""Measured error of dp_count / dp_sum / dp_avg versus epsilon -> docs/error_vs_epsilon.png

How to run (from the repository root, against a running server with dp_agg
preloaded; the connection comes from the usual libpq variables):

    PGHOST=/tmp/my_cluster PGPORT=54349 PGUSER=postgres PGDATABASE=postgres \
        /usr/bin/python3 test/bench/plot_error_vs_epsilon.py --grant-budget

Use Debian's /usr/bin/python3 (needs python3-psycopg2, python3-numpy,
python3-matplotlib). Runs in 15-25 seconds with the defaults (2 cores).

THE FIGURES ARE MEASURED, NOT SIMULATED. Every point comes from real releases
of the installed extension: a TEMP table holds --groups groups of --rows
synthetic ages (18..90, bell-shaped, fixed seed), and for each epsilon ONE
query

    SELECT g, dp_count(age, e), dp_sum(age, 0, 110, e), dp_avg(age, 0, 110, e),
              (the same with delta 1e-6), dp_avg_interval(...) ... GROUP BY g

returns one independent release per group (every group of a GROUP BY is a
separate release).

Sharing a budget (docs/administrator_guide.md "Privacy budgets"): the same query also releases
each aggregate as ONE OF 100 releases that share an (epsilon, delta)
guarantee: the Laplace form at epsilon / 100 (an (epsilon, delta) budget,
basic composition), and the Gaussian form at
dp_agg.gaussian_count_epsilon(dp_agg.zcdp_rho(epsilon, delta) / 100, delta),
the epsilon at which a Gaussian count costs a hundredth of the rho of that
guarantee, which is how a zCDP budget of dp_agg.zcdp_rho(epsilon, delta)
admits 100 of them (dp_agg.query_cost prints the rho of each form, and the table
the ratio to the share: the sum's is within 0.1% of the count's, the mean's
lower). For these series the x axis is the budget shared by the 100 releases. The error of a release is |answer - exact answer| (the
exact answers come from count/sum/avg over the same groups); the script
reports its median (dotted lines) and 95th percentile (open circles) over the
groups. The dashed lines are the extension's own analytic 95% margins
(dp_count_margin, dp_sum_margin, computed from the parameters alone); for the
mean, the dashed line is the average half-width of the dp_avg_interval
intervals, which are conservative by construction. "coverage" is the share
of groups whose exact answer lies inside the released 95% interval.

Privacy budget: this spends, from the session user's budget, 8 x (sum of the
epsilon grid) plus the shared series (3 x epsilon / 100 and 3 Gaussian
releases per epsilon), about epsilon 190 and delta 7e-5 with the defaults, on
synthetic data. Run it on a throwaway cluster. --grant-budget adds that
amount (plus a little) first with dp_agg.add_budget (needs superuser or dp_agg.admin_role);
without it the session user must already have the budget.

Options: --groups N (5000), --rows N (1000), --delta D (1e-6),
         --out PATH (docs/error_vs_epsilon.png), --grant-budget
"""
import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import psycopg2  # noqa: E402

EPSILONS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
LOWER, UPPER = 0, 110      # public bounds for an age
CONFIDENCE = 0.95
AGGREGATES_PER_QUERY = 8   # 3 Laplace + 3 Gaussian + 2 dp_avg_interval
SHARED = 100               # the shared series: one of 100 releases sharing the budget

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--groups", type=int, default=5000)
    p.add_argument("--rows", type=int, default=1000)
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "error_vs_epsilon.png"))
    p.add_argument("--grant-budget", action="store_true",
                   help="add the budget this run needs to the session user (admin only)")
    a = p.parse_args()
    if a.groups < 20 or a.rows < 1:
        p.error("--groups must be >= 20 and --rows >= 1")
    return a


def setup(cur, args):
    cur.execute("SELECT count(*) FROM pg_extension WHERE extname = 'dp_agg'")
    if cur.fetchone()[0] == 0:
        cur.execute("CREATE EXTENSION dp_agg")
    shares = {}
    for e in EPSILONS:
        cur.execute("SELECT dp_agg.gaussian_count_epsilon(dp_agg.zcdp_rho(%s, %s) / %s, %s)",
                    (e, args.delta, SHARED, args.delta))
        shares[e] = float(cur.fetchone()[0])
    need_eps = (AGGREGATES_PER_QUERY * sum(EPSILONS) + 3 * sum(EPSILONS) / SHARED
                + 3 * sum(shares.values()))
    need_delta = 7 * args.delta * len(EPSILONS)
    if args.grant_budget:
        # Rounded up: the ledger charges each epsilon as its shortest decimal.
        cur.execute("SELECT dp_agg.add_budget(session_user::regrole, %s, %s)",
                    (need_eps * 1.001 + 1, need_delta * 1.001))
    # Basic composition's remaining amounts (what this run's budget check
    # needs: it spends by basic composition when granted this way).
    cur.execute("SELECT epsilon_total - epsilon_spent, delta_total - delta_spent "
                "FROM dp_agg.budgets WHERE role = session_user")
    eps_left, delta_left = (float(x) for x in cur.fetchone())
    if eps_left < need_eps or delta_left < need_delta:
        sys.exit(f"this run needs epsilon {need_eps:.2f} and delta {need_delta:.1e} of the "
                 f"session user's budget; only {eps_left} / {delta_left} left "
                 "(rerun with --grant-budget as an administrator)")

    # Synthetic ages, bell-shaped on 18..90 (mean of three uniforms), fixed seed.
    t0 = time.time()
    cur.execute("SELECT setseed(0.42)")
    cur.execute(
        """CREATE TEMP TABLE bench_ages AS
           SELECT g, (18 + floor((random() + random() + random()) / 3 * 73))::int AS age
           FROM generate_series(1, %s) AS g, generate_series(1, %s) AS r""",
        (args.groups, args.rows))
    cur.execute("ANALYZE bench_ages")
    cur.execute("""SELECT g, count(age)::float8, sum(age)::float8, avg(age)::float8
                   FROM bench_ages GROUP BY g ORDER BY g""")
    truth = np.array(cur.fetchall(), dtype=float)
    print(f"table: {args.groups} groups x {args.rows} rows "
          f"(mean age {truth[:, 3].mean():.1f}) in {time.time() - t0:.1f} s", file=sys.stderr)
    return truth, shares


def measure(cur, eps, delta, truth, share):
    cur.execute(
        """SELECT g, c_l::float8, c_g::float8, s_l::float8, s_g::float8, a_l::float8, a_g::float8,
                  (i_l).value, (i_l).low, (i_l).high, (i_g).value, (i_g).low, (i_g).high,
                  c_l100::float8, c_g100::float8, s_l100::float8, s_g100::float8,
                  a_l100::float8, a_g100::float8
           FROM (SELECT g,
                        dp_count(age, %(e)s::float8) AS c_l,
                        dp_count(age, %(e)s::float8, %(d)s::float8) AS c_g,
                        dp_sum(age, %(lo)s, %(hi)s, %(e)s::float8) AS s_l,
                        dp_sum(age, %(lo)s, %(hi)s, %(e)s::float8, %(d)s::float8) AS s_g,
                        dp_avg(age, %(lo)s, %(hi)s, %(e)s::float8) AS a_l,
                        dp_avg(age, %(lo)s, %(hi)s, %(e)s::float8, %(d)s::float8) AS a_g,
                        dp_avg_interval(age::float8, %(lo)s, %(hi)s, %(e)s::float8,
                                        %(c)s::float8) AS i_l,
                        dp_avg_interval(age::float8, %(lo)s, %(hi)s, %(e)s::float8,
                                        %(d)s::float8, %(c)s::float8) AS i_g,
                        dp_count(age, %(e100)s::float8) AS c_l100,
                        dp_count(age, %(share)s::float8, %(d)s::float8) AS c_g100,
                        dp_sum(age, %(lo)s, %(hi)s, %(e100)s::float8) AS s_l100,
                        dp_sum(age, %(lo)s, %(hi)s, %(share)s::float8, %(d)s::float8) AS s_g100,
                        dp_avg(age, %(lo)s, %(hi)s, %(e100)s::float8) AS a_l100,
                        dp_avg(age, %(lo)s, %(hi)s, %(share)s::float8, %(d)s::float8) AS a_g100
                 FROM bench_ages GROUP BY g) q
           ORDER BY g""",
        {"e": eps, "d": delta, "lo": LOWER, "hi": UPPER, "c": CONFIDENCE, "e100": eps / SHARED,
         "share": share})
    r = np.array(cur.fetchall(), dtype=float)
    assert np.array_equal(r[:, 0], truth[:, 0])
    cur.execute("""SELECT dp_count_margin(%(e)s, 0, %(c)s), dp_count_margin(%(e)s, %(d)s, %(c)s),
                          dp_sum_margin(%(lo)s, %(hi)s, %(e)s, 0, %(c)s),
                          dp_sum_margin(%(lo)s, %(hi)s, %(e)s, %(d)s, %(c)s)""",
                {"e": eps, "d": delta, "lo": LOWER, "hi": UPPER, "c": CONFIDENCE})
    m_cl, m_cg, m_sl, m_sg = cur.fetchone()

    out = {}
    for agg, col, t, margins in (("count", 1, truth[:, 1], (m_cl, m_cg)),
                                 ("sum", 3, truth[:, 2], (m_sl, m_sg)),
                                 ("avg", 5, truth[:, 3], (None, None))):
        for k, mech in enumerate(("laplace", "gaussian")):
            err = np.abs(r[:, col + k] - t)
            row = {"median": float(np.median(err)), "p95": float(np.percentile(err, 95)),
                   "margin": margins[k]}
            if margins[k] is not None:
                row["coverage"] = float(np.mean(err <= margins[k]))
            else:  # dp_avg_interval: average half-width and coverage of the intervals
                v, lo, hi = (r[:, 7 + 3 * k + j] for j in range(3))
                row["margin"] = float(np.mean((hi - lo) / 2))
                row["coverage"] = float(np.mean((lo <= t) & (t <= hi)))
            out[(agg, mech)] = row
    # The shared series (columns 13..18): error only.
    for agg, col, t in (("count", 13, truth[:, 1]), ("sum", 15, truth[:, 2]),
                        ("avg", 17, truth[:, 3])):
        for k, mech in enumerate(("laplace100", "gaussian100")):
            err = np.abs(r[:, col + k] - t)
            out[(agg, mech)] = {"median": float(np.median(err)),
                                "p95": float(np.percentile(err, 95))}
    # The rho each Gaussian form of the shared series is charged.
    rhos = []
    for call in (f"dp_count(age, {share!r}, {delta!r})",
                 f"dp_sum(age, {LOWER}, {UPPER}, {share!r}, {delta!r})",
                 f"dp_avg(age, {LOWER}, {UPPER}, {share!r}, {delta!r})"):
        cur.execute("SELECT rho FROM dp_agg.query_cost(%s)", (f"SELECT {call} FROM bench_ages",))
        rhos.append(float(cur.fetchone()[0]))
    out["rho"] = rhos
    return out


def print_table(results, args):
    print(f"\nMeasured |answer - truth| over {args.groups} groups of {args.rows} rows "
          f"(ages 18..90, bounds {LOWER}..{UPPER}); Gaussian delta = {args.delta:g}.")
    print("margin: dp_count_margin / dp_sum_margin (95%); for avg, the mean half-width of "
          "dp_avg_interval. cov: share of groups inside the 95% interval.")
    for agg in ("count", "sum", "avg"):
        print(f"\n{agg}:")
        print(f"{'epsilon':>8} | {'Laplace median':>14} {'p95':>9} {'margin':>9} {'cov':>6} |"
              f" {'Gauss median':>12} {'p95':>9} {'margin':>9} {'cov':>6}")
        fmt = "{:9.3g}" if agg == "avg" else "{:9.4g}"
        for eps in EPSILONS:
            cells = []
            for mech in ("laplace", "gaussian"):
                x = results[eps][(agg, mech)]
                w = 14 if mech == "laplace" else 12
                cells.append(f"{x['median']:>{w}.4g} {fmt.format(x['p95'])} "
                             f"{fmt.format(x['margin'])} {x['coverage']:6.3f}")
            print(f"{eps:>8g} | {cells[0]} | {cells[1]}")
    print(f"\nOne of {SHARED} releases sharing the budget (epsilon, delta={args.delta:g}): "
          "Laplace at epsilon/100 (basic composition) vs Gaussian at the epsilon whose rho is "
          "a hundredth of zcdp_rho(epsilon, delta) (the zCDP accountant).")
    for agg in ("count", "sum", "avg"):
        print(f"\n{agg}:")
        print(f"{'budget':>8} | {'Laplace median':>14} {'p95':>9} | {'Gauss median':>12} "
              f"{'p95':>9} | {'p95 ratio':>9} | {'rho charged / rho share':>24}")
        for eps in EPSILONS:
            lap, gau = results[eps][(agg, "laplace100")], results[eps][(agg, "gaussian100")]
            rho_share = results[eps]["rho_share"]
            charged = results[eps]["rho"][("count", "sum", "avg").index(agg)]
            print(f"{eps:>8g} | {lap['median']:>14.4g} {lap['p95']:9.4g} | "
                  f"{gau['median']:>12.4g} {gau['p95']:9.4g} | "
                  f"{lap['p95'] / max(gau['p95'], 1e-300):9.2f} | {charged / rho_share:24.6f}")


def plot(results, truth, args, elapsed):
    eps = np.array(EPSILONS)
    colours = {"laplace": "#1f77b4", "gaussian": "#d62728", "laplace100": "#17becf",
               "gaussian100": "#ff7f0e"}
    labels = {"laplace": "Laplace (ε)", "gaussian": f"Gaussian (ε, δ={args.delta:g})",
              "laplace100": f"Laplace, 1 of {SHARED} sharing ε (ε/{SHARED} each)",
              "gaussian100": f"Gaussian, 1 of {SHARED} sharing (ε, δ) in zCDP"}
    titles = {"count": "dp_count(age, ε)",
              "sum": f"dp_sum(age, {LOWER}, {UPPER}, ε)",
              "avg": f"dp_avg(age, {LOWER}, {UPPER}, ε)"}
    typical = {"count": float(args.rows), "sum": float(np.mean(truth[:, 2])),
               "avg": float(np.mean(truth[:, 3]))}

    fig, axes = plt.subplots(1, 3, figsize=(16, 7.4))
    for ax, agg in zip(axes, ("count", "sum", "avg")):
        for mech in ("laplace", "gaussian"):
            c = colours[mech]
            med = np.array([results[e][(agg, mech)]["median"] for e in EPSILONS])
            p95 = np.array([results[e][(agg, mech)]["p95"] for e in EPSILONS])
            mar = np.array([results[e][(agg, mech)]["margin"] for e in EPSILONS])
            # Zeros cannot be drawn on a log axis: mask them (see the note below).
            ax.plot(eps, np.where(mar > 0, mar, np.nan), "--", color=c, lw=1.6, zorder=2)
            ax.plot(eps, np.where(p95 > 0, p95, np.nan), "o", color=c, ms=7, mfc="white",
                    mew=2, zorder=3)
            ax.plot(eps, np.where(med > 0, med, np.nan), ":s", color=c, lw=1.3, ms=4,
                    alpha=0.85, zorder=2)
        for mech in ("laplace100", "gaussian100"):
            c = colours[mech]
            p95 = np.array([results[e][(agg, mech)]["p95"] for e in EPSILONS])
            ax.plot(eps, np.where(p95 > 0, p95, np.nan), "-^", color=c, lw=1.4, ms=6, zorder=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon (ε)")
        ax.set_ylabel(f"absolute error of {agg}" + (" (years)" if agg == "avg" else ""))
        ax.set_title(titles[agg])
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.12)
        t = typical[agg]
        sec = ax.secondary_yaxis("right", functions=(lambda y, t=t: y / t * 100,
                                                     lambda p, t=t: p * t / 100))
        sec.set_ylabel(f"% of a typical true {agg} ({t:,.0f})" if agg != "avg" else
                       f"% of the true mean ({t:.1f})")
        if agg == "count":
            zero = [e for e in EPSILONS if results[e][("count", "laplace")]["median"] == 0]
            if zero:
                ax.text(0.03, 0.03, "Count noise is an integer: missing points\n"
                        "are errors (or margins) of exactly 0.",
                        transform=ax.transAxes, fontsize=8, va="bottom",
                        bbox=dict(boxstyle="round", fc="white", ec="0.7"))
    handles, names = [], []
    for mech in ("laplace", "gaussian"):
        c = colours[mech]
        handles += [plt.Line2D([], [], ls="", marker="o", color=c, ms=7, mfc="white", mew=2),
                    plt.Line2D([], [], ls="--", color=c, lw=1.6),
                    plt.Line2D([], [], ls=":", marker="s", color=c, lw=1.3, ms=4)]
        names += [f"{labels[mech]}: measured 95th percentile of |answer − truth|",
                  f"{labels[mech]}: claimed 95% error bar (dp_count_margin, dp_sum_margin; "
                  "for avg: mean half-width of dp_avg_interval)",
                  f"{labels[mech]}: measured median of |answer − truth|"]
    for mech in ("laplace100", "gaussian100"):
        handles.append(plt.Line2D([], [], ls="-", marker="^", color=colours[mech], ms=6))
        names.append(f"{labels[mech]}: measured 95th percentile (x = the shared budget)")
    fig.legend(handles, names, loc="lower center", ncol=2, fontsize=8.5, frameon=False,
               bbox_to_anchor=(0.5, 0.035))
    fig.suptitle("dp_agg: measured error vs ε — one release per group, "
                 f"{args.groups:,} groups × {args.rows:,} ages (18–90), bounds {LOWER}..{UPPER}",
                 fontsize=13)
    fig.text(0.5, 0.01, "Measured, not simulated: releases of the installed extension "
             f"(test/bench/plot_error_vs_epsilon.py, {elapsed:.0f} s). A 95th-percentile "
             "point on its dashed line means the error bar is exactly as wide as it should be.",
             ha="center", fontsize=9, color="0.3")
    fig.tight_layout(rect=(0, 0.17, 1, 0.95))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out, dpi=150)
    print(f"\nwrote {args.out}", file=sys.stderr)


def main():
    args = parse_args()
    start = time.time()
    conn = psycopg2.connect("")  # PGHOST, PGPORT, PGUSER, PGDATABASE, ...
    conn.autocommit = True
    cur = conn.cursor()
    truth, shares = setup(cur, args)
    results = {}
    for eps in EPSILONS:
        t0 = time.time()
        results[eps] = measure(cur, eps, args.delta, truth, shares[eps])
        cur.execute("SELECT dp_agg.zcdp_rho(%s, %s) / %s", (eps, args.delta, SHARED))
        results[eps]["rho_share"] = float(cur.fetchone()[0])
        print(f"epsilon {eps:g}: {time.time() - t0:.1f} s", file=sys.stderr)
    conn.close()
    elapsed = time.time() - start
    print_table(results, args)
    plot(results, truth, args, elapsed)
    print(f"total {elapsed:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
