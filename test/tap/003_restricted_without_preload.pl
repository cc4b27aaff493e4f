# A restricted analyst holds no privilege on a protected table: only dp_agg,
# preloaded, lets a query that outputs nothing but private aggregates read it.
# Without the preloaded library the analyst reads nothing at all, neither raw
# rows nor private aggregates, even after loading the library into its own
# session, while unrestricted roles are unaffected. Preloading again restores
# the private queries.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('restricted');
my ($ret, $out, $err) = $node->psql('postgres', q(
CREATE ROLE analyst LOGIN;
CREATE SCHEMA clinic;
CREATE TABLE clinic.patients (id int PRIMARY KEY, region text NOT NULL, age int NOT NULL);
INSERT INTO clinic.patients
  SELECT g, (ARRAY['north', 'south', 'east'])[1 + g % 3], 18 + (g * 37) % 70
  FROM generate_series(1, 300) g;
GRANT USAGE ON SCHEMA clinic TO analyst;
SELECT dp_agg.protect_table('clinic.patients');
SELECT dp_agg.restrict_role('analyst');
SELECT dp_agg.set_budget('analyst', 100, 0.01);
));
is($ret, 0, 'set-up: protect_table, restrict_role and a budget for the analyst') or do {
	diag($err);
	done_testing();
	exit;
};

# Runs SQL as the analyst, errors with their SQLSTATE: (exit code, stdout, stderr).
sub as_analyst {
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		extra_params => [ '-U', 'analyst', '-v', 'VERBOSITY=verbose' ]);
	return ($ret, $out, $err);
}

sub analyst_spent {
	return $node->safe_psql('postgres',
		q(SELECT epsilon_spent FROM dp_agg.role_budget WHERE role_name = 'analyst'));
}

my $private_query = 'SELECT dp_count(age, 1.0) FROM clinic.patients';
my $raw_query = 'SELECT * FROM clinic.patients';
my $no_privilege = qr/ERROR:  42501: permission denied for table patients/;

# 1. The set-up: labels recorded, and no privilege for the analyst.
is($node->safe_psql('postgres', q(
SELECT string_agg(objtype || ' ' || objname || ' ' || label, ', ' ORDER BY objtype)
FROM pg_seclabels WHERE provider = 'dp_agg')),
	'database postgres ledger, role analyst restricted, table clinic.patients protected',
	'table labelled protected and role labelled restricted (and the database as holding a ledger)');
is($node->safe_psql('postgres', q(
SELECT has_table_privilege('analyst', 'clinic.patients', 'SELECT'),
       has_any_column_privilege('analyst', 'clinic.patients', 'SELECT'))),
	'f|f', 'the analyst holds no SELECT privilege on the table or its columns');

# 2. Preloaded: a private query works for the analyst and is charged; raw rows
# are refused.
($ret, $out, $err) = as_analyst($private_query);
is($ret, 0, 'preloaded: the analyst runs a private aggregate on the protected table')
  or diag($err);
like($out, qr/^-?\d+$/, 'preloaded: and gets one noisy count');
is(analyst_spent(), '1', 'preloaded: the query is charged to the analyst');

($ret, $out, $err) = as_analyst($raw_query);
isnt($ret, 0, 'preloaded: raw SELECT refused to the analyst');
like($err, qr/ERROR:  (42501|0A000): /, 'preloaded: with SQLSTATE 42501 or 0A000');
is($out, '', 'preloaded: no row released');

# 3. Restart without the library.
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'), '',
	'restarted without shared_preload_libraries');

($ret, $out, $err) = as_analyst($raw_query);
isnt($ret, 0, 'not preloaded: raw SELECT fails for the analyst');
like($err, $no_privilege, 'not preloaded: permission denied for table patients (42501)');
is($out, '', 'not preloaded: no row released by the raw SELECT');

($ret, $out, $err) = as_analyst($private_query);
isnt($ret, 0, 'not preloaded: the private aggregate fails for the analyst');
like($err, $no_privilege, 'not preloaded: permission denied for table patients (42501)');
is($out, '', 'not preloaded: no value released by the private aggregate');

# Loading the library into the analyst's own session (any of its C functions
# does) must not install anything that grants access: the later queries of
# that session are refused too.
($ret, $out, $err) = as_analyst(qq(
SELECT dp_count_margin(1.0) > 0 AS library_loaded;
$private_query;
));
isnt($ret, 0, 'library loaded in the session: the private aggregate still fails');
is($out, 't', 'library loaded in the session: only the margin was answered');
like($err, $no_privilege, 'library loaded in the session: permission denied (42501)');

($ret, $out, $err) = as_analyst(qq(
SELECT dp_count_margin(1.0) > 0 AS library_loaded;
$raw_query;
));
like($err, $no_privilege, 'library loaded in the session: raw SELECT still denied (42501)');
is($out, 't', 'library loaded in the session: no row released');

is(analyst_spent(), '1', 'not preloaded: nothing charged to the analyst');

# 4. Unrestricted roles are unaffected.
is($node->safe_psql('postgres', 'SELECT count(*), sum(age) FROM clinic.patients'),
	$node->safe_psql('postgres',
		'SELECT 300, sum(18 + (g * 37) % 70) FROM generate_series(1, 300) g'),
	'not preloaded: the superuser still reads every row');

# Found by review (issue 31, row 13): without the preloaded library no
# invalidation callback counts membership changes, so the answer kept from
# one autocommit statement to the next would never be decided again. A
# member of the restricted role, whose membership another session revokes,
# is unrestricted at its next transaction (dp_agg.lists_protected_table,
# which the listing views call, answers for restricted sessions only).
$node->safe_psql('postgres', q(
CREATE ROLE member LOGIN;
GRANT USAGE ON SCHEMA clinic TO member;
GRANT analyst TO member;
));
{
	my $member = $node->background_psql('postgres', on_error_stop => 0,
		extra_params => [ '-U', 'member' ]);
	my $listed = q(SELECT dp_agg.lists_protected_table('clinic.patients'::regclass));
	is($member->query_safe($listed), 't', 'not preloaded: a member of the restricted role is restricted');
	$node->safe_psql('postgres', 'REVOKE analyst FROM member');
	is($member->query_safe($listed), 'f',
		'not preloaded: membership revoked in another session: not restricted at the next transaction');
	$member->quit;
}

# 5. Preloaded again: the analyst's private queries work again.
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'dp_agg'");
$node->restart;
($ret, $out, $err) = as_analyst($private_query);
is($ret, 0, 'preloaded again: the private aggregate works for the analyst') or diag($err);
like($out, qr/^-?\d+$/, 'preloaded again: one noisy count');
is(analyst_spent(), '2', 'preloaded again: charged');

# 5. pg_dump keeps the table's label and pg_dumpall the role's, so a restore
# (with the library preloaded) protects and restricts the same objects.
my $dump = $node->basedir . '/labels.sql';
$node->command_ok(['pg_dump', '-f', $dump, '-d', $node->connstr('postgres')], 'pg_dump');
like(slurp_file($dump), qr/SECURITY LABEL FOR dp_agg ON TABLE clinic\.patients IS 'protected';/,
	'pg_dump keeps the protected label');
my $globals = $node->basedir . '/globals.sql';
$node->command_ok(['pg_dumpall', '-g', '-f', $globals, '-d', $node->connstr('postgres')],
	'pg_dumpall -g');
like(slurp_file($globals), qr/SECURITY LABEL FOR dp_agg ON ROLE \S+ IS 'restricted';/,
	'pg_dumpall keeps the restricted label');

$node->stop;
done_testing();
