# Grouped charges near exhaustion (review of issue 31's ChargeTogether): two
# roles race to the end of their budgets with mixed charges (epsilon 0.001,
# 0.25 and a Gaussian (0.5, 1e-5), so display scales differ): 'ed' an
# (epsilon, delta) budget whose delta binds first for the Gaussians, 'zc' a
# zCDP budget whose earlier (epsilon, delta) certificate still binds. The
# writer must admit exactly what charging one by one admits:
# - every answered query has one ledger row and every ledger row one answer;
# - no certificate is overspent; the spent amounts are the sums of the rows;
# - a query refused during the race is refused after it (spending only grows,
#   so a refusal is never of a charge that fitted);
# - every budget_digest is the row one-by-one charging leaves (replay), and
#   dp_agg.verify_ledger() is clean.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('exhaustion', allows_streaming => 0);
$node->append_conf('postgresql.conf', "log_min_messages = debug1\n");
$node->restart;
$node->safe_psql('postgres', q(
CREATE ROLE ed LOGIN;
CREATE ROLE zc LOGIN;
GRANT SELECT ON t TO ed, zc;
SELECT dp_agg.set_budget('ed', 3.0, 0.00005);
SELECT dp_agg.set_budget('zc', 3.0, 0.0001);
));
$node->safe_psql('postgres', 'SELECT dp_count(x, 0.25) FROM t', extra_params => [ '-U', 'zc' ]);
$node->safe_psql('postgres', q(SELECT dp_agg.set_budget_zcdp('zc', 0.2, 0.00001)));
is($node->safe_psql('postgres',
		q(SELECT epsilon_delta_binding FROM dp_agg.role_budget WHERE role_name = 'zc')),
	't', "zc's (epsilon, delta) certificate binds");

my @kinds = ('dp_count(x, 0.001)', 'dp_count(x, 0.25)', 'dp_count(x, 0.5, 0.00001)');
my $barrier = $node->background_psql('postgres');
$barrier->query_safe('SELECT pg_advisory_lock(4244)');
my $per_role = 4;
my $iterations = 40;
my @sessions;
for my $role ('ed', 'zc') {
	for my $s (0 .. $per_role - 1) {
		my $session = $node->background_psql('postgres', on_error_stop => 0,
			extra_params => [ '-U', $role ]);
		$session->query_until(qr/waiting/, qq(
\\echo waiting
SELECT pg_advisory_lock_shared(4244);
DO \$\$
DECLARE
  answered int := 0;
  refused text := '';
BEGIN
  FOR i IN 1 .. $iterations LOOP
    BEGIN
      CASE (i + $s) % 3
        WHEN 0 THEN PERFORM $kinds[0] FROM t;
        WHEN 1 THEN PERFORM $kinds[1] FROM t;
        ELSE PERFORM $kinds[2] FROM t;
      END CASE;
      answered := answered + 1;
    EXCEPTION WHEN SQLSTATE 'ZP001' THEN
      refused := refused || ((i + $s) % 3)::text;
    END;
  END LOOP;
  RAISE NOTICE 'answered=% refused=[%]', answered, refused;
END \$\$;
\\echo finished
));
		push @sessions, [ $role, $session ];
	}
}
$node->poll_query_until('postgres',
	q(SELECT count(*) = ) . scalar(@sessions)
	  . q( FROM pg_locks WHERE locktype = 'advisory' AND NOT granted))
  or die 'sessions did not reach the barrier';
$barrier->query_safe('SELECT pg_advisory_unlock(4244)');

my %answered = (ed => 0, zc => 0);
my %refused = (ed => {}, zc => {});
for my $entry (@sessions) {
	my ($role, $session) = @$entry;
	$session->query_until(qr/finished/, '');
	if ($session->{stderr} =~ /answered=(\d+) refused=\[(\d*)\]/) {
		$answered{$role} += $1;
		$refused{$role}{$_} = 1 for split //, $2;
	}
	else {
		fail("session of $role reported: $session->{stderr}");
	}
	$session->quit;
}
$barrier->quit;

for my $role ('ed', 'zc') {
	# zc's earlier query is in the ledger too.
	my $extra = $role eq 'zc' ? 1 : 0;
	is(DpAggTest::charges($node, $role), $answered{$role} + $extra,
		"$role: one ledger row per answered query ($answered{$role})");
	cmp_ok(scalar(keys %{ $refused{$role} }), '>', 0, "$role: the race reached exhaustion");
	is( $node->safe_psql('postgres', qq(
SELECT b.epsilon_spent = s.epsilon AND b.delta_spent = s.delta AND b.rho_spent = s.rho
       AND b.zcdp_delta_spent = s.zcdp_delta
  FROM dp_agg.role_budget b,
       (SELECT sum(epsilon) AS epsilon, sum(delta) AS delta, sum(rho) AS rho,
               sum(zcdp_delta) AS zcdp_delta
          FROM dp_agg.ledger_entry WHERE kind = 'charge' AND role_name = '$role') s
 WHERE b.role_name = '$role')),
		't', "$role: spent the exact sums of its charges");
	is( $node->safe_psql('postgres', qq(
SELECT (NOT (budget_kind = 'epsilon_delta' OR epsilon_delta_binding)
        OR (epsilon_spent <= epsilon_total AND delta_spent <= delta_total))
   AND (NOT (budget_kind = 'zcdp' OR zcdp_binding)
        OR (rho_spent <= rho_total AND zcdp_delta_spent <= zcdp_delta_total))
  FROM dp_agg.role_budget WHERE role_name = '$role')),
		't', "$role: no binding certificate overspent");
	for my $kind (sort keys %{ $refused{$role} }) {
		my ($out, $err) = ('', '');
		$node->psql('postgres', "SELECT $kinds[$kind] FROM t",
			extra_params => [ '-U', $role ], stdout => \$out, stderr => \$err);
		like($err, qr/ZP001|budget/i, "$role: $kinds[$kind], refused in the race, is refused after it");
	}
	is( $node->safe_psql('postgres', qq(
WITH b AS (SELECT r FROM dp_agg.role_budget r WHERE r.role_name = '$role'),
start AS (SELECT max(seq) AS start_seq FROM dp_agg.ledger_entry
           WHERE role_name = '$role' AND kind <> 'charge'),
s0 AS (SELECT coalesce(sum(epsilon), 0) AS e, coalesce(sum(delta), 0) AS d,
              coalesce(sum(rho), 0) AS r, coalesce(sum(zcdp_delta), 0) AS z
         FROM dp_agg.ledger_entry, start
        WHERE role_name = '$role' AND kind = 'charge' AND seq < start_seq),
e AS (SELECT seq, budget_digest,
             sum(epsilon) OVER w AS ce, sum(delta) OVER w AS cd,
             sum(rho) OVER w AS cr, sum(zcdp_delta) OVER w AS cz
        FROM dp_agg.ledger_entry, start
       WHERE role_name = '$role' AND kind = 'charge' AND seq > start_seq
      WINDOW w AS (ORDER BY seq))
SELECT count(*) FILTER (WHERE dp_agg.budget_digest(jsonb_populate_record(b.r,
         jsonb_build_object('epsilon_spent', s0.e + ce, 'delta_spent', s0.d + cd,
                            'rho_spent', s0.r + cr, 'zcdp_delta_spent', s0.z + cz)))
         IS DISTINCT FROM e.budget_digest)
  FROM e, b, s0)),
		'0', "$role: every charge records the row that charging one by one leaves");
}
is($node->safe_psql('postgres', 'SELECT ok, problems FROM dp_agg.verify_ledger()'),
	't|{}', 'verify_ledger finds nothing');
my $log = slurp_file($node->logfile);
my @groups = $log =~ /charged (\d+) queries of role "(?:ed|zc)" with one budget update/g;
cmp_ok(scalar(@groups), '>', 0, 'some charges were grouped (' . scalar(@groups) . ' groups)');
$node->stop;
done_testing();
