-- Findings of the second privacy review (branch review2), each pinned with
-- the CORRECT behaviour: the expected output fails until the finding is
-- fixed.
\set VERBOSITY terse

SET client_min_messages = warning;
DROP SCHEMA IF EXISTS review2 CASCADE;
DROP ROLE IF EXISTS regress_review2_analyst;
RESET client_min_messages;
CREATE SCHEMA review2;
CREATE ROLE regress_review2_analyst LOGIN;
SELECT dp_agg.restrict_role('regress_review2_analyst');
GRANT USAGE ON SCHEMA review2 TO regress_review2_analyst;
SELECT dp_agg.set_budget('regress_review2_analyst', 1000, 0.001);

-- ---------------------------------------------------------------------------
-- Finding 1. The privacy unit of a partitioned or inherited table is read
-- from the queried relation only (PrivacyUnitColumn, restriction.cpp), while
-- protection is inherited (IsProtectedRelation walks the partition ancestors,
-- PropagateProtection labels INHERITS children). A restricted role that
-- names a partition or child directly gets row-level semantics: one unit
-- with 500 rows counts 500 times.
-- Patient 7 has 503 rows in partition part_low (and 500 in child
-- inh_child): at unit level the count of patient 7 is 1 + Z, and |Z| < 25
-- at epsilon 1 fails with probability 2 e^-25 / (1 + e^-1) < 1e-10.
-- ---------------------------------------------------------------------------
CREATE TABLE review2.part (patient_id int, cost int NOT NULL) PARTITION BY RANGE (patient_id);
CREATE TABLE review2.part_low PARTITION OF review2.part FOR VALUES FROM (0) TO (500);
CREATE TABLE review2.part_high PARTITION OF review2.part FOR VALUES FROM (500) TO (2000);
INSERT INTO review2.part SELECT g % 1000, 1 FROM generate_series(1, 3000) g;
INSERT INTO review2.part SELECT 7, 1 FROM generate_series(1, 500);
SELECT dp_agg.protect_table('review2.part');
SELECT dp_agg.set_privacy_unit('review2.part', 'patient_id');
CREATE TABLE review2.inh_parent (patient_id int, cost int NOT NULL);
SELECT dp_agg.protect_table('review2.inh_parent');
SELECT dp_agg.set_privacy_unit('review2.inh_parent', 'patient_id');
CREATE TABLE review2.inh_child () INHERITS (review2.inh_parent);
INSERT INTO review2.inh_child SELECT 7, 1 FROM generate_series(1, 500);
SET SESSION AUTHORIZATION regress_review2_analyst;
-- Through the parent the unit holds (control).
SELECT abs(dp_count(1, 1.0) - 1) < 25 AS one_unit_via_parent
FROM review2.part WHERE patient_id = 7;
-- The partition itself: must be unit level too (or refused).
SELECT abs(dp_count(1, 1.0) - 1) < 25 AS one_unit_via_partition
FROM review2.part_low WHERE patient_id = 7;
SELECT abs(dp_count(1, 1.0) - 1) < 25 AS one_unit_via_inheritance_child
FROM review2.inh_child WHERE patient_id = 7;
RESET SESSION AUTHORIZATION;

SET client_min_messages = warning;
DROP SCHEMA review2 CASCADE;
DROP OWNED BY regress_review2_analyst;
DROP ROLE regress_review2_analyst;
RESET client_min_messages;
