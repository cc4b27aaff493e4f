# Cold ledger writers in many databases at once (issue 28, finding 1).
# 14 databases share 12 background-worker slots. Private queries start at the
# same moment in 10 of them, in rounds with idle gaps (every writer exits and
# starts again) and without (warm writers): every query is answered and
# charged once. Then all 14 at once: some writers cannot start, and those
# queries fail at once with "could not start" (never a timeout) and are
# charged nothing; the next rounds, in the other databases and then in all,
# are answered although a failed query left its request in a slot that a
# backend of another database inherits. Before the fix such a leftover was
# waited for while only the new backend's own writer was woken: that query
# timed out, and the failed query was charged later.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use IPC::Run;
use Time::HiRes qw(time);
use PostgreSQL::Test::Utils;
use Test::More;

my $num_databases = 14;
my $slots = 12;
my $node = DpAggTest::new_node('cold_writers', allows_streaming => 0);
# Only the writers use background workers here: no logical replication
# launcher, no parallel workers. A query waits 4 s at most for its charge.
$node->append_conf('postgresql.conf', qq(
max_worker_processes = $slots
max_logical_replication_workers = 0
max_parallel_workers = 0
dp_agg.charge_timeout = '4s'
));
$node->restart;
# Each database a copy of the first (its extension, table and budget).
$node->safe_psql('postgres', 'CREATE DATABASE db1');
$node->safe_psql('db1', q(
CREATE EXTENSION dp_agg;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 10) g;
SELECT dp_agg.set_budget(session_user::regrole, 1000, 0.1);
));
$node->safe_psql('postgres', "CREATE DATABASE db$_ TEMPLATE db1 STRATEGY file_copy")
  for 2 .. $num_databases;

my %answered;    # per database, queries answered so far
my $last_round_seconds;    # from the common start to the last client's end

# Starts `$per_database` psql clients in each of `@databases`, each running
# one private query at the same moment (a time all of them sleep until:
# advisory locks cannot serve as a barrier across databases); returns, per
# database, the list of error texts (empty string: answered).
sub run_round {
	my ($per_database, @databases) = @_;
	my $clients = $per_database * @databases;
	my ($at, $epoch) = split /\|/, $node->safe_psql('postgres', qq(
SELECT t, extract(epoch FROM t)
  FROM (SELECT now() + interval '500 ms' + $clients * interval '60 ms' AS t) s));
	my @clients;
	for my $d (@databases) {
		for (1 .. $per_database) {
			my ($out, $err) = ('', '');
			my $handle = IPC::Run::start(
				[
					'psql', '-XAtq', '-d', $node->connstr("db$d"),
					'-c', "SELECT pg_sleep_until('$at')",
					'-c', 'SELECT dp_count(0.5) FROM t'
				],
				'>', \$out, '2>', \$err);
			push @clients, [ $d, $handle, \$out, \$err ];
		}
	}
	my %errors;
	for my $client (@clients) {
		my ($d, $handle, $out, $err) = @$client;
		$handle->finish;
		push @{ $errors{$d} }, ($$out =~ /^-?\d+(\.\d+)?$/m && $$err eq '') ? '' : $$err || 'no answer';
	}
	$last_round_seconds = time - $epoch;
	return \%errors;
}

sub charges_in {
	my ($d) = @_;
	return $node->safe_psql("db$d",
		q(SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'));
}

sub writers {
	return $node->safe_psql('postgres',
		q(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'));
}

# Rounds within capacity: cold (the writers exited in the gap) and warm.
my @ten = (1 .. 10);
for my $round ([ 'cold', 0 ], [ 'warm', 0.2 ], [ 'cold', 0 ]) {
	my ($kind, $gap) = @$round;
	if ($kind eq 'cold') {
		$node->poll_query_until('postgres',
			q(SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'))
		  or die 'idle writers did not exit';
	}
	my $errors = run_round(2, @ten);
	my @failed = map { my $d = $_; grep { $_ ne '' } @{ $errors->{$d} } } @ten;
	is(scalar(@failed), 0, "$kind writers: all 20 queries in 10 databases answered")
	  or diag(join("\n", @failed));
	$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for @ten;
	select(undef, undef, undef, $gap);
}
is(join(',', map { charges_in($_) } @ten), join(',', map { $answered{$_} // 0 } @ten),
	'each database has one charge per answered query');

# More databases than slots, all cold.
$node->poll_query_until('postgres',
	q(SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'))
  or die 'idle writers did not exit';
my $errors = run_round(1, 1 .. $num_databases);
my $seconds = sprintf('%.1f', $last_round_seconds);
my (@refused, @other);
for my $d (1 .. $num_databases) {
	for my $error (@{ $errors->{$d} }) {
		if ($error eq '') {
			$answered{$d}++;
		} elsif ($error =~ /could not start the dp_agg ledger writer/) {
			push @refused, $d;
		} else {
			push @other, "db$d: $error";
		}
	}
}
ok(@refused >= $num_databases - $slots,
	scalar(@refused) . " of $num_databases queries refused for want of a worker slot");
is(join("\n", @other), '', 'no other failure (no timeout)');
ok($seconds < 4, "the refusals came at once (${seconds}s)");

# The next rounds: first only in databases that were answered (their backends
# inherit the failed queries' request slots), then in all of them once the
# writers have exited.
my %refused = map { $_ => 1 } @refused;
my @served = grep { !$refused{$_} } 1 .. $num_databases;
@served = @served[0 .. 9] if @served > 10;
$errors = run_round(3, @served);
my @failed = map { my $d = $_; map { "db$d: $_" } grep { $_ ne '' } @{ $errors->{$d} } } @served;
is(join("\n", @failed), '', 'then every query in ' . scalar(@served) . ' databases answered');
$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for @served;
for my $wave ([ 1 .. 7 ], [ 8 .. $num_databases ]) {
	$node->poll_query_until('postgres',
		q(SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'))
	  or die 'idle writers did not exit';
	$errors = run_round(2, @$wave);
	@failed = map { my $d = $_; map { "db$d: $_" } grep { $_ ne '' } @{ $errors->{$d} } } @$wave;
	is(join("\n", @failed), '', "databases $wave->[0]..$wave->[-1] answered, cold");
	$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for @$wave;
}

# Every answered query is charged exactly once, and no refused one: give any
# late charge time to land first.
$node->poll_query_until('postgres',
	q(SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'))
  or die 'idle writers did not exit';
my @all = (1 .. $num_databases);
is(join(',', map { charges_in($_) } @all), join(',', map { $answered{$_} // 0 } @all),
	'each database has exactly one charge per answered query, none for a refused one');
is(writers(), '0', 'idle writers exit');

$node->stop;
done_testing();
