# The ledger writers never compete with parallel workers for a background
# worker slot (issue 28, finding 1). max_parallel_workers equals
# max_worker_processes, so parallel queries may take every slot that is not
# a ledger writer's; five sessions run parallel counts, four workers each,
# without pause, and do take all of them. Meanwhile private queries run in
# 12 databases at once (more databases than the 2 writers), cold and warm,
# two per database: every one is answered and charged exactly once, none
# times out. Before the pool, each database's writer was started on demand
# in a slot of its own, parallel workers held them all, and every private
# query failed ("could not start the dp_agg ledger writer").
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use IPC::Run;
use Time::HiRes qw(time);
use PostgreSQL::Test::Utils;
use Test::More;

my $num_databases = 12;
my $writers = 2;
my $slots = 10;
my $parallel_slots = $slots - $writers;
my $node = DpAggTest::new_node('parallel_load', allows_streaming => 0);
$node->append_conf('postgresql.conf', qq(
max_worker_processes = $slots
max_parallel_workers = $slots
max_parallel_workers_per_gather = 4
max_logical_replication_workers = 0
dp_agg.ledger_writers = $writers
dp_agg.charge_timeout = '30s'
));
$node->restart;
$node->safe_psql('postgres', 'CREATE DATABASE db1');
$node->safe_psql('db1', q(
CREATE EXTENSION dp_agg;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 10) g;
SELECT dp_agg.set_budget(session_user::regrole, 1000, 0.1);
));
$node->safe_psql('postgres', "CREATE DATABASE db$_ TEMPLATE db1 STRATEGY file_copy")
  for 2 .. $num_databases;

# The parallel load: a table of 400 pages and a count that sleeps 2 ms a row
# (about 2 s with 4 workers), planned parallel at any size.
$node->safe_psql('postgres', q(
CREATE TABLE big (x int, pad text) WITH (fillfactor = 10);
INSERT INTO big SELECT g, repeat('x', 100) FROM generate_series(1, 4000) g;
ANALYZE big;
));
my $load_sql = q(
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
) . "SELECT count(*) FROM big WHERE pg_sleep(0.002) IS NOT NULL;\n" x 200;
my $load_file = "${PostgreSQL::Test::Utils::tmp_check}/parallel_load.sql";
PostgreSQL::Test::Utils::append_to_file($load_file, $load_sql);
my @load;
for (1 .. 5) {
	my ($out, $err) = ('', '');
	push @load, IPC::Run::start([ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-f', $load_file ],
		'>', \$out, '2>', \$err);
}

my %answered;
my $slowest_ms = 0;    # the slowest private query (psql's \timing), all rounds
my @round_seconds;

# As in 006: `$per_database` clients in each database, each running one
# private query at a common moment; per database, the error texts.
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
	push @round_seconds, sprintf('%.1f', time - $epoch);
	return \%errors;
}

sub wait_until_idle {
	$node->poll_query_until('postgres',
		q(SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'dp_agg ledger writer'))
	  or die 'idle writers did not leave their databases';
}

my @all = (1 .. $num_databases);
for my $round ([ 'cold', 0 ], [ 'warm', 0.2 ], [ 'warm', 0 ], [ 'cold', 0 ]) {
	my ($kind, $gap) = @$round;
	wait_until_idle() if $kind eq 'cold';
	ok( $node->poll_query_until('postgres',
			"SELECT count(*) = $parallel_slots FROM pg_stat_activity WHERE backend_type = 'parallel worker'"),
		"$kind round: parallel workers hold every slot that is not a writer's");
	my $errors = run_round(2, @all);
	my @failed = map { my $d = $_; map { "db$d: $_" } grep { $_ ne '' } @{ $errors->{$d} } } @all;
	is(join("\n", @failed), '',
		"$kind writers: all " . 2 * $num_databases . " private queries in $num_databases databases answered");
	$answered{$_} += grep { $_ eq '' } @{ $errors->{$_} } for @all;
	select(undef, undef, undef, $gap);
}
diag("rounds took " . join(', ', map { "${_}s" } @round_seconds)
	  . " from their common start; the slowest private query $slowest_ms ms");
ok($slowest_ms < 15000, "no private query came near the charge timeout (slowest: $slowest_ms ms)");

$_->kill_kill for @load;
wait_until_idle();
is( join(',', map { $node->safe_psql("db$_", q(SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge')) } @all),
	join(',', map { $answered{$_} // 0 } @all),
	'each database has exactly one charge per answered query');

$node->stop;
done_testing();
