# An administrator's lock on the ledger's chain head table never fails a
# private query: the ledger writer defers the charges (as for a locked budget
# row) and answers them once the lock is gone. The batch's top-level
# transaction takes nothing it may wait for (lock_timeout is 10 ms there):
# a wait outside a charge's subtransaction failed every charge of the batch
# ("could not record the privacy charge: canceling statement due to lock
# timeout"), for every role. Cases: LOCK TABLE dp_agg.ledger_head IN ACCESS
# EXCLUSIVE MODE (as VACUUM FULL or ALTER TABLE take it), IN SHARE MODE (an
# audit's consistent read; the head's UPDATE at the end of the batch
# conflicts with it), and an open transaction that chained early (SET
# CONSTRAINTS ALL IMMEDIATE) and so holds the head's row, after or before
# its budget change (before: the chaining trigger fired at the end of the
# ledger row's INSERT, before the row was registered as dp_agg's own, and
# refused the administrator's change as an insert outside dp_agg).
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('headlock', allows_streaming => 0);
$node->safe_psql('postgres', q(ALTER SYSTEM SET dp_agg.charge_timeout = '30s'));
$node->reload;
$node->safe_psql('postgres', q(SELECT dp_agg.set_budget('postgres', 100)));

my @cases = (
	[ 'ACCESS EXCLUSIVE lock', 'LOCK TABLE dp_agg.ledger_head IN ACCESS EXCLUSIVE MODE' ],
	[ 'SHARE lock', 'LOCK TABLE dp_agg.ledger_head IN SHARE MODE' ],
	[ 'head row chained early',
		q(SELECT dp_agg.add_budget('postgres', 1); SET CONSTRAINTS ALL IMMEDIATE) ],
	[ 'constraints immediate before the change',
		q(SET CONSTRAINTS ALL IMMEDIATE; SELECT dp_agg.add_budget('postgres', 1)) ]);
my $answered = 0;
for my $case (@cases) {
	my ($name, $lock) = @$case;
	my $admin = $node->background_psql('postgres');
	$admin->query_safe('BEGIN');
	$admin->query_safe($lock);
	my $analyst = $node->background_psql('postgres', on_error_stop => 0);
	my $started = time;
	my $out = $analyst->query_until(qr/sent/, q(
\echo sent
SELECT dp_count(x, 0.001) IS NOT NULL AS answered FROM t;
\echo done
));
	# Meanwhile the charge waits in the queue (it must not be refused).
	sleep 2;
	$admin->query_safe('COMMIT');
	$admin->quit;
	$out .= $analyst->query_until(qr/done/, '');
	diag("$name: answered after " . (time - $started) . " s: $out");
	my $err = $analyst->{stderr};
	$err =~ s/background_psql:.*\n//g;
	is($err, '', "$name: the private query is not refused");
	like($out, qr/^t$/m, "$name: the private query is answered once the lock is gone");
	$answered++ if $out =~ /^t$/m;
	$analyst->quit;
}
is(DpAggTest::charges($node, 'postgres'), $answered, 'one charge per answered query');
is($node->safe_psql('postgres',
		q(SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'add_budget')),
	'2', 'both early-chained budget changes are recorded');
is($node->safe_psql('postgres', 'SELECT ok, problems FROM dp_agg.verify_ledger()'),
	't|{}', 'verify_ledger finds nothing');
$node->stop;
done_testing();
