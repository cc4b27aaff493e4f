-- Sample data for the dp_agg demo: 70,000 synthetic patients modelled on the
-- well-known cardiovascular-disease data set (one row per patient).
-- Deterministic (fixed seed, serial INSERT ... SELECT); loads in about a second.
-- The two dates count back from the day of loading, so that "the last year" has rows.
--   psql -X -v ON_ERROR_STOP=1 -f test/demo/patients.sql

SET client_min_messages = warning;
DROP TABLE IF EXISTS patients;
RESET client_min_messages;

CREATE TABLE patients (
    id          integer PRIMARY KEY,
    region      text    NOT NULL,
    age         integer NOT NULL,   -- years
    sex         text    NOT NULL,   -- 'F' / 'M'
    height_cm   integer,
    weight_kg   real,
    ap_hi       integer,            -- systolic blood pressure, mmHg
    ap_lo       integer,            -- diastolic blood pressure, mmHg
    cholesterol smallint,           -- 1 normal, 2 above normal, 3 well above normal
    smoker      boolean,
    active      boolean,
    cardio      boolean,            -- has cardiovascular disease
    income      numeric(10,2),      -- yearly, EUR
    admitted    date,               -- first admission, within the 5 years before loading
    last_visit  timestamptz         -- latest visit, at or after admission
);

SELECT setseed(0.42);

INSERT INTO patients
WITH
-- All randomness is drawn here, once per row, in a fixed order.
u AS MATERIALIZED (
    SELECT g AS id,
           random() AS r_region, random() AS r_age, random() AS r_sex,
           random() AS r_n1a, random() AS r_n1b,      -- normal pair: height, weight
           random() AS r_n2a, random() AS r_n2b,      -- normal pair: ap_hi, ap_lo
           random() AS r_n3a, random() AS r_n3b,      -- normal pair: income, (unused)
           random() AS r_chol, random() AS r_smoke, random() AS r_active,
           random() AS r_cardio, random() AS r_null_w, random() AS r_null_inc,
           random() AS r_admitted, random() AS r_visit, random() AS r_visit_time
    FROM generate_series(1, 70000) AS g
),
-- Box-Muller standard normals and the basic demographics.
b AS (
    SELECT id, r_chol, r_smoke, r_active, r_cardio, r_null_w, r_null_inc,
           r_admitted, r_visit, r_visit_time,
           sqrt(-2 * ln(1 - r_n1a)) * cos(2 * pi() * r_n1b) AS z_height,
           sqrt(-2 * ln(1 - r_n1a)) * sin(2 * pi() * r_n1b) AS z_weight,
           sqrt(-2 * ln(1 - r_n2a)) * cos(2 * pi() * r_n2b) AS z_hi,
           sqrt(-2 * ln(1 - r_n2a)) * sin(2 * pi() * r_n2b) AS z_lo,
           sqrt(-2 * ln(1 - r_n3a)) * cos(2 * pi() * r_n3b) AS z_income,
           CASE WHEN r_region < 0.27 THEN 'South'
                WHEN r_region < 0.49 THEN 'West'
                WHEN r_region < 0.67 THEN 'North'
                WHEN r_region < 0.85 THEN 'Central'
                ELSE 'East' END AS region,
           least(65, 30 + floor(36 * power(r_age, 0.75)))::integer AS age,  -- skewed to older
           CASE WHEN r_sex < 0.65 THEN 'F' ELSE 'M' END AS sex
    FROM u
),
c AS (
    SELECT b.*,
           round(CASE sex WHEN 'F' THEN 161 ELSE 171 END + 6.5 * z_height)::integer AS height_cm,
           CASE WHEN r_chol < 0.74 - 0.006 * (age - 50) THEN 1
                WHEN r_chol < 0.87 - 0.003 * (age - 50) THEN 2
                ELSE 3 END AS cholesterol,
           r_smoke < CASE sex WHEN 'M' THEN 0.22 ELSE 0.03 END AS smoker,
           r_active < 0.80 AS active
    FROM b
),
d AS (
    SELECT c.*,
           greatest(40, least(180, 74 + 0.45 * (height_cm - 165) + 12.5 * z_weight)) AS weight
    FROM c
),
e AS (
    SELECT d.*,
           greatest(90, least(220, round(
               94 + 0.8 * age + 3 * (cholesterol - 1) + 0.25 * (weight - 74) + 13 * z_hi)))::integer AS ap_hi
    FROM d
),
f AS (
    SELECT e.*,
           greatest(50, least(140, round(14 + 0.53 * ap_hi + 7 * z_lo)))::integer AS ap_lo,
           -0.3 + 0.07 * (age - 50) + 0.05 * (ap_hi - 134) + 0.55 * (cholesterol - 1)
                + 0.02 * (weight - 74) - 0.25 * active::int + 0.1 * smoker::int AS cardio_logit
    FROM e
)
SELECT id, region, age, sex, height_cm,
       CASE WHEN r_null_w < 0.004 THEN NULL ELSE round(weight::numeric, 1)::real END,
       ap_hi, ap_lo, cholesterol::smallint, smoker, active,
       r_cardio < 1 / (1 + exp(-cardio_logit)),
       CASE WHEN r_null_inc < 0.03 THEN NULL
            ELSE round(least(200000, 20000 + exp(
                     ln(22000) + 0.012 * least(age - 30, 25)
                     + CASE region WHEN 'Central' THEN 0.15 WHEN 'West' THEN 0.08
                                   WHEN 'East' THEN -0.12 ELSE 0 END
                     + 0.75 * z_income))::numeric, 2) END,
       current_date - floor(1826 * r_admitted)::integer,
       (current_date - floor(1826 * r_admitted * r_visit)::integer)::timestamptz
           + floor(8 * 3600 + 10 * 3600 * r_visit_time) * interval '1 second'
FROM f
ORDER BY id;

ANALYZE patients;
