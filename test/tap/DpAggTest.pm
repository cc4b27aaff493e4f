# Shared set-up for dp_agg's TAP tests: a node with the library preloaded,
# the extension installed and a table to query.
package DpAggTest;

use strict;
use warnings;
use PostgreSQL::Test::Cluster;

# Ports: PostgreSQL::Test::Cluster picks a free one, unless
# DP_AGG_TAP_PORT_BASE is set (e.g. where several checkouts test on one
# machine, each with its own range): then the nodes of a test get that port
# and the following ones.
my $next_port = $ENV{DP_AGG_TAP_PORT_BASE};

sub port_params {
	return defined $next_port ? (port => $next_port++) : ();
}

# release_cache_period (seconds; default 0, off): a test about the release
# cache passes its own; every other test draws fresh noise on every run.
sub new_node {
	my ($name, %params) = @_;
	my $period = delete $params{release_cache_period} // 0;
	my $node = PostgreSQL::Test::Cluster->new($name, port_params());
	$node->init(%params);
	$node->append_conf('postgresql.conf', qq(
shared_preload_libraries = 'dp_agg'
max_worker_processes = 16
fsync = on
synchronous_commit = on
restart_after_crash = on
dp_agg.release_cache_period = $period
));
	$node->start;
	$node->safe_psql('postgres', q(
CREATE EXTENSION dp_agg;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 100) g;
));
	return $node;
}

# Epsilon spent by a role, as exact numeric text.
sub spent {
	my ($node, $role) = @_;
	return $node->safe_psql('postgres',
		"SELECT epsilon_spent FROM dp_agg.role_budget WHERE role_name = '$role'");
}

sub charges {
	my ($node, $role) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM dp_agg.ledger_entry WHERE kind = 'charge' AND role_name = '$role'");
}

# What a statement answers in a background psql session, or its error's first
# line (the session must not stop on errors).
sub answer_or_error {
	my ($session, $sql) = @_;
	$session->{stderr} = '';
	my $out = $session->query($sql);
	my $err = $session->{stderr};
	if ($err ne '') {
		$err =~ s/^psql:[^E]*//;
		$err =~ s/\n.*//s;
		return $err;
	}
	return $out;
}

1;
