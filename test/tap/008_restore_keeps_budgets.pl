# Restores keep budgets (issue 28, finding 2). pg_dumpall of one cluster is
# restored into a second cluster, whose roles get other OIDs: the source
# created zed before alice, the dump creates alice first, so alice's new OID
# is the one zed had. Budget rows carry the cluster they were written in, so
# after the restore no role spends a restored budget: alice's and zed's
# private queries are refused with a message naming dp_agg.reattach_budgets()
# (before, alice was charged against zed's budget and saw zed's ledger rows),
# set_budget refuses to start fresh budgets beside them, and
# reattach_budgets() attaches each to the role of its name, with what it
# spent, audited; two budgets of one name (a role dropped and created again
# in the source) are left to an explicit choice (reattach_budget). Also: a
# copy of a database within one cluster has its own budgets, copied with what
# was spent.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# Nodes without DpAggTest's extension: the roles are created first.
sub plain_node {
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name, DpAggTest::port_params());
	$node->init;
	$node->append_conf('postgresql.conf', qq(
shared_preload_libraries = 'dp_agg'
max_worker_processes = 16
));
	$node->start;
	return $node;
}

my $source = plain_node('source');
$source->safe_psql('postgres', q(
CREATE ROLE zed LOGIN;
CREATE ROLE alice LOGIN;
CREATE ROLE carol LOGIN;
CREATE EXTENSION dp_agg;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 100) g;
GRANT SELECT ON t TO PUBLIC;
SELECT dp_agg.set_budget('zed', 5);
SELECT dp_agg.set_budget('alice', 10, 1e-4);
SELECT dp_agg.set_budget('carol', 2);
));
sub private_query {
	my ($node, $role, $epsilon) = @_;
	return $node->psql('postgres', "SELECT dp_count($epsilon) FROM t",
		extra_params => [ '-U', $role ]);
}
my ($ret, $out, $err);
for ([ 'alice', 1.1 ], [ 'alice', 2.2 ], [ 'zed', 0.7 ], [ 'carol', 0.5 ]) {
	($ret) = private_query($source, @$_);
	die "private query of $_->[0] failed in the source" if $ret != 0;
}
# carol is dropped (her budget row stays, for the audit) and created again.
$source->safe_psql('postgres', q(
DROP ROLE carol;
CREATE ROLE carol LOGIN;
SELECT dp_agg.set_budget('carol', 4);
));
($ret) = private_query($source, 'carol', 0.25);
die 'private query of the new carol failed in the source' if $ret != 0;
my $spent_before = $source->safe_psql('postgres', q(SELECT role || ':' || epsilon_spent
  FROM dp_agg.budgets WHERE NOT role_dropped ORDER BY role));
is($spent_before, "alice:3.3\ncarol:0.25\nzed:0.7", 'the source: what each role spent');
my $zed_oid = $source->safe_psql('postgres', q(SELECT 'zed'::regrole::oid));
my $source_id = $source->safe_psql('postgres', 'SELECT system_identifier FROM pg_control_system()');
my $new_carol_oid = $source->safe_psql('postgres', q(SELECT 'carol'::regrole::oid));

# A copy within the cluster has its own budgets, copied with their spending.
$source->safe_psql('postgres', 'CREATE DATABASE copy1 TEMPLATE postgres');
($ret) = $source->psql('copy1', 'SELECT dp_count(1.5) FROM t', extra_params => [ '-U', 'alice' ]);
is($ret, 0, 'a private query in a same-cluster copy of the database');
is($source->safe_psql('copy1', q(SELECT epsilon_spent FROM dp_agg.budgets WHERE role = 'alice')),
	'4.8', 'the copy charged its own copy of the budget');
is($source->safe_psql('postgres', q(SELECT epsilon_spent FROM dp_agg.budgets WHERE role = 'alice')),
	'3.3', 'the original budget is unchanged');
# (it holds a copy of the ledger: dropped only with the confirmation)
$source->safe_psql('postgres',
	"SET dp_agg.allow_drop_extension = on;\nDROP DATABASE copy1;");

# pg_dumpall into a second cluster.
my $dump = "${PostgreSQL::Test::Utils::tmp_check}/dumpall.sql";
$source->command_ok([ 'pg_dumpall', '-f', $dump ], 'pg_dumpall of the source cluster');
my $target = plain_node('target');
# (CREATE ROLE postgres fails: the role exists; everything else must pass.)
my ($restore_out, $restore_err) = ('', '');
IPC::Run::run([ 'psql', '-X', '-d', $target->connstr('postgres'), '-f', $dump ],
	'>', \$restore_out, '2>', \$restore_err);
my @restore_errors = grep { /ERROR/ && !/role "postgres" already exists/ } split /\n/, $restore_err;
is(join("\n", @restore_errors), '', 'the dump restores into the second cluster');
is($target->safe_psql('postgres', q(SELECT 'alice'::regrole::oid)), $zed_oid,
	'the restore gave alice the OID zed had in the source');

# Before re-attaching: refused, with the way out; nothing charged, nothing
# of another role's shown.
($ret, $out, $err) = private_query($target, 'alice', 0.5);
isnt($ret, 0, "alice's private query is refused before re-attaching");
like($err, qr/role "alice" has no differential privacy budget/, '... as having no budget');
like($err, qr/DETAIL:  A budget recorded for the role name "alice" was restored from a dump of another cluster/,
	'... naming the restored budget');
like($err, qr/HINT:  .*SELECT \* FROM dp_agg\.reattach_budgets\(\)/, '... and dp_agg.reattach_budgets()');
($ret, $out, $err) = $target->psql('postgres', 'SELECT count(*) FROM dp_agg.ledger',
	extra_params => [ '-U', 'alice' ]);
is($out, '0', "alice sees no ledger row (not zed's, whose OID she has)");
($ret, $out, $err) = $target->psql('postgres', q(SELECT dp_agg.set_budget('alice', 100)));
isnt($ret, 0, 'set_budget refuses to start a fresh budget beside the restored one');
like($err, qr/role "alice" has a privacy budget restored from another cluster that is not re-attached/,
	'... saying why');
like($err, qr/epsilon 3\.3 of 10 and delta 0 of 0\.0001 spent/, '... with what it spent');
($ret, $out, $err) = $target->psql('postgres', q(SELECT dp_agg.set_budget('alice', 100)),
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/ZP004/, '... SQLSTATE ZP004');
is($target->safe_psql('postgres', q(SELECT count(*) FROM dp_agg.ledger_entry)),
	$source->safe_psql('postgres', q(SELECT count(*) FROM dp_agg.ledger_entry)),
	'nothing was recorded by the refusals');

# Re-attach: every unambiguous one, by name; carol's two are left.
my $outcomes = $target->safe_psql('postgres', q(
SELECT role || ':' || reattached || ':' || outcome FROM dp_agg.reattach_budgets()
ORDER BY role, previous_role_oid));
my @outcomes = split /\n/, $outcomes;
is(scalar(@outcomes), 4, 'reattach_budgets() reports each restored budget');
like($outcomes[0], qr/^alice:true:re-attached to role alice/, 'alice re-attached');
like($outcomes[1], qr/^carol:false:not re-attached: 2 restored budgets carry the name carol/,
	"carol's two budgets left to a choice");
like($outcomes[2], qr/^carol:false:/, '(both)');
like($outcomes[3], qr/^zed:true:re-attached to role zed/, 'zed re-attached');
$target->safe_psql('postgres', "SELECT dp_agg.reattach_budget('carol', $new_carol_oid, $source_id)");
is($target->safe_psql('postgres', q(SELECT role || ':' || epsilon_spent FROM dp_agg.budgets
  WHERE NOT role_dropped AND NOT orphaned ORDER BY role)), $spent_before,
	'every role has what it spent in the source');
is($target->safe_psql('postgres', q(SELECT count(*) FROM dp_agg.budgets WHERE orphaned)), '1',
	"the dropped carol's budget stays orphaned");
is($target->safe_psql('postgres', q(
SELECT string_agg(role || ':' || epsilon, ',' ORDER BY role) FROM dp_agg.ledger
WHERE kind = 'reattach_budget')), 'alice:3.3,carol:0.25,zed:0.7',
	'one audited ledger row per re-attachment');

# After: charged on top of what was spent; alice sees her own earlier rows.
($ret, $out, $err) = private_query($target, 'alice', 0.5);
is($ret, 0, "alice's private query runs after re-attaching");
is($target->safe_psql('postgres', q(SELECT epsilon_spent FROM dp_agg.budgets WHERE role = 'alice')),
	'3.8', 'and is charged on top of what she spent in the source');
($ret, $out, $err) = $target->psql('postgres',
	q(SELECT string_agg(kind || ':' || epsilon, ',' ORDER BY id) FROM dp_agg.ledger),
	extra_params => [ '-U', 'alice' ]);
is($out, 'set_budget:10,charge:1.1,charge:2.2,reattach_budget:3.3,charge:0.5',
	"alice's ledger: her rows from the source, the re-attachment, the new charge");
($ret, $out, $err) = $target->psql('postgres', q(SELECT dp_agg.set_budget('alice', 12)));
is($ret, 0, 'set_budget works again');
is($target->safe_psql('postgres', q(SELECT epsilon_spent FROM dp_agg.budgets WHERE role = 'alice')),
	'3.8', '... and keeps what was spent');

# The restored ledger keeps its hash chain (issue 28, finding 3): in the
# target, after the re-attachments and a charge, every row still matches its
# hash, each budget the row recorded with its last entry, and each spending
# the sum of its charges (from the re-attachment's amounts on); the chain
# passes through the source's head.
my $source_head = $source->safe_psql('postgres',
	q(SELECT head_seq || ',' || head_hash FROM dp_agg.verify_ledger()));
my ($anchor_seq, $anchor_hash) = split /,/, $source_head;
is($source->safe_psql('postgres',
		q(SELECT ok || ' ' || array_to_string(problems, '; ') FROM dp_agg.verify_ledger())),
	'true ', 'the source ledger verifies');
is($target->safe_psql('postgres',
		"SELECT ok || ' ' || array_to_string(problems, '; ') "
		  . "FROM dp_agg.verify_ledger($anchor_seq, '$anchor_hash')"),
	'true ', 'the restored ledger verifies in the target, through the source head');
is($target->safe_psql('postgres', q(SELECT count(*) FROM pg_shseclabel l
  JOIN pg_database d ON d.oid = l.objoid WHERE l.provider = 'dp_agg' AND d.datname = 'postgres')),
	'1', 'the restored database is labelled as holding a ledger');

$source->stop;
$target->stop;
done_testing();
