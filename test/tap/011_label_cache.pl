# dp_agg's labels are cached per backend (issue 31, src/pg/label_cache.h):
# a session that stays connected sees every change another session commits
# at its next statement. Restricting a role (SECURITY LABEL, dp_agg's
# functions), granting and revoking a restricted role, renaming it,
# dropping it, protecting and unprotecting a table, labelling a privacy unit
# column; prepared plans made before a restriction; and a label rolled back
# (with its transaction or its subtransaction) changes nothing. (DROP
# EXTENSION dp_agg is refused while budgets exist: drop_guard.h.)
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('labels');
$node->safe_psql('postgres', q(
CREATE ROLE analyst LOGIN;
CREATE ROLE team NOLOGIN;
CREATE TABLE open_rows AS SELECT g AS x, g % 7 AS u FROM generate_series(1, 50) g;
GRANT SELECT ON open_rows TO analyst;
SELECT dp_agg.protect_table('t');
SELECT dp_agg.set_budget('analyst', 1000);
));

my $analyst = $node->background_psql('postgres', on_error_stop => 0,
	extra_params => [ '-U', 'analyst' ]);
my $admin = $node->background_psql('postgres', on_error_stop => 0);

# The analyst's session: what a statement answers, or its error's first line.
sub ask {
	my ($sql) = @_;
	$analyst->{stderr} = '';
	my $out = $analyst->query($sql);
	my $err = $analyst->{stderr};
	if ($err ne '') {
		$err =~ s/^psql:[^E]*//;
		$err =~ s/\n.*//s;
		return $err;
	}
	return $out;
}

sub admin {
	my ($sql) = @_;
	$node->safe_psql('postgres', $sql);
}

my $read_protected = 'SELECT x FROM t LIMIT 1';
my $not_restricted = qr/permission denied for table t/;
my $restricted = qr/restricted roles may not read rows of protected tables/;

like(ask($read_protected), $not_restricted, 'not restricted yet: plain permission error');
is(ask('SELECT count(*) FROM open_rows'), '50', 'a public table is read');

# Roles.
admin(q(SELECT dp_agg.restrict_role('analyst')));
like(ask($read_protected), $restricted, 'restrict_role in another session: judged as restricted');
admin(q(SECURITY LABEL FOR dp_agg ON ROLE analyst IS NULL));
like(ask($read_protected), $not_restricted, 'label removed in another session: not restricted');
admin(q(BEGIN; SECURITY LABEL FOR dp_agg ON ROLE analyst IS 'restricted'; ROLLBACK;));
like(ask($read_protected), $not_restricted, 'a rolled-back label changes nothing');
admin(q(SECURITY LABEL FOR dp_agg ON ROLE team IS 'restricted'));
like(ask($read_protected), $not_restricted, 'another role restricted: still not');
admin(q(GRANT team TO analyst));
like(ask($read_protected), $restricted, 'GRANT of a restricted role: restricted');
admin(q(ALTER ROLE team RENAME TO team_renamed));
like(ask($read_protected), $restricted, 'the restricted role renamed: still restricted');
admin(q(REVOKE team_renamed FROM analyst));
like(ask($read_protected), $not_restricted, 'REVOKE: not restricted');
admin(q(GRANT team_renamed TO analyst));
like(ask($read_protected), $restricted, 'GRANT again: restricted');
admin(q(REVOKE team_renamed FROM analyst; DROP ROLE team_renamed));
like(ask($read_protected), $not_restricted, 'the restricted role dropped: not restricted');

# (Inside an open transaction, a label another session commits meanwhile
# takes effect at the next statement: TAP test 012.)
admin(q(SELECT dp_agg.restrict_role('analyst')));
like(ask($read_protected), $restricted, 'restricted again');

# Tables: a restricted role reads a table it was granted until it is
# protected (then the judge refuses before any permission check).
admin(q(REVOKE SELECT ON open_rows FROM analyst; SELECT dp_agg.protect_table('open_rows');));
like(ask('SELECT x FROM open_rows LIMIT 1'), qr/restricted roles may not read rows of protected tables/,
	'protect_table in another session: the table is protected');
admin(q(SELECT dp_agg.unprotect_table('open_rows')));
like(ask('SELECT x FROM open_rows LIMIT 1'), qr/permission denied for table open_rows/,
	'unprotect_table in another session: no longer protected');
admin(q(BEGIN; SECURITY LABEL FOR dp_agg ON TABLE open_rows IS 'protected'; ROLLBACK;));
like(ask('SELECT x FROM open_rows LIMIT 1'), qr/permission denied for table open_rows/,
	'a rolled-back table label changes nothing');
admin(q(SECURITY LABEL FOR dp_agg ON TABLE open_rows IS 'protected'));
like(ask('SELECT x FROM open_rows LIMIT 1'), qr/restricted roles may not read rows of protected tables/,
	'SECURITY LABEL in another session: protected');
like(ask('SELECT dp_count(x, 0.5) IS NOT NULL FROM open_rows'), qr/^t$/,
	'its private count is answered');

# A privacy unit column, seen by a superuser's session that stays
# connected: its plan bounds each unit once the column is labelled.
my $plan = q(EXPLAIN (COSTS OFF) SELECT dp_count(x, 0.5) FROM open_rows);
unlike($admin->query_safe($plan), qr/unit_group_sample|WindowAgg/, 'no unit: no per-unit level');
admin(q(SELECT dp_agg.set_privacy_unit('open_rows', 'u')));
like($admin->query_safe($plan), qr/WindowAgg/, 'privacy unit labelled in another session: bounded per unit');
admin(q(SELECT dp_agg.unset_privacy_unit('open_rows', 'u')));
unlike($admin->query_safe($plan), qr/WindowAgg/, 'privacy unit removed: no per-unit level');

# A dropped labelled table: its OID is forgotten (a new table with the same
# name is not protected).
admin(q(DROP TABLE open_rows; CREATE TABLE open_rows AS SELECT 1 AS x; GRANT SELECT ON open_rows TO analyst;));
is(ask('SELECT x FROM open_rows'), '1', 'a new table of the same name is not protected');

# Plans made while the analyst was not restricted (issue 31 review): a
# prepared statement's generic plan is judged again once a restriction
# committed in another session reaches the analyst's next statement, be it
# a GRANT of a restricted role or a label written from another database
# (pg_shseclabel is shared: its invalidation reaches every database).
admin(q(SECURITY LABEL FOR dp_agg ON ROLE analyst IS NULL));
admin(q(CREATE ROLE crew NOLOGIN));
admin(q(SELECT dp_agg.restrict_role('crew')));
admin(q(CREATE VIEW t_rows AS SELECT x FROM t; GRANT SELECT ON t_rows TO analyst;));
admin(q(CREATE DATABASE other));
my $exact = qr/is not a differentially private aggregate/;
ask('SET plan_cache_mode = force_generic_plan');
ask('PREPARE exact_sum AS SELECT sum(x) FROM t_rows');
is(ask('EXECUTE exact_sum'), '5050', 'not restricted: a view of protected rows is read');
admin(q(GRANT crew TO analyst));
like(ask('EXECUTE exact_sum'), $exact,
	'GRANT of a restricted role in another session: the prepared plan is judged again');
admin(q(REVOKE crew FROM analyst));
is(ask('EXECUTE exact_sum'), '5050', 'REVOKE in another session: read again');
$node->safe_psql('other', q(SECURITY LABEL FOR dp_agg ON ROLE analyst IS 'restricted'));
like(ask('EXECUTE exact_sum'), $exact,
	'restricted from another database: the prepared plan is judged again');

# A label written and rolled back in a subtransaction: the backend that
# wrote it forgets it at ROLLBACK TO (the aborted subtransaction's
# invalidations are replayed locally).
admin(q(CREATE TABLE unit_rows AS SELECT g AS x, g % 7 AS u FROM generate_series(1, 50) g));
my $unit_plan = q(EXPLAIN (COSTS OFF) SELECT dp_count(x, 0.5) FROM unit_rows);
$admin->query_safe('BEGIN');
$admin->query_safe('SAVEPOINT s');
$admin->query_safe(q(SECURITY LABEL FOR dp_agg ON COLUMN unit_rows.u IS 'privacy_unit'));
like($admin->query_safe($unit_plan), qr/WindowAgg/, 'labelled in a subtransaction: bounded per unit');
$admin->query_safe('ROLLBACK TO s');
unlike($admin->query_safe($unit_plan), qr/WindowAgg/,
	'the subtransaction rolled back: the same backend forgets the label');
$admin->query_safe('COMMIT');

$analyst->quit;
$admin->quit;
$node->stop;
done_testing();
