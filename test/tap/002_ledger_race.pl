# Race: 8 sessions x 20 queries of epsilon 0.1 against a total of 5.0 start
# together (advisory-lock barrier); exactly 50 are answered and exactly 5.0
# is spent.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('race', allows_streaming => 0);
$node->safe_psql('postgres', q(SELECT dp_agg.set_budget('postgres', 5.0)));

my $barrier = $node->background_psql('postgres');
$barrier->query_safe('SELECT pg_advisory_lock(4242)');

my @sessions;
for my $i (1 .. 8) {
	my $session = $node->background_psql('postgres', on_error_stop => 0);
	$session->query_until(qr/waiting/, q(
\echo waiting
SELECT pg_advisory_lock_shared(4242);
DO $$
DECLARE
  answered int := 0;
BEGIN
  FOR i IN 1 .. 20 LOOP
    BEGIN
      PERFORM dp_count(x, 0.1) FROM t;
      answered := answered + 1;
    EXCEPTION WHEN SQLSTATE 'ZP001' THEN
      NULL;
    END;
  END LOOP;
  RAISE NOTICE 'answered=%', answered;
END $$;
\echo finished
));
	push @sessions, $session;
}

# Release all sessions at once, after all of them wait at the barrier.
$node->poll_query_until('postgres',
	q(SELECT count(*) = 8 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted))
  or die 'sessions did not reach the barrier';
$barrier->query_safe('SELECT pg_advisory_unlock(4242)');

my $answered = 0;
for my $session (@sessions) {
	$session->query_until(qr/finished/, '');
	$answered += $1 if $session->{stderr} =~ /answered=(\d+)/;
	$session->quit;
}
$barrier->quit;

is($answered, 50, 'exactly 50 of 160 queries answered');
is(DpAggTest::spent($node, 'postgres'), '5.0', 'exactly 5.0 spent');
is(DpAggTest::charges($node, 'postgres'), '50', 'exactly 50 charges in the ledger');

$node->stop;
done_testing();
