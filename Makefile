# dp_agg: differentially private aggregates for PostgreSQL.
#
# On a fresh Debian bookworm machine, as root:
#   make deps   install the Debian packages needed to build and test (apt-get)
#   make demo   install what is missing, build, start a throwaway cluster, show it at work
#               (DEMO_TCP=1: also on 127.0.0.1 for BI tools; make stop removes it)
#   make test   the same set-up, then every test suite
#   make lint   check formatting (clang-format) and static checks (cppcheck, -Werror)
#   make format reformat the C/C++ sources with .clang-format
#   make upstream-regress   PostgreSQL's own regression suite with dp_agg preloaded (minutes;
#                           not part of make test)
# Only deps, demo and test install OS packages: the PGXS targets (make, make install,
# make installcheck) and the others never do (they say what is missing instead).
#
# The PGXS part below needs pg_config from postgresql-server-dev-15 (make deps
# installs it); without it this Makefile says so instead of failing obscurely.

EXTENSION = dp_agg
MODULE_big = dp_agg
DATA = sql/dp_agg--0.1.0.sql

CORE_SOURCES = $(sort $(wildcard src/core/*.cpp))
PG_SOURCES = $(sort $(wildcard src/pg/*.cpp))
OBJS = $(CORE_SOURCES:.cpp=.o) $(PG_SOURCES:.cpp=.o)

# pg_regress suites (sql/NAME.sql against expected/NAME.out)
REGRESS = setup errors count sum avg properties parallel budget gaussian quantile select restricted restricted_holes breaches crash_findings
REGRESS_OPTS = --load-extension=dp_agg

PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-register
SHLIB_LINK = -lcrypto -lmpfr -lgmp -lstdc++
# Debian's server is built with LLVM JIT; we ship no bitcode.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else
all:
	@echo "pg_config/PGXS not found: run 'make deps' (or 'make test' / 'make demo') first." >&2
	@exit 1
endif

.PHONY: deps deps-build build unit test demo stop bench upstream-regress lint format

# Everything make test needs (JDK, ODBC, Python modules, GoogleTest, ...).
deps:
	bash test/scripts/ensure_deps.sh test

# Only what building the extension and running the demo need.
deps-build:
	bash test/scripts/ensure_deps.sh build

# Build and install the extension (a sub-make, so PGXS is read after deps
# when `make demo` installed them first). Never installs OS packages.
build:
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory install

unit:
	$(MAKE) --no-print-directory -C test/unit run

test: deps
	bash test/scripts/run_all_tests.sh

# DEMO_TCP=1: the demo cluster also listens on 127.0.0.1 (scram-sha-256) for BI tools.
demo: deps-build
	$(MAKE) --no-print-directory build
	DEMO_TCP=$(DEMO_TCP) bash test/scripts/demo.sh

# Stops and removes the demo cluster (make test never touches it).
stop:
	DP_AGG_CLUSTER_NAME=demo bash test/scripts/cluster.sh stop

bench: deps build
	bash test/scripts/cluster.sh start
	bash test/bench/bench_aggregates.sh && bash test/bench/bench_ledger.sh && \
	  bash test/bench/bench_restriction.sh; \
	  status=$$?; bash test/scripts/cluster.sh stop; exit $$status

# PostgreSQL's own regression suite, without and with dp_agg preloaded (takes minutes).
upstream-regress: build
	bash test/scripts/pg_upstream_regress.sh

# Formatting and static checks (test/lint/lint.sh); installs nothing.
lint:
	LINT_CXX='$(CXX)' LINT_CXXFLAGS='$(CPPFLAGS) $(CXXFLAGS) $(PG_CXXFLAGS)' bash test/lint/lint.sh

# Reformat every C/C++ source with .clang-format (then lint checks them all).
format:
	git ls-files '*.c' '*.cpp' '*.h' | xargs clang-format -i
	printf '%s\n' '# Files not yet formatted with .clang-format (make lint skips them).' \
	  >test/lint/format_pending.txt
