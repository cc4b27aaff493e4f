#!/usr/bin/env bash
# Runs dp_agg's TAP tests (PostgreSQL::Test::Cluster from postgresql-server-dev-15)
# as the postgres user in a temporary directory: initdb refuses to run as root.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# The PostgreSQL installation under test: the one of $PG_CONFIG (as for
# `make install`), else the pg_config on PATH.
PG_CONFIG=${PG_CONFIG:-pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
[[ -x "$PGBIN/initdb" && -d "$PGXS_DIR/src/test/perl" ]] ||
  { echo "run_tap.sh: no initdb or TAP modules for $PG_CONFIG ($PGBIN, $PGXS_DIR)" >&2; exit 1; }
work=$(mktemp -d /tmp/dp_agg_tap.XXXXXX)
chmod 755 "$work"
# The tests run from a copy in the work directory: the checkout itself may
# not be readable by the postgres user (a clone in a private temp directory).
cp -r "$ROOT/test/tap" "$work/tap"
run_as=()
if [[ $(id -u) -eq 0 ]]; then
  chown -R postgres "$work"
  run_as=(runuser -u postgres --)
fi
# Arguments naming test files (e.g. test/tap/006_ledger_cold_writers.pl) pick
# those tests; other arguments go to prove. Without test files, all of them run.
tests=() prove_args=()
for arg in "$@"; do
  if [[ $arg == *.pl ]]; then tests+=("$work/tap/$(basename "$arg")"); else prove_args+=("$arg"); fi
done
[[ ${#tests[@]} -gt 0 ]] || tests=("$work"/tap/*.pl)
status=0
(cd "$work" && "${run_as[@]}" env \
  PATH="$PGBIN:$PATH" \
  PERL5LIB="$PGXS_DIR/src/test/perl:$work/tap" \
  PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
  TESTDIR="$work" PGUSER=postgres \
  prove --timer ${prove_args[@]+"${prove_args[@]}"} "${tests[@]}") || status=$?
if [[ $status -ne 0 ]]; then
  find "$work" -name '*.log' -path '*log*' -newer "$ROOT/test/tap/run_tap.sh" -print | head -20
  echo "TAP logs kept in $work"
else
  rm -rf "$work"
fi
exit $status
