# One request never fails or stalls another in the ledger writer's batch.
#  (a) Long multibyte query texts (clipped at 1023 bytes) are recorded, and a
#      charge that fails in the writer (an injected trigger error) fails alone
#      while concurrent sessions' charges go through in the same batches.
#  (b) A transaction that changed or locked its own budget gets a clear
#      55P03 error at once instead of hanging; nothing is charged.
#  (c) A session idle in transaction holding role A's budget row does not
#      stall role B's private queries; A's query is charged once it commits.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = DpAggTest::new_node('isolation', extra => [ '--encoding=UTF8', '--locale=C' ]);
# A hung charge must fail the test quickly rather than after the default 60 s.
$node->safe_psql('postgres', q(ALTER SYSTEM SET dp_agg.charge_timeout = '20s'));
$node->reload;
my @multibyte = map { "mb$_" } 1 .. 4;
my @others = map { "other$_" } 1 .. 3;
my @roles = (@multibyte, @others, 'mallory', 'alice', 'bob');
$node->safe_psql('postgres', join("\n",
	'GRANT SELECT ON t TO PUBLIC;',
	(map { "CREATE ROLE $_; SELECT dp_agg.set_budget('$_', 10);" } @roles),
	q{
CREATE FUNCTION refuse_mallory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.role_name = 'mallory' THEN
    RAISE EXCEPTION 'injected ledger failure for mallory';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER refuse_mallory BEFORE INSERT ON dp_agg.ledger_entry
  FOR EACH ROW EXECUTE FUNCTION refuse_mallory();
}));

# ---------------------------------------------------------------------------
# (a) 4 sessions with long accented queries, 3 ordinary ones and one whose
# charges fail in the writer, all released at once (advisory-lock barrier).
my $queries = 20;
my $barrier = $node->background_psql('postgres');
$barrier->query_safe('SELECT pg_advisory_lock(4242)');
my %sessions;
for my $role (@roles[0 .. 7]) {
	my $session = $node->background_psql('postgres', on_error_stop => 0);
	$session->query_safe("SET SESSION AUTHORIZATION $role");
	my $script = "\\echo waiting\nSELECT pg_advisory_lock_shared(4242);\n";
	for my $k (1 .. $queries) {
		# 1-, 2- and 3-byte characters after a prefix of k bytes: the 1023-byte
		# limit falls inside a character for most k.
		my $comment = $role =~ /^mb/ ? ('x' x $k) . ('é€ü' x 300) : "q$k";
		$script .= "SELECT 'ok:' || dp_count(x, 0.01) FROM t /* $comment */;\n";
	}
	$session->query_until(qr/waiting/, $script . "\\echo finished\n");
	$sessions{$role} = $session;
}
$node->poll_query_until('postgres',
	q(SELECT count(*) = 8 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted))
  or die 'sessions did not reach the barrier';
$barrier->query_safe('SELECT pg_advisory_unlock(4242)');

for my $role (@roles[0 .. 7]) {
	my $session = $sessions{$role};
	my $out = $session->query_until(qr/finished/, '');
	my $answered = () = $out =~ /ok:-?\d+/g;
	my $errors = () = $session->{stderr} =~ /ERROR/g;
	if ($role eq 'mallory') {
		is($answered, 0, 'mallory: no answer without a recorded charge');
		my $own = () = $session->{stderr} =~ /injected ledger failure for mallory/g;
		is($own, $queries, 'mallory: every query fails with its own error');
	} else {
		is($answered . '/' . $errors, "$queries/0", "$role: all $queries private queries answered");
		is(DpAggTest::charges($node, $role), $queries, "$role: $queries charges in the ledger");
	}
	$session->quit;
}
$barrier->quit;
is(DpAggTest::charges($node, 'mallory'), '0', 'mallory: nothing charged');
is($node->safe_psql('postgres', q(
SELECT count(*) FILTER (WHERE octet_length(query) BETWEEN 1000 AND 1023
                          AND query LIKE 'SELECT ''ok:'' || dp_count(x, 0.01) FROM t /* x%')
  FROM dp_agg.ledger_entry WHERE role_name LIKE 'mb%')), 4 * $queries,
	'long multibyte query texts recorded, clipped to at most 1023 bytes');
# Group commit did put different roles' charges into one transaction (rows of
# one transaction share recorded_at = now()), so the isolation above was
# exercised: mallory's failures shared those batches.
cmp_ok($node->safe_psql('postgres', q(
SELECT max(n) FROM (SELECT count(DISTINCT role_name) AS n FROM dp_agg.ledger_entry
                     WHERE kind = 'charge' GROUP BY recorded_at) s)), '>=', 2,
	'charges of several roles were committed in one batch');

# ---------------------------------------------------------------------------
# (b) The same transaction changes the budget and runs a private query.
sub timed_psql {
	my ($sql) = @_;
	my $timed_out = 0;
	my $start = time;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		timeout => 15, timed_out => \$timed_out);
	return ($ret, $out, $err, time - $start, $timed_out);
}
my $budget_sql = q(SELECT epsilon_total || '/' || epsilon_spent FROM dp_agg.role_budget
                   WHERE role_name = 'alice');
my $before = $node->safe_psql('postgres', $budget_sql);
my ($ret, $out, $err, $seconds, $timed_out) = timed_psql(q(
BEGIN;
SELECT dp_agg.add_budget('alice', 1);
SET SESSION AUTHORIZATION alice;
SELECT 'ok:' || dp_count(x, 0.1) FROM t;
COMMIT;
));
ok(!$timed_out && $seconds < 5, "add_budget + private query in one transaction: no hang (${seconds}s)");
like($err, qr/ERROR:  55P03: cannot charge the privacy budget of role "alice" in a transaction that changed or locked it/,
	'clear error, SQLSTATE 55P03');
like($err, qr/Commit the budget change first/, 'the hint says to commit the budget change first');
unlike($out, qr/ok:/, 'no private value released');
is($node->safe_psql('postgres', $budget_sql), $before, 'nothing charged (and the budget change rolled back)');
is(DpAggTest::charges($node, 'alice'), '0', 'no ledger row');

# A row lock taken in a savepoint counts too; once rolled back, it does not.
($ret, $out, $err, $seconds, $timed_out) = timed_psql(q(
BEGIN;
SAVEPOINT s;
SELECT 1 FROM dp_agg.role_budget WHERE role_name = 'alice' FOR SHARE;
SET LOCAL SESSION AUTHORIZATION alice;
SELECT 'ok:' || dp_count(x, 0.1) FROM t;
));
ok(!$timed_out && $err =~ /55P03/ && $out !~ /ok:/, 'own row lock in a savepoint: 55P03 at once');
($ret, $out, $err, $seconds, $timed_out) = timed_psql(q(
BEGIN;
SELECT dp_agg.add_budget('alice', 0);
SAVEPOINT s;
SELECT 1 FROM dp_agg.role_budget WHERE role_name = 'bob' FOR UPDATE;
ROLLBACK TO s;
SET LOCAL SESSION AUTHORIZATION bob;
SELECT 'ok:' || dp_count(x, 0.1) FROM t;
COMMIT;
));
ok(!$timed_out && $ret == 0 && $out =~ /ok:/,
	'after ROLLBACK TO SAVEPOINT, and with another role\'s budget changed, the query is charged');
is(DpAggTest::spent($node, 'bob'), '0.1', 'bob charged once');

# ---------------------------------------------------------------------------
# (c) Another session holds alice's budget row, idle in transaction.
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe(q(SELECT dp_agg.add_budget('alice', 1)));
my $alice = $node->background_psql('postgres', on_error_stop => 0);
$alice->query_safe('SET SESSION AUTHORIZATION alice');
my $alice_pid = $alice->query_safe('SELECT pg_backend_pid()');
$alice->query_until(qr/started/, "\\echo started\nSELECT 'ok:' || dp_count(x, 0.1) FROM t;\n\\echo alice_done\n");
$node->poll_query_until('postgres',
	"SELECT wait_event_type = 'Extension' AND state = 'active' FROM pg_stat_activity WHERE pid = $alice_pid")
  or die 'alice did not wait for her charge';

($ret, $out, $err, $seconds, $timed_out) = timed_psql(
	"SET SESSION AUTHORIZATION bob;\n" . ("SELECT 'ok:' || dp_count(x, 0.1) FROM t;\n" x 10));
my $answered = () = $out =~ /ok:-?\d+/g;
ok(!$timed_out && $answered == 10 && $seconds < 5,
	"bob's 10 private queries answered while alice's row is locked (${seconds}s, $answered answered)");
is(DpAggTest::spent($node, 'bob'), '1.1', 'bob charged for each');
is($node->safe_psql('postgres', "SELECT state FROM pg_stat_activity WHERE pid = $alice_pid"), 'active',
	'alice still waits');
is(DpAggTest::spent($node, 'alice'), '0', 'alice not yet charged, and no answer yet');

my $start = time;
$holder->query_safe('COMMIT');
$out = $alice->query_until(qr/alice_done/, '');
my $after_commit = time - $start;
like($out, qr/ok:-?\d+/, 'alice answered once the holder committed');
ok($after_commit < 5, "promptly (${after_commit}s)");
is($alice->{stderr}, '', 'without an error');
is($node->safe_psql('postgres', $budget_sql), '11/0.1', 'alice charged exactly once, against the new total');
is(DpAggTest::charges($node, 'alice'), '1', 'one ledger row for alice');
$alice->quit;
$holder->quit;

$node->stop;
done_testing();
