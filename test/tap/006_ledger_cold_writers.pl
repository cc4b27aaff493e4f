# Cold ledger writers in many databases at once (issue 28, finding 1).
# 14 databases share a pool of 3 ledger writers (dp_agg.ledger_writers), the
# only background workers of the server. Private queries start at the same
# moment in 10 of them, in rounds with idle gaps (every writer leaves its
# database and waits, unconnected) and without (warm writers): every query is
# answered and charged once. Then all 14 at once: more databases than
# writers, so charges wait their turn, and every query is still answered
# (before the pool, each database needed a background-worker slot of its own
# for a writer started on demand: the queries of the databases that found
# none failed with "could not start the dp_agg ledger writer"). Then rounds
# in some databases and in all, cold. Every answered query is charged exactly
# once, and idle writers leave their databases.
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
my $writers = 3;
my $node = DpAggTest::new_node('cold_writers', allows_streaming => 0);
# Only the writers use background workers here: no logical replication
# launcher, no parallel workers. A query waits 20 s at most for its charge.
$node->append_conf('postgresql.conf', qq(
max_worker_processes = $writers
dp_agg.ledger_writers = $writers
max_logical_replication_workers = 0
max_parallel_workers = 0
dp_agg.charge_timeout = '20s'
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
my $slowest_ms = 0;    # the slowest private query (psql's \timing), all rounds
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
  FROM (SELECT now() + interval '1 s' + $clients * interval '100 ms' AS t) s));
	my @clients;
	for my $d (@databases) {
		for (1 .. $per_database) {
			my ($out, $err) = ('', '');
			my $handle = IPC::Run::start(
				[
					'psql', '-XAtq', '-d', $node->connstr("db$d"),
					'-c', "SELECT pg_sleep_until('$at')",
					'-c', '\\timing on', '-c', 'SELECT dp_count(0.5) FROM t'
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
		$slowest_ms = $1 if $$out =~ /^Time: ([\d.]+) ms/m && $1 > $slowest_ms;
	}
	$last_round_seconds = time - $epoch;
	return \%errors;
}

sub charges_in {
	my ($d) = @_;
	return $node->safe_psql("db$d",
		q(SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge'));
}

# Writers connected to a database (a writer that waits for one is not in
# pg_stat_activity).
sub writers_connected {
	return $node->safe_psql('postgres',
		q(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'));
}

sub wait_until_idle {
	$node->poll_query_until('postgres',
		q(SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'))
	  or die 'idle writers did not leave their databases';
}

is(writers_connected(), '0', 'no writer holds a database before the first charge');

# Rounds in 10 databases: cold (the writers left in the gap) and warm.
my @ten = (1 .. 10);
for my $round ([ 'cold', 0 ], [ 'warm', 0.2 ], [ 'cold', 0 ]) {
	my ($kind, $gap) = @$round;
	wait_until_idle() if $kind eq 'cold';
	my $errors = run_round(2, @ten);
	my @failed = map { my $d = $_; grep { $_ ne '' } @{ $errors->{$d} } } @ten;
	is(scalar(@failed), 0, "$kind writers: all 20 queries in 10 databases answered")
	  or diag(join("\n", @failed));
	$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for @ten;
	select(undef, undef, undef, $gap);
}
is(join(',', map { charges_in($_) } @ten), join(',', map { $answered{$_} // 0 } @ten),
	'each database has one charge per answered query');

# More databases than writers, all cold, two queries in each.
wait_until_idle();
my $errors = run_round(2, 1 .. $num_databases);
my $seconds = sprintf('%.1f', $last_round_seconds);
my @failed;
for my $d (1 .. $num_databases) {
	for my $error (@{ $errors->{$d} }) {
		if ($error eq '') {
			$answered{$d}++;
		} else {
			push @failed, "db$d: $error";
		}
	}
}
is(join("\n", @failed), '', "all 28 queries in $num_databases databases answered by $writers writers");
diag("28 cold queries in $num_databases databases answered within ${seconds}s of their common start, "
	  . "the slowest in $slowest_ms ms");
ok($slowest_ms < 10000, "well within the charge timeout (slowest: $slowest_ms ms)");

# The next rounds: in some databases, then in all of them in waves, cold.
$errors = run_round(3, 1 .. 10);
@failed = map { my $d = $_; map { "db$d: $_" } grep { $_ ne '' } @{ $errors->{$d} } } 1 .. 10;
is(join("\n", @failed), '', 'then every query in 10 databases answered');
$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for 1 .. 10;
for my $wave ([ 1 .. 7 ], [ 8 .. $num_databases ]) {
	wait_until_idle();
	$errors = run_round(2, @$wave);
	@failed = map { my $d = $_; map { "db$d: $_" } grep { $_ ne '' } @{ $errors->{$d} } } @$wave;
	is(join("\n", @failed), '', "databases $wave->[0]..$wave->[-1] answered, cold");
	$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for @$wave;
}

# Every answered query is charged exactly once.
wait_until_idle();
my @all = (1 .. $num_databases);
is(join(',', map { charges_in($_) } @all), join(',', map { $answered{$_} // 0 } @all),
	'each database has exactly one charge per answered query');
is(writers_connected(), '0', 'idle writers leave their databases');
my $log = slurp_file($node->logfile);
my $running = () = $log =~ /dp_agg: only \d+ of dp_agg.ledger_writers/g;
is($running, 0, 'all writers registered (no WARNING at start)');

$node->stop;
done_testing();
