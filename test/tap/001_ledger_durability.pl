# Charges are committed before the answer and survive everything that could
# undo a transaction: immediate shutdown, kill -9 of the backend after the
# answer, statement_timeout, pg_cancel_backend, a client that disconnects.
# If the ledger cannot be written, nothing is released (fail closed).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('primary', allows_streaming => 1);
$node->safe_psql('postgres', q(SELECT dp_agg.set_budget('postgres', 100)));

# 1. A committed charge survives an immediate shutdown (a crash).
$node->safe_psql('postgres', 'SELECT dp_count(x, 0.25) FROM t');
is(DpAggTest::spent($node, 'postgres'), '0.25', 'charged before the answer');
$node->stop('immediate');
$node->start;
is(DpAggTest::spent($node, 'postgres'), '0.25', 'charge survives an immediate shutdown');
is(DpAggTest::charges($node, 'postgres'), '1', 'ledger row survives an immediate shutdown');

# 2. kill -9 of the backend after it answered: the postmaster restarts every
# process, and the charge is still there.
my $session = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $session->query_safe('SELECT pg_backend_pid()');
my $answer = $session->query_safe('SELECT dp_count(x, 0.5) FROM t');
like($answer, qr/^-?\d+$/, 'answer received before the kill');
kill 'KILL', $pid;
$session->{run}->kill_kill;
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
is(DpAggTest::spent($node, 'postgres'), '0.75', 'charge survives kill -9 of the backend');

# 3. statement_timeout cancels the query after the charge: no refund.
my ($ret, $out, $err) = $node->psql('postgres', q(
SET statement_timeout = '300ms';
SELECT dp_count(x, 0.125) FROM t WHERE pg_sleep(0.02) IS NOT NULL;
));
like($err, qr/canceling statement due to statement timeout/, 'statement_timeout fired');
is(DpAggTest::spent($node, 'postgres'), '0.875', 'statement_timeout does not refund');

# Starts a slow private query (5 s) in a new session and returns the session
# and its backend's pid once the query is running, i.e. already charged.
sub start_slow_query {
	my ($epsilon) = @_;
	my $slow = $node->background_psql('postgres', on_error_stop => 0);
	my $backend = $slow->query_safe('SELECT pg_backend_pid()');
	$slow->query_until(qr/started/, qq(
\\echo started
SELECT dp_count(x, $epsilon) FROM t WHERE pg_sleep(0.05) IS NOT NULL;
));
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $backend AND wait_event = 'PgSleep'")
	  or die 'query did not start';
	return ($slow, $backend);
}

# 4. pg_cancel_backend while the query runs.
($session, $pid) = start_slow_query('0.0625');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$session->quit;
is(DpAggTest::spent($node, 'postgres'), '0.9375', 'pg_cancel_backend does not refund');

# 5. The client disconnects in the middle of the query.
($session, $pid) = start_slow_query('0.03125');
$session->{run}->kill_kill;
$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
  or die 'backend did not exit';
is(DpAggTest::spent($node, 'postgres'), '0.96875', 'a disconnecting client gets no refund');

# 6. Fail closed: if the ledger cannot be written, the query fails before
# computing anything, and nothing is charged.
$node->safe_psql('postgres', 'ALTER TABLE dp_agg.role_budget RENAME TO role_budget_moved');
($ret, $out, $err) = $node->psql('postgres', 'SELECT dp_count(x, 0.5) FROM t');
isnt($ret, 0, 'query fails when the ledger cannot be written');
like($err, qr/could not record the privacy charge/, 'with a clear error');
is($out, '', 'and releases nothing');
$node->safe_psql('postgres', 'ALTER TABLE dp_agg.role_budget_moved RENAME TO role_budget');
is(DpAggTest::spent($node, 'postgres'), '0.96875', 'a failed charge is not recorded');

# 7. pg_dump / pg_restore keep budgets and the ledger.
my $dump = $node->basedir . '/dp.dump';
$node->command_ok(['pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres')], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(['pg_restore', '-d', $node->connstr('restored'), $dump], 'pg_restore');
is($node->safe_psql('restored', q(SELECT role_name, epsilon_total, epsilon_spent FROM dp_agg.role_budget)),
	'postgres|100|0.96875', 'budget restored');
is($node->safe_psql('restored', q(SELECT count(*) FROM dp_agg.ledger_entry)),
	$node->safe_psql('postgres', q(SELECT count(*) FROM dp_agg.ledger_entry)), 'ledger restored');
# The restored sequence hands out ids above every restored row (otherwise
# the next charge would collide with one and fail).
my $restored_max = $node->safe_psql('restored', 'SELECT max(id) FROM dp_agg.ledger_entry');
$node->safe_psql('restored', 'SELECT dp_count(x, 0.5) FROM t');
is($node->safe_psql('restored',
		"SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge' AND id > $restored_max"),
	'1', 'ledger sequence restored');
# The restored ledger keeps its hash chain, its head and budgets that agree
# with it (issue 28, finding 3), also after a charge in the restored database.
is($node->safe_psql('restored',
		q(SELECT ok || ' ' || array_to_string(problems, '; ') FROM dp_agg.verify_ledger())),
	'true ', 'the restored ledger verifies');
is($node->safe_psql('restored', q(SELECT (SELECT count(*) FROM dp_agg.ledger_entry) =
		(SELECT seq FROM dp_agg.ledger_head))), 't', 'and its chain head came along');
# The writer logged the head after recording that charge (an anchor outside
# the database): the line names the database, the entry and its hash.
my $head = $node->safe_psql('restored', q(SELECT 'entry ' || head_seq || ', hash ' || head_hash
		FROM dp_agg.verify_ledger()));
ok($node->wait_for_log(qr/dp_agg ledger head of database "restored": \Q$head\E/),
	"the chain head is logged ($head)");

# 8. On a hot standby the ledger cannot be written: private queries are refused.
$node->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby', DpAggTest::port_params());
$standby->init_from_backup($node, 'backup', has_streaming => 1);
$standby->start;
$node->wait_for_catchup($standby);
($ret, $out, $err) = $standby->psql('postgres', 'SELECT dp_count(x, 0.1) FROM t');
isnt($ret, 0, 'private query refused on a hot standby');
like($err, qr/cannot run during recovery/, 'with a clear error');
is($standby->safe_psql('postgres', 'SELECT count(x) FROM t'), '100', 'plain queries still work on the standby');
$standby->stop;

# 9. Without the preloaded library, the aggregates refuse to run (fail closed).
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;
($ret, $out, $err) = $node->psql('postgres', 'SELECT dp_count(x, 0.1) FROM t');
isnt($ret, 0, 'no answer without the preloaded library');
like($err, qr/not prepared by the executor hook/, 'with a clear error');
is(DpAggTest::spent($node, 'postgres'), '0.96875', 'and nothing charged');

$node->stop;
done_testing();
