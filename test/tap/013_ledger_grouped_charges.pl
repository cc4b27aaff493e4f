# The ledger writer charges the queued queries of one role together, with one
# UPDATE of its budget (issue 31: src/pg/ledger_fast_charge.h,
# ChargeTogether), and the ledger must be exactly the one that charging them
# one by one writes. 8 sessions x 60 private queries start together; half
# of them charge epsilon 0.001, the others 0.25 or a Gaussian (epsilon,
# delta), so the display scales differ between sessions and only charges of
# equal scales may be grouped. Afterwards: every query answered and charged
# once, the spent amounts are the exact sums, dp_agg.verify_ledger() is
# clean, every charge's budget_digest is the digest of the budget row that
# charging one by one would have left after it (a replay in SQL), and the
# server log shows groups charged with one update (log_min_messages debug1),
# so the test is not vacuous.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('grouped', allows_streaming => 0);
$node->append_conf('postgresql.conf', "log_min_messages = debug1\n");
$node->restart;
$node->safe_psql('postgres', q(SELECT dp_agg.set_budget('postgres', 1000, 0.5)));

my $barrier = $node->background_psql('postgres');
$barrier->query_safe('SELECT pg_advisory_lock(4243)');

my $sessions = 8;
my $per_session = 60;
my @query = ('dp_count(x, 0.001)', 'dp_count(x, 0.25)', 'dp_count(x, 0.001)',
	'dp_count(x, 0.5, 0.00001)');
my @sessions;
for my $i (0 .. $sessions - 1) {
	my $session = $node->background_psql('postgres', on_error_stop => 0);
	my $call = $query[ $i % @query ];
	$session->query_until(qr/waiting/, qq(
\\echo waiting
SELECT pg_advisory_lock_shared(4243);
DO \$\$
DECLARE
  answered int := 0;
BEGIN
  FOR i IN 1 .. $per_session LOOP
    PERFORM $call FROM t;
    answered := answered + 1;
  END LOOP;
  RAISE NOTICE 'answered=%', answered;
END \$\$;
\\echo finished
));
	push @sessions, $session;
}
$node->poll_query_until('postgres',
	qq(SELECT count(*) = $sessions FROM pg_locks WHERE locktype = 'advisory' AND NOT granted))
  or die 'sessions did not reach the barrier';
$barrier->query_safe('SELECT pg_advisory_unlock(4243)');

my $answered = 0;
for my $session (@sessions) {
	$session->query_until(qr/finished/, '');
	$answered += $1 if $session->{stderr} =~ /answered=(\d+)/;
	$session->quit;
}
$barrier->quit;

my $total = $sessions * $per_session;
is($answered, $total, "all $total queries answered");
is(DpAggTest::charges($node, 'postgres'), $total, "exactly $total charges in the ledger");
is( $node->safe_psql('postgres', q(
SELECT b.epsilon_spent = s.epsilon AND b.delta_spent = s.delta
  FROM dp_agg.role_budget b,
       (SELECT sum(epsilon) AS epsilon, sum(delta) AS delta FROM dp_agg.ledger_entry
         WHERE kind = 'charge') s
 WHERE b.role_name = 'postgres')),
	't', 'the budget spent exactly the sums of the charges');
is($node->safe_psql('postgres', 'SELECT ok, problems FROM dp_agg.verify_ledger()'),
	't|{}', 'verify_ledger finds nothing');
# The replay: the budget row with the spent columns replaced by the running
# sums of the charges (in seq order, from the spent 0 that set_budget wrote).
is( $node->safe_psql('postgres', q(
WITH b AS (SELECT r FROM dp_agg.role_budget r WHERE r.role_name = 'postgres'),
e AS (SELECT seq, budget_digest,
             sum(epsilon) OVER w AS ce, sum(delta) OVER w AS cd,
             sum(rho) OVER w AS cr, sum(zcdp_delta) OVER w AS cz
        FROM dp_agg.ledger_entry WHERE kind = 'charge'
      WINDOW w AS (ORDER BY seq))
SELECT count(*) FILTER (WHERE dp_agg.budget_digest(jsonb_populate_record(b.r,
         jsonb_build_object('epsilon_spent', ce, 'delta_spent', cd, 'rho_spent', cr,
                            'zcdp_delta_spent', cz))) IS DISTINCT FROM e.budget_digest)
  FROM e, b)),
	'0', 'every charge records the budget row that charging one by one leaves');
my $log = slurp_file($node->logfile);
my @groups = $log =~ /charged (\d+) queries of role "postgres" with one budget update/g;
cmp_ok(scalar(@groups), '>', 0, 'some charges were grouped (' . scalar(@groups) . ' groups)');

$node->stop;
done_testing();
