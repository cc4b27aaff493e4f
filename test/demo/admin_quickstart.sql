-- postgresql.conf: shared_preload_libraries = 'dp_agg'; restart; then, as superuser:
CREATE EXTENSION IF NOT EXISTS dp_agg;
SELECT dp_agg.protect_table('patients');              -- readable only through dp_ aggregates
CREATE ROLE analyst LOGIN PASSWORD :'password';
SELECT dp_agg.restrict_role('analyst');
GRANT USAGE ON SCHEMA public TO analyst;              -- and no SELECT on patients
SELECT dp_agg.set_budget('analyst', 50, 1e-3);        -- epsilon 50, delta 1e-3 (GROUP BY needs delta)
SELECT dp_agg.set_column_bounds('patients', 'age', 0, 110);   -- public bounds, for plain sum/avg
ALTER ROLE analyst SET dp_agg.plain_aggregate_epsilon = 0.5;  -- plain count/sum/avg for BI tools
SELECT * FROM dp_agg.budgets;                         -- totals, spent, remaining
SELECT * FROM dp_agg.ledger ORDER BY id;              -- every charge, with the query text
ALTER ROLE analyst SET dp_agg.release_cache_period = '1h';  -- the same query reused, free, per hour
SELECT * FROM dp_agg.release_cache;                   -- the stored releases; clear_release_cache()
SELECT * FROM dp_agg.spend_by_query;                  -- spending per role, query shape and day
SELECT ok, problems FROM dp_agg.verify_ledger();      -- the ledger and budgets untampered?
