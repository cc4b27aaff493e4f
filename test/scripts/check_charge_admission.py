#!/usr/bin/python3
"""The ledger writer's C charge must admit exactly what dp_agg.apply_charge admits.

src/pg/ledger_fast_charge.cpp (kChargeSql) repeats the UPDATE of
dp_agg.apply_charge (src/sql/40_budgets_ledger.sql) for a budget that does not
renew (issue 31). A change of one without the other would let the common
charge be admitted by a rule the SQL no longer states (review_charge). This
check compares the two statements up to RETURNING, after mapping
apply_charge's names onto the C statement's parameters and removing the one
intended difference (`AND b.renew_every IS NULL`). Run by `make lint`.

  check_charge_admission.py              check the tree
  check_charge_admission.py --self-test  check that a changed condition is caught
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SQL_FILE = ROOT / "src/sql/40_budgets_ledger.sql"
C_FILE = ROOT / "src/pg/ledger_fast_charge.cpp"

# apply_charge's names -> the C statement's parameters (ChargeWithoutRenewal).
SQL_NAMES = [
    ("apply_charge.role_oid", "$1"),
    ("here", "$2"),
    ("apply_charge.epsilon", "$3"),
    ("apply_charge.delta", "$4"),
    ("apply_charge.rho", "$5"),
    ("apply_charge.zcdp_delta", "$6"),
    ("apply_charge.role", "$7"),
]
C_ONLY = "AND b.renew_every IS NULL"


def normalize(text):
    return re.sub(r"\s+", " ", text).strip()


def sql_update(sql_text):
    start = sql_text.index("CREATE FUNCTION dp_agg.apply_charge(")
    update = sql_text.index("UPDATE dp_agg.role_budget b", start)
    end = sql_text.index("RETURNING", update)
    statement = sql_text[update:end]
    statement = "\n".join(line.split("--")[0] for line in statement.splitlines())
    for name, parameter in SQL_NAMES:
        statement = re.sub(re.escape(name) + r"\b", parameter, statement)
    return normalize(statement)


def c_update(c_text):
    start = c_text.index("kChargeSql =")
    end = c_text.index(";", start)
    literal = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', c_text[start:end]))
    literal = literal[: literal.index("RETURNING")]
    if C_ONLY not in literal:
        raise ValueError("kChargeSql lost its condition '%s'" % C_ONLY)
    return normalize(literal.replace(C_ONLY, "", 1))


def compare(sql_text, c_text):
    sql_statement = sql_update(sql_text)
    c_statement = c_update(c_text)
    if sql_statement == c_statement:
        return []
    return [
        "dp_agg.apply_charge's UPDATE (%s) and kChargeSql (%s) differ:"
        % (SQL_FILE.relative_to(ROOT), C_FILE.relative_to(ROOT)),
        "  SQL: " + sql_statement,
        "  C:   " + c_statement,
    ]


def main():
    sql_text = SQL_FILE.read_text()
    c_text = C_FILE.read_text()
    if "--self-test" in sys.argv[1:]:
        if compare(sql_text, c_text):
            print("check_charge_admission self-test: the tree itself fails")
            return 1
        mutated = c_text.replace("<= b.epsilon_total", "<= b.epsilon_total * 2", 1)
        if mutated == c_text or not compare(sql_text, mutated):
            print("check_charge_admission self-test: a changed C condition was not caught")
            return 1
        print("check_charge_admission self-test: ok")
        return 0
    problems = compare(sql_text, c_text)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
