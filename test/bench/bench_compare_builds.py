#!/usr/bin/env python3
"""Benchmark (not a test): the same queries on two servers running two builds of
dp_agg (e.g. before and after a restructuring), interleaved query by query
(A, B, then B, A in the next round), so that a loaded machine's drift falls on
both builds alike. Prints a Markdown table per query: median of each build and
the median and range of the paired after/before ratios.

  bench_compare_builds.py aggregates A B [--rows N] [--groups N] [--runs N]
      A, B: SOCKETDIR:PORT of two running single-node servers
      (test/scripts/cluster.sh start, one per build). The queries of
      test/bench/bench_aggregates.sh, serial and with 2 parallel workers, on
      bench_t / bench_g built with the same seed on both servers.
  bench_compare_builds.py citus A B [--rows N] [--runs N]
      A, B: CITUS_PORT_BASE of two running test/citus/cluster.sh clusters
      (coordinator socket /tmp/dp_agg_citus_BASE, port BASE). The shapes of
      test/bench/bench_citus.sh on a distributed bench_t.

Figures per run:
  cpu   user+system CPU of the query's backend, leader only (log_executor_stats)
  tree  user+system CPU of every process of the server (of all three nodes for
        Citus) over the query: /proc of the postmasters and their children,
        including reaped ones (cutime), so parallel workers and Citus's worker
        backends count; includes the connection's start and end
  ms    EXPLAIN ANALYZE Execution Time (single node) or psql \\timing (Citus)
Run as root or the servers' OS user (reads postmaster.pid and /proc).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

PSQL = os.environ.get("PSQL", "psql")
TICK = os.sysconf("SC_CLK_TCK")

AGG_BASE = ["count(i)", "sum(i)", "avg(i)", "sum(f)", "avg(f)", "sum(n)", "avg(n)",
            "mode() WITHIN GROUP (ORDER BY i % 10)",
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY f)"]
AGG_DP = ["dp_count(i, 1.0)", "dp_sum(i, 0, 1000000, 1.0)", "dp_avg(i, 0, 1000000, 1.0)",
          "dp_sum(f, 0.0, 1.0, 1.0)", "dp_avg(f, 0.0, 1.0, 1.0)",
          "dp_sum(n, 0, 1000, 1.0)", "dp_avg(n, 0, 1000, 1.0)",
          "dp_select(i % 10, ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 1.0)",
          "dp_median(f, 0.0, 1.0, 1.0)"]
MODES = {
    "serial": ["SET max_parallel_workers_per_gather = 0"],
    "parallel": ["SET max_parallel_workers_per_gather = 2", "SET parallel_setup_cost = 0",
                 "SET parallel_tuple_cost = 0", "SET min_parallel_table_scan_size = 0"],
}
CITUS = [
    ("count, no GROUP BY", "SELECT count(v) FROM bench_t", "SELECT dp_count(v, 1.0) FROM bench_t"),
    ("sum, no GROUP BY", "SELECT sum(v) FROM bench_t", "SELECT dp_sum(v, 0, 1000, 1.0) FROM bench_t"),
    ("avg, no GROUP BY", "SELECT avg(v) FROM bench_t", "SELECT dp_avg(v, 0, 1000, 1.0) FROM bench_t"),
    ("count, GROUP BY grp", "SELECT grp, count(v) FROM bench_t GROUP BY grp",
     "SELECT grp, dp_count(v, 1.0) FROM bench_t GROUP BY grp"),
    ("sum, GROUP BY grp", "SELECT grp, sum(v) FROM bench_t GROUP BY grp",
     "SELECT grp, dp_sum(v, 0, 1000, 1.0) FROM bench_t GROUP BY grp"),
    ("avg, GROUP BY grp", "SELECT grp, avg(v) FROM bench_t GROUP BY grp",
     "SELECT grp, dp_avg(v, 0, 1000, 1.0) FROM bench_t GROUP BY grp"),
    ("count, GROUP BY id, id <= 100000", "SELECT id, count(v) FROM bench_t WHERE id <= 100000 GROUP BY id",
     "SELECT id, dp_count(v, 1.0) FROM bench_t WHERE id <= 100000 GROUP BY id"),
]
USAGE = re.compile(r"([0-9.]+) s user, ([0-9.]+) s system, ([0-9.]+) s elapsed")


class Server:
    def __init__(self, name, sockdir, port, datadirs):
        self.name, self.sockdir, self.port, self.datadirs = name, sockdir, port, datadirs

    def psql(self, sql_lines, check=True):
        cmd = [PSQL, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", self.sockdir,
               "-p", str(self.port), "-U", "postgres", "-d", "postgres"]
        for s in sql_lines:
            cmd += ["-c", s]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if check and p.returncode != 0:
            sys.exit(f"{self.name}: psql failed: {p.stderr.strip()}")
        return p

    def tree_cpu(self):
        """CPU seconds of the postmasters, their live children and reaped children."""
        total = 0
        pms = []
        for d in self.datadirs:
            with open(os.path.join(d, "postmaster.pid")) as f:
                pms.append(int(f.readline()))
        children = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            st = _stat(pid)
            if st and int(st[1]) in pms:
                children[pid] = int(st[11]) + int(st[12])
        for pm in pms:
            st = _stat(str(pm))
            total += sum(int(x) for x in st[11:15])
        total += sum(children.values())
        return total / TICK


def _stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    return s[s.rindex(")") + 2:].split()  # fields from state (3rd) on: index 11 = utime


def measure(srv, settings, query, explain):
    sql = list(settings) + ["SET jit = off", "SET log_executor_stats = on",
                            "SET client_min_messages = log"]
    if explain:
        sql.append("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) " + query)
    else:
        sql += ["\\timing on", query]
    t0 = srv.tree_cpu()
    p = srv.psql(sql)
    time.sleep(0.25)  # let the backends exit and be reaped
    tree = srv.tree_cpu() - t0
    u = USAGE.findall(p.stderr)
    if not u:
        sys.exit(f"{srv.name}: no executor statistics in: {p.stderr[:500]}")
    cpu = float(u[-1][0]) + float(u[-1][1])
    if explain:
        ms = float(re.findall(r"Execution Time: ([0-9.]+) ms", p.stdout)[-1])
    else:
        ms = float(re.findall(r"^Time: ([0-9.]+) ms", p.stdout, re.M)[-1])
    return {"cpu": cpu * 1000, "tree": tree * 1000, "ms": ms}


def setup_aggregates(srv, rows, groups):
    tag, gtag = f"dp_agg bench rows={rows}", f"dp_agg bench groups={groups}"
    srv.psql(["CREATE EXTENSION IF NOT EXISTS dp_agg",
              "SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.5)"])
    have = srv.psql(["SELECT coalesce(obj_description(to_regclass('bench_t'), 'pg_class'), '')"]).stdout.strip()
    if have != tag:
        srv.psql(["SET client_min_messages = warning", "DROP TABLE IF EXISTS bench_t",
                  "CREATE UNLOGGED TABLE bench_t (i int4, f float8, n numeric)",
                  f"SELECT setseed(0.5); INSERT INTO bench_t SELECT (random() * 1000000)::int4, random(),"
                  f" round((random() * 1000)::numeric, 2) FROM generate_series(1, {rows})",
                  "VACUUM ANALYZE bench_t", f"COMMENT ON TABLE bench_t IS '{tag}'"])
    have = srv.psql(["SELECT coalesce(obj_description(to_regclass('bench_g'), 'pg_class'), '')"]).stdout.strip()
    if have != gtag:
        srv.psql(["SET client_min_messages = warning", "DROP TABLE IF EXISTS bench_g",
                  "CREATE UNLOGGED TABLE bench_g (g int4, i int4)",
                  f"SELECT setseed(0.25); INSERT INTO bench_g SELECT g, (random() * 1000000)::int4"
                  f" FROM generate_series(1, {groups}) g",
                  "VACUUM ANALYZE bench_g", f"COMMENT ON TABLE bench_g IS '{gtag}'"])


def setup_citus(srv, rows):
    have = srv.psql(["SELECT coalesce(obj_description(to_regclass('bench_t'), 'pg_class'), '')"]).stdout.strip()
    tag = f"dp_agg citus bench rows={rows}"
    if have != tag:
        srv.psql(["SET client_min_messages = warning", "DROP TABLE IF EXISTS bench_t",
                  "CREATE TABLE bench_t(id bigint, grp int, v int)",
                  "SELECT create_distributed_table('bench_t', 'id')",
                  f"INSERT INTO bench_t SELECT g, g % 10, (g::bigint * 7919) % 1000 FROM generate_series(1, {rows}) g",
                  f"COMMENT ON TABLE bench_t IS '{tag}'"])
        srv.psql(["VACUUM ANALYZE bench_t"])
    srv.psql(["SELECT dp_agg.set_budget('postgres', 1e9, 0.5)"])


def summarize(label, runs_a, runs_b, out):
    cells = []
    for metric in ("cpu", "tree", "ms"):
        a = [r[metric] for r in runs_a]
        b = [r[metric] for r in runs_b]
        ratios = [y / x for x, y in zip(a, b) if x > 0]
        ma, mb = statistics.median(a), statistics.median(b)
        if ratios:
            cells.append(f"{ma:.0f} | {mb:.0f} | {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f})")
        else:
            cells.append(f"{ma:.0f} | {mb:.0f} | -")
    line = f"| {label} | " + " | ".join(cells) + " |"
    print(line, file=out, flush=True)


def header(out, what):
    print(f"| {what} | cpu A | cpu B | B/A (range) | tree A | tree B | B/A (range) "
          f"| ms A | ms B | B/A (range) |", file=out)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", file=out, flush=True)


def paired(a, b, settings, query, explain, runs):
    ra, rb = [], []
    measure(a, settings, query, explain)  # warm-up
    measure(b, settings, query, explain)
    for r in range(runs):
        order = (a, b) if r % 2 == 0 else (b, a)
        res = {s.name: measure(s, settings, query, explain) for s in order}
        ra.append(res[a.name])
        rb.append(res[b.name])
    return ra, rb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["aggregates", "citus"])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--groups", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default=None, help="only queries whose label matches this regex")
    args = ap.parse_args()
    out = sys.stdout
    if args.kind == "aggregates":
        rows = args.rows or 2000000
        servers = []
        for name, spec in (("A", args.a), ("B", args.b)):
            sockdir, port = spec.rsplit(":", 1)
            servers.append(Server(name, sockdir, int(port), [os.path.join(sockdir, "data")]))
        for s in servers:
            setup_aggregates(s, rows, args.groups)
        print(f"bench_t {rows} rows, bench_g {args.groups} one-row groups, {args.runs} paired runs;"
              f" times in ms", file=out)
        header(out, "mode | query (dp_ vs built-in)".replace(" | ", " / "))
        queries = [(AGG_BASE[i], AGG_DP[i], "FROM bench_t") for i in range(len(AGG_BASE))]
        queries.append(("g, count(i), sum(i), avg(i)",
                        "g, dp_count(i, 1.0), dp_sum(i, 0, 1000000, 1.0), dp_avg(i, 0, 1000000, 1.0)",
                        "FROM bench_g GROUP BY g"))
        for mode, settings in MODES.items():
            for base, dp, tail in queries:
                for kind, agg in (("built-in", base), ("dp", dp)):
                    label = f"{mode} {kind} {agg} {tail}"
                    if args.only and not re.search(args.only, label):
                        continue
                    ra, rb = paired(*servers, settings, f"SELECT {agg} {tail}", True, args.runs)
                    summarize(label, ra, rb, out)
    else:
        rows = args.rows or 1000000
        servers = []
        for name, spec in (("A", args.a), ("B", args.b)):
            base = int(spec)
            root = f"/tmp/dp_agg_citus_{base}"
            servers.append(Server(name, root, base, [f"{root}/node{i}" for i in range(3)]))
        for s in servers:
            setup_citus(s, rows)
        print(f"Citus bench_t {rows} rows, 32 shards, 2 workers, {args.runs} paired runs; times in ms",
              file=out)
        header(out, "query")
        for name, base, dp in CITUS:
            for kind, q in (("built-in", base), ("dp", dp)):
                label = f"{name}: {kind}"
                if args.only and not re.search(args.only, label):
                    continue
                ra, rb = paired(*servers, [], q, False, args.runs)
                summarize(label, ra, rb, out)


if __name__ == "__main__":
    main()
