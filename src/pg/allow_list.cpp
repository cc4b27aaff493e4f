// The audited allow-list of what may be evaluated on protected rows.
//
// Each entry was read in PostgreSQL 15's source (src/backend/utils/adt) for
// every ereport/elog it can reach. An entry belongs here only if, for every
// input value, it returns a value without raising; the only condition it may
// have is a determined, deterministic collation, which the query rules check
// at planning from the query alone. Functions are named by their fmgroids.h
// constants: built-in OIDs are fixed for a major version, so the list cannot
// be widened by creating a function with a listed name.
//
// Not listed, on purpose (each can raise for some input):
//   narrowing casts (int8 -> int4: "integer out of range"), numeric -> float8
//   (overflow), date -> timestamp (out of range), varchar(n)/bpchar(n) length
//   coercion ("value too long"), arithmetic (overflow, division by zero),
//   casts through text (CoerceViaIO), domain checks, and cross-type
//   date/timestamp comparisons (they convert first).
#include "allow_list.h"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
}

#include <algorithm>
#include <array>

namespace dp_pg {

namespace {

constexpr Oid kTotalFunctions[] = {
    // Integer comparisons, same and cross width: compare two C integers.
    F_INT2EQ, F_INT2NE, F_INT2LT, F_INT2LE, F_INT2GT, F_INT2GE,
    F_INT4EQ, F_INT4NE, F_INT4LT, F_INT4LE, F_INT4GT, F_INT4GE,
    F_INT8EQ, F_INT8NE, F_INT8LT, F_INT8LE, F_INT8GT, F_INT8GE,
    F_INT24EQ, F_INT24NE, F_INT24LT, F_INT24LE, F_INT24GT, F_INT24GE,
    F_INT42EQ, F_INT42NE, F_INT42LT, F_INT42LE, F_INT42GT, F_INT42GE,
    F_INT28EQ, F_INT28NE, F_INT28LT, F_INT28LE, F_INT28GT, F_INT28GE,
    F_INT82EQ, F_INT82NE, F_INT82LT, F_INT82LE, F_INT82GT, F_INT82GE,
    F_INT48EQ, F_INT48NE, F_INT48LT, F_INT48LE, F_INT48GT, F_INT48GE,
    F_INT84EQ, F_INT84NE, F_INT84LT, F_INT84LE, F_INT84GT, F_INT84GE,
    // Float comparisons: float4/8_cmp_internal orders NaN above all, no error.
    F_FLOAT4EQ, F_FLOAT4NE, F_FLOAT4LT, F_FLOAT4LE, F_FLOAT4GT, F_FLOAT4GE,
    F_FLOAT8EQ, F_FLOAT8NE, F_FLOAT8LT, F_FLOAT8LE, F_FLOAT8GT, F_FLOAT8GE,
    F_FLOAT48EQ, F_FLOAT48NE, F_FLOAT48LT, F_FLOAT48LE, F_FLOAT48GT, F_FLOAT48GE,
    F_FLOAT84EQ, F_FLOAT84NE, F_FLOAT84LT, F_FLOAT84LE, F_FLOAT84GT, F_FLOAT84GE,
    // numeric comparisons: cmp_numerics handles NaN and infinities, no error.
    F_NUMERIC_EQ, F_NUMERIC_NE, F_NUMERIC_LT, F_NUMERIC_LE, F_NUMERIC_GT, F_NUMERIC_GE,
    // Text, bpchar and name comparisons: total given a determined collation
    // (check_collation_set raises otherwise; CollationIsTotal checks it).
    F_TEXTEQ, F_TEXTNE, F_TEXT_LT, F_TEXT_LE, F_TEXT_GT, F_TEXT_GE,
    F_BPCHAREQ, F_BPCHARNE, F_BPCHARLT, F_BPCHARLE, F_BPCHARGT, F_BPCHARGE,
    F_NAMEEQ, F_NAMENE, F_NAMELT, F_NAMELE, F_NAMEGT, F_NAMEGE,
    // Fixed-width and byte-wise comparisons.
    F_BOOLEQ, F_BOOLNE, F_BOOLLT, F_BOOLLE, F_BOOLGT, F_BOOLGE,
    F_CHAREQ, F_CHARNE, F_CHARLT, F_CHARLE, F_CHARGT, F_CHARGE,
    F_OIDEQ, F_OIDNE, F_OIDLT, F_OIDLE, F_OIDGT, F_OIDGE,
    F_UUID_EQ, F_UUID_NE, F_UUID_LT, F_UUID_LE, F_UUID_GT, F_UUID_GE,
    F_BYTEAEQ, F_BYTEANE, F_BYTEALT, F_BYTEALE, F_BYTEAGT, F_BYTEAGE,
    // Same-type date and time comparisons (infinities are ordinary values).
    F_DATE_EQ, F_DATE_NE, F_DATE_LT, F_DATE_LE, F_DATE_GT, F_DATE_GE,
    F_TIMESTAMP_EQ, F_TIMESTAMP_NE, F_TIMESTAMP_LT, F_TIMESTAMP_LE, F_TIMESTAMP_GT,
    F_TIMESTAMP_GE,
    F_TIMESTAMPTZ_EQ, F_TIMESTAMPTZ_NE, F_TIMESTAMPTZ_LT, F_TIMESTAMPTZ_LE, F_TIMESTAMPTZ_GT,
    F_TIMESTAMPTZ_GE,
    F_INTERVAL_EQ, F_INTERVAL_NE, F_INTERVAL_LT, F_INTERVAL_LE, F_INTERVAL_GT, F_INTERVAL_GE,
    // Enum comparisons: compare sort orders of two existing labels.
    F_ENUM_EQ, F_ENUM_NE, F_ENUM_LT, F_ENUM_LE, F_ENUM_GT, F_ENUM_GE,
    // Widening casts: every value of the source type exists in the target.
    F_INT4_INT2, F_INT8_INT2, F_INT8_INT4,
    F_FLOAT4_INT2, F_FLOAT4_INT4, F_FLOAT4_INT8,  // rounds, never overflows
    F_FLOAT8_INT2, F_FLOAT8_INT4, F_FLOAT8_INT8, F_FLOAT8_FLOAT4,
    F_NUMERIC_INT2, F_NUMERIC_INT4, F_NUMERIC_INT8,
    // To text: bpchar drops trailing blanks, name and "char" copy, bool spells.
    F_TEXT_BPCHAR, F_TEXT_NAME, F_TEXT_CHAR, F_TEXT_BOOL,
};

struct SortedOids {
  std::array<Oid, sizeof kTotalFunctions / sizeof kTotalFunctions[0]> oids{};
  SortedOids() {
    std::copy(std::begin(kTotalFunctions), std::end(kTotalFunctions), oids.begin());
    std::sort(oids.begin(), oids.end());
  }
};

}  // namespace

bool IsTotalFunction(Oid function) noexcept {
  static const SortedOids sorted;
  return std::binary_search(sorted.oids.begin(), sorted.oids.end(), function);
}

bool CollationIsTotal(bool needs_collation, Oid collation) {
  if (!needs_collation) return true;
  return OidIsValid(collation) && get_collation_isdeterministic(collation);
}

bool IsExactKeyType(Oid type) {
  type = getBaseType(type);
  switch (type) {
    case BOOLOID:
    case INT2OID:
    case INT4OID:
    case INT8OID:
    case OIDOID:
    case CHAROID:
    case NAMEOID:
    case TEXTOID:
    case VARCHAROID:
    case BYTEAOID:
    case UUIDOID:
    case DATEOID:
    case TIMESTAMPOID:
    // Equal timestamptz values are the same instant, printed in the session's
    // time zone: the same text for the whole group.
    case TIMESTAMPTZOID:
      return true;
    default:
      // An enum's equality is identity of its label.
      return type_is_enum(type);
  }
}

}  // namespace dp_pg
