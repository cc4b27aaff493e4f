"""Command line: argument parsing, the run and its summary line
("audit: N passed, M failed"); see run_audit.sh.
"""

import argparse
import dataclasses
import os
import sys
import time
from typing import Sequence

import psycopg2

from . import __doc__ as PACKAGE_DOC
from .auditor import Auditor
from .constants import AUDIT_DIR, FALSE_FAILURE_BUDGET
from .database import AuditDatabase, AuditSetupError
from .report import git_commit, write_plot, write_report
from .suites import ci_plan, long_plan, self_check_plan


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=PACKAGE_DOC.split("\n\n")[0])
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

