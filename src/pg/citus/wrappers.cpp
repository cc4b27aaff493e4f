// dp_agg on Citus: Citus's aggregate wrappers around private aggregates
// (wrappers.h).
#include "wrappers.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "optimizer/tlist.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/typcache.h"
#include "tcop/pquery.h"
#include "utils/rel.h"
#include "nodes/extensible.h"
}

#include "../aggregate_catalog.h"
namespace dp_pg {

// Citus creates both in pg_catalog with its extension (so normal OIDs).
Wrapper WrapperOf(Oid function) {
  if (function < FirstNormalObjectId) return Wrapper::kNone;
  if (get_func_namespace(function) != PG_CATALOG_NAMESPACE) return Wrapper::kNone;
  char* name = get_func_name(function);
  if (name == nullptr) return Wrapper::kNone;
  Wrapper wrapper = Wrapper::kNone;
  if (std::strcmp(name, "worker_partial_agg") == 0) wrapper = Wrapper::kWorkerPartial;
  if (std::strcmp(name, "coord_combine_agg") == 0) wrapper = Wrapper::kCoordinatorCombine;
  pfree(name);
  return wrapper;
}

Node* StripRelabel(Node* node) {
  while (node != nullptr && IsA(node, RelabelType))
    node = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(node)->arg);
  return node;
}

// The inner aggregate of a wrapper call: its first argument, a constant.
// InvalidOid when it is not a constant (then nobody can tell what it wraps).
Oid InnerAggregateOid(Aggref* outer) {
  if (list_length(outer->args) < 2) return InvalidOid;
  Node* first =
      StripRelabel(reinterpret_cast<Node*>(static_cast<TargetEntry*>(linitial(outer->args))->expr));
  if (first == nullptr || !IsA(first, Const)) return InvalidOid;
  const auto* constant = reinterpret_cast<Const*>(first);
  if (constant->constisnull) return InvalidOid;
  return DatumGetObjectId(constant->constvalue);
}

// A wrapper around a private aggregate, or one whose inner aggregate is not
// known from the query alone (treated as private: fail closed).
bool WrapsPrivateAggregate(Aggref* outer) {
  const Oid inner = InnerAggregateOid(outer);
  return !OidIsValid(inner) || LookupPrivateAggregate(inner) != nullptr;
}

namespace {

// The fields of a record constant, as constants.
List* RecordFields(Const* record) {
  HeapTupleHeader header = DatumGetHeapTupleHeader(record->constvalue);
  TupleDesc descriptor =
      lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(header), HeapTupleHeaderGetTypMod(header));
  HeapTupleData tuple;
  tuple.t_len = HeapTupleHeaderGetDatumLength(header);
  ItemPointerSetInvalid(&tuple.t_self);
  tuple.t_tableOid = InvalidOid;
  tuple.t_data = header;
  List* fields = NIL;
  for (int i = 0; i < descriptor->natts; ++i) {
    const Form_pg_attribute attribute = TupleDescAttr(descriptor, i);
    if (attribute->attisdropped) continue;
    bool is_null = false;
    const Datum value = heap_getattr(&tuple, i + 1, descriptor, &is_null);
    fields = lappend(fields,
                     makeConst(attribute->atttypid, attribute->atttypmod, attribute->attcollation,
                               attribute->attlen,
                               is_null ? static_cast<Datum>(0)
                                       : datumCopy(value, attribute->attbyval, attribute->attlen),
                               is_null, attribute->attbyval));
  }
  ReleaseTupleDesc(descriptor);
  return fields;
}

}  // namespace

// worker_partial_agg(oid, ROW(a, b, ...)) -> inner(a, b, ...): the same
// expressions, in the inner aggregate's argument order.
Aggref* InnerCall(Aggref* partial, Oid inner) {
  Node* packed = reinterpret_cast<Node*>(static_cast<TargetEntry*>(lsecond(partial->args))->expr);
  List* arguments = NIL;
  if (IsA(packed, RowExpr)) {
    arguments = reinterpret_cast<RowExpr*>(packed)->args;
  } else if (IsA(packed, Const) && !reinterpret_cast<Const*>(packed)->constisnull &&
             type_is_rowtype(reinterpret_cast<Const*>(packed)->consttype)) {
    // A ROW of constants only (dp_agg.group_selection(epsilon, delta)) is
    // folded into one record constant by the worker's planner: its fields.
    arguments = RecordFields(reinterpret_cast<Const*>(packed));
  } else {
    arguments = list_make1(packed);
  }
  Aggref* call = makeNode(Aggref);
  *call = *partial;
  call->aggfnoid = inner;
  call->aggtype = get_func_rettype(inner);
  call->args = NIL;
  call->aggargtypes = NIL;
  // The ROW has no collation; the value's own is the one the inner
  // aggregate would have been called with (dp_select compares text with it).
  call->inputcollid =
      arguments != NIL ? exprCollation(static_cast<Node*>(linitial(arguments))) : InvalidOid;
  AttrNumber position = 1;
  ListCell* cell;
  foreach (cell, arguments) {
    auto* expression = static_cast<Expr*>(lfirst(cell));
    call->args = lappend(call->args, makeTargetEntry(expression, position++, nullptr, false));
    call->aggargtypes =
        lappend_oid(call->aggargtypes, exprType(reinterpret_cast<Node*>(expression)));
  }
  return call;
}

[[noreturn]] void RefuseDistributed(const char* message, const char* detail, const char* hint) {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s", message),
                  errdetail("%s", detail), hint != nullptr ? errhint("%s", hint) : 0));
  pg_unreachable();
}

bool IsPrivateCitusReleaseCall(Aggref* outer) {
  return WrapperOf(outer->aggfnoid) == Wrapper::kCoordinatorCombine && WrapsPrivateAggregate(outer);
}

bool IsPrivateCitusWrapperCall(Aggref* outer) {
  return WrapperOf(outer->aggfnoid) != Wrapper::kNone && WrapsPrivateAggregate(outer);
}

Aggref* WorkerPartialInnerCall(Aggref* outer) {
  if (WrapperOf(outer->aggfnoid) != Wrapper::kWorkerPartial) return nullptr;
  const Oid inner = InnerAggregateOid(outer);
  if (!OidIsValid(inner) || LookupPrivateAggregate(inner) == nullptr) return nullptr;
  return InnerCall(outer, inner);
}

}  // namespace dp_pg
