#!/usr/bin/python3
"""Which versions of dp_agg are released, decided from files every clone has (not git tags).

CHANGELOG.md has one heading per version, newest first:

    ## 0.2.0 (unreleased)                 the version being made: dp_agg.control's default_version
    ## 0.1.0 - 2026-11-24                 released on that date
    Install script: `sql/dp_agg--0.1.0.sql`, sha256 `da204dde...`  (the line after a release's heading)

A release's install script is frozen: the file in sql/ must have the recorded SHA-256, so an
edit to it fails here. Checks (make lint; exit status 1 on a finding, each line says what to
fix): dp_agg.control's default_version has a heading, which is the top one; at most one
version is unreleased, and only the newest; release dates are ISO dates, newest first; every
release other than default_version has its frozen install script with its recorded hash;
between consecutive versions there is an upgrade script sql/dp_agg--<old>--<new>.sql, listed
in the Makefile's DATA.

    check_release.py              run the checks
    check_release.py --previous   print the latest release other than default_version (the
                                  upgrade test starts from it), nothing if there is none
"""

import hashlib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HEADING = re.compile(r"^## (\d+\.\d+\.\d+)(?: - (\d{4}-\d{2}-\d{2})| \((unreleased)\))?\s*$")
SCRIPT_LINE = re.compile(r"^Install script: `(sql/dp_agg--[0-9.]+\.sql)`, sha256 `([0-9a-f]{64})`")


def control_version(root=ROOT):
    with open(os.path.join(root, "dp_agg.control"), encoding="utf-8") as control:
        for line in control:
            match = re.match(r"^default_version = '([^']+)'", line)
            if match:
                return match.group(1)
    raise SystemExit("check_release: dp_agg.control has no default_version")


def versions(root=ROOT):
    """[(version, date or None, unreleased, (script, sha256) or None, line number)], file order."""
    found = []
    with open(os.path.join(root, "CHANGELOG.md"), encoding="utf-8") as changelog:
        lines = changelog.read().split("\n")
    for number, line in enumerate(lines, start=1):
        match = HEADING.match(line)
        if not match and line.startswith("## "):
            found.append((line[3:].strip(), None, False, None, number))
            continue
        if match:
            script = None
            for following in lines[number:number + 3]:
                script_match = SCRIPT_LINE.match(following)
                if script_match:
                    script = (script_match.group(1), script_match.group(2))
                    break
            found.append((match.group(1), match.group(2), bool(match.group(3)), script, number))
    return found


def previous_release(root=ROOT):
    current = control_version(root)
    for version, date, _, _, _ in versions(root):
        if date and version != current:
            return version
    return None


def check(root=ROOT):
    findings = []
    current = control_version(root)
    listed = versions(root)
    with open(os.path.join(root, "Makefile"), encoding="utf-8") as makefile:
        data_line = next((l for l in makefile if l.startswith("DATA =")), "")
    for version, date, unreleased, _, number in listed:
        if not date and not unreleased:
            findings.append(f"CHANGELOG.md:{number}: heading '## {version}' says neither a date "
                            f"('## X.Y.Z - YYYY-MM-DD', released) nor '(unreleased)'")
    good = [entry for entry in listed if entry[1] or entry[2]]
    if not good or good[0][0] != current:
        findings.append(f"CHANGELOG.md: the top version heading must be dp_agg.control's "
                        f"default_version {current} ('## {current} (unreleased)' while it is made)")
    unreleased = [entry for entry in good if entry[2]]
    if len(unreleased) > 1 or (unreleased and unreleased[0] is not good[0]):
        findings.append("CHANGELOG.md: only the newest version may be '(unreleased)'")
    dates = [entry[1] for entry in good if entry[1]]
    if dates != sorted(dates, reverse=True):
        findings.append("CHANGELOG.md: release dates must go newest first")
    for version, date, _, script, number in good:
        if not date or version == current:
            continue
        frozen = f"sql/dp_agg--{version}.sql"
        if script is None or script[0] != frozen:
            findings.append(f"CHANGELOG.md:{number}: release {version} needs the line "
                            f"'Install script: `{frozen}`, sha256 `<sha256sum of it>`' after "
                            f"its heading")
            continue
        path = os.path.join(root, frozen)
        if not os.path.exists(path):
            findings.append(f"{frozen} (released {date}) is missing: restore it from the release")
            continue
        with open(path, "rb") as released:
            digest = hashlib.sha256(released.read()).hexdigest()
        if digest != script[1]:
            findings.append(f"{frozen} was released {date} with sha256 {script[1]} but now has "
                            f"{digest}: released install scripts are frozen (restore it; a change "
                            f"goes into the upgrade script of the next version)")
    names = [entry[0] for entry in good]
    for new, old in zip(names, names[1:]):
        upgrade = f"sql/dp_agg--{old}--{new}.sql"
        if not os.path.exists(os.path.join(root, upgrade)):
            findings.append(f"{upgrade} is missing: every version is reached from the one before")
        elif upgrade not in data_line.split():
            findings.append(f"{upgrade} is not in the Makefile's DATA: add it")
    return findings


def main():
    if "--previous" in sys.argv[1:]:
        previous = previous_release()
        if previous:
            print(previous)
        return 0
    findings = check()
    for finding in findings:
        print("not ok - " + finding)
    current = control_version()
    state = next(("released " + (e[1] or "") if e[1] else "unreleased"
                  for e in versions() if e[0] == current), "not in CHANGELOG.md")
    print(f"check_release: {current} ({state}), previous release "
          f"{previous_release() or 'none'}; {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
