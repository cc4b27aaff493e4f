#!/usr/bin/env bash
# A 3-node Citus cluster on loopback for dp_agg's Citus tests and benchmark:
# coordinator on $CITUS_PORT_BASE, workers on +1 and +2, each its own initdb,
# listening on 127.0.0.1 only, TLS on. The coordinator connects to the workers
# with a client certificate whose common name the workers' dp_agg.coordinator_cn
# names; analysts connecting to a worker have no such certificate. The TLS
# lines of pg_hba.conf are README's "How workers authenticate the coordinator"
# word for word: trust with clientcert=verify-ca for Citus's own connections
# (the coordinator's, as every role, and the workers' to each other, with a
# certificate of their own), never a password.
#   cluster.sh start|stop|psql PORT [psql args]
set -euo pipefail
# Commands run as user postgres (runuser) inherit the working directory, which
# may be a clone under a root-only directory: work from /tmp instead.
cd /tmp
PG_BINDIR=${PG_BINDIR:-$(${PG_CONFIG:-pg_config} --bindir)}
BASE_PORT=${CITUS_PORT_BASE:-55620}
ROOT=${CITUS_CLUSTER_DIR:-/tmp/dp_agg_citus_$BASE_PORT}
COORDINATOR_CN=dp_agg_coordinator
WORKER_CN=dp_agg_worker
as_postgres() { if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi; }

make_certificates() {
  local d=$ROOT/tls
  mkdir -p "$d"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=dp_agg test CA" \
    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
  for name in server "$COORDINATOR_CN" "$WORKER_CN" analyst; do
    local cn=$name; [ "$name" = server ] && cn=127.0.0.1
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" -keyout "$d/$name.key" \
      -out "$d/$name.csr" 2>/dev/null
    openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
      -days 2 -out "$d/$name.crt" 2>/dev/null
  done
  # "analyst" is signed by a different CA: a self-made certificate claiming the CN
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$COORDINATOR_CN" \
    -keyout "$d/forged.key" -out "$d/forged.crt" 2>/dev/null
  chmod 600 "$d"/*.key
  chown -R postgres "$d"
}

start() {
  stop >/dev/null 2>&1 || true
  rm -rf "$ROOT"; mkdir -p "$ROOT"; chown postgres "$ROOT"
  make_certificates
  local tls=$ROOT/tls
  for i in 0 1 2; do
    local port=$((BASE_PORT + i)) data=$ROOT/node$i
    as_postgres "$PG_BINDIR/initdb" -D "$data" -A trust -U postgres >/dev/null
    local role=worker; [ $i = 0 ] && role=coordinator
    cat >> "$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$ROOT'
shared_preload_libraries = 'citus,dp_agg'
max_worker_processes = 32
ssl = on
ssl_cert_file = '$tls/server.crt'
ssl_key_file = '$tls/server.key'
ssl_ca_file = '$tls/ca.crt'
dp_agg.node_role = '$role'
dp_agg.coordinator_cn = '$COORDINATOR_CN'
# fresh draws in every test: the release cache is off unless a test turns it on
dp_agg.release_cache_period = 0
fsync = off
CONF
    if [ $i = 0 ]; then
      echo "citus.node_conninfo = 'sslmode=verify-ca sslrootcert=$tls/ca.crt sslcert=$tls/$COORDINATOR_CN.crt sslkey=$tls/$COORDINATOR_CN.key'" >> "$data/postgresql.conf"
    else
      echo "citus.node_conninfo = 'sslmode=verify-ca sslrootcert=$tls/ca.crt sslcert=$tls/$WORKER_CN.crt sslkey=$tls/$WORKER_CN.key'" >> "$data/postgresql.conf"
    fi
    # Unix sockets: the test's own superuser and analysts (trust). TCP: only
    # Citus's connections, by a certificate signed by ssl_ca_file, as in
    # README (all nodes share 127.0.0.1 here, so the coordinator's line and
    # the workers' line are one). Workers refuse private queries of any
    # connection without the coordinator's certificate.
    printf 'local all all trust\nhostssl all all 127.0.0.1/32 trust clientcert=verify-ca\n' > "$data/pg_hba.conf"
    as_postgres "$PG_BINDIR/pg_ctl" -D "$data" -l "$ROOT/node$i.log" -w start >/dev/null
  done
  for i in 0 1 2; do sql $((BASE_PORT + i)) -c "CREATE EXTENSION citus" >/dev/null; done
  sql "$BASE_PORT" -c "SELECT citus_set_coordinator_host('127.0.0.1', $BASE_PORT)" >/dev/null
  sql "$BASE_PORT" -c "SELECT citus_add_node('127.0.0.1', $((BASE_PORT + 1)))" >/dev/null
  sql "$BASE_PORT" -c "SELECT citus_add_node('127.0.0.1', $((BASE_PORT + 2)))" >/dev/null
  sql "$BASE_PORT" -c "CREATE EXTENSION dp_agg" >/dev/null
  echo "citus cluster up: coordinator 127.0.0.1:$BASE_PORT, workers :$((BASE_PORT + 1)) :$((BASE_PORT + 2))"
}

stop() {
  for i in 0 1 2; do
    [ -d "$ROOT/node$i" ] && as_postgres "$PG_BINDIR/pg_ctl" -D "$ROOT/node$i" -m fast -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$ROOT"
}

sql() { local port=$1; shift; as_postgres "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$ROOT" -p "$port" -U postgres -d postgres "$@"; }

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  psql) shift; sql "$@" ;;
  *) echo "usage: $0 start|stop|psql PORT [args]" >&2; exit 2 ;;
esac
