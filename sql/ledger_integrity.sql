-- A tamper-evident ledger (issue 28, finding 3): every ledger row is chained
-- (seq, entry_hash over its content and the previous hash), the chain head
-- is kept where TRUNCATE of the ledger does not reach, and
-- dp_agg.verify_ledger() is true on an honest ledger and false, saying what
-- is wrong, after each kind of tampering a superuser can do: a budget
-- changed, a ledger row changed, removed or inserted, the ledger truncated.
-- Each tampering is rolled back. Numbers that depend on earlier suites
-- (sequence numbers, ids, OIDs) are printed as N.
\set VERBOSITY default

SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_ledger_analyst;
DROP ROLE IF EXISTS regress_ledger_other;
DROP ROLE IF EXISTS regress_ledger_nobudget;
DROP SCHEMA IF EXISTS ledger_hijack CASCADE;
DROP ROLE IF EXISTS regress_ledger_admin;
DROP ROLE IF EXISTS regress_ledger_admins;
DROP ROLE IF EXISTS regress_ledger_tampered;
DROP ROLE IF EXISTS regress_ledger_forged;
DROP SCHEMA IF EXISTS ledger_integrity CASCADE;
RESET client_min_messages;
CREATE ROLE regress_ledger_analyst;
CREATE ROLE regress_ledger_other;
CREATE ROLE regress_ledger_nobudget;
CREATE SCHEMA ledger_integrity;
CREATE TABLE ledger_integrity.t AS SELECT g AS x FROM generate_series(1, 100) g;
GRANT USAGE ON SCHEMA ledger_integrity TO regress_ledger_analyst;
GRANT SELECT ON ledger_integrity.t TO regress_ledger_analyst;
SELECT dp_agg.set_budget('regress_ledger_analyst', 10, 1e-6);
SELECT dp_agg.set_budget('regress_ledger_other', 1);
SET SESSION AUTHORIZATION regress_ledger_analyst;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM ledger_integrity.t;
SELECT dp_count(x, 0.25) IS NOT NULL AS answered FROM ledger_integrity.t;
SELECT dp_count(x, 0.125, 1e-7) IS NOT NULL AS answered FROM ledger_integrity.t;
RESET SESSION AUTHORIZATION;
SELECT dp_agg.add_budget('regress_ledger_analyst', 1);

-- What verify_ledger reports, with the numbers earlier suites decide as N.
CREATE FUNCTION ledger_integrity.report(anchor_seq bigint DEFAULT NULL,
                                        anchor_hash text DEFAULT NULL)
RETURNS TABLE (ok boolean, problem text) LANGUAGE sql AS $$
  SELECT v.ok, regexp_replace(regexp_replace(regexp_replace(
                 p, '((entry|entries|id|OID|to|says) )[0-9]+', '\1N', 'g'),
                 '\([0-9]+\)', '(N)', 'g'), '[0-9a-f]{64}', 'HASH', 'g')
  FROM dp_agg.verify_ledger(anchor_seq, anchor_hash) v
  LEFT JOIN LATERAL unnest(v.problems) p ON true
$$;
-- The test role's charges, by their place in the chain.
SELECT min(seq) AS first_charge, max(seq) AS last_charge
FROM dp_agg.ledger_entry WHERE role_name = 'regress_ledger_analyst' AND kind = 'charge' \gset

-- 1. An honest ledger verifies: everything the suites before this one wrote,
-- charges and administrative changes alike.
SELECT ok, problems, first_bad_entry IS NULL AS no_bad_entry, head_seq = entries AS head_counts_all,
       head_hash = (SELECT encode(entry_hash, 'hex') FROM dp_agg.ledger_entry
                    WHERE seq = head_seq) AS head_is_last_hash
FROM dp_agg.verify_ledger();
SELECT min(seq) = 1 AND max(seq) = count(*) AS gapless_from_1,
       bool_and(length(entry_hash) = 32) AS sha256_hashes,
       count(*) FILTER (WHERE kind <> 'revoke_budget' AND budget_digest IS NULL) AS without_digest
FROM dp_agg.ledger_entry;

-- The hash is what README documents, recomputable outside dp_agg: SHA-256
-- of "dp_agg ledger entry v1\n" and one "name=length:bytes\n" (or "name=-\n"
-- for NULL) per column, with numerics as their own text and timestamps as
-- microseconds since 1970-01-01 UTC, and the previous entry's hash in hex.
-- Recomputed here with PostgreSQL's own sha256() for every entry.
CREATE FUNCTION ledger_integrity.field(name text, value text) RETURNS bytea
LANGUAGE sql IMMUTABLE AS $$
  SELECT convert_to(name || '=', 'SQL_ASCII')
         || CASE WHEN value IS NULL THEN convert_to('-', 'SQL_ASCII')
                 ELSE convert_to(octet_length(value)::text || ':', 'SQL_ASCII')
                      || convert_to(value, pg_catalog.getdatabaseencoding()) END
         || convert_to(E'\n', 'SQL_ASCII')
$$;
SELECT count(*) > 0 AS entries_checked,
       bool_and(sha256(convert_to(E'dp_agg ledger entry v1\n', 'SQL_ASCII')
         || ledger_integrity.field('previous', encode(previous, 'hex'))
         || ledger_integrity.field('seq', seq::text)
         || ledger_integrity.field('id', id::text)
         || ledger_integrity.field('recorded_at',
                                   (extract(epoch FROM recorded_at) * 1000000)::bigint::text)
         || ledger_integrity.field('kind', kind)
         || ledger_integrity.field('role_oid', role_oid::text)
         || ledger_integrity.field('system_identifier', system_identifier::text)
         || ledger_integrity.field('role_name', role_name::text)
         || ledger_integrity.field('session_user_name', session_user_name::text)
         || ledger_integrity.field('current_user_name', current_user_name::text)
         || ledger_integrity.field('epsilon', epsilon::text)
         || ledger_integrity.field('delta', delta::text)
         || ledger_integrity.field('rho', rho::text)
         || ledger_integrity.field('zcdp_delta', zcdp_delta::text)
         || ledger_integrity.field('query_id', query_id::text)
         || ledger_integrity.field('aggregates', aggregates)
         || ledger_integrity.field('query', query)
         || ledger_integrity.field('budget_digest', encode(budget_digest, 'hex')))
         = entry_hash) AS documented_hash
FROM (SELECT e.*, lag(e.entry_hash) OVER (ORDER BY e.seq) AS previous
      FROM dp_agg.ledger_entry e) e
HAVING count(*) > 0;
-- ... in every session, whatever its settings.
SET TimeZone = 'Asia/Kathmandu';
SET DateStyle = 'German, DMY';
SET extra_float_digits = -15;
SET bytea_output = 'escape';
SELECT ok FROM dp_agg.verify_ledger();
RESET TimeZone;
RESET DateStyle;
RESET extra_float_digits;
RESET bytea_output;

-- 2. UPDATE of a budget (no trigger refuses it: the budget is no secret to
-- a superuser, and dp_agg's functions change it): its row is no longer the
-- one recorded with its last ledger entry, and its spending no longer the
-- sum of its charges.
BEGIN;
UPDATE dp_agg.role_budget SET epsilon_spent = 0 WHERE role_name = 'regress_ledger_analyst';
SELECT * FROM ledger_integrity.report();
ROLLBACK;
-- A total raised: the recorded row differs (the sums still agree).
BEGIN;
UPDATE dp_agg.role_budget SET epsilon_total = 1000 WHERE role_name = 'regress_ledger_analyst';
SELECT * FROM ledger_integrity.report();
ROLLBACK;
-- A budget deleted, and one created, outside dp_agg's functions.
BEGIN;
DELETE FROM dp_agg.role_budget WHERE role_name = 'regress_ledger_other';
INSERT INTO dp_agg.role_budget (role_oid, role_name, epsilon_total)
  VALUES ('regress_ledger_nobudget'::regrole, 'regress_ledger_nobudget', 100);
SELECT * FROM ledger_integrity.report();
ROLLBACK;

-- 3. UPDATE of a ledger row: refused (ZP006) by a trigger that also fires
-- under session_replication_role = replica ...
UPDATE dp_agg.ledger_entry SET epsilon = 0 WHERE seq = :first_charge;
\echo :LAST_ERROR_SQLSTATE
SET session_replication_role = replica;
UPDATE dp_agg.ledger_entry SET epsilon = 0 WHERE seq = :first_charge;
RESET session_replication_role;
-- ... and, with the triggers disabled, detected: the row no longer matches
-- its hash, and the budget's spending no longer matches its charges.
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
UPDATE dp_agg.ledger_entry SET epsilon = 0 WHERE seq = :first_charge;
SELECT * FROM ledger_integrity.report();
SELECT first_bad_entry = :first_charge AS first_bad_is_the_changed_row
FROM dp_agg.verify_ledger();
ROLLBACK;
-- A change of a column no sum covers (the query text) is detected too.
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
UPDATE dp_agg.ledger_entry SET query = 'SELECT 1' WHERE seq = :last_charge;
SELECT * FROM ledger_integrity.report();
ROLLBACK;

-- 4. DELETE of a ledger row: refused, and detected when the trigger is
-- disabled (a gap in seq; the budget's charges no longer add up).
DELETE FROM dp_agg.ledger_entry WHERE seq = :first_charge;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
DELETE FROM dp_agg.ledger_entry WHERE seq = :first_charge;
SELECT * FROM ledger_integrity.report();
SELECT first_bad_entry = :first_charge AS first_bad_is_the_removed_row
FROM dp_agg.verify_ledger();
ROLLBACK;
-- The last row removed: the chain head (which the DELETE did not reach)
-- says one more.
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
DELETE FROM dp_agg.ledger_entry WHERE seq = (SELECT max(seq) FROM dp_agg.ledger_entry);
SELECT * FROM ledger_integrity.report();
ROLLBACK;

-- 5. TRUNCATE of the ledger: refused; with the trigger disabled, detected
-- (the head still counts every entry, and every budget with spending now
-- disagrees with its (missing) charges).
TRUNCATE dp_agg.ledger_entry;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
TRUNCATE dp_agg.ledger_entry;
SELECT ok, (SELECT problem FROM ledger_integrity.report() LIMIT 1) AS first_problem,
       entries, first_bad_entry AS first_bad, head_seq > 0 AS head_kept
FROM dp_agg.verify_ledger();
SELECT bool_or(problem LIKE 'the budget of role "regress_ledger_analyst" (OID N) has no ledger entry%')
       AS analyst_budget_flagged
FROM ledger_integrity.report();
ROLLBACK;
-- The head cannot be truncated, emptied or set back either.
TRUNCATE dp_agg.ledger_head;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM dp_agg.ledger_head;
\echo :LAST_ERROR_SQLSTATE
UPDATE dp_agg.ledger_head SET seq = seq - 1;
\echo :LAST_ERROR_SQLSTATE

-- 6. A row inserted outside dp_agg's functions: refused when its
-- transaction commits (only rows dp_agg's functions appended are chained) ...
\set VERBOSITY terse
INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name, epsilon, delta)
  VALUES ('charge', 'regress_ledger_analyst'::regrole, 'regress_ledger_analyst', 'x', 1, 0);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- ... and detected when the triggers are disabled: without seq and hash,
-- or with a forged seq after the head.
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name, epsilon, delta)
  VALUES ('charge', 'regress_ledger_other'::regrole, 'regress_ledger_other', 'x', 0, 0);
INSERT INTO dp_agg.ledger_entry (kind, role_oid, role_name, session_user_name, epsilon, delta,
                                 seq, entry_hash)
  SELECT 'set_budget', 'regress_ledger_other'::regrole, 'regress_ledger_other', 'x', 1000, 0,
         h.seq + 1, sha256('forged') FROM dp_agg.ledger_head h;
SELECT * FROM ledger_integrity.report();
ROLLBACK;

-- 7. A superuser who rewrites the chain consistently (here: a query text
-- changed and every hash after it recomputed, the head moved along) is not
-- seen by the chain alone; an anchor kept outside the database (the server
-- log's "dp_agg ledger head" lines, or verify_ledger's head) catches it.
SELECT head_seq AS anchor_seq, head_hash AS anchor_hash FROM dp_agg.verify_ledger() \gset
SELECT * FROM ledger_integrity.report(:anchor_seq, :'anchor_hash');
BEGIN;
ALTER TABLE dp_agg.ledger_entry DISABLE TRIGGER USER;
ALTER TABLE dp_agg.ledger_head DISABLE TRIGGER USER;
UPDATE dp_agg.ledger_entry SET query = 'SELECT 1' WHERE seq = :first_charge;
DO $$
DECLARE
  entry dp_agg.ledger_entry;
  previous bytea := (SELECT entry_hash FROM dp_agg.ledger_entry
                     WHERE seq = (SELECT min(seq) - 1 FROM dp_agg.ledger_entry
                                  WHERE query = 'SELECT 1' AND kind = 'charge'
                                    AND role_name = 'regress_ledger_analyst'));
BEGIN
  FOR entry IN
    SELECT * FROM dp_agg.ledger_entry
    WHERE seq >= (SELECT min(seq) FROM dp_agg.ledger_entry
                  WHERE query = 'SELECT 1' AND kind = 'charge'
                    AND role_name = 'regress_ledger_analyst')
    ORDER BY seq
  LOOP
    entry.entry_hash := dp_agg.ledger_entry_hash(previous, entry);
    UPDATE dp_agg.ledger_entry e SET entry_hash = entry.entry_hash WHERE e.id = entry.id;
    previous := entry.entry_hash;
  END LOOP;
  UPDATE dp_agg.ledger_head SET entry_hash = previous;
END $$;
SELECT * FROM ledger_integrity.report();
SELECT * FROM ledger_integrity.report(:anchor_seq, :'anchor_hash');
ROLLBACK;
SELECT * FROM dp_agg.verify_ledger(1, NULL);

-- 8. An administrator's change is chained when its transaction commits, not
-- before: an open administrative transaction never holds the chain head
-- (which every charge of the database needs). Two changes in one
-- transaction are chained in their order.
BEGIN;
SELECT dp_agg.add_budget('regress_ledger_other', 1);
SELECT dp_agg.add_budget('regress_ledger_other', 2);
SELECT count(*) AS unchained_before_commit FROM dp_agg.ledger_entry WHERE seq IS NULL;
COMMIT;
SELECT string_agg(epsilon::text, ', ' ORDER BY seq) AS chained_in_order,
       count(*) FILTER (WHERE seq IS NULL) AS unchained
FROM dp_agg.ledger_entry WHERE role_name = 'regress_ledger_other' AND kind = 'add_budget';
-- Rolled back, nothing is chained (and nothing is missing).
BEGIN;
SELECT dp_agg.add_budget('regress_ledger_other', 3);
ROLLBACK;
SELECT ok, problems FROM dp_agg.verify_ledger();

-- 9. Only administrators verify.
SET SESSION AUTHORIZATION regress_ledger_analyst;
SELECT ok FROM dp_agg.verify_ledger();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS analyst_reads_head FROM dp_agg.ledger_head;
\echo :LAST_ERROR_SQLSTATE
RESET SESSION AUTHORIZATION;

-- 10. Code that runs as superuser never resolves names through a search_path
-- someone else chose (review 28). a) The deferred chaining trigger runs at
-- commit as the extension's owner, outside the administrative function: a
-- non-superuser administrator's own `=` first on the search_path used to run
-- there as superuser. b) The ledger writer runs as the bootstrap superuser
-- with the database's settings, which its owner sets: a search_path of the
-- owner's schema made the writer's statements use the owner's `text`
-- domain, whose check ran as superuser. Both record who ran them in
-- ledger_hijack.calls: nothing may be recorded.
CREATE ROLE regress_ledger_admins;
CREATE ROLE regress_ledger_admin IN ROLE regress_ledger_admins;
CREATE SCHEMA ledger_hijack AUTHORIZATION regress_ledger_admin;
GRANT USAGE ON SCHEMA ledger_hijack TO PUBLIC;
SET SESSION AUTHORIZATION regress_ledger_admin;
CREATE TABLE ledger_hijack.calls (what text, superuser boolean);
GRANT INSERT ON ledger_hijack.calls TO PUBLIC;
CREATE FUNCTION ledger_hijack.eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_hijack.calls
  SELECT 'operator', rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user;
  RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR ledger_hijack.= (LEFTARG = bigint, RIGHTARG = bigint,
                                 FUNCTION = ledger_hijack.eq);
CREATE FUNCTION ledger_hijack.fine(pg_catalog.text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_hijack.calls
  SELECT 'domain', rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user;
  RETURN true;
END $$;
CREATE DOMAIN ledger_hijack.text AS pg_catalog.text CHECK (ledger_hijack.fine(VALUE));
RESET SESSION AUTHORIZATION;
-- a) The administrator commits a budget change with their schema first.
SET dp_agg.admin_role = 'regress_ledger_admins';
SET SESSION AUTHORIZATION regress_ledger_admin;
SET search_path = ledger_hijack, pg_catalog;
SELECT dp_agg.add_budget('regress_ledger_other', 0.5);
RESET search_path;
RESET SESSION AUTHORIZATION;
RESET dp_agg.admin_role;
SELECT count(*) AS unchained FROM dp_agg.ledger_entry WHERE seq IS NULL;
-- b) The database's search_path starts with the owner's schema; the next
-- writer of this database (once the current one has exited) charges.
SELECT format('ALTER DATABASE %I SET search_path = ledger_hijack, pg_catalog',
              current_database()) \gexec
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
                          WHERE backend_type = 'dp_agg ledger writer'
                            AND datname = current_database());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SET SESSION AUTHORIZATION regress_ledger_analyst;
SELECT dp_count(x, 0.0625) IS NOT NULL AS answered FROM ledger_integrity.t;
RESET SESSION AUTHORIZATION;
SELECT format('ALTER DATABASE %I RESET search_path', current_database()) \gexec
SELECT what, superuser, count(*) FROM ledger_hijack.calls GROUP BY 1, 2 ORDER BY 1, 2;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_ledger_admin';
-- The class: every SECURITY DEFINER function of dp_agg pins its search_path.
SELECT p.oid::regprocedure AS definer_without_search_path
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'dp_agg'
WHERE p.prosecdef
  AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search\_path=%');
SET client_min_messages = warning;
DROP SCHEMA ledger_hijack CASCADE;
RESET client_min_messages;
DROP ROLE regress_ledger_admin, regress_ledger_admins;

-- 11. A budget changed outside dp_agg's functions stays reported (review
-- 28): its next charge or administrative change used to record the changed
-- row as the budget's new state, after which verify_ledger said ok (its
-- spent amounts still matched the charges). Now the change is refused
-- (ZP006), nothing is charged or recorded, and the way out is one the
-- ledger records. Same for a budget created outside them.
CREATE ROLE regress_ledger_tampered;
CREATE ROLE regress_ledger_forged;
GRANT USAGE ON SCHEMA ledger_integrity TO regress_ledger_tampered, regress_ledger_forged;
GRANT SELECT ON ledger_integrity.t TO regress_ledger_tampered, regress_ledger_forged;
SELECT dp_agg.set_budget('regress_ledger_tampered', 1);
UPDATE dp_agg.role_budget SET epsilon_total = 1000
WHERE role_oid = 'regress_ledger_tampered'::regrole;
INSERT INTO dp_agg.role_budget (role_oid, role_name, epsilon_total)
VALUES ('regress_ledger_forged'::regrole, 'regress_ledger_forged', 1000);
SELECT count(*) AS entries_before FROM dp_agg.ledger_entry \gset
SET SESSION AUTHORIZATION regress_ledger_tampered;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM ledger_integrity.t;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION regress_ledger_forged;
SELECT dp_count(x, 0.5) IS NOT NULL AS answered FROM ledger_integrity.t;
RESET SESSION AUTHORIZATION;
SELECT dp_agg.add_budget('regress_ledger_tampered', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.reset_spent('regress_ledger_forged');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) - :entries_before AS recorded,
       (SELECT epsilon_spent FROM dp_agg.role_budget
        WHERE role_oid = 'regress_ledger_tampered'::regrole) AS tampered_spent
FROM dp_agg.ledger_entry;
SELECT * FROM ledger_integrity.report();
-- Revoked (recorded), they can be set again through dp_agg.
SELECT dp_agg.revoke_budget('regress_ledger_tampered');
SELECT dp_agg.revoke_budget('regress_ledger_forged');
SELECT ok, problems FROM dp_agg.verify_ledger();
DROP OWNED BY regress_ledger_tampered, regress_ledger_forged;
DROP ROLE regress_ledger_tampered, regress_ledger_forged;

-- 12. A charge appended with a negative amount, the budget's spending
-- lowered to match, gives budget back: reported (review 28).
BEGIN;
UPDATE dp_agg.role_budget SET epsilon_spent = epsilon_spent - 0.5
WHERE role_oid = 'regress_ledger_analyst'::regrole;
SELECT dp_agg.append_ledger_entry('charge', b.role_oid, b.role_name, b.role_name, NULL, -0.5, 0,
                                  0, 0, b, true)
FROM dp_agg.role_budget b WHERE b.role_oid = 'regress_ledger_analyst'::regrole;
SELECT * FROM ledger_integrity.report();
ROLLBACK;

-- 13. The chain's trigger functions called as plain functions: PostgreSQL's
-- trigger-protocol error (39P01), never an internal error (found by the crash
-- fuzzer's all-functions pass).
SELECT dp_agg.guard_ledger_entry();
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.guard_ledger_head();
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.chain_deferred_entry();
\echo :LAST_ERROR_SQLSTATE
SELECT dp_agg.guard_budget_record();
\echo :LAST_ERROR_SQLSTATE

-- The ledger the next suites find is the honest one.
SELECT ok FROM dp_agg.verify_ledger();
