#include "release_key.h"

#include <cstring>

extern "C" {
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "nodes/params.h"
#include "parser/parsetree.h"
#include "utils/guc_tables.h"
#include "utils/rel.h"
}

#include "aggregate_catalog.h"
#include "settings.h"

namespace dp_pg {

namespace {

// Settings that change what a query computes while it runs (casts to and
// from text, date arithmetic in a time zone, to_char, name lookups at run
// time). Their values, as SHOW prints them, are part of every key.
const char* const kMeaningSettings[] = {
    "TimeZone",
    "DateStyle",
    "IntervalStyle",
    "extra_float_digits",
    "lc_monetary",
    "lc_numeric",
    "lc_time",
    "bytea_output",
    "search_path",
    "timezone_abbreviations",
    "default_text_search_config",
    "xmlbinary",
    "xmloption",
};

struct StatementWalk {
  bool has_private_aggregate;
  Bitmapset* parameters;
};

bool WalkStatement(Node* node, void* context) {
  if (node == nullptr) return false;
  auto* walk = static_cast<StatementWalk*>(context);
  if (IsA(node, Aggref) &&
      LookupPrivateAggregate(reinterpret_cast<Aggref*>(node)->aggfnoid) != nullptr)
    walk->has_private_aggregate = true;
  if (IsA(node, Param) && reinterpret_cast<Param*>(node)->paramkind == PARAM_EXTERN)
    walk->parameters = bms_add_member(walk->parameters, reinterpret_cast<Param*>(node)->paramid);
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(WalkStatement),
                             context, 0);
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(WalkStatement), context);
}

// Removes every " :location N" field from nodeToString's output. A token
// of the tree (a name, a string) never holds an unescaped blank, so the
// pattern can only be a field.
void RemoveLocations(char* text) {
  static const char kField[] = " :location ";
  const std::size_t field = sizeof kField - 1;
  char* out = text;
  const char* in = text;
  while (*in != '\0') {
    if (std::strncmp(in, kField, field) == 0 && (in == text || in[-1] != '\\')) {
      const char* value = in + field;
      if (*value == '-') ++value;
      if (*value >= '0' && *value <= '9') {
        while (*value >= '0' && *value <= '9') ++value;
        in = value;
        continue;
      }
    }
    *out++ = *in++;
  }
  *out = '\0';
}

pg_cryptohash_ctx* StartHash() {
  pg_cryptohash_ctx* hash = pg_cryptohash_create(PG_SHA256);
  if (hash == nullptr || pg_cryptohash_init(hash) < 0)
    elog(ERROR, "dp_agg: could not start a SHA-256 hash: %s", pg_cryptohash_error(hash));
  return hash;
}

void HashBytes(pg_cryptohash_ctx* hash, const void* data, std::size_t length) {
  if (pg_cryptohash_update(hash, static_cast<const uint8*>(data), length) < 0)
    elog(ERROR, "dp_agg: could not hash: %s", pg_cryptohash_error(hash));
}

void HashInteger(pg_cryptohash_ctx* hash, int64 value) { HashBytes(hash, &value, sizeof value); }

// A string with its length, so that concatenations cannot collide.
void HashText(pg_cryptohash_ctx* hash, const char* text) {
  if (text == nullptr) {
    HashInteger(hash, -1);
    return;
  }
  const std::size_t length = std::strlen(text);
  HashInteger(hash, static_cast<int64>(length));
  HashBytes(hash, text, length);
}

void FinishHash(pg_cryptohash_ctx* hash, unsigned char out[kReleaseKeyBytes]) {
  if (pg_cryptohash_final(hash, out, kReleaseKeyBytes) < 0)
    elog(ERROR, "dp_agg: could not finish a SHA-256 hash: %s", pg_cryptohash_error(hash));
  pg_cryptohash_free(hash);
}

// The value of external parameter `id`, as its type, null flag and binary
// image (detoasted and decompressed): what the query computes with.
void AddParameter(pg_cryptohash_ctx* hash, ParamListInfo bound, int id) {
  HashInteger(hash, id);
  if (bound == nullptr || id < 1 || id > bound->numParams) {
    HashInteger(hash, -1);
    return;
  }
  ParamExternData workspace;
  const ParamExternData* parameter = bound->paramFetch != nullptr
                                         ? bound->paramFetch(bound, id, false, &workspace)
                                         : &bound->params[id - 1];
  if (parameter == nullptr || !OidIsValid(parameter->ptype)) {
    HashInteger(hash, -1);
    return;
  }
  HashInteger(hash, parameter->ptype);
  HashInteger(hash, parameter->isnull ? 1 : 0);
  if (parameter->isnull) return;
  int16 length = 0;
  bool by_value = false;
  get_typlenbyval(parameter->ptype, &length, &by_value);
  const Datum value = parameter->value;
  if (by_value) {
    char image[sizeof(Datum)];
    std::memset(image, 0, sizeof image);
    store_att_byval(image, value, length);
    HashBytes(hash, image, length);
  } else if (length == -1) {
    struct varlena* flat =
        pg_detoast_datum_packed(reinterpret_cast<struct varlena*>(DatumGetPointer(value)));
    HashInteger(hash, static_cast<int64>(VARSIZE_ANY_EXHDR(flat)));
    HashBytes(hash, VARDATA_ANY(flat), VARSIZE_ANY_EXHDR(flat));
  } else if (length == -2) {
    HashText(hash, DatumGetCString(value));
  } else {
    HashBytes(hash, DatumGetPointer(value), length);
  }
}

// Custom settings (a name with a dot: app.tenant, request.jwt.claims, any
// extension's) are what row security policies, views and functions read
// with current_setting() to tell apart the users of one pooled role
// (PostgREST, multi-tenant applications): an answer released under one
// value must never be reused under another. Every one of them, set or
// not, is part of every key, in name order, except dp_agg's own (the ones
// that change a query's meaning are in its tree or above already).
int CompareSettingNames(const void* left, const void* right) {
  return strcmp(*static_cast<const char* const*>(left), *static_cast<const char* const*>(right));
}

void AddCustomSettings(pg_cryptohash_ctx* hash) {
  struct config_generic** variables = get_guc_variables();
  const int count = GetNumConfigOptions();
  const char** names = static_cast<const char**>(palloc(sizeof(char*) * Max(count, 1)));
  int custom = 0;
  for (int i = 0; i < count; ++i) {
    const char* name = variables[i]->name;
    if (std::strchr(name, '.') == nullptr || pg_strncasecmp(name, "dp_agg.", 7) == 0) continue;
    names[custom++] = name;
  }
  qsort(names, custom, sizeof(char*), CompareSettingNames);
  HashInteger(hash, custom);
  for (int i = 0; i < custom; ++i) {
    HashText(hash, names[i]);
    HashText(hash, GetConfigOption(names[i], true, false));
  }
  pfree(names);
}

// insecure_test_fault cache_invalidated_by_writes: the key also covers the
// version of every row the query's tables hold (ctid and xmin of each
// visible tuple), so that any committed write to them drops the stored
// answer: the design issue 27 rules out, since the analyst would see from
// a fresh charge that someone's row changed. The neighbour fuzzer and the
// audit must catch it.
void AddTableVersions(pg_cryptohash_ctx* hash, PlannedStmt* plan, Snapshot snapshot) {
  ListCell* cell;
  foreach (cell, plan->rtable) {
    const auto* entry = static_cast<RangeTblEntry*>(lfirst(cell));
    if (entry->rtekind != RTE_RELATION || entry->relkind != RELKIND_RELATION) continue;
    Relation relation = table_open(entry->relid, AccessShareLock);
    TableScanDesc scan = table_beginscan(relation, snapshot, 0, nullptr);
    HeapTuple tuple;
    while ((tuple = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
      const TransactionId xmin = HeapTupleHeaderGetRawXmin(tuple->t_data);
      HashBytes(hash, &tuple->t_self, sizeof tuple->t_self);
      HashBytes(hash, &xmin, sizeof xmin);
    }
    table_endscan(scan);
    table_close(relation, NoLock);
  }
}

}  // namespace

bool DescribeCachedStatement(Query* query, CachedStatement* statement) {
  if (query->commandType != CMD_SELECT || query->utilityStmt != nullptr || query->hasModifyingCTE ||
      query->rowMarks != NIL)
    return false;
  StatementWalk walk{false, nullptr};
  (void)WalkStatement(reinterpret_cast<Node*>(query), &walk);
  if (!walk.has_private_aggregate) return false;
  auto* copy = static_cast<Query*>(copyObjectImpl(query));
  copy->queryId = 0;
  copy->stmt_location = 0;
  copy->stmt_len = 0;
  char* text = nodeToString(copy);
  RemoveLocations(text);
  pg_cryptohash_ctx* hash = StartHash();
  HashText(hash, "dp_agg statement digest 1");
  HashText(hash, text);
  unsigned char digest[kReleaseKeyBytes];
  FinishHash(hash, digest);
  ReleaseKeyToHex(digest, statement->digest);
  statement->parameters = NIL;
  int id = -1;
  while ((id = bms_next_member(walk.parameters, id)) >= 0)
    statement->parameters = lappend_int(statement->parameters, id);
  pfree(text);
  return true;
}

void ComputeReleaseKey(const char* digest, List* parameters, ParamListInfo bound,
                       int period_seconds, PlannedStmt* plan, Snapshot snapshot,
                       unsigned char key[kReleaseKeyBytes]) {
  pg_cryptohash_ctx* hash = StartHash();
  HashText(hash, "dp_agg release key 1");
  HashText(hash, digest);
  HashInteger(hash, MyDatabaseId);
  HashInteger(hash, GetSessionUserId());
  HashInteger(hash, GetUserId());
  HashInteger(hash, period_seconds);
  ListCell* cell;
  foreach (cell, parameters) AddParameter(hash, bound, lfirst_int(cell));
  for (const char* name : kMeaningSettings) {
    HashText(hash, name);
    HashText(hash, GetConfigOption(name, true, false));
  }
  AddCustomSettings(hash);
  if (TestFaultIs(TestFault::kCacheInvalidatedByWrites)) AddTableVersions(hash, plan, snapshot);
  FinishHash(hash, key);
}

void ReleaseKeyToHex(const unsigned char key[kReleaseKeyBytes], char hex[kDigestHexLength + 1]) {
  static const char kDigits[] = "0123456789abcdef";
  for (int i = 0; i < kReleaseKeyBytes; ++i) {
    hex[2 * i] = kDigits[key[i] >> 4];
    hex[2 * i + 1] = kDigits[key[i] & 0xF];
  }
  hex[kDigestHexLength] = '\0';
}

}  // namespace dp_pg
