# dp_agg: differentially private aggregates for PostgreSQL.
#
# On a fresh Debian bookworm machine, as root:
#   make demo   install what is missing, build, start a throwaway cluster, show it at work
#   make test   the same set-up, then every test suite
#   make upstream-regress   PostgreSQL's own regression suite with dp_agg preloaded (minutes;
#                           not part of make test)
#
# The PGXS part below needs pg_config from postgresql-server-dev-15; the
# top-level targets install it first, so this Makefile works without it.

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

.PHONY: deps build unit test demo stop bench upstream-regress

deps:
	bash test/scripts/ensure_deps.sh

# Build and install the extension (a sub-make, so PGXS is read after deps).
build: deps
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory install

unit: deps
	$(MAKE) --no-print-directory -C test/unit run

test: deps
	bash test/scripts/run_all_tests.sh

demo: build
	bash test/scripts/demo.sh

stop:
	bash test/scripts/cluster.sh stop

bench: build
	bash test/scripts/cluster.sh start
	bash test/bench/bench_aggregates.sh && bash test/bench/bench_ledger.sh && \
	  bash test/bench/bench_restriction.sh && bash test/bench/bench_accuracy.sh; \
	  status=$$?; bash test/scripts/cluster.sh stop; exit $$status

# PostgreSQL's own regression suite, without and with dp_agg preloaded (takes minutes).
upstream-regress: build
	bash test/scripts/pg_upstream_regress.sh
