#!/usr/bin/env bash
# Idempotently install the Debian packages dp_agg needs. Quick no-op when
# everything is already installed.
#
#   ensure_deps.sh build   build the extension and run the demo (make demo, make build)
#   ensure_deps.sh test    everything make test needs (default): the build set plus
#                          GoogleTest, the TAP, audit and fuzz tools and the real clients
#                          (JDK and pgjdbc, psycopg2/SQLAlchemy, psqlODBC with unixODBC)
set -euo pipefail

BUILD_PKGS=(
  postgresql-15 postgresql-server-dev-15 libpq-dev libssl-dev gcc g++ make pkg-config
  libmpfr-dev libgmp-dev
)
TEST_PKGS=(
  "${BUILD_PKGS[@]}"
  libgtest-dev googletest libbenchmark-dev libipc-run-perl
  python3-psycopg2 python3-scipy python3-numpy python3-matplotlib python3-sqlalchemy
  default-jdk-headless libpostgresql-jdbc-java
  unixodbc odbc-postgresql python3-pyodbc
)

case "${1:-test}" in
  build|demo) PKGS=("${BUILD_PKGS[@]}") ;;
  test) PKGS=("${TEST_PKGS[@]}") ;;
  *) echo "usage: $0 [build|test]" >&2; exit 2 ;;
esac

# Prints the packages (from the arguments) that are not fully installed.
not_installed() {
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || echo "$p"
  done
}

mapfile -t missing < <(not_installed "${PKGS[@]}")
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "ensure_deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "ensure_deps: missing ${missing[*]}; not root and sudo not available - run this script as root" >&2
    exit 1
  fi
fi

# Wait for a concurrent apt/dpkg run rather than failing on its lock.
apt() {
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 -qq "$@" >/dev/null
}

apt update
if ! apt install -y --no-install-recommends "${missing[@]}"; then
  # Typically "dpkg was interrupted": finish pending configuration and retry once.
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive dpkg --configure -a >/dev/null
  apt install -y --no-install-recommends "${missing[@]}"
fi

# Packages left "unpacked" by an interrupted run count as present for apt-get
# ("already the newest version") but are not configured: finish them.
mapfile -t still < <(not_installed "${missing[@]}")
if [[ ${#still[@]} -gt 0 ]]; then
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive dpkg --configure -a >/dev/null || true
  mapfile -t still < <(not_installed "${missing[@]}")
fi
if [[ ${#still[@]} -gt 0 ]]; then
  echo "ensure_deps: not fully installed after apt-get: ${still[*]}" >&2
  exit 1
fi
echo "ensure_deps: installed ${missing[*]}"
