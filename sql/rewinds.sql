-- Exactly one noise draw per charge, however the result is read back
-- (release_replay.h; issue 25, finding 2). Every rewind, backward fetch and
-- rescan of a private query replays the rows its first run released: the
-- same values, never a fresh draw. The assertions compare a release with
-- its replays: equal with probability 1 when the replay works; fresh draws
-- of these aggregates (Laplace noise of scale 10 or more, printed with
-- several digits) repeat with probability below 1e-9 (see each check).

CREATE TABLE rewind_rows AS
SELECT g AS x, 'g' || (g % 4) AS grp FROM generate_series(1, 1000) g;

CREATE FUNCTION rewind_spent() RETURNS float8 LANGUAGE sql AS
$$ SELECT epsilon_spent FROM dp_agg.budgets WHERE role = session_user::name $$;

-- A SCROLL cursor: MOVE ABSOLUTE 0, FETCH FIRST, FETCH PRIOR, FETCH
-- BACKWARD ALL and FETCH ABSOLUTE read the rows of the one release.
CREATE TEMP TABLE seen (label text, grp text, v float8);
SELECT rewind_spent() AS before_scroll \gset
BEGIN;
DECLARE c SCROLL CURSOR FOR
  SELECT grp, dp_avg(x, 0, 1000, 0.1) AS v FROM rewind_rows GROUP BY grp;
MOVE FORWARD ALL IN c;
MOVE ABSOLUTE 0 IN c;
MOVE FORWARD ALL IN c;
MOVE BACKWARD ALL IN c;
COMMIT;
DO $$
DECLARE
  c refcursor := 'scroll_rewinds';
  r record;
BEGIN
  OPEN c SCROLL FOR SELECT grp, dp_avg(x, 0, 1000, 0.1) AS v FROM rewind_rows GROUP BY grp;
  FOR i IN 1..50 LOOP
    MOVE ABSOLUTE 0 FROM c;
    LOOP
      FETCH c INTO r;
      EXIT WHEN NOT FOUND;
      INSERT INTO seen VALUES ('forward', r.grp, r.v);
    END LOOP;
    LOOP
      FETCH PRIOR FROM c INTO r;
      EXIT WHEN NOT FOUND;
      INSERT INTO seen VALUES ('backward', r.grp, r.v);
    END LOOP;
    FETCH FIRST FROM c INTO r;
    INSERT INTO seen VALUES ('first', r.grp, r.v);
    FETCH ABSOLUTE 3 FROM c INTO r;
    INSERT INTO seen VALUES ('absolute', r.grp, r.v);
  END LOOP;
  CLOSE c;
END $$;
-- 50 rewinds of one charge: every group has one value in every direction.
-- (Fresh draws: 4 groups x 50 rounds of Laplace noise of scale >= 20 would
-- repeat a rounded-to-float8 value with probability ~ 0.)
SELECT count(DISTINCT grp) AS groups, max(values_per_group) AS values_per_group,
       sum(reads) AS reads
FROM (SELECT grp, count(DISTINCT v) AS values_per_group, count(*) AS reads
      FROM seen GROUP BY grp) per_group;

-- One charge for the cursor of the DO block, and one for the first cursor
-- (0.1 each, plus no group selection for a superuser's query without
-- privacy units).
SELECT round((rewind_spent() - :before_scroll)::numeric, 6) AS charged_for_two_cursors;

-- WITH HOLD: COMMIT rewinds the executor to keep the whole result
-- (PersistHoldablePortal); the rows fetched before COMMIT come back the same.
BEGIN;
DECLARE h SCROLL CURSOR WITH HOLD FOR
  SELECT dp_count(x, 0.1) AS c, dp_sum(x, 0, 1000, 0.1) AS s FROM rewind_rows;
FETCH 1 FROM h \gset held_before_
COMMIT;
FETCH ABSOLUTE 1 FROM h \gset held_after_
SELECT :held_before_c = :held_after_c AND :held_before_s = :held_after_s AS hold_keeps_release;
CLOSE h;

-- NO SCROLL WITH HOLD, partly read before COMMIT: the rest comes from the
-- same release (no group appears twice). 250 rows per group: P(a noisy
-- count <= 0) = exp(-25)/2 < 1e-10 per group.
BEGIN;
DECLARE hn NO SCROLL CURSOR WITH HOLD FOR
  SELECT grp, dp_count(x, 0.1) > 0 AS positive FROM rewind_rows GROUP BY grp ORDER BY grp;
FETCH 2 FROM hn;
COMMIT;
FETCH ALL FROM hn;
CLOSE hn;

-- A default cursor over a private query can now scroll (the replay node
-- supports backward scans), and FETCH BACKWARD gives the same row.
BEGIN;
DECLARE d CURSOR FOR SELECT dp_sum(x, 0, 1000, 0.1) AS s FROM rewind_rows;
FETCH 1 FROM d \gset default_first_
FETCH BACKWARD 1 FROM d;
FETCH ABSOLUTE 1 FROM d \gset default_again_
SELECT :default_first_s = :default_again_s AS default_cursor_replays;
COMMIT;

-- The plan: the replay node sits right above the releasing Agg.
EXPLAIN (COSTS OFF) SELECT grp, dp_avg(x, 0, 1000, 0.1) FROM rewind_rows GROUP BY grp;

DROP TABLE rewind_rows;
DROP FUNCTION rewind_spent();
