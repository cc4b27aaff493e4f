-- ===========================================================================
-- A tamper-evident ledger (README "A tamper-evident ledger").
--
-- Every row of dp_agg.ledger_entry is chained: seq numbers the rows 1, 2, 3,
-- ... without gaps, and entry_hash is SHA-256 of the row's canonical record
-- (src/core/ledger_chain.h: every column but entry_hash, in a form that no
-- session setting changes) together with the entry_hash of the row before
-- it. Each row also carries budget_digest, SHA-256 of the canonical record of
-- the role's dp_agg.role_budget row right after the change it records.
-- dp_agg.ledger_head keeps the last seq and hash, in a table that a TRUNCATE
-- of the ledger does not reach; the ledger writer logs it (LOG) after its
-- batches, so that a copy of the server log anchors the chain outside the
-- database.
--
-- dp_agg.verify_ledger() recomputes all of it: a row changed, removed or
-- inserted outside dp_agg's functions, a truncated ledger, a budget changed
-- outside them, or one whose spent amounts disagree with the sum of its
-- charges is reported. Triggers refuse UPDATE, DELETE and TRUNCATE of both
-- tables to everyone (defence in depth against accidents: a superuser can
-- disable triggers, which is why verify_ledger exists; one who also
-- recomputes every hash is caught by an anchor from the log).
-- ===========================================================================

-- The chain head: the seq and entry_hash of the last chained entry (seq 0,
-- no hash, before the first). No row until the first entry, so that a dump
-- restored into a fresh installation brings its own.
CREATE TABLE dp_agg.ledger_head (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq bigint NOT NULL CHECK (seq >= 0),
  entry_hash bytea,
  CONSTRAINT ledger_head_hash CHECK ((seq = 0) = (entry_hash IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('dp_agg.ledger_head', '');

-- SHA-256 of an entry's canonical record and of the previous entry's hash
-- (NULL for the first entry), and of a budget row's canonical record
-- (src/pg/ledger_chain.cpp).
CREATE FUNCTION dp_agg.ledger_entry_hash(previous bytea, entry dp_agg.ledger_entry)
  RETURNS bytea AS 'MODULE_PATHNAME', 'dp_agg_ledger_entry_hash'
  LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_agg.budget_digest(budget dp_agg.role_budget)
  RETURNS bytea AS 'MODULE_PATHNAME', 'dp_agg_budget_digest'
  LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- SECURITY LABEL FOR dp_agg ON DATABASE <this one> IS 'ledger', which guards
-- DROP DATABASE (src/pg/drop_guard.h).
CREATE FUNCTION dp_agg.mark_ledger_database() RETURNS void
  AS 'MODULE_PATHNAME', 'dp_agg_mark_ledger_database' LANGUAGE C VOLATILE;

-- Appends one entry: every write of the ledger goes through here
-- (src/pg/ledger_chain.cpp). `budget` is the role's budget row right after
-- the change (NULL when it has none); its digest is recorded with the
-- entry. The entry gets the next id and recorded_at = now(). The ledger
-- writer's charges are chained at once (chain_now): under the head's row
-- lock the entry gets the next seq and its hash, and the head advances. An
-- administrator's changes are appended without seq and hash and chained when
-- their transaction commits (the deferred trigger below), so that an open
-- administrative transaction never holds the chain head, which every charge
-- of the database needs. system_identifier: the cluster whose role OID
-- role_oid is (NULL: this one).
CREATE FUNCTION dp_agg.append_ledger_entry(kind text, role_oid oid, role_name name,
                                           session_user_name name, current_user_name name,
                                           epsilon numeric, delta numeric, rho numeric,
                                           zcdp_delta numeric, budget dp_agg.role_budget,
                                           chain_now boolean, query_id bigint DEFAULT NULL,
                                           aggregates text DEFAULT NULL, query text DEFAULT NULL,
                                           system_identifier bigint DEFAULT NULL)
  RETURNS void AS 'MODULE_PATHNAME', 'dp_agg_append_ledger_entry' LANGUAGE C VOLATILE;

-- At commit: chains the rows this transaction's administrative functions
-- appended. A row without seq that they did not append was inserted outside
-- dp_agg's functions: the commit is refused. SECURITY DEFINER: it runs as
-- whoever commits (an administrator need not be a superuser). Its search
-- path is pinned like every SECURITY DEFINER function's: it runs at commit,
-- outside the administrative function that appended the row, where the
-- committing session's search_path would otherwise resolve the chain's
-- operators (review 28: an administrator's own `=` ran as superuser).
CREATE FUNCTION dp_agg.chain_deferred_entry() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_chain_deferred_entry' LANGUAGE C VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp;

-- UPDATE of a ledger row: only the chaining of a row appended in this
-- transaction (seq and entry_hash set once); of the head: only its advance
-- with an entry, by dp_agg's own code. DELETE and TRUNCATE of either table:
-- never.
CREATE FUNCTION dp_agg.guard_ledger_entry() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_guard_ledger_entry' LANGUAGE C VOLATILE;
CREATE FUNCTION dp_agg.guard_ledger_head() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_guard_ledger_head' LANGUAGE C VOLATILE;
CREATE FUNCTION dp_agg.refuse_ledger_removal() RETURNS trigger
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION 'the privacy ledger is append-only'
    USING ERRCODE = 'ZP006',
          DETAIL = format('%s of dp_agg.%s is refused: ledger rows are never removed.', TG_OP,
                          TG_TABLE_NAME),
          HINT = 'dp_agg.verify_ledger() checks the ledger. To remove it with its database or extension, see README "Removing dp_agg".';
END $$;

CREATE CONSTRAINT TRIGGER ledger_entry_chain_at_commit AFTER INSERT ON dp_agg.ledger_entry
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.seq IS NULL)
  EXECUTE FUNCTION dp_agg.chain_deferred_entry();
CREATE TRIGGER ledger_entry_append_only BEFORE UPDATE ON dp_agg.ledger_entry
  FOR EACH ROW EXECUTE FUNCTION dp_agg.guard_ledger_entry();
CREATE TRIGGER ledger_entry_no_removal BEFORE DELETE OR TRUNCATE ON dp_agg.ledger_entry
  FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.refuse_ledger_removal();
CREATE TRIGGER ledger_head_advance_only BEFORE UPDATE ON dp_agg.ledger_head
  FOR EACH ROW EXECUTE FUNCTION dp_agg.guard_ledger_head();
CREATE TRIGGER ledger_head_no_removal BEFORE DELETE OR TRUNCATE ON dp_agg.ledger_head
  FOR EACH STATEMENT EXECUTE FUNCTION dp_agg.refuse_ledger_removal();
-- Also with session_replication_role = replica (which skips ordinary triggers).
ALTER TABLE dp_agg.ledger_entry ENABLE ALWAYS TRIGGER ledger_entry_chain_at_commit;
ALTER TABLE dp_agg.ledger_entry ENABLE ALWAYS TRIGGER ledger_entry_append_only;
ALTER TABLE dp_agg.ledger_entry ENABLE ALWAYS TRIGGER ledger_entry_no_removal;
ALTER TABLE dp_agg.ledger_head ENABLE ALWAYS TRIGGER ledger_head_advance_only;
ALTER TABLE dp_agg.ledger_head ENABLE ALWAYS TRIGGER ledger_head_no_removal;

-- A budget changes only from the state its ledger recorded: BEFORE UPDATE
-- of a budget row, refuses (ZP006) if the row is not the one its last ledger
-- entry recorded (changed outside dp_agg's functions), or if no ledger row
-- of its role exists at all (created outside them); else the next charge or
-- administrative change would record the changed row as the budget's new
-- state and verify_ledger would no longer see the change (review 28,
-- src/pg/budget_guard.cpp). The index finds a budget's last record.
CREATE INDEX ledger_entry_budget_records
  ON dp_agg.ledger_entry (role_oid, system_identifier, id);
CREATE FUNCTION dp_agg.guard_budget_record() RETURNS trigger
  AS 'MODULE_PATHNAME', 'dp_agg_guard_budget_record' LANGUAGE C VOLATILE;
CREATE TRIGGER role_budget_changes_recorded_state BEFORE UPDATE ON dp_agg.role_budget
  FOR EACH ROW EXECUTE FUNCTION dp_agg.guard_budget_record();
ALTER TABLE dp_agg.role_budget ENABLE ALWAYS TRIGGER role_budget_changes_recorded_state;


-- What the ledger says the budget of one key ('role OID@system identifier',
-- as in role_budget.reattached_from) had spent before entry before_seq: the
-- amounts of its last reset_spent, renewal or revoke_budget (nothing) or
-- reattach_budget (what that recorded, itself checked by verify_ledger)
-- before it, plus its charges since (0.1.0's, without zCDP amounts, as the
-- upgrade counted them). entries: how many ledger rows the key has before
-- before_seq; recorded_digest: the budget digest of the last one that
-- recorded one (NULL if none did). Re-attachment and verify_ledger check a
-- restored budget against this, so that a budget changed before it was
-- re-attached cannot pass for what it recorded (review 28).
CREATE FUNCTION dp_agg.ledger_spent(entry_key text, before_seq bigint,
                                    OUT entries bigint, OUT epsilon numeric, OUT delta numeric,
                                    OUT rho numeric, OUT zcdp_delta numeric,
                                    OUT recorded_digest bytea)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  WITH keyed AS (
    SELECT e.seq, e.kind, e.epsilon, e.delta, e.rho, e.zcdp_delta, e.budget_digest
    FROM dp_agg.ledger_entry e
    WHERE e.role_oid = split_part(entry_key, '@', 1)::oid
      AND e.system_identifier = split_part(entry_key, '@', 2)::bigint AND e.seq < before_seq),
  checkpoint AS (
    SELECT k.seq,
           CASE WHEN k.kind = 'reattach_budget' THEN k.epsilon ELSE 0 END AS epsilon,
           CASE WHEN k.kind = 'reattach_budget' THEN k.delta ELSE 0 END AS delta,
           CASE WHEN k.kind = 'reattach_budget' THEN k.rho ELSE 0 END AS rho,
           CASE WHEN k.kind = 'reattach_budget' THEN k.zcdp_delta ELSE 0 END AS zcdp_delta
    FROM keyed k WHERE k.kind IN ('reset_spent', 'revoke_budget', 'reattach_budget', 'renewal')
    ORDER BY k.seq DESC LIMIT 1),
  charges AS (
    SELECT coalesce(sum(k.epsilon), 0) AS epsilon, coalesce(sum(k.delta), 0) AS delta,
           coalesce(sum(k.epsilon) FILTER (WHERE k.rho IS NULL), 0) AS old_epsilon,
           coalesce(sum(k.rho), 0) AS rho,
           coalesce(sum(k.delta) FILTER (WHERE k.rho IS NULL), 0)
             + coalesce(sum(k.zcdp_delta), 0) AS zcdp_delta
    FROM keyed k
    WHERE k.kind = 'charge' AND k.seq > coalesce((SELECT z.seq FROM checkpoint z), 0))
  SELECT (SELECT count(*) FROM keyed),
         coalesce((SELECT z.epsilon FROM checkpoint z), 0) + c.epsilon,
         coalesce((SELECT z.delta FROM checkpoint z), 0) + c.delta,
         coalesce((SELECT z.rho FROM checkpoint z), 0) + c.old_epsilon * c.old_epsilon * 0.5
           + c.rho,
         coalesce((SELECT z.zcdp_delta FROM checkpoint z), 0) + c.zcdp_delta,
         (SELECT k.budget_digest FROM keyed k WHERE k.budget_digest IS NOT NULL
          ORDER BY k.seq DESC LIMIT 1)
  FROM charges c
$$;

-- The key ('role OID@system identifier') of the budget that a
-- reattach_budget entry re-attached, read from its query text (written by
-- dp_agg.attach_orphan: keep the two in step); NULL if it names none.
CREATE FUNCTION dp_agg.reattached_key(query text) RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT m[1] || '@' || m[2]
  FROM regexp_match(query, '^re-attached the budget restored from role .* \(OID ([0-9]+) in the cluster with system identifier (-?[0-9]+)\): [a-z_]+ budget, epsilon [^ ]+ of [^ ]+ and delta [^ ]+ of [^ ]+ spent$') m
$$;

-- Why the restored budget `orphan` may not be re-attached, or NULL: it must
-- be the budget its own ledger rows (restored with it) recorded last, and
-- have spent what they charged. A row changed after the dump, or created
-- outside dp_agg's functions, would otherwise become a role's budget with a
-- clean ledger entry (review 28).
CREATE FUNCTION dp_agg.restored_budget_disagreement(orphan dp_agg.role_budget) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  spent record;
BEGIN
  SELECT * INTO spent
  FROM dp_agg.ledger_spent(orphan.role_oid::text || '@' || orphan.system_identifier,
                           9223372036854775807);
  IF spent.entries = 0 THEN
    RETURN 'no ledger row of it was restored with it (it was created outside dp_agg''s functions, or its ledger was not restored)';
  ELSIF spent.recorded_digest IS NOT NULL
        AND spent.recorded_digest <> dp_agg.budget_digest(orphan) THEN
    RETURN 'it is not the budget its last ledger row recorded (it was changed outside dp_agg''s functions)';
  ELSIF orphan.epsilon_spent <> spent.epsilon OR orphan.delta_spent <> spent.delta
        OR orphan.rho_spent <> spent.rho OR orphan.zcdp_delta_spent <> spent.zcdp_delta THEN
    RETURN format('it has spent epsilon %s, delta %s, rho %s, zCDP delta %s, but its ledger rows charged epsilon %s, delta %s, rho %s, zCDP delta %s',
                  orphan.epsilon_spent, orphan.delta_spent, orphan.rho_spent,
                  orphan.zcdp_delta_spent, spent.epsilon, spent.delta, spent.rho,
                  spent.zcdp_delta);
  END IF;
  RETURN NULL;
END $$;

-- The chained ledger rows that concern a role's budget, each with the budget
-- it counts for (owner_oid, owner_cluster): a budget is keyed by role OID and
-- cluster, and the ledger rows of the budgets re-attached to it after a
-- restore (42_budget_restores.sql) are its rows too. For verify_ledger
-- (internal).
CREATE FUNCTION dp_agg.budget_ledger_entries(OUT owner_oid oid, OUT owner_cluster bigint,
                                             OUT seq bigint, OUT kind text, OUT role_name name,
                                             OUT budget_digest bytea, OUT epsilon numeric,
                                             OUT delta numeric, OUT rho numeric,
                                             OUT zcdp_delta numeric)
RETURNS SETOF record LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  WITH budget_keys AS (
    SELECT b.role_oid, b.system_identifier,
           b.role_oid::text || '@' || b.system_identifier AS entry_key
    FROM dp_agg.role_budget b
    UNION ALL
    SELECT b.role_oid, b.system_identifier, unnest(b.reattached_from)
    FROM dp_agg.role_budget b)
  SELECT coalesce(k.role_oid, e.role_oid), coalesce(k.system_identifier, e.system_identifier),
         e.seq, e.kind, e.role_name, e.budget_digest, e.epsilon, e.delta, e.rho, e.zcdp_delta
  FROM dp_agg.ledger_entry e
  LEFT JOIN budget_keys k ON k.entry_key = e.role_oid::text || '@' || e.system_identifier
  WHERE e.role_oid IS NOT NULL AND e.seq IS NOT NULL
$$;

-- Checks the whole ledger (administrators): ok is true when
--  - every row is chained (seq, entry_hash), seq runs 1, 2, ... without gap or
--    repeat up to the head's seq, the last hash is the head's, and every
--    entry_hash is that of its row and of the row before it;
--  - every budget row (keyed by role OID and cluster; the rows of the
--    budgets re-attached to it are its rows) is the one recorded
--    (budget_digest) with its last ledger entry, every role whose last entry
--    is not a revoke_budget has one, and its spent amounts are the sums of
--    its charges since its last reset_spent, renewal or revoke_budget, or since its
--    last reattach_budget plus what that recorded (0.1.0's charges, which
--    carry no zCDP amounts, count as the upgrade counted them: rho
--    epsilon^2 / 2 of their epsilon sum, zCDP delta their delta);
--  - every budget restored from another cluster that is gone was
--    re-attached, and every reattach_budget entry names the restored budget
--    and records what that budget's own ledger rows charged;
--  - no charge has a negative amount;
--  - every renewal entry forgot exactly what its period had spent (the
--    charges since the checkpoint before it);
--  - given an anchor (a seq and hash from the server log's "dp_agg ledger
--    head" lines, or a copy kept elsewhere), the entry of that seq has that
--    hash.
-- problems says what is wrong (at most 100 lines); first_bad_entry is the
-- lowest seq concerned. head_seq and head_hash are the head now: keep them
-- outside the database to anchor a later check.
CREATE FUNCTION dp_agg.verify_ledger(anchor_seq bigint DEFAULT NULL,
                                     anchor_hash text DEFAULT NULL,
                                     OUT ok boolean, OUT entries bigint, OUT head_seq bigint,
                                     OUT head_hash text, OUT first_bad_entry bigint,
                                     OUT problems text[])
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r record;
  head dp_agg.ledger_head;
  has_head boolean;
  last_seq bigint;
  last_hash bytea;
  found_count bigint := 0;
  max_problems constant int := 100;
BEGIN
  PERFORM dp_agg.require_admin('verify the privacy ledger');
  problems := ARRAY[]::text[];
  SELECT * INTO head FROM dp_agg.ledger_head;
  has_head := FOUND;
  head_seq := coalesce(head.seq, 0);
  head_hash := encode(head.entry_hash, 'hex');
  SELECT count(*) INTO entries FROM dp_agg.ledger_entry;

  -- 1. The chain, in seq order: rows without seq, gaps, repeats, hashes.
  FOR r IN
    SELECT format('ledger row id %s has no sequence number and hash: inserted outside dp_agg''s functions', e.id) AS problem,
           NULL::bigint AS seq
    FROM dp_agg.ledger_entry e WHERE e.seq IS NULL OR e.entry_hash IS NULL
    UNION ALL
    SELECT CASE
             WHEN c.previous_seq = c.seq THEN
               format('entry %s (id %s) repeats a sequence number: inserted outside dp_agg''s functions', c.seq, c.id)
             WHEN c.seq = coalesce(c.previous_seq, 0) + 2 THEN
               format('entry %s is missing: removed outside dp_agg''s functions', c.seq - 1)
             WHEN c.seq > coalesce(c.previous_seq, 0) + 2 THEN
               format('entries %s to %s are missing: removed outside dp_agg''s functions',
                      coalesce(c.previous_seq, 0) + 1, c.seq - 1)
             ELSE
               format('entry %s (id %s) does not match its hash: changed (or inserted) outside dp_agg''s functions', c.seq, c.id)
           END,
           -- (the first entry concerned: the first missing one of a gap)
           CASE WHEN c.seq > coalesce(c.previous_seq, 0) + 1 THEN coalesce(c.previous_seq, 0) + 1
                ELSE c.seq END
    FROM (SELECT e.seq, e.id, e.entry_hash,
                 lag(e.seq) OVER w AS previous_seq,
                 dp_agg.ledger_entry_hash(lag(e.entry_hash) OVER w, e) AS recomputed
          FROM dp_agg.ledger_entry e
          WHERE e.seq IS NOT NULL AND e.entry_hash IS NOT NULL
          WINDOW w AS (ORDER BY e.seq, e.id)) c
    WHERE c.seq <> coalesce(c.previous_seq, 0) + 1 OR c.recomputed <> c.entry_hash
    ORDER BY 2 NULLS FIRST
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN problems := problems || r.problem; END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  -- 2. The end of the chain against the head.
  SELECT e.seq, e.entry_hash INTO last_seq, last_hash
  FROM dp_agg.ledger_entry e WHERE e.seq IS NOT NULL ORDER BY e.seq DESC, e.id DESC LIMIT 1;
  last_seq := coalesce(last_seq, 0);
  IF NOT has_head AND last_seq > 0 THEN
    found_count := found_count + 1;
    problems := problems || 'the chain head (dp_agg.ledger_head) is missing: removed outside dp_agg''s functions'::text;
  ELSIF last_seq < head_seq THEN
    found_count := found_count + 1;
    problems := problems || format('%s missing at the end: the chain head says %s entries (the ledger was truncated, or its last rows removed, outside dp_agg''s functions)',
                                   CASE WHEN last_seq + 1 = head_seq
                                        THEN format('entry %s is', head_seq)
                                        ELSE format('entries %s to %s are', last_seq + 1, head_seq)
                                   END, head_seq);
    first_bad_entry := least(first_bad_entry, last_seq + 1);
  ELSIF last_seq > head_seq THEN
    found_count := found_count + 1;
    problems := problems || format('%s beyond the chain head (%s): inserted outside dp_agg''s functions, or the head set back',
                                   CASE WHEN last_seq = head_seq + 1
                                        THEN format('entry %s is', last_seq)
                                        ELSE format('entries %s to %s are', head_seq + 1, last_seq)
                                   END, head_seq);
    first_bad_entry := least(first_bad_entry, head_seq + 1);
  ELSIF last_seq > 0 AND last_hash IS DISTINCT FROM head.entry_hash THEN
    found_count := found_count + 1;
    problems := problems || format('the hash of entry %s differs from the chain head''s', last_seq);
    first_bad_entry := least(first_bad_entry, last_seq);
  END IF;

  -- 3. An anchor kept outside the database.
  IF anchor_seq IS NOT NULL OR anchor_hash IS NOT NULL THEN
    IF anchor_seq IS NULL OR anchor_hash IS NULL THEN
      RAISE EXCEPTION 'an anchor is a sequence number and a hash, both given'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Use the entry number and hash of a "dp_agg ledger head" line of the server log.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM dp_agg.ledger_entry e
                   WHERE e.seq = anchor_seq AND encode(e.entry_hash, 'hex') = lower(anchor_hash)) THEN
      found_count := found_count + 1;
      problems := problems || format('entry %s does not have the anchored hash %s: the chain was rewritten (or the entry removed) since the anchor was taken',
                                     anchor_seq, lower(anchor_hash));
      first_bad_entry := least(first_bad_entry, anchor_seq);
    END IF;
  END IF;

  -- 4. Budgets against the ledger.
  FOR r IN
    WITH entries AS (SELECT * FROM dp_agg.budget_ledger_entries()),
    last_entry AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq, kind, role_name
      FROM entries ORDER BY owner_oid, owner_cluster, seq DESC),
    -- The last entry that recorded the budget after it: every entry since
    -- 0.2.0 but a revoke_budget (after which there is none) does; one
    -- without a digest is older, or forged (and then flagged by the chain).
    last_recorded AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq, budget_digest
      FROM entries WHERE budget_digest IS NOT NULL
      ORDER BY owner_oid, owner_cluster, seq DESC),
    -- Where the spending now recorded starts: the last reset_spent or
    -- renewal (from nothing), revoke_budget (no budget, then a new one from
    -- nothing) or reattach_budget (from what the re-attached budget had
    -- spent).
    checkpoint AS (
      SELECT DISTINCT ON (owner_oid, owner_cluster) owner_oid, owner_cluster, seq,
             CASE WHEN kind = 'reattach_budget' THEN epsilon ELSE 0 END AS epsilon,
             CASE WHEN kind = 'reattach_budget' THEN delta ELSE 0 END AS delta,
             CASE WHEN kind = 'reattach_budget' THEN rho ELSE 0 END AS rho,
             CASE WHEN kind = 'reattach_budget' THEN zcdp_delta ELSE 0 END AS zcdp_delta
      FROM entries WHERE kind IN ('reset_spent', 'revoke_budget', 'reattach_budget', 'renewal')
      ORDER BY owner_oid, owner_cluster, seq DESC),
    charges AS (
      SELECT e.owner_oid, e.owner_cluster,
             sum(e.epsilon) AS epsilon,
             sum(e.delta) AS delta,
             coalesce(sum(e.epsilon) FILTER (WHERE e.rho IS NULL), 0) AS old_epsilon,
             coalesce(sum(e.rho), 0) AS rho,
             coalesce(sum(e.delta) FILTER (WHERE e.rho IS NULL), 0)
               + coalesce(sum(e.zcdp_delta), 0) AS zcdp_delta
      FROM entries e
      LEFT JOIN checkpoint z ON z.owner_oid = e.owner_oid AND z.owner_cluster = e.owner_cluster
      WHERE e.kind = 'charge' AND e.seq > coalesce(z.seq, 0)
      GROUP BY e.owner_oid, e.owner_cluster),
    -- The restored budgets that were re-attached (step 5 checks each).
    attached AS (
      SELECT DISTINCT dp_agg.reattached_key(e.query) AS entry_key
      FROM dp_agg.ledger_entry e WHERE e.kind = 'reattach_budget' AND e.seq IS NOT NULL)
    SELECT coalesce(b.role_oid, l.owner_oid) AS role_oid,
           coalesce(b.system_identifier, l.owner_cluster) AS cluster,
           coalesce(b.role_name, l.role_name) AS role_name,
           b.role_oid IS NOT NULL AS has_budget,
           CASE WHEN b.role_oid IS NOT NULL THEN dp_agg.budget_digest(b) END AS digest,
           b.epsilon_spent, b.delta_spent, b.rho_spent, b.zcdp_delta_spent,
           l.seq AS last_seq, l.kind AS last_kind, d.seq AS recorded_seq,
           d.budget_digest AS recorded_digest,
           coalesce(z.epsilon, 0) + coalesce(c.epsilon, 0) AS charged_epsilon,
           coalesce(z.delta, 0) + coalesce(c.delta, 0) AS charged_delta,
           coalesce(z.rho, 0) + coalesce(c.old_epsilon, 0) * coalesce(c.old_epsilon, 0) * 0.5
             + coalesce(c.rho, 0) AS charged_rho,
           coalesce(z.zcdp_delta, 0) + coalesce(c.zcdp_delta, 0) AS charged_zcdp_delta,
           EXISTS (SELECT 1 FROM attached a
                   WHERE a.entry_key = coalesce(b.role_oid, l.owner_oid)::text || '@'
                                       || coalesce(b.system_identifier, l.owner_cluster))
             AS reattached
    FROM dp_agg.role_budget b
    FULL JOIN last_entry l ON l.owner_oid = b.role_oid AND l.owner_cluster = b.system_identifier
    LEFT JOIN last_recorded d ON d.owner_oid = coalesce(b.role_oid, l.owner_oid)
                             AND d.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    LEFT JOIN checkpoint z ON z.owner_oid = coalesce(b.role_oid, l.owner_oid)
                          AND z.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    LEFT JOIN charges c ON c.owner_oid = coalesce(b.role_oid, l.owner_oid)
                       AND c.owner_cluster = coalesce(b.system_identifier, l.owner_cluster)
    ORDER BY 1, 2
  LOOP
    IF r.has_budget AND r.last_seq IS NULL THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) has no ledger entry: created outside dp_agg''s functions', r.role_name, r.role_oid);
      END IF;
      CONTINUE;
    END IF;
    IF NOT r.has_budget THEN
      -- (Rows of another cluster's role without a budget here belonged to a
      -- restored budget that was re-attached and later revoked: their
      -- re-attachment is not kept once that budget is gone. One that no
      -- reattach_budget entry names was removed while it waited.)
      IF r.last_kind <> 'revoke_budget' AND r.cluster = dp_agg.system_identifier() THEN
        found_count := found_count + 1;
        IF found_count <= max_problems THEN
          problems := problems || format('role "%s" (OID %s) has no budget, but its last ledger entry %s (%s) says it has one: removed outside dp_agg''s functions', r.role_name, r.role_oid, r.last_seq, r.last_kind);
        END IF;
      ELSIF r.last_kind <> 'revoke_budget' AND NOT r.reattached THEN
        found_count := found_count + 1;
        IF found_count <= max_problems THEN
          problems := problems || format('the budget restored for role "%s" (OID %s in the cluster with system identifier %s) is gone, but was never re-attached and its last ledger entry %s (%s) says it exists: removed outside dp_agg''s functions', r.role_name, r.role_oid, r.cluster, r.last_seq, r.last_kind);
        END IF;
      END IF;
      CONTINUE;
    END IF;
    IF r.last_kind = 'revoke_budget' THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) exists although its last ledger entry %s revoked it: created outside dp_agg''s functions', r.role_name, r.role_oid, r.last_seq);
      END IF;
    ELSIF r.recorded_digest IS NOT NULL AND r.recorded_digest <> r.digest THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) is not the one recorded with its ledger entry %s: changed outside dp_agg''s functions', r.role_name, r.role_oid, r.recorded_seq);
      END IF;
    END IF;
    IF r.epsilon_spent <> r.charged_epsilon OR r.delta_spent <> r.charged_delta
       OR r.rho_spent <> r.charged_rho OR r.zcdp_delta_spent <> r.charged_zcdp_delta THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('the budget of role "%s" (OID %s) has spent epsilon %s, delta %s, rho %s, zCDP delta %s, but its charges since its last reset or renewal sum to epsilon %s, delta %s, rho %s, zCDP delta %s',
                                       r.role_name, r.role_oid, r.epsilon_spent, r.delta_spent,
                                       r.rho_spent, r.zcdp_delta_spent, r.charged_epsilon,
                                       r.charged_delta, r.charged_rho, r.charged_zcdp_delta);
      END IF;
    END IF;
  END LOOP;

  -- 5. Each re-attachment against the restored budget's own ledger rows: it
  --    names that budget, and records what they charged (its amounts start
  --    the new owner's sums: a budget changed before it was re-attached
  --    would otherwise pass).
  FOR r IN
    SELECT e.seq, e.role_name, e.epsilon, e.delta, e.rho, e.zcdp_delta, k.entry_key,
           s.entries AS key_entries, s.epsilon AS spent_epsilon, s.delta AS spent_delta,
           s.rho AS spent_rho, s.zcdp_delta AS spent_zcdp_delta
    FROM dp_agg.ledger_entry e
    CROSS JOIN LATERAL (SELECT dp_agg.reattached_key(e.query) AS entry_key) k
    LEFT JOIN LATERAL dp_agg.ledger_spent(k.entry_key, e.seq) s ON true
    WHERE e.kind = 'reattach_budget' AND e.seq IS NOT NULL
    ORDER BY e.seq
  LOOP
    IF r.entry_key IS NULL THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('entry %s re-attached a budget to role "%s" without naming it', r.seq, r.role_name);
      END IF;
      first_bad_entry := least(first_bad_entry, r.seq);
    ELSIF r.key_entries = 0 OR r.epsilon <> r.spent_epsilon OR r.delta <> r.spent_delta
          OR r.rho <> r.spent_rho OR r.zcdp_delta <> r.spent_zcdp_delta THEN
      found_count := found_count + 1;
      IF found_count <= max_problems THEN
        problems := problems || format('entry %s re-attached to role "%s" the restored budget %s with epsilon %s, delta %s, rho %s, zCDP delta %s spent, but its ledger rows (%s) charged epsilon %s, delta %s, rho %s, zCDP delta %s: it was changed (or created) outside dp_agg''s functions before it was re-attached',
                                       r.seq, r.role_name, r.entry_key, r.epsilon, r.delta, r.rho,
                                       r.zcdp_delta, r.key_entries, r.spent_epsilon,
                                       r.spent_delta, r.spent_rho, r.spent_zcdp_delta);
      END IF;
      first_bad_entry := least(first_bad_entry, r.seq);
    END IF;
  END LOOP;

  -- 6. A charge never gives budget back: one with a negative amount was
  --    appended outside the ledger writer (review 28: with the budget's
  --    spending lowered to match, it passed every other check).
  FOR r IN
    SELECT e.seq, e.role_name, e.epsilon, e.delta, e.rho, e.zcdp_delta
    FROM dp_agg.ledger_entry e
    WHERE e.kind = 'charge' AND e.seq IS NOT NULL
      AND (e.epsilon < 0 OR e.delta < 0 OR e.rho < 0 OR e.zcdp_delta < 0)
    ORDER BY e.seq
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN
      problems := problems || format('entry %s charges role "%s" a negative amount (epsilon %s, delta %s, rho %s, zCDP delta %s): appended outside the ledger writer',
                                     r.seq, r.role_name, r.epsilon, r.delta, r.rho, r.zcdp_delta);
    END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  -- 7. Each renewal forgot exactly what its period had spent: the charges
  -- since the checkpoint before it, counted as in 4.
  FOR r IN
    WITH entries AS (
      SELECT e.*,
             -- (the checkpoints up to this entry: an entry after the n-th
             -- checkpoint and the n-th itself are in segment n)
             count(*) FILTER (WHERE e.kind IN ('reset_spent', 'revoke_budget',
                                                'reattach_budget', 'renewal'))
               OVER (PARTITION BY e.owner_oid, e.owner_cluster ORDER BY e.seq) AS segment
      FROM dp_agg.budget_ledger_entries() e),
    spent AS (
      SELECT owner_oid, owner_cluster, segment,
             coalesce(sum(epsilon) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(epsilon) FILTER (WHERE kind = 'charge'), 0) AS epsilon,
             coalesce(sum(delta) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(delta) FILTER (WHERE kind = 'charge'), 0) AS delta,
             coalesce(sum(rho) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(epsilon) FILTER (WHERE kind = 'charge' AND rho IS NULL), 0)
                 * coalesce(sum(epsilon) FILTER (WHERE kind = 'charge' AND rho IS NULL), 0)
                 * 0.5
               + coalesce(sum(rho) FILTER (WHERE kind = 'charge'), 0) AS rho,
             coalesce(sum(zcdp_delta) FILTER (WHERE kind = 'reattach_budget'), 0)
               + coalesce(sum(delta) FILTER (WHERE kind = 'charge' AND rho IS NULL), 0)
               + coalesce(sum(zcdp_delta) FILTER (WHERE kind = 'charge'), 0) AS zcdp_delta
      FROM entries GROUP BY owner_oid, owner_cluster, segment)
    SELECT n.seq, n.role_name, n.epsilon, n.delta, n.rho, n.zcdp_delta,
           coalesce(p.epsilon, 0) AS spent_epsilon, coalesce(p.delta, 0) AS spent_delta,
           coalesce(p.rho, 0) AS spent_rho, coalesce(p.zcdp_delta, 0) AS spent_zcdp_delta
    FROM entries n
    LEFT JOIN spent p ON p.owner_oid = n.owner_oid AND p.owner_cluster = n.owner_cluster
                     AND p.segment = n.segment - 1
    WHERE n.kind = 'renewal'
      AND (n.epsilon IS DISTINCT FROM coalesce(p.epsilon, 0)
           OR n.delta IS DISTINCT FROM coalesce(p.delta, 0)
           OR n.rho IS DISTINCT FROM coalesce(p.rho, 0)
           OR n.zcdp_delta IS DISTINCT FROM coalesce(p.zcdp_delta, 0))
    ORDER BY n.seq
  LOOP
    found_count := found_count + 1;
    IF found_count <= max_problems THEN
      problems := problems || format('the renewal entry %s of role "%s" forgot epsilon %s, delta %s, rho %s, zCDP delta %s, but the period it ended had spent epsilon %s, delta %s, rho %s, zCDP delta %s',
                                     r.seq, r.role_name, r.epsilon, r.delta, r.rho, r.zcdp_delta,
                                     r.spent_epsilon, r.spent_delta, r.spent_rho,
                                     r.spent_zcdp_delta);
    END IF;
    first_bad_entry := least(first_bad_entry, r.seq);
  END LOOP;

  IF found_count > max_problems THEN
    problems := problems || format('... and %s more problems', found_count - max_problems);
  END IF;
  ok := found_count = 0;
END $$;

-- This database now holds a ledger: DROP DATABASE needs the same
-- confirmation as DROP EXTENSION.
SELECT dp_agg.mark_ledger_database();

COMMENT ON TABLE dp_agg.ledger_head IS
  'The chain head of the privacy ledger: the seq and entry_hash of its last entry, where a TRUNCATE of the ledger does not reach (dp_agg.verify_ledger)';
COMMENT ON FUNCTION dp_agg.ledger_entry_hash(bytea, dp_agg.ledger_entry) IS
  'SHA-256 of a ledger row''s canonical record (every column but entry_hash) and of the previous row''s hash (internal)';
COMMENT ON FUNCTION dp_agg.budget_digest(dp_agg.role_budget) IS
  'SHA-256 of a budget row''s canonical record (internal)';
COMMENT ON FUNCTION dp_agg.mark_ledger_database() IS
  'Labels this database as holding a dp_agg ledger, so that DROP DATABASE needs dp_agg.allow_drop_extension (internal)';
COMMENT ON FUNCTION dp_agg.append_ledger_entry(text, oid, name, name, name, numeric, numeric, numeric, numeric, dp_agg.role_budget, boolean, bigint, text, text, bigint) IS
  'Appends a ledger row with the digest of the budget after it, chained now or at commit (internal)';
COMMENT ON FUNCTION dp_agg.chain_deferred_entry() IS
  'Trigger: chains at commit the ledger rows dp_agg appended in the transaction, refuses any other (internal)';
COMMENT ON FUNCTION dp_agg.guard_ledger_entry() IS
  'Trigger: refuses UPDATE of ledger rows except their chaining (internal)';
COMMENT ON FUNCTION dp_agg.guard_ledger_head() IS
  'Trigger: refuses UPDATE of the chain head except its advance with an entry dp_agg appends (internal)';
COMMENT ON FUNCTION dp_agg.guard_budget_record() IS
  'Trigger: refuses to change a budget that is not the one its last ledger entry recorded (internal)';
COMMENT ON FUNCTION dp_agg.refuse_ledger_removal() IS
  'Trigger: refuses DELETE and TRUNCATE of the ledger and its head (internal)';
COMMENT ON FUNCTION dp_agg.ledger_spent(text, bigint) IS
  'What the ledger says the budget of a key (role OID@system identifier) had spent before an entry (internal)';
COMMENT ON FUNCTION dp_agg.reattached_key(text) IS
  'The key (role OID@system identifier) of the budget a reattach_budget entry re-attached (internal)';
COMMENT ON FUNCTION dp_agg.restored_budget_disagreement(dp_agg.role_budget) IS
  'Why a restored budget may not be re-attached (its ledger rows do not vouch for it), or NULL (internal)';
COMMENT ON FUNCTION dp_agg.budget_ledger_entries() IS
  'The chained ledger rows of every budget, with the budget (role OID and cluster) each counts for after re-attachments (internal, for verify_ledger)';
COMMENT ON FUNCTION dp_agg.verify_ledger(bigint, text) IS
  'verify_ledger([anchor_seq, anchor_hash]): recomputes the ledger''s hash chain and compares every budget with its ledger entries; ok, the head (to keep as an anchor) and what is wrong (administrators)';
