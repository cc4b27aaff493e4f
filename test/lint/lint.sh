#!/usr/bin/env bash
# make lint: formatting (clang-format, .clang-format at the root) and static checks.
#
#   1. clang-format --dry-run -Werror over the C/C++ sources tracked by git, except those listed
#      in test/lint/format_pending.txt (written before .clang-format existed and awaiting the
#      one-time `make format`; delete their lines once reformatted).
#   2. cppcheck (warning, performance and portability checks) over src/core, the pure C++ core
#      (src/pg needs PostgreSQL's macros, which cppcheck cannot follow: ereport(ERROR) is
#      taken for a return, foreach for a syntax error), with the justified suppressions of
#      test/lint/cppcheck-suppressions.txt.
#   3. Every file of src/ compiled with the build's flags (-Wall -Wextra) and -Werror, syntax
#      only: set LINT_CXX and LINT_CXXFLAGS (the Makefile does).
#   4. The C++/PostgreSQL error boundary rule (test/scripts/check_boundary.py and its self-test).
#   5. The C files of src/ (citus/peer_certificate.c) compiled likewise with the build's C flags (LINT_CC,
#      LINT_CFLAGS; the Makefile sets them).
#   6. Docs and records that must not drift: docs/architecture.md's map against src/ and the
#      unit tests' names (check_architecture_doc.py, with its self-test), the released versions
#      of CHANGELOG.md (check_release.py), the upgrade script's generated privilege tail
#      (privilege_tail.py).
# Installs nothing: clang-format and cppcheck come with `make deps`. Exit status 1 on findings.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
CPPCHECK=${CPPCHECK:-cppcheck}
status=0

for tool in "$CLANG_FORMAT" "$CPPCHECK"; do
  command -v "$tool" >/dev/null ||
    { echo "lint: $tool not found (make deps installs it)" >&2; exit 2; }
done

echo "== clang-format"
mapfile -t pending < <(grep -v '^#' test/lint/format_pending.txt | sed '/^$/d')
mapfile -t checked < <(git ls-files '*.c' '*.cpp' '*.h' | grep -vxF -f <(printf '%s\n' "${pending[@]}" ""))
if ! "$CLANG_FORMAT" --dry-run -Werror "${checked[@]}"; then
  echo "lint: formatting differs (run: clang-format -i FILE, or make format)"
  status=1
fi
echo "lint: ${#checked[@]} files formatted as .clang-format says; ${#pending[@]} awaiting make format"

echo "== cppcheck src/core"
if ! "$CPPCHECK" --std=c++17 --language=c++ --enable=warning,performance,portability \
     --suppressions-list=test/lint/cppcheck-suppressions.txt --inline-suppr \
     --error-exitcode=1 --quiet src/core; then
  status=1
fi

echo "== compile src/ with -Werror"
if [[ -n "${LINT_CXX:-}" ]]; then
  for file in $(find src -name '*.cpp' | sort); do
    # shellcheck disable=SC2086  # LINT_CXXFLAGS is a list of flags
    $LINT_CXX $LINT_CXXFLAGS -Werror -fsyntax-only "$file" || status=1
  done
else
  echo "lint: LINT_CXX not set (run through make lint, which needs pg_config): skipped"
  status=1
fi

echo "== C++/PostgreSQL boundary (test/scripts/check_boundary.py)"
/usr/bin/python3 test/scripts/check_boundary.py --self-test || status=1
/usr/bin/python3 test/scripts/check_boundary.py || status=1

echo "== compile the C files of src/ with -Werror"
if [[ -n "${LINT_CC:-}" ]]; then
  for file in $(find src -name '*.c' | sort); do
    # shellcheck disable=SC2086  # LINT_CFLAGS is a list of flags
    $LINT_CC $LINT_CFLAGS -Werror -fsyntax-only "$file" || status=1
  done
else
  echo "lint: LINT_CC not set (run through make lint, which needs pg_config): skipped"
  status=1
fi

echo "== docs and release records (architecture map, CHANGELOG releases, upgrade privilege tail)"
/usr/bin/python3 test/scripts/check_architecture_doc.py --self-test >/dev/null ||
  { echo "lint: check_architecture_doc.py self-test failed"; status=1; }
/usr/bin/python3 test/scripts/check_architecture_doc.py || status=1
/usr/bin/python3 test/scripts/check_release.py || status=1
/usr/bin/python3 test/scripts/privilege_tail.py || status=1

echo "== the ledger writer's C charge admits what dp_agg.apply_charge admits (check_charge_admission.py)"
/usr/bin/python3 test/scripts/check_charge_admission.py --self-test >/dev/null ||
  { echo "lint: check_charge_admission.py self-test failed"; status=1; }
/usr/bin/python3 test/scripts/check_charge_admission.py || status=1

[[ $status -eq 0 ]] && echo "lint: clean" || echo "lint: findings above"
exit $status
