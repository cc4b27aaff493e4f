// PostgreSQL's C headers, included once with C linkage for the C++ layer.
#ifndef DP_AGG_PG_INCLUDES_H
#define DP_AGG_PG_INCLUDES_H

extern "C" {
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "common/shortest_dec.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/nodeAgg.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
}

// PostgreSQL 15 declares expression_tree_walker as taking `bool (*)()`; 16
// and later take a typed callback. This cast compiles against both.
#define DP_EXPRESSION_WALKER(function) \
  reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(function))

#endif  // DP_AGG_PG_INCLUDES_H
