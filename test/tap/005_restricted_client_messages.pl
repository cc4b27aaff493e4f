# A restricted analyst never receives DEBUG or LOG messages (issue 26,
# finding 6): they show transaction, plan and sort details that only the
# server log should get. However the analyst asks for them (connection
# options, ALTER ROLE ... SET, SET, set_config(), RESET to postgresql.conf's
# value), none reaches the client, from the first message of the connection
# on; an unrestricted role asking the same way does get them, so the test
# can see them when they are sent.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('messages');
my ($ret, $out, $err) = $node->psql('postgres', q(
CREATE ROLE analyst LOGIN;
CREATE ROLE colleague LOGIN;
CREATE ROLE configured LOGIN;
CREATE TABLE patients (id int PRIMARY KEY, age int NOT NULL);
INSERT INTO patients SELECT g, 18 + g % 70 FROM generate_series(1, 300) g;
SELECT dp_agg.protect_table('patients');
SELECT dp_agg.restrict_role('analyst');
SELECT dp_agg.restrict_role('configured');
SELECT dp_agg.set_budget('analyst', 100, 0.01);
ALTER ROLE configured SET client_min_messages = debug5;
));
is($ret, 0, 'set-up: a protected table and restricted roles') or do {
	diag($err);
	done_testing();
	exit;
};

# psql prefixes messages of a script read from stdin with its position.
my $below_info = qr/^(?:psql:\S+ )?(?:DEBUG|LOG):/m;

# Runs SQL as `role` with PGOPTIONS `options`: (exit code, stdout, stderr).
sub run_as {
	my ($role, $options, $sql) = @_;
	local $ENV{PGOPTIONS} = $options;
	return $node->psql('postgres', $sql, extra_params => [ '-U', $role ]);
}

my $debug = '-c client_min_messages=debug5';
my $plans = '-c client_min_messages=log -c debug_print_plan=on';
my $query = 'SELECT dp_count(age, 1.0) FROM patients';

# 1. Control: an unrestricted role gets them from the first statement.
($ret, $out, $err) = run_as('colleague', $debug, 'SELECT 1');
is($ret, 0, 'unrestricted role: connects with client_min_messages=debug5');
like($err, qr/DEBUG:  StartTransaction/,
	'unrestricted role: receives DEBUG messages (the test sees them when sent)');

# 2. The analyst, asking by connection option: none, from the first message.
($ret, $out, $err) = run_as('analyst', $debug, 'SELECT 1');
is($ret, 0, 'analyst: connects with client_min_messages=debug5') or diag($err);
unlike($err, $below_info, 'analyst: no DEBUG or LOG message, not even at connection start');
($ret, $out, $err) = run_as('analyst', $debug, 'SHOW client_min_messages');
is($out, 'notice', 'analyst: the connection option is raised to notice');

($ret, $out, $err) = run_as('analyst', $plans, $query);
is($ret, 0, 'analyst: a private query with debug_print_plan=on') or diag($err);
unlike($err, $below_info, 'analyst: no plan printed at LOG');

# 3. Set by the administrator for the role, or in postgresql.conf.
($ret, $out, $err) = run_as('configured', '', "SELECT 1; SHOW client_min_messages");
unlike($err, $below_info, 'ALTER ROLE ... SET client_min_messages = debug5: no DEBUG message');
is($out, "1\nnotice", 'ALTER ROLE ... SET: raised to notice');

$node->append_conf('postgresql.conf', 'client_min_messages = debug5');
$node->reload;
($ret, $out, $err) = run_as('colleague', '', 'SELECT 1');
like($err, qr/DEBUG:  /, 'postgresql.conf debug5 reaches an unrestricted role');
($ret, $out, $err) = run_as('analyst', '', "SELECT 1; RESET client_min_messages; SELECT 2; "
	  . "DISCARD ALL; SELECT 3; SHOW client_min_messages");
is($ret, 0, 'analyst: RESET and DISCARD ALL run') or diag($err);
unlike($err, $below_info, 'postgresql.conf debug5, RESET, DISCARD ALL: no DEBUG message');
is($out, "1\n2\n3\nnotice", 'postgresql.conf debug5: raised to notice after RESET and DISCARD ALL');
$node->adjust_conf('postgresql.conf', 'client_min_messages', 'notice');
$node->reload;

# 4. Asked for in the session: SET, set_config(), SET LOCAL.
($ret, $out, $err) = run_as('analyst', '', q(
SET client_min_messages = debug5;
SELECT 1;
SELECT set_config('client_min_messages', 'log', false);
BEGIN;
SET LOCAL client_min_messages = debug1;
SELECT 2;
COMMIT;
SHOW client_min_messages;
));
is($ret, 0, 'analyst: SET, set_config and SET LOCAL run') or diag($err);
unlike($err, $below_info, 'analyst: SET, set_config(), SET LOCAL: no DEBUG message');
is($out, "1\nnotice\n2\nnotice", 'analyst: every way of setting it is raised to notice');

# 5. A superuser who becomes the analyst (SET ROLE) gets none from then on,
# also after RESET ROLE: the session stays fail-closed.
($ret, $out, $err) = run_as('postgres', $debug, q(
SELECT 1;
SET ROLE analyst;
\warn after SET ROLE
SELECT 2;
RESET ROLE;
SELECT 3;
));
is($ret, 0, 'superuser: SET ROLE analyst and back runs') or diag($err);
my ($before, $after) = split /^after SET ROLE(?:\n|\z)/m, $err, 2;  # stderr is chomped
like($before, qr/DEBUG:  /, 'superuser: DEBUG messages before SET ROLE analyst');
ok(defined $after, 'superuser: the marker after SET ROLE was printed');
unlike($after // '', $below_info, 'superuser as analyst: no DEBUG message from SET ROLE on');

$node->stop;
done_testing();
