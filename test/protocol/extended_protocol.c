/*
 * Extended-protocol client test: epsilon and bounds arrive as bind parameters
 * (PQexecParams, PQprepare/PQexecPrepared), typed and untyped, the way JDBC,
 * psycopg3 and every libpq-based BI tool send them. Connects with the PG*
 * environment variables; prints TAP lines and exits non-zero on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#define FLOAT8OID 701
#define INT4OID 23

static int tests = 0;
static int failures = 0;

static void check(int ok, const char *description) {
  tests++;
  if (!ok) failures++;
  printf("%s %d - %s\n", ok ? "ok" : "not ok", tests, description);
}

static PGresult *must(PGconn *conn, PGresult *result, const char *what) {
  if (PQresultStatus(result) != PGRES_TUPLES_OK && PQresultStatus(result) != PGRES_COMMAND_OK)
    fprintf(stderr, "%s: %s", what, PQerrorMessage(conn));
  return result;
}

static long charges(PGconn *conn) {
  PGresult *result =
      must(conn, PQexec(conn, "SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'"),
           "charges");
  long count = PQntuples(result) == 1 ? atol(PQgetvalue(result, 0, 0)) : -1;
  PQclear(result);
  return count;
}

int main(void) {
  PGconn *conn = PQconnectdb("");
  if (PQstatus(conn) != CONNECTION_OK) {
    fprintf(stderr, "connection failed: %s", PQerrorMessage(conn));
    return 2;
  }
  PGresult *setup =
      must(conn,
           PQexec(conn,
                  "SET client_min_messages = warning;"
                  "CREATE EXTENSION IF NOT EXISTS dp_agg;"
                  "DROP TABLE IF EXISTS protocol_t;"
                  "CREATE TABLE protocol_t AS SELECT g AS x FROM generate_series(1, 1000) g;"
                  "SELECT dp_agg.set_budget(session_user::regrole, 1000);"),
           "setup");
  if (PQresultStatus(setup) != PGRES_TUPLES_OK) return 2;
  PQclear(setup);

  /* 1. Typed float8 parameter for epsilon. */
  {
    Oid types[1] = {FLOAT8OID};
    const char *values[1] = {"10"};
    PGresult *r = PQexecParams(conn, "SELECT dp_count(x, $1) FROM protocol_t", 1, types, values,
                               NULL, NULL, 0);
    check(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
              labs(atol(PQgetvalue(r, 0, 0)) - 1000) <= 3,
          "typed float8 epsilon parameter (|noise| <= 3 at epsilon 10: P(fail) < 1e-17)");
    PQclear(r);
  }
  /* 2. Untyped parameters: the server infers the types from dp_sum(int, ...). */
  {
    const char *values[3] = {"0", "10", "1.5"};
    PGresult *r = PQexecParams(conn, "SELECT dp_sum(x, $1, $2, $3) FROM protocol_t", 3, NULL,
                               values, NULL, NULL, 0);
    check(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0),
          "untyped bound and epsilon parameters");
    PQclear(r);
  }
  /* 3. A prepared statement executed three times is charged three times. */
  {
    Oid types[3] = {INT4OID, INT4OID, FLOAT8OID};
    long before = charges(conn);
    PGresult *r =
        PQprepare(conn, "avg_x", "SELECT dp_avg(x, $1, $2, $3) FROM protocol_t", 3, types);
    check(PQresultStatus(r) == PGRES_COMMAND_OK, "PQprepare");
    PQclear(r);
    int answered = 0;
    for (int i = 0; i < 3; i++) {
      const char *values[3] = {"0", "1000", "10"};
      r = PQexecPrepared(conn, "avg_x", 3, values, NULL, NULL, 0);
      if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
          atof(PQgetvalue(r, 0, 0)) > 497.5 && atof(PQgetvalue(r, 0, 0)) < 503.5)
        answered++;
      PQclear(r);
    }
    check(answered == 3, "three executions answered accurately (error < 3: P(fail) < 1e-9 each)");
    check(charges(conn) - before == 3, "three executions, three charges");
  }
  /* 4. A bad parameter value is refused with 22023, decided before execution. */
  {
    const char *values[3] = {"0", "1000", "-1"};
    long before = charges(conn);
    PGresult *r = PQexecPrepared(conn, "avg_x", 3, values, NULL, NULL, 0);
    const char *sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    check(PQresultStatus(r) == PGRES_FATAL_ERROR && sqlstate && strcmp(sqlstate, "22023") == 0,
          "negative epsilon parameter refused with SQLSTATE 22023");
    check(charges(conn) == before, "and not charged");
    PQclear(r);
    const char *swapped[3] = {"1000", "0", "1"};
    r = PQexecPrepared(conn, "avg_x", 3, swapped, NULL, NULL, 0);
    sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    check(PQresultStatus(r) == PGRES_FATAL_ERROR && sqlstate && strcmp(sqlstate, "22023") == 0,
          "lower > upper parameters refused with SQLSTATE 22023");
    PQclear(r);
  }
  /* 5. A NULL parameter is refused, not silently answered. */
  {
    Oid types[1] = {FLOAT8OID};
    const char *values[1] = {NULL};
    PGresult *r = PQexecParams(conn, "SELECT dp_count(x, $1) FROM protocol_t", 1, types, values,
                               NULL, NULL, 0);
    const char *sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    check(PQresultStatus(r) == PGRES_FATAL_ERROR && sqlstate && strcmp(sqlstate, "22023") == 0,
          "NULL epsilon parameter refused with SQLSTATE 22023");
    PQclear(r);
  }
  PQclear(PQexec(conn, "DROP TABLE protocol_t"));
  PQfinish(conn);
  printf("1..%d\n", tests);
  printf("protocol: %d passed, %d failed\n", tests - failures, failures);
  return failures == 0 ? 0 : 1;
}
