# The release cache (issue 27, item 3; src/pg/release_cache.h): a stored
# release survives a restart, an immediate shutdown and a crash restart (it
# is part of what was released); two sessions asking the same question at
# the same time are charged once and get the same answer; an owner that is
# cancelled or terminated hands the question to the session waiting for it,
# which pays; and the wait is bounded by dp_agg.charge_timeout.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

# A period of 366 days (periods are aligned to the Unix epoch; a boundary
# inside this test's minute is the only way for it to fail, probability
# about 1e-5 per run, and it waits out the last two minutes of a period).
my $node = DpAggTest::new_node('cache', release_cache_period => 31622400);
$node->safe_psql('postgres', q(
CREATE ROLE analyst LOGIN;
GRANT SELECT ON t TO analyst;
SELECT dp_agg.set_budget('analyst', 100);
DO $$
BEGIN
  WHILE 31622400 - (floor(extract(epoch FROM clock_timestamp()))::bigint % 31622400) < 120 LOOP
    PERFORM pg_sleep(1);
  END LOOP;
END $$;
));

sub as_analyst {
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql, extra_params => [ '-U', 'analyst' ]);
}

sub mark {
	return $node->safe_psql('postgres', 'SELECT coalesce(max(id), 0) FROM dp_agg.ledger_entry');
}

# The analyst's charges and reuses after `mark`, in order.
sub kinds_since {
	my ($mark) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(kind, ',' ORDER BY id), '') FROM dp_agg.ledger_entry "
		  . "WHERE id > $mark AND role_name = 'analyst' AND kind IN ('charge', 'reused')");
}

# 1. Restart, immediate shutdown, crash restart: the stored release stays.
my $mark = mark();
my $question = 'SELECT dp_count(x, 0.5), dp_sum(x, 0, 100, 0.5) FROM t';
my $first = as_analyst($question);
like($first, qr/^-?\d+\|-?\d+$/, 'first answer');
$node->restart;
is(as_analyst($question), $first, 'the same answer after a restart');
$node->stop('immediate');
$node->start;
is(as_analyst($question), $first, 'the same answer after an immediate shutdown');
my $victim = $node->background_psql('postgres', on_error_stop => 0);
my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $victim_pid;
$victim->{run}->kill_kill;
$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
is(as_analyst($question), $first, 'the same answer after a crash restart');
is(kinds_since($mark), 'charge,reused,reused,reused', 'one charge, then three reuses');

# Starts `sql` as the analyst in a new session; returns the session and its
# backend's pid once the query runs and waits for `wait_event`.
sub start_query {
	my ($sql, $wait_event) = @_;
	my $session = $node->background_psql('postgres', on_error_stop => 0,
		extra_params => [ '-U', 'analyst' ]);
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	$session->query_until(qr/started/, "\\echo started\n$sql;\n");
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = $pid AND wait_event = '$wait_event'")
	  or die "query did not reach $wait_event";
	return ($session, $pid);
}

# The rest of a session's output (its answer or error) once its query ended.
sub finish {
	my ($session) = @_;
	my $out = $session->query_until(qr/finished/, "\\echo finished\n");
	my $err = $session->{stderr};
	$session->quit;
	$out =~ s/\s*finished\s*$//;
	return ($out, $err);
}

# 2. Two sessions, the same question at the same time: the second waits for
# the first (wait event Extension), then reuses its rows. One charge.
$mark = mark();
# (The owner's query sleeps 10 s: long enough for the second session to
# connect and start waiting on a loaded machine, where that alone took 2 s;
# cancelling or terminating the owner ends it at once.)
my $slow = 'SELECT dp_count(x, 0.25) FROM t WHERE pg_sleep(0.1) IS NOT NULL';  # 10 s
my ($owner) = start_query($slow, 'PgSleep');
my ($waiter) = start_query($slow, 'Extension');
my ($owner_answer) = finish($owner);
my ($waiter_answer) = finish($waiter);
like($owner_answer, qr/^-?\d+$/, 'the first session answers');
is($waiter_answer, $owner_answer, 'the second session gets the same answer');
is(kinds_since($mark), 'charge,reused', 'exactly one charge for the two sessions');

# 3. The owner is cancelled while it computes: the waiting session takes the
# question over and pays; a later session reuses its answer.
$mark = mark();
$slow = 'SELECT dp_count(x, 0.125) FROM t WHERE pg_sleep(0.1) IS NOT NULL';
my $owner_pid;
($owner, $owner_pid) = start_query($slow, 'PgSleep');
($waiter) = start_query($slow, 'Extension');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($owner_pid)");
my (undef, $owner_error) = finish($owner);
like($owner_error, qr/canceling statement due to user request/, 'the owner was cancelled');
($waiter_answer) = finish($waiter);
like($waiter_answer, qr/^-?\d+$/, 'the waiting session answers');
is(as_analyst($slow), $waiter_answer, 'a later session reuses that answer');
is(kinds_since($mark), 'charge,charge,reused',
	'the cancelled owner was charged, the session that took over too, the later one reused');

# 4. The owner's backend is terminated: the same.
$mark = mark();
$slow = 'SELECT dp_count(x, 0.0625) FROM t WHERE pg_sleep(0.1) IS NOT NULL';
($owner, $owner_pid) = start_query($slow, 'PgSleep');
($waiter) = start_query($slow, 'Extension');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($owner_pid)");
{
	# The terminated owner's psql may already have exited: writing its \q
	# then meets a closed pipe, which must not end this test.
	local $SIG{PIPE} = 'IGNORE';
	eval { $owner->quit; 1 };
}
($waiter_answer) = finish($waiter);
like($waiter_answer, qr/^-?\d+$/, 'the waiting session answers after the owner was terminated');
is(kinds_since($mark), 'charge,charge', 'the session that took over paid');

# 5. The wait is bounded by dp_agg.charge_timeout: then an error (ZP005),
# and nothing is charged to the waiting session.
$node->safe_psql('postgres', q(ALTER ROLE analyst SET dp_agg.charge_timeout = '1s'));
$mark = mark();
$slow = 'SELECT dp_count(x, 0.03125) FROM t WHERE pg_sleep(0.1) IS NOT NULL';  # 10 s
($owner) = start_query($slow, 'PgSleep');
my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$slow",
	extra_params => [ '-U', 'analyst' ]);
like($err, qr/ZP005: another session of this role is computing the answer to the same query/,
	'the waiting session gives up after dp_agg.charge_timeout');
($owner_answer) = finish($owner);
like($owner_answer, qr/^-?\d+$/, 'the owner answers');
is(kinds_since($mark), 'charge', 'only the owner was charged');

$node->stop;
done_testing();
