#!/usr/bin/python3
"""docs/architecture.md's map of the code must list exactly the source files of src/.

The map is the first ``` block of docs/architecture.md. A line that starts in column 0
with a directory (`src/pg/`, `src/pg/citus/`) opens that directory; a line indented by
two spaces names one entry of it, then its description:

    src/pg/        the PostgreSQL layer
      ledger       shared-memory charge queue, ...      <- src/pg/ledger.{c,cpp,h}
      sqlstates.h  dp_agg's own SQLSTATEs                <- exactly src/pg/sqlstates.h
      citus/peer   ...                                   <- src/pg/citus/peer.{c,cpp,h}

Deeper-indented lines continue a description. An entry without an extension stands for
every file of that stem (.c, .cpp, .h); with an extension, for that file only. The SQL
files of src/sql/ (NN_name.sql) are held by their number: "NN" must appear in the
description of `src/sql/`.

Checks, both ways: every .c/.cpp/.h under src/ (and every src/sql/*.sql) is on the map,
and every entry of the map names a file that exists. Also: every unit test
test/unit/<name>_test.cpp is named after the file it tests, a src/core/<name>.cpp or a
test helper test/unit/<name>.h (<name>_<aspect>_test.cpp for a second file of tests). Each finding names the file and
says what to change. Exit status 1 on findings; --self-test checks the checker on a
planted tree (a file missing from the map, an entry without a file) and must pass.
"""

import os
import re
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = "docs/architecture.md"
SOURCE_EXTENSIONS = (".c", ".cpp", ".h")
DIR_LINE = re.compile(r"^(src/\S*/)\s*(.*)$")
ENTRY_LINE = re.compile(r"^  (\S+)(?:\s+(.*))?$")


def read_map(text):
    """(entries, sql_description): entries is a list of (line number, directory, name)."""
    lines = text.split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("```"))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    except StopIteration:
        raise SystemExit(f"check_architecture_doc: {DOC} has no ``` block with the map")
    entries, sql_description, directory = [], "", None
    for number in range(start + 1, end):
        line = lines[number]
        match = DIR_LINE.match(line)
        if match:
            directory = match.group(1)
            if directory == "src/sql/":
                sql_description = match.group(2)
            continue
        if not line.startswith("  ") or directory is None:
            directory = None if line and not line.startswith(" ") else directory
            continue
        if directory == "src/sql/":
            sql_description += " " + line.strip()
            continue
        match = ENTRY_LINE.match(line)
        if match:
            entries.append((number + 1, directory, match.group(1)))
    return entries, sql_description


def source_files(root):
    found = []
    for base, dirs, files in os.walk(os.path.join(root, "src")):
        dirs.sort()
        for name in sorted(files):
            path = os.path.relpath(os.path.join(base, name), root)
            if name.endswith(SOURCE_EXTENSIONS) or (path.startswith("src/sql/") and name.endswith(".sql")):
                found.append(path)
    return found


def check(root):
    """Findings as a list of sentences."""
    with open(os.path.join(root, DOC), encoding="utf-8") as page:
        entries, sql_description = read_map(page.read())
    files = source_files(root)
    findings = []
    covered = set()
    for number, directory, name in entries:
        if os.path.splitext(name)[1] in SOURCE_EXTENSIONS:
            matches = [directory + name] if directory + name in files else []
        else:
            matches = [directory + name + ext for ext in SOURCE_EXTENSIONS
                       if directory + name + ext in files]
        if not matches:
            findings.append(f"{DOC}:{number}: the map lists {directory}{name}, but no such source "
                            f"file exists ({directory}{name}{{.c,.cpp,.h}}): rename or remove the line")
        covered.update(matches)
    sql_numbers = set(re.findall(r"\b(\d\d)\b", sql_description))
    for path in files:
        if path.startswith("src/sql/"):
            number = os.path.basename(path)[:2]
            if number not in sql_numbers:
                findings.append(f"{path} is missing from {DOC}'s map: name its number "
                                f"{number} and its concern in the description of src/sql/")
        elif path not in covered:
            directory, name = os.path.split(path)
            stem = os.path.splitext(name)[0]
            findings.append(f"{path} is missing from {DOC}'s map: add a line "
                            f"'  {stem}  <what it does>' under '{directory}/' (a directory "
                            f"line of its own if there is none)")
    findings += unit_test_findings(root)
    return findings, len(files)


def unit_test_findings(root):
    unit = os.path.join(root, "test", "unit")
    if not os.path.isdir(unit):
        return []
    core = {os.path.splitext(n)[0] for n in os.listdir(os.path.join(root, "src", "core"))
            if n.endswith(".cpp")}
    helpers = {os.path.splitext(n)[0] for n in os.listdir(unit) if n.endswith(".h")}
    findings = []
    for name in sorted(os.listdir(unit)):
        if not name.endswith("_test.cpp"):
            continue
        stem = name[:-len("_test.cpp")]
        if stem in core or stem in helpers or any(stem.startswith(c + "_") for c in core):
            continue
        findings.append(f"test/unit/{name} is not named after the file it tests: rename it "
                        f"test/unit/<file>_test.cpp, <file> a src/core/<file>.cpp it tests")
    return findings


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        for path in ("src/core/kept.cpp", "src/core/kept.h", "src/pg/only.h", "src/pg/sub/a.c",
                     "src/pg/unlisted.cpp", "src/sql/10_x.sql", "src/sql/20_y.sql"):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            open(os.path.join(root, path), "w").close()
        with open(os.path.join(root, DOC), "w", encoding="utf-8") as page:
            page.write("# Architecture\n\n```\nsrc/core/  core\n  kept   a file\n"
                       "         continued\n  gone   no such file\nsrc/pg/  pg\n  only.h  one\n"
                       "src/pg/sub/  sub\n  a  c file\nsrc/sql/  10 x\n```\n")
        findings, _ = check(root)
        expected = [("src/core/gone", "no such source file"),
                    ("src/pg/unlisted.cpp", "missing from"), ("src/sql/20_y.sql", "missing from")]
        ok = len(findings) == len(expected) and all(
            any(name in f and what in f for f in findings) for name, what in expected)
        print("check_architecture_doc self-test: " + ("ok" if ok else "FAILED"))
        for finding in findings:
            print("  planted: " + finding)
        return 0 if ok else 1


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    findings, count = check(ROOT)
    for finding in findings:
        print("not ok - " + finding)
    print(f"check_architecture_doc: {count} source files, {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
