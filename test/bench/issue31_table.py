#!/usr/bin/python3
"""Prints issue 31's table from the paired rounds the benchmarks wrote (test/bench/issue31.sh).

Input: a tab-separated file of "key round baseline dp unit" lines, one per round
(baseline and dp measured in turn within the round). For each measure: the median
of the baselines, the median of the dp figures, their ratio (or difference), the
spread (min-max of the per-round ratios or differences), the issue's target and
whether the medians meet it. A benchmark, not a test: it never fails on a target.

  issue31_table.py --pairs FILE --rows N [--citus skipped|run] [--load-start S] [--load-end S]
                   [--failed NAME ...]
"""
import argparse
import collections
import statistics
import sys

# (issue row, key, what is compared, kind, target value, target text)
#   kind ratio: dp / baseline, met when <= target
#   slowdown: tps baseline / tps dp, or dp / baseline for a cost (CPU per statement), met
#     when <= target
#   throughput: tps dp / tps baseline, met when >= target
#   diff: dp - baseline in ms, met when <= target (None: one fsync, measured in the run)
ROWS = []


def add(row, key, label, kind, target, text):
    ROWS.append((row, key, label, kind, target, text))


_AGG = [("count_i", "dp_count(int4)"), ("count_f", "dp_count(float8)"),
        ("sum_i", "dp_sum(int4)"), ("avg_i", "dp_avg(int4)"),
        ("sum_f", "dp_sum(float8)"), ("avg_f", "dp_avg(float8)")]
for mode in ("serial", "parallel"):
    for qid, name in _AGG:
        add("1 count/sum/avg int4/float8", f"agg/{mode}/{qid}", f"{name}, {mode}",
            "ratio", 1.05, "<= 1.05x")
for mode in ("serial", "parallel"):
    for qid, name in (("sum_n", "dp_sum(numeric)"), ("avg_n", "dp_avg(numeric)")):
        add("2 numeric", f"agg/{mode}/{qid}", f"{name}, {mode}", "ratio", 1.0,
            "keep (0.91-0.93x): <= 1.00x")
add("3 1M one-row groups", "agg/serial/groups1row", "count+sum+avg GROUP BY g, serial", "ratio",
    1.5, "<= 1.5x")
for key, label in (("count_id", "dp_count GROUP BY id (distribution column)"),):
    add("4 Citus GROUP BY dist. column", f"citus/{key}", label, "ratio", 1.5, "<= 1.5x")
for key, label in (("count", "dp_count, no GROUP BY"), ("sum", "dp_sum, no GROUP BY"),
                   ("avg", "dp_avg, no GROUP BY"), ("count_grp", "dp_count, 10 groups"),
                   ("sum_grp", "dp_sum, 10 groups"), ("avg_grp", "dp_avg, 10 groups")):
    add("5 Citus no/small GROUP BY", f"citus/{key}", label, "ratio", 1.1, "<= 1.1x")
add("6 privacy units", "units/0", "unit-level dp_sum vs two-level SQL, serial, no statistics",
    "ratio", 1.3, "<= 1.3x")
for mode in ("serial", "parallel"):
    for qid, name in (("gauss_count", "dp_count(e, d)"), ("gauss_sum", "dp_sum(e, d)"),
                      ("gauss_avg", "dp_avg(e, d)")):
        add("7 Gaussian, no GROUP BY", f"agg/{mode}/{qid}", f"{name} vs built-in, {mode}",
            "ratio", 1.05, "<= 1.05x")
add("8 dp_count(DISTINCT)", "agg/serial/distinct", "vs count(DISTINCT i), serial", "ratio", 1.1,
    "<= 1.1x")
add("9 dp_avg_interval", "agg/serial/interval1", "vs dp_avg, one group, serial", "ratio", 1.3,
    "<= 1.3x")
add("9 dp_avg_interval", "agg/serial/interval1000", "vs dp_avg, 1,000 groups, serial", "ratio",
    1.3, "<= 1.3x")
for qid, name, now in (("median", "dp_median vs percentile_cont", "0.44-0.61x"),
                       ("pctl", "dp_percentile vs percentile_disc", "0.57x"),
                       ("mode", "dp_select vs mode()", "0.32x")):
    add("10 quantiles, mode", f"agg/serial/{qid}", f"{name}, serial", "ratio", 1.0,
        f"keep ({now}): <= 1.00x")
add("11 Gaussian fixed cost", "agg/serial/gauss_fixed",
    "3 Gaussian forms - 3 Laplace forms, one-row table, serial", "diff", 1.0, "<= 1 ms")
add("12 dp_avg_interval(numeric)", "agg/serial/interval_n",
    "vs dp_avg(numeric), per row, serial", "perrow", 1.05,
    "no per-row cost beyond dp_avg's: <= 1.05x")
for protocol in ("simple", "prepared"):
    for clients in (1, 8):
        add("13 pgbench -S, preloaded", f"preload/{protocol}/{clients}",
            f"{protocol}, {clients} client{'s' if clients > 1 else ''}", "slowdown", 1.02,
            "<= 1.02x")
add("14 the charge", "ledger/latency", "dp_count - count(x), 1 client, latency", "diff", None,
    "<= one fsync")
for clients in (1, 4, 16):
    add("15 charge throughput", f"ledger/tps/{clients}",
        f"dp_count vs naive INSERT ledger, {clients} client{'s' if clients > 1 else ''}",
        "throughput", 1.0, ">= 1.00x naive")


def fmt(v, digits=3):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--rows", type=int, required=True, help="rows of bench_t (per-row costs)")
    ap.add_argument("--citus", choices=("run", "skipped"), default="run")
    ap.add_argument("--load-start", default="?")
    ap.add_argument("--load-end", default="?")
    ap.add_argument("--failed", nargs="*", default=[], help="benchmarks that failed")
    args = ap.parse_args()

    pairs = collections.defaultdict(list)  # key -> [(base, dp)]
    units = {}
    empty = collections.Counter()  # key -> rounds that gave no figure
    with open(args.pairs, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                continue
            key, _round, base, dp, unit = parts
            units[key] = unit
            try:
                pairs[key].append((float(base), float(dp)))
            except ValueError:
                empty[key] += 1  # a run that printed nothing (e.g. pgbench ran no transaction)
    fsync = pairs.get("ref/fsync_ms", [(None, None)])[0][0]

    print("| issue row | measure | metric | baseline | dp | ratio | spread (paired) | target | met |")
    print("|---|---|---|---:|---:|---:|---|---|---|")
    tally = collections.Counter()
    for row, key, label, kind, target, text in ROWS:
        got = pairs.get(key, [])
        if key.startswith("citus/") and args.citus == "skipped":
            print(f"| {row} | {label} | - | - | - | - | - | {text} | skipped: no Citus |")
            tally["skipped"] += 1
            continue
        if not got and empty[key]:
            print(f"| {row} | {label} | - | - | - | - | - | {text} |"
                  f" not measured ({empty[key]} round(s) gave no figure) |")
            tally["missing"] += 1
            continue
        if not got:
            why = "not measured (a benchmark failed, below)" if args.failed else "not measured"
            print(f"| {row} | {label} | - | - | - | - | - | {text} | {why} |")
            tally["missing"] += 1
            continue
        unit = units[key]
        b = statistics.median(p[0] for p in got)
        d = statistics.median(p[1] for p in got)
        n = len(got)
        if kind == "diff":
            value = d - b
            paired = [p[1] - p[0] for p in got]
            limit = fsync if target is None else target
            if target is None:
                text = f"<= one fsync ({fmt(fsync)} ms)" if fsync is not None else text
            met = None if limit is None else value <= limit
            shown = f"{value:+.3f} ms"
            spread = f"{min(paired):+.3f} .. {max(paired):+.3f} ms"
        else:
            if kind == "slowdown" and unit == "tps":
                ratio = b / d if d else float("inf")
                paired = [p[0] / p[1] for p in got if p[1]]
            else:
                ratio = d / b if b else float("inf")
                paired = [p[1] / p[0] for p in got if p[0]]
            met = ratio >= target if kind == "throughput" else ratio <= target
            shown = f"{ratio:.3f}x"
            if kind == "perrow":
                shown += f" ({(d - b) * 1e6 / args.rows:+.1f} ns/row)"
            spread = f"{min(paired):.3f} .. {max(paired):.3f}x" if paired else "-"
        verdict = "no fsync figure" if met is None else ("yes" if met else "**no**")
        if n < 5:
            verdict += " (fewer than 5 rounds)"
        tally["missing" if met is None else "met" if met else "not met"] += 1
        metric = f"{unit}, median of {n}"
        if empty[key]:
            metric += f" ({empty[key]} round(s) gave no figure)"
        print(f"| {row} | {label} | {metric} | {fmt(b)} | {fmt(d)} | {shown} |"
              f" {spread} | {text} | {verdict} |")
    print()
    print(f"summary: {tally['met']} met, {tally['not met']} not met, {tally['skipped']} skipped,"
          f" {tally['missing']} not measured; load average (1, 5, 15 min) at start"
          f" {args.load_start}, at end {args.load_end}")
    if args.failed:
        print("failed: " + ", ".join(args.failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
