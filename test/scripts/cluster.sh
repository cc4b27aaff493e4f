#!/usr/bin/env bash
# Throwaway local PostgreSQL 15 cluster for dp_agg tests, demo and benchmarks.
#
#   cluster.sh start [--preload LIB] [--tcp]
#                                      fresh cluster in a temp dir (default preload: dp_agg,
#                                      --preload '' for none); stops a previously started one
#                                      of the same name. --tcp: also listen on 127.0.0.1,
#                                      where every role logs in with a scram-sha-256
#                                      password (the Unix socket stays trust)
#   cluster.sh stop                    stop it and delete its temp dir (no-op if none)
#   cluster.sh status                  say whether it runs (exit 0 running, 3 not)
#   cluster.sh env                     print the env lines: eval "$(test/scripts/cluster.sh env)"
#
# Env: DP_AGG_CLUSTER_NAME: test (default) or demo. The two are independent clusters with
#        their own temp dir, port and state file, so that tests never stop or remove a
#        running demo (and make stop never the test cluster).
#      DP_AGG_TEST_PORT (test cluster, default 54329), DP_AGG_DEMO_PORT (demo, default 54330),
#      PG_BINDIR (default: `$PG_CONFIG --bindir`, PG_CONFIG defaulting to the pg_config on
#      PATH, as for `make install`),
#      DP_AGG_TEST_EXTRA_CONF (extra postgresql.conf lines, appended verbatim).
# State is recorded in <repo root>/.cluster_env (test) or .cluster_env.demo (demo). As
# root, the server runs as OS user postgres.
# shellcheck disable=SC1090  # sourcing the recorded .cluster_env
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PG_BINDIR=${PG_BINDIR:-$("${PG_CONFIG:-pg_config}" --bindir 2>/dev/null || true)}
case "${DP_AGG_CLUSTER_NAME:-test}" in
  test) ENV_FILE="$ROOT/.cluster_env"; DIR_PREFIX=dp_agg_pg; PORT=${DP_AGG_TEST_PORT:-54329} ;;
  demo) ENV_FILE="$ROOT/.cluster_env.demo"; DIR_PREFIX=dp_agg_demo; PORT=${DP_AGG_DEMO_PORT:-54330} ;;
  *) echo "cluster.sh: DP_AGG_CLUSTER_NAME must be test or demo" >&2; exit 2 ;;
esac
PG_OS_USER=postgres

die() { echo "cluster.sh: $*" >&2; exit 1; }

# Run a command as the server's OS user (initdb refuses to run as root).
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u "$PG_OS_USER" -- "$@"
  else
    "$@"
  fi
}

# Directory of the recorded cluster, empty if none.
recorded_dir() {
  [[ -f "$ENV_FILE" ]] || return 0
  ( set +u; . "$ENV_FILE"; echo "${DP_AGG_CLUSTER_DIR:-}" )
}

is_running() {  # $1 = cluster dir
  [[ -n "$1" && -f "$1/data/postmaster.pid" ]] &&
    (cd / && as_pg "$PG_BINDIR/pg_ctl" -D "$1/data" status >/dev/null 2>&1)
}

cmd_stop() {
  local dir
  dir=$(recorded_dir)
  if [[ -n "$dir" ]]; then
    if is_running "$dir"; then
      (cd / && as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null) ||
        die "pg_ctl stop failed for $dir"
    fi
    # Only ever delete directories this script created.
    case "$dir" in
      "/tmp/$DIR_PREFIX".*) rm -rf -- "$dir" ;;
      *) echo "cluster.sh: not removing unexpected dir $dir" >&2 ;;
    esac
  fi
  rm -f -- "$ENV_FILE"
}

cmd_start() {
  local preload=dp_agg tcp=0
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --tcp) tcp=1; shift ;;
      --preload) [[ $# -ge 2 ]] || die "--preload needs an argument"; preload=$2; shift 2 ;;
      --preload=*) preload=${1#--preload=}; shift ;;
      *) die "unknown start option: $1" ;;
    esac
  done
  [[ -x "$PG_BINDIR/initdb" ]] ||
    die "no initdb in '$PG_BINDIR' (set PG_BINDIR or PG_CONFIG, or run make deps)"
  if [[ $(id -u) -eq 0 ]]; then
    id "$PG_OS_USER" >/dev/null 2>&1 || die "OS user $PG_OS_USER does not exist"
  fi

  cmd_stop

  local dir
  dir=$(mktemp -d "/tmp/$DIR_PREFIX.XXXXXX")
  chmod 755 "$dir"   # others may connect through the socket in it
  if [[ $(id -u) -eq 0 ]]; then chown "$PG_OS_USER:" "$dir"; fi

  local locale=C.UTF-8
  locale -a 2>/dev/null | grep -qix 'c\.utf-\?8' || locale=C

  local out
  # Over TCP nobody is trusted: host lines ask for a scram-sha-256 password, which only
  # roles given one (the demo's analyst) have.
  local auth=(-A trust)
  if [[ $tcp -eq 1 ]]; then auth=(--auth-local=trust --auth-host=scram-sha-256); fi
  if ! out=$(cd "$dir" && as_pg "$PG_BINDIR/initdb" -D "$dir/data" "${auth[@]}" -U postgres \
               --no-sync -E UTF8 --locale="$locale" 2>&1); then
    echo "$out" >&2
    rm -rf -- "$dir"
    die "initdb failed"
  fi

  {
    echo ""
    echo "# --- added by test/scripts/cluster.sh ---"
    if [[ $tcp -eq 1 ]]; then
      echo "listen_addresses = '127.0.0.1'"
      echo "password_encryption = 'scram-sha-256'"
    else
      echo "listen_addresses = ''"
    fi
    echo "unix_socket_directories = '$dir'"
    echo "port = $PORT"
    if [[ -n "$preload" ]]; then echo "shared_preload_libraries = '$preload'"; fi
    echo "max_worker_processes = 16"
    echo "max_parallel_workers_per_gather = 2"
    echo "log_min_messages = warning"
    echo "logging_collector = off"
    # Tests draw fresh noise on every run: the release cache (README "Reusing
    # released answers") is off unless a test turns it on for itself. The
    # demo keeps the default.
    if [[ ${DP_AGG_CLUSTER_NAME:-test} == test ]]; then echo "dp_agg.release_cache_period = 0"; fi
    if [[ -n "${DP_AGG_TEST_EXTRA_CONF:-}" ]]; then printf "%s\n" "$DP_AGG_TEST_EXTRA_CONF"; fi
  } >>"$dir/data/postgresql.conf"

  # Record before starting so that a later 'stop' can clean up whatever happens.
  printf 'export PGHOST=%s PGPORT=%s PGUSER=postgres PGDATABASE=postgres DP_AGG_CLUSTER_DIR=%s\n' \
    "$dir" "$PORT" "$dir" >"$ENV_FILE"

  if ! (cd "$dir" && as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null); then
    echo "cluster.sh: server failed to start; tail of $dir/server.log:" >&2
    tail -n 40 "$dir/server.log" >&2 2>/dev/null || true
    cmd_stop
    exit 1
  fi
  echo "cluster.sh: ${DP_AGG_CLUSTER_NAME:-test} cluster running in $dir (socket dir), port $PORT$(
    [[ $tcp -eq 1 ]] && echo " and 127.0.0.1:$PORT"), preload '${preload}'"
}

cmd_status() {
  local dir
  dir=$(recorded_dir)
  if is_running "$dir"; then
    echo "running: PGHOST=$dir PGPORT=$( (set +u; . "$ENV_FILE"; echo "$PGPORT") )"
  else
    echo "not running"
    return 3
  fi
}

cmd_env() {
  [[ -f "$ENV_FILE" ]] || die "no cluster recorded (run: $0 start)"
  cat "$ENV_FILE"
}

case "${1:-}" in
  start) shift; cmd_start "$@" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  *) echo "usage: $0 start [--preload LIB] [--tcp] | stop | status | env" >&2; exit 2 ;;
esac
