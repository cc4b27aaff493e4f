# A role restricted from another session is restricted at its next
# statement, also inside an open transaction (restriction.h,
# RestrictedSession): as PostgreSQL's own REVOKE, not at the end of the
# transaction. By label (dp_agg.restrict_role) and by GRANT of a restricted
# role; the reverse (unrestrict, REVOKE of the role) also at the next
# statement. A prepared statement's plan made before the restriction is
# judged again (SQL EXECUTE) or not run once (bound over the extended
# protocol inside the transaction); a cursor opened before it keeps its plan, as
# PostgreSQL's cursors keep their permissions, but no new read starts.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = DpAggTest::new_node('restrict_mid');
$node->safe_psql('postgres', q(
CREATE ROLE analyst LOGIN;
CREATE ROLE crew NOLOGIN;
SELECT dp_agg.protect_table('t');
SELECT dp_agg.restrict_role('crew');
SELECT dp_agg.set_budget('analyst', 1000);
CREATE VIEW t_rows AS SELECT x FROM t;
GRANT SELECT ON t_rows TO analyst;
GRANT SELECT ON t TO analyst;
));

# The analyst's session: errors with their SQLSTATE, and a failed statement
# inside a transaction block rolled back alone (the transaction goes on).
my $analyst = $node->background_psql('postgres', on_error_stop => 0,
	extra_params => [ '-U', 'analyst', '-v', 'VERBOSITY=verbose', '-v', 'ON_ERROR_ROLLBACK=on' ]);

# What a statement answers, or its error's first line.
sub ask { DpAggTest::answer_or_error($analyst, @_) }

sub admin {
	my ($sql) = @_;
	$node->safe_psql('postgres', $sql);
}

sub charges { DpAggTest::charges($node, 'analyst') }

my $first_row = 'SELECT x FROM t ORDER BY x LIMIT 1';
my $first_view_row = 'SELECT x FROM t_rows ORDER BY x LIMIT 1';
my $private_count = 'SELECT dp_count(x, 0.5) IS NOT NULL FROM t';
my $refused = qr/^ERROR:  42501: dp_agg: restricted roles may not read rows of protected tables/;
my $denied = qr/^ERROR:  42501: permission denied for table t$/;

# --- By label, with the table privilege revoked in the same transaction.
is(ask('BEGIN'), '', 'analyst: BEGIN');
my $started = ask('SELECT now()');
is(ask($first_row), '1', 'not restricted, in a transaction: reads the table');
is(ask($first_view_row), '1', 'and the view');
admin(q(BEGIN; REVOKE SELECT ON t FROM analyst; SELECT dp_agg.restrict_role('analyst'); COMMIT;));
like(ask($first_row), $refused,
	'restricted in another session: the next statement of the open transaction is judged as restricted');
like(ask($first_view_row), $refused, 'the view too');
my $charged = charges();
is(ask($private_count), 't', 'a private count is answered (as the table owner: no SELECT on t left)');
is(charges(), $charged + 1, 'and charged once');
is(ask('SELECT now()'), $started, 'all in the same transaction');
is(ask('COMMIT'), '', 'analyst: COMMIT');

# --- The reverse: unrestricted at the next statement.
is(ask('BEGIN'), '', 'analyst: BEGIN again');
like(ask($first_view_row), $refused, 'restricted');
admin(q(SELECT dp_agg.unrestrict_role('analyst')));
is(ask($first_view_row), '1', 'unrestricted in another session: the view is read at the next statement');
like(ask($first_row), $denied, 'the table itself: PostgreSQL\'s own permission check (SELECT revoked)');
is(ask('COMMIT'), '', 'analyst: COMMIT');

# --- By GRANT of a restricted role, and its REVOKE.
is(ask('BEGIN'), '', 'analyst: BEGIN for GRANT');
is(ask($first_view_row), '1', 'not restricted: the view is read');
admin(q(GRANT crew TO analyst));
like(ask($first_view_row), $refused,
	'GRANT of a restricted role in another session: restricted at the next statement');
$charged = charges();
is(ask($private_count), 't', 'a private count is answered');
is(charges(), $charged + 1, 'and charged once');
admin(q(REVOKE crew FROM analyst));
is(ask($first_view_row), '1', 'REVOKE of the role in another session: read at the next statement');
is(ask('COMMIT'), '', 'analyst: COMMIT');

# --- A prepared statement (SQL PREPARE/EXECUTE) planned before the
# restriction is judged again when executed after it.
is(ask('BEGIN'), '', 'analyst: BEGIN for PREPARE');
ask('SET LOCAL plan_cache_mode = force_generic_plan');
ask("PREPARE first_view_row AS $first_view_row");
is(ask('EXECUTE first_view_row'), '1', 'prepared and executed before the restriction: read');
admin(q(SELECT dp_agg.restrict_role('analyst')));
like(ask('EXECUTE first_view_row'), $refused, 'executed after it: judged again, refused');
is(ask('COMMIT'), '', 'analyst: COMMIT');
ask('DEALLOCATE first_view_row');
admin(q(SELECT dp_agg.unrestrict_role('analyst')));

# --- Autocommit statements, each a transaction of its own: the answer kept
# from one statement to the next (issue 31, row 13) is decided again at the
# next statement after a change in another session, and after a change this
# session rolled back.
is(ask($first_view_row), '1', 'autocommit, not restricted: the view is read');
is(ask($first_view_row), '1', 'and again');
admin(q(SELECT dp_agg.restrict_role('analyst')));
like(ask($first_view_row), $refused, 'restricted in another session: the next autocommit statement is refused');
admin(q(SELECT dp_agg.unrestrict_role('analyst')));
is(ask($first_view_row), '1', 'unrestricted: the next autocommit statement reads the view');
admin(q(GRANT crew TO analyst));
like(ask($first_view_row), $refused, 'GRANT of a restricted role: the next autocommit statement is refused');
admin(q(REVOKE crew FROM analyst));
is(ask($first_view_row), '1', 'REVOKE: read again');
{
	# A session's own change, rolled back: a superuser session granted the
	# restricted role inside a transaction is restricted there, and not
	# after the ROLLBACK.
	my $own = $node->background_psql('postgres', on_error_stop => 0,
		extra_params => [ '-v', 'VERBOSITY=verbose', '-v', 'ON_ERROR_ROLLBACK=on' ]);
	my $own_ask = sub { DpAggTest::answer_or_error($own, @_) };
	admin(q(CREATE ROLE own_admin SUPERUSER));
	$own_ask->('SET SESSION AUTHORIZATION own_admin');
	is($own_ask->($first_view_row), '1', 'own change: not restricted before');
	$own_ask->('BEGIN');
	$own_ask->('GRANT crew TO own_admin');
	like($own_ask->($first_view_row), $refused, 'own GRANT in the open transaction: restricted');
	$own_ask->('ROLLBACK');
	is($own_ask->($first_view_row), '1', 'rolled back: not restricted at the next autocommit statement');
	$own->quit;
}

# --- A cursor opened before the restriction keeps the plan it was opened
# with (as PostgreSQL's cursors keep the permissions they were opened with);
# no new read starts after it.
is(ask('BEGIN'), '', 'analyst: BEGIN for a cursor');
ask('DECLARE view_rows CURSOR FOR SELECT x FROM t_rows ORDER BY x');
is(ask('FETCH 1 FROM view_rows'), '1', 'cursor opened and read before the restriction');
admin(q(SELECT dp_agg.restrict_role('analyst')));
is(ask('FETCH 1 FROM view_rows'), '2', 'the open cursor goes on (documented)');
like(ask($first_view_row), $refused, 'a new read in the same transaction is refused');
like(ask('DECLARE more_rows CURSOR FOR SELECT x FROM t_rows'), $refused, 'so is a new cursor');
is(ask('COMMIT'), '', 'analyst: COMMIT');
admin(q(SELECT dp_agg.unrestrict_role('analyst')));

# --- Extended protocol: a generic plan bound again (Bind of a prepared
# statement) is taken from the plan cache before any hook of dp_agg runs.
# A libpq client (Python's ctypes: psql 15 has no \bind, pgbench no
# transaction across two runs of its script) prepares the view's read,
# executes it in a transaction, waits there on an advisory lock the admin
# holds while the restriction commits, then executes it again.
my $client = PostgreSQL::Test::Utils::tempdir() . '/extended_protocol.py';
PostgreSQL::Test::Utils::append_to_file($client, q{
import ctypes, sys
pq = ctypes.CDLL('libpq.so.5')
P, S = ctypes.c_void_p, ctypes.c_char_p
for name, result, arguments in [
        ('PQconnectdb', P, [S]), ('PQstatus', ctypes.c_int, [P]),
        ('PQexec', P, [P, S]), ('PQprepare', P, [P, S, S, ctypes.c_int, P]),
        ('PQexecPrepared', P, [P, S, ctypes.c_int, P, P, P, ctypes.c_int]),
        ('PQresultStatus', ctypes.c_int, [P]), ('PQntuples', ctypes.c_int, [P]),
        ('PQgetvalue', S, [P, ctypes.c_int, ctypes.c_int]),
        ('PQresultErrorField', S, [P, ctypes.c_int]), ('PQclear', None, [P])]:
    getattr(pq, name).restype, getattr(pq, name).argtypes = result, arguments

def show(label, result):
    status = pq.PQresultStatus(result)
    if status in (1, 2):  # PGRES_COMMAND_OK, PGRES_TUPLES_OK
        value = pq.PQgetvalue(result, 0, 0).decode() if pq.PQntuples(result) > 0 else ''
        print('%s: ok %s' % (label, value), flush=True)
    else:
        print('%s: %s %s' % (label, pq.PQresultErrorField(result, ord('C')).decode(),
                             pq.PQresultErrorField(result, ord('M')).decode()), flush=True)
    pq.PQclear(result)

connection = pq.PQconnectdb(sys.argv[1].encode())
if pq.PQstatus(connection) != 0:
    sys.exit('no connection')
def execute():
    return pq.PQexecPrepared(connection, b'first_row', 0, None, None, None, 0)
show('begin', pq.PQexec(connection, b'BEGIN'))
show('prepare', pq.PQprepare(connection, b'first_row', sys.argv[2].encode(), 0, None))
show('before', execute())
show('wait', pq.PQexec(connection, b'SELECT pg_advisory_lock_shared(7)'))
show('after', execute())
show('rollback', pq.PQexec(connection, b'ROLLBACK'))
show('again', execute())
});
my $admin = $node->background_psql('postgres');
$admin->query_safe('SELECT pg_advisory_lock(7)');
my ($client_out, $client_err) = ('', '');
my $connection = 'host=' . $node->host . ' port=' . $node->port
  . ' dbname=postgres user=analyst application_name=extended';
my $handle = IPC::Run::start([ '/usr/bin/python3', $client, $connection, $first_view_row ],
	'>', \$client_out, '2>', \$client_err);
ok($node->poll_query_until('postgres', q(SELECT count(*) = 1 FROM pg_stat_activity
	WHERE application_name = 'extended' AND wait_event = 'advisory')),
	'the client read the view and waits in its transaction');
$charged = charges();
admin(q(SELECT dp_agg.restrict_role('analyst')));
$admin->query_safe('SELECT pg_advisory_unlock(7)');
$handle->finish;
is($client_err, '', 'the client ran');
like($client_out, qr/^before: ok 1$/m, 'bound before the restriction: read');
like($client_out,
	qr/^after: 42501 dp_agg: this statement was planned before the role was restricted$/m,
	'bound again after it, in the same transaction: the cached plan is not run');
like($client_out, qr/^again: 42501 dp_agg: restricted roles may not read rows of protected tables/m,
	'executed again: planned and judged anew, as restricted');
is(charges(), $charged, 'nothing charged');
$admin->quit;

# The analyst's psql session, outside a transaction: restricted too.
$charged = charges();
is(ask($private_count), 't', 'the other session: private count answered');
is(charges(), $charged + 1, 'and charged once');
like(ask($first_view_row), $refused, 'raw read refused');

$analyst->quit;
$node->stop;
done_testing();
