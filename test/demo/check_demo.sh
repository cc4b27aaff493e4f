#!/usr/bin/env bash
# The quick starts and the demo agree (issue 28, finding 5). Against the
# running test cluster (eval "$(bash test/scripts/cluster.sh env)"), in a
# database of its own:
#  1. README's quick start for an administrator is test/demo/admin_quickstart.sql,
#     the statements `make demo` runs (only the password differs);
#  2. the demo script runs, and each query of its refused sections (8 and 9)
#     is refused with why (an ERROR with DETAIL), none answered;
#  3. the administrator quick start runs on the demo's data as written, and
#     lowers no budget (no NOTICE);
#  4. README's quick start for an analyst runs as written, as that analyst;
#  5. `make demo` builds with parallel jobs.
# Prints "ok N - ..." / "not ok N - ..." and "demo: N passed, M failed".
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
: "${PGHOST:?PGHOST not set: eval \"\$(bash test/scripts/cluster.sh env)\" first}"
DB=dp_agg_demo_check
work=$(mktemp -d /tmp/dp_agg_demo_check.XXXXXX)
chmod 755 "$work"
count=0
failures=0
check() {  # description, then a command; ok if it succeeds
  local description=$1
  shift
  count=$((count + 1))
  if "$@" >"$work/check.out" 2>&1; then
    echo "ok $count - $description"
  else
    failures=$((failures + 1))
    echo "not ok $count - $description"
    sed 's/^/# /' "$work/check.out" | head -40
  fi
}
cleanup() {
  # (it holds a dp_agg ledger: dropped only with the confirmation)
  psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" \
    -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1
  psql -X -q -d postgres -c "DROP ROLE IF EXISTS analyst" -c "DROP ROLE IF EXISTS demo_analyst" \
    >/dev/null 2>&1
  rm -rf -- "$work"
}
trap cleanup EXIT

# The SQL block that follows a README heading.
readme_block() {
  /usr/bin/python3 - "$1" <<'EOF'
import sys
text = open("README.md", encoding="utf-8").read()
start = text.index("\n" + sys.argv[1] + "\n")
begin = text.index("```sql\n", start) + len("```sql\n")
print(text[begin:text.index("```", begin)], end="")
EOF
}

same_statements() {
  diff <(readme_block "## Quick start for an administrator") \
    <(sed "s/:'password'/'...'/" test/demo/admin_quickstart.sql)
}
check "README's administrator quick start is what make demo runs (test/demo/admin_quickstart.sql)" \
  same_statements

if psql -X -q -d postgres -At -c "SELECT 1 FROM pg_roles WHERE rolname IN ('analyst', 'demo_analyst')" |
  grep -q 1; then
  echo "check_demo: roles analyst or demo_analyst exist in this cluster; not touching them" >&2
  exit 1
fi
psql -X -q -d postgres -c "SET dp_agg.allow_drop_extension = on" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB" >/dev/null 2>&1

run_demo() {
  PGDATABASE=$DB psql -X -f test/demo/demo.sql >"$work/demo.out" 2>&1
}
check "the demo script runs" run_demo

# Sections 8 and 9 up to "Private answers work": every query refused, each
# with a DETAIL saying why, no table printed.
refusals_say_why() {
  sed -n '/^== 8\./,/^Private answers work/p' "$work/demo.out" >"$work/refused.out"
  local errors details tables
  errors=$(grep -c 'ERROR:' "$work/refused.out")
  details=$(grep -c '^DETAIL:' "$work/refused.out")
  tables=$(grep -c '^+-' "$work/refused.out")
  echo "refused section: $errors errors, $details with DETAIL, $tables tables printed"
  cat "$work/refused.out"
  [[ $errors -ge 5 && $details -eq $errors && $tables -eq 0 ]]
}
check "the demo's refused sections: every query refused, each saying why (DETAIL)" refusals_say_why

run_admin_quickstart() {
  PGDATABASE=$DB psql -X -v ON_ERROR_STOP=1 -v password=check -f test/demo/admin_quickstart.sql \
    >"$work/admin.out" 2>&1 || { cat "$work/admin.out"; return 1; }
  grep 'NOTICE' "$work/admin.out"
  ! grep -q 'lowers the' "$work/admin.out"
}
check "the administrator quick start runs on the demo's data, lowering no budget" run_admin_quickstart

run_analyst_quickstart() {
  readme_block "## Quick start for an analyst" >"$work/analyst.sql"
  PGDATABASE=$DB psql -X -U analyst -v ON_ERROR_STOP=1 -f "$work/analyst.sql"
}
check "README's analyst quick start runs as written, as the quick start's analyst" \
  run_analyst_quickstart

parallel_build() {
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n demo PG_CONFIG="${PG_CONFIG:-pg_config}" \
    >"$work/make.out" 2>&1
  grep -E -- '-j[0-9]+ build$' "$work/make.out"
}
check "make demo builds with parallel jobs (-j\$(nproc))" parallel_build

echo "demo: $((count - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
