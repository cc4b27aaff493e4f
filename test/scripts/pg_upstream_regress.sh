#!/usr/bin/env bash
# PostgreSQL's own regression suite (src/test/regress, parallel_schedule) with dp_agg preloaded.
#
#   test/scripts/pg_upstream_regress.sh        (or: make upstream-regress; takes minutes)
#
# Runs the suite twice in pg_regress temp instances, first without and then with
# shared_preload_libraries = 'dp_agg', and compares the two runs test by test. Tests that fail
# in both runs with the same diff (environment, source/server minor-version skew) are not
# dp_agg's doing. The only difference allowed is the known one: in `security_label`, each
# unqualified SECURITY LABEL ON ... that failed with "no security label providers have been
# loaded" now reaches dp_agg's label provider and fails with dp_agg's (or the object lookup's)
# error instead. Exits 0 and closes with `upstream regress: N passed, M failed` (counts of the
# dp_agg run) only then; exits 1 on any other difference, 2 on a set-up failure.
#
# Sources: the postgresql-15 Debian source package of the installed server's version, fetched
# once with `apt-get source` into $DP_AGG_PG_SRC_CACHE (default /var/cache/dp_agg/postgresql-15-src;
# as root it adds /etc/apt/sources.list.d/dp_agg-src.sources with deb-src lines for bookworm
# and bookworm-security). If the archive no longer (or not yet) offers that exact version, the
# newest postgresql-15 source it offers is used with a warning (the comparison is between two
# runs of the same sources, so that stays meaningful); DP_AGG_UPSTREAM_EXACT=1 refuses instead.
# DP_AGG_PG_SRC=/path/to/postgresql-15.x uses an unpacked source tree and skips apt.
#
# Env: PG_CONFIG (default: the pg_config on PATH), PG_BINDIR (default: `$PG_CONFIG --bindir`),
#      DP_AGG_TEST_PORT (default 54329),
#      DP_AGG_UPSTREAM_KEEP=1 keeps the work dir (/tmp/dp_agg_upstream.*) for inspection.
# dp_agg must already be installed into that server (make build / make install).
# As root, pg_regress and its temp instances run as OS user postgres.
# shellcheck disable=SC2317  # cleanup runs from the EXIT trap
set -euo pipefail

PG_CONFIG=${PG_CONFIG:-pg_config}
PG_BINDIR=${PG_BINDIR:-$("$PG_CONFIG" --bindir 2>/dev/null || true)}
PORT=${DP_AGG_TEST_PORT:-54329}
CACHE=${DP_AGG_PG_SRC_CACHE:-/var/cache/dp_agg/postgresql-15-src}
PG_OS_USER=postgres
START=$SECONDS

say() { echo "pg_upstream_regress: $*"; }
die() { echo "pg_upstream_regress: $*" >&2; exit 2; }

as_pg() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u "$PG_OS_USER" -- "$@"; else "$@"; fi
}

command -v "$PG_CONFIG" >/dev/null || die "no pg_config at $PG_CONFIG (set PG_CONFIG, or run make deps)"
[[ -x "$PG_BINDIR/postgres" ]] || die "no postgres in $PG_BINDIR"
PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)
PG_REGRESS="$PKGLIBDIR/pgxs/src/test/regress/pg_regress"
[[ -x "$PG_REGRESS" ]] || die "no pg_regress at $PG_REGRESS (postgresql-server-dev-15)"
[[ -f "$PKGLIBDIR/dp_agg.so" ]] || die "dp_agg is not installed in $PKGLIBDIR (run make build)"
PYTHON=$(command -v /usr/bin/python3 || command -v python3) || die "python3 is needed"

# "PostgreSQL 15.20 (Debian 15.20-0+deb12u1)" -> 15.20 and 15.20-0+deb12u1
VERSION_LINE=$("$PG_CONFIG" --version)
UPSTREAM_VER=$(sed -E 's/^PostgreSQL ([0-9]+\.[0-9]+).*/\1/' <<<"$VERSION_LINE")
DEBIAN_VER=$(sed -nE 's/.*\(Debian ([^)]+)\).*/\1/p' <<<"$VERSION_LINE")
[[ "$UPSTREAM_VER" == 15.* ]] || die "expected a PostgreSQL 15 server, pg_config says: $VERSION_LINE"

# ---------------------------------------------------------------- sources
have_tree() { [[ -f "$1/src/test/regress/parallel_schedule" && -f "$1/contrib/spi/refint.c" ]]; }

apt_q() {
  env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 "$@"
}

ensure_deb_src() {
  local listed
  listed=$(apt-cache showsrc postgresql-15 2>/dev/null || true)
  if grep -q '^Version:' <<<"$listed"; then return 0; fi
  [[ $(id -u) -eq 0 ]] || die "no deb-src for postgresql-15 and not root: set DP_AGG_PG_SRC"
  say "adding /etc/apt/sources.list.d/dp_agg-src.sources (deb-src bookworm, bookworm-security)" >&2
  cat >/etc/apt/sources.list.d/dp_agg-src.sources <<'EOF'
# Added by dp_agg test/scripts/pg_upstream_regress.sh: PostgreSQL's regression suite sources.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt_q -qq update >/dev/null
}

# Unpack only what the suite needs from a cached orig tarball: prints the tree's path.
unpack() {  # $1 = upstream version
  local tree="$CACHE/postgresql-$1" tarball
  have_tree "$tree" && { echo "$tree"; return 0; }
  tarball=$(find "$CACHE" -maxdepth 1 -name "postgresql-15_$1.orig.tar.*" 2>/dev/null | head -n1 || true)
  [[ -n "$tarball" ]] || return 1
  say "unpacking $(basename "$tarball") (src/test/regress, contrib/spi)" >&2
  tar -C "$CACHE" -xf "$tarball" "postgresql-$1/src/test/regress" "postgresql-$1/contrib/spi"
  have_tree "$tree" && echo "$tree"
}

fetch_sources() {
  local tree deb_ver up_ver
  if tree=$(unpack "$UPSTREAM_VER"); then echo "$tree"; return 0; fi
  # Installs no package itself (only make deps/demo/test do): dpkg-dev comes with make deps.
  command -v dpkg-source >/dev/null 2>&1 ||
    die "dpkg-source not found: run make deps (or apt-get install dpkg-dev), or set DP_AGG_PG_SRC"
  ensure_deb_src
  mkdir -p "$CACHE"
  if [[ -n "$DEBIAN_VER" ]] && (cd "$CACHE" && apt_q -qq source --download-only \
        "postgresql-15=$DEBIAN_VER" >&2 2>/dev/null); then
    tree=$(unpack "$UPSTREAM_VER") && { echo "$tree"; return 0; }
  fi
  [[ "${DP_AGG_UPSTREAM_EXACT:-0}" == 1 ]] &&
    die "the archive offers no postgresql-15 source $DEBIAN_VER (DP_AGG_UPSTREAM_EXACT=1)"
  # The newest version the archive really serves (the index may list files not yet mirrored).
  for deb_ver in $(apt-cache showsrc postgresql-15 | sed -n 's/^Version: //p' | sort -rV); do
    up_ver=${deb_ver%%-*}
    if tree=$(unpack "$up_ver") ||
       { (cd "$CACHE" && apt_q -qq source --download-only "postgresql-15=$deb_ver" >&2 2>/dev/null) &&
         tree=$(unpack "$up_ver"); }; then
      echo "$tree"; return 0
    fi
  done
  die "could not get postgresql-15 sources (set DP_AGG_PG_SRC to an unpacked tree)"
}

if [[ -n "${DP_AGG_PG_SRC:-}" ]]; then
  SRC=$DP_AGG_PG_SRC
  have_tree "$SRC" || die "$SRC has no src/test/regress/parallel_schedule and contrib/spi"
else
  SRC=$(fetch_sources)
fi
SRC_VER=$(basename "$SRC" | sed -nE 's/^postgresql-([0-9.]+)$/\1/p')
if [[ -n "$SRC_VER" && "$SRC_VER" != "$UPSTREAM_VER" ]]; then
  say "WARNING: server is $UPSTREAM_VER but the archive's sources are $SRC_VER;" \
      "tests whose expected output changed in between fail in both runs alike"
fi
say "server $VERSION_LINE; suite from $SRC"

# ---------------------------------------------------------------- work dir and test modules
id "$PG_OS_USER" >/dev/null 2>&1 || [[ $(id -u) -ne 0 ]] || die "OS user $PG_OS_USER does not exist"
WORK=$(mktemp -d /tmp/dp_agg_upstream.XXXXXX)
cleanup() {
  if [[ "${DP_AGG_UPSTREAM_KEEP:-0}" == 1 ]]; then say "work dir kept: $WORK"
  else rm -rf -- "$WORK"; fi
}
trap cleanup EXIT

cp -r "$SRC/src/test/regress" "$WORK/regress"
mkdir "$WORK/lib"
cp "$SRC/src/test/regress/regress.c" "$SRC/contrib/spi/refint.c" "$SRC/contrib/spi/autoinc.c" "$WORK/lib/"
cat >"$WORK/lib/Makefile" <<'EOF'
# regress.so, refint.so and autoinc.so for the suite (--dlpath), built against the server.
MODULES = regress refint autoinc
PG_CPPFLAGS = -DREFINT_VERBOSE
override with_llvm = no
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
EOF
if ! make -C "$WORK/lib" PG_CONFIG="$PG_CONFIG" >"$WORK/lib/build.log" 2>&1; then
  tail -n 30 "$WORK/lib/build.log" >&2
  die "building regress.so/refint.so/autoinc.so failed"
fi
chmod -R a+rX "$WORK"
[[ $(id -u) -ne 0 ]] || chown -R "$PG_OS_USER:" "$WORK"

# ---------------------------------------------------------------- the two runs
run_suite() {  # $1 = plain | dp_agg
  local out="$WORK/$1" conf="$WORK/$1.conf" rc=0 t0=$SECONDS
  mkdir -p "$out"
  {
    echo "# pg_upstream_regress.sh, run '$1'"
    [[ "$1" == dp_agg ]] && echo "shared_preload_libraries = 'dp_agg'"
    true
  } >"$conf"
  [[ $(id -u) -ne 0 ]] || chown -R "$PG_OS_USER:" "$out" "$conf"
  say "run '$1' ..."
  (cd "$WORK" && as_pg env LC_ALL=C LANG=C "$PG_REGRESS" \
      --temp-instance="$out/tmp_check" --temp-config="$conf" --bindir="$PG_BINDIR" \
      --port="$PORT" --no-locale --encoding=UTF8 --max-concurrent-tests=20 \
      --inputdir="$WORK/regress" --outputdir="$out" --dlpath="$WORK/lib" \
      --schedule="$WORK/regress/parallel_schedule" >"$out/stdout" 2>&1) || rc=$?
  grep -E 'tests (passed|failed)|failed \(ignored\)' "$out/stdout" | sed 's/^ */    /' || true
  say "run '$1': pg_regress exit $rc, $((SECONDS - t0)) s"
  if ! grep -qE '^(test )? *[a-z0-9_]+ +\.\.\. ' "$out/stdout"; then
    tail -n 30 "$out/stdout" >&2
    die "pg_regress ran no tests in run '$1'"
  fi
}

run_suite plain
run_suite dp_agg

# ---------------------------------------------------------------- comparison
rc=0
"$PYTHON" - "$WORK" <<'PYEOF' || rc=$?
import difflib, os, re, sys

work = sys.argv[1]
NO_PROVIDER = "ERROR:  no security label providers have been loaded"
# What replaces it with dp_agg's provider: dp_agg's own refusal, or (for objects that do not
# exist) the object lookup's error, which now runs before any provider is asked.
KNOWN_NOW = re.compile(r'^ERROR:  (.*dp_agg.*|(relation|role) "[^"]+" does not exist)$')
STATUS = re.compile(r"^(?:test\s+)?\s*([A-Za-z0-9_.]+)\s+\.\.\.\s+(ok|FAILED|failed \(ignored\))")

def statuses(run):
    result = {}
    with open(os.path.join(work, run, "stdout")) as f:
        for line in f:
            m = STATUS.match(line)
            if m:
                result[m.group(1)] = "ok" if m.group(2) == "ok" else "FAILED"
    return result

def diffs(run):
    """Per-test diff bodies from regression.diffs, without headers and with paths removed."""
    path = os.path.join(work, run, "regression.diffs")
    result = {}
    if not os.path.exists(path):
        return result
    test = None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^diff .* \S*/results/([A-Za-z0-9_.]+)\.out$", line.rstrip("\n"))
            if m:
                test = m.group(1)
                result.setdefault(test, [])
                continue
            if test is None or re.match(r"^(---|\+\+\+) ", line):
                continue
            result[test].append(line.replace(os.path.join(work, run), "<OUT>"))
    return result

def results_lines(run, test):
    with open(os.path.join(work, run, "results", test + ".out"), errors="replace") as f:
        return f.read().splitlines()

plain, dp = statuses("plain"), statuses("dp_agg")
plain_diffs, dp_diffs = diffs("plain"), diffs("dp_agg")
problems = []

for test in sorted(set(plain) | set(dp)):
    if test == "security_label":
        continue
    a, b = plain.get(test, "missing"), dp.get(test, "missing")
    if a != b:
        problems.append(f"{test}: {a} without dp_agg, {b} with it")
    elif a == "FAILED" and plain_diffs.get(test) != dp_diffs.get(test):
        problems.append(f"{test}: fails in both runs, but differently")
        sys.stdout.writelines(difflib.unified_diff(
            plain_diffs.get(test, []), dp_diffs.get(test, []),
            f"{test} diff without dp_agg", f"{test} diff with dp_agg", n=1))

# security_label: compare the two runs' actual output, not the expected file.
try:
    a, b = results_lines("plain", "security_label"), results_lines("dp_agg", "security_label")
except OSError as e:
    problems.append(f"security_label: no results file ({e})")
    a = b = []
replaced = 0
for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
    if op == "equal":
        continue
    old, new = a[i1:i2], b[j1:j2]
    stmt = a[i1 - 1] if i1 > 0 else ""
    ok = (op == "replace" and old == [NO_PROVIDER]
          and re.match(r"^SECURITY LABEL ON ", stmt)
          and new and KNOWN_NOW.match(new[0])
          and all(re.match(r"^(ERROR|DETAIL|HINT):  ", l) for l in new))
    if ok:
        replaced += 1
        print(f"  security_label (known): {stmt.split(';')[0]};\n      was: {old[0]}\n      now: "
              + "\n           ".join(new))
    else:
        problems.append("security_label: unexpected change")
        print("\n".join(["  -" + l for l in old] + ["  +" + l for l in new]))
if a and replaced == 0:
    problems.append("security_label: the known message change did not happen (is dp_agg preloaded?)")
if a and any(l == NO_PROVIDER for l in b):
    problems.append("security_label: with dp_agg an unqualified SECURITY LABEL still finds no provider")

both = sorted(t for t in plain if plain[t] == "FAILED" and dp.get(t) == "FAILED" and t != "security_label")
if both:
    print(f"  failing in both runs alike (not dp_agg's doing): {', '.join(both)}")
passed = sum(1 for s in dp.values() if s == "ok")
failed = sum(1 for s in dp.values() if s != "ok")
if problems:
    print("pg_upstream_regress: UNEXPECTED differences with dp_agg preloaded:")
    for p in problems:
        print("  " + p)
    print(f"  diffs: {work}/plain/regression.diffs, {work}/dp_agg/regression.diffs")
    sys.exit(1)
print(f"  {replaced} security_label message(s) changed as known; nothing else differs "
      f"({len(dp)} tests)")
print(f"upstream regress: {passed} passed, {failed} failed")
PYEOF
say "$((SECONDS - START)) s in all"
if [[ $rc -ne 0 && "${DP_AGG_UPSTREAM_KEEP:-0}" != 1 ]]; then
  DP_AGG_UPSTREAM_KEEP=1; say "keeping $WORK for inspection"
fi
exit $rc
