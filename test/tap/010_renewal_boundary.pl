# Budgets that renew, at the boundary (issue 29, item 3): 6 sessions charge
# epsilon 0.1 as fast as they can for about 5 seconds against a budget of
# 1.0 that renews every second (anchored now). Whatever the interleaving:
#  - no period admits more than its total (the charges between two renewals
#    sum to at most 1.0);
#  - each period is renewed at most once (no two renewal rows name the same
#    period), and only after it began;
#  - a charge that straddles a boundary counts in exactly one period: every
#    charge's recorded_at lies in the period of the renewal before it;
#  - nothing is lost or refunded: the renewals' forgotten amounts plus what
#    is spent now are the sum of all charges, and every answered query has
#    exactly one charge;
#  - verify_ledger agrees.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('renewal', allows_streaming => 0);
$node->safe_psql('postgres',
	q(SELECT dp_agg.set_budget('postgres', 1.0, 0, interval '1 second', now())));

my $barrier = $node->background_psql('postgres');
$barrier->query_safe('SELECT pg_advisory_lock(4243)');

my @sessions;
for my $i (1 .. 6) {
	my $session = $node->background_psql('postgres', on_error_stop => 0);
	$session->query_until(qr/waiting/, q(
\echo waiting
SELECT pg_advisory_lock_shared(4243);
DO $$
DECLARE
  answered int := 0;
  refused int := 0;
  stop timestamptz := clock_timestamp() + interval '5 seconds';
BEGIN
  WHILE clock_timestamp() < stop LOOP
    BEGIN
      PERFORM dp_count(x, 0.1) FROM t;
      answered := answered + 1;
    EXCEPTION WHEN SQLSTATE 'ZP001' THEN
      refused := refused + 1;
    END;
  END LOOP;
  RAISE NOTICE 'answered=% refused=%', answered, refused;
END $$;
\echo finished
));
	push @sessions, $session;
}
$node->poll_query_until('postgres',
	q(SELECT count(*) = 6 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted))
  or die 'sessions did not reach the barrier';
$barrier->query_safe('SELECT pg_advisory_unlock(4243)');

my ($answered, $refused) = (0, 0);
for my $session (@sessions) {
	$session->query_until(qr/finished/, '');
	if ($session->{stderr} =~ /answered=(\d+) refused=(\d+)/) {
		$answered += $1;
		$refused += $2;
	}
	$session->quit;
}
$barrier->quit;
note("answered $answered, refused $refused");

# The ledger rows of the role in order, each with the segment (renewals so
# far) it belongs to and the period its segment started.
my $segments = q(
  WITH rows AS (
    SELECT e.seq, e.kind, e.epsilon, e.recorded_at,
           CASE WHEN e.kind IN ('renewal', 'set_budget')
                THEN (substring(e.query FROM 'this period from (.*) UTC$')::timestamp
                      AT TIME ZONE 'UTC') END AS starts
    FROM dp_agg.ledger_entry e WHERE e.role_name = 'postgres'),
  marked AS (
    SELECT r.*, count(r.starts) OVER (ORDER BY r.seq) AS segment FROM rows r)
  SELECT m.*, first_value(m.starts) OVER (PARTITION BY m.segment ORDER BY m.seq) AS period
  FROM marked m);

cmp_ok($answered, '>=', 10, 'the sessions were answered in several periods');
is($node->safe_psql('postgres', q(SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge')),
	$answered, 'every answered query has exactly one charge');
my $renewals = $node->safe_psql('postgres',
	q(SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'renewal'));
cmp_ok($renewals, '>=', 3, "several renewals ($renewals)");
is($node->safe_psql('postgres', qq(
  SELECT count(*) FROM (SELECT segment, sum(epsilon) FILTER (WHERE kind = 'charge') AS spent
                        FROM ($segments) s GROUP BY segment) p WHERE p.spent > 1.0)),
	'0', 'no period admitted more than its total');
is($node->safe_psql('postgres', qq(
  SELECT count(*) - count(DISTINCT period) FROM ($segments) s WHERE kind = 'renewal')),
	'0', 'each period renewed at most once');
is($node->safe_psql('postgres', qq(
  SELECT count(*) FROM ($segments) s
  WHERE (kind = 'charge' AND NOT (recorded_at >= period AND recorded_at < period + interval '1 second'))
     OR (kind = 'renewal' AND recorded_at < period))),
	'0', 'every charge lies in the period of its segment; no renewal before its period');
is($node->safe_psql('postgres', q(
  SELECT (SELECT sum(epsilon) FROM dp_agg.ledger_entry WHERE kind = 'charge')
         = (SELECT sum(epsilon) FROM dp_agg.ledger_entry WHERE kind = 'renewal')
           + (SELECT epsilon_spent FROM dp_agg.role_budget WHERE role_name = 'postgres'))),
	't', 'renewals forgot plus spent now is every charge: nothing lost, nothing refunded');
is($node->safe_psql('postgres', q(SELECT ok FROM dp_agg.verify_ledger())), 't',
	'verify_ledger agrees');

$node->stop;
done_testing();
