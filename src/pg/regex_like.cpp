#include "regex_like.h"

extern "C" {
#include "catalog/pg_operator_d.h"
#include "nodes/makefuncs.h"
#include "utils/fmgroids.h"
}

#include <cstring>
#include <string>

#include "../core/regex_like.h"

namespace dp_pg {

namespace {

// The LIKE operator that says what the regular-expression function says,
// by its fixed OID (never looked up by name on the search path), or
// InvalidOid. Only the case-sensitive forms: `~*` compares each character
// with its other case, ILIKE lowercases both sides, and the two differ for
// some characters and collations (final sigma, German sharp s, Turkish i:
// review of issue 13), so `~*` and `!~*` stay refused.
constexpr Oid kTextNotLikeOperator = 1210;  // text !~~ text (textnlike)

Oid LikeOperatorFor(Oid function) {
  switch (function) {
    case F_TEXTREGEXEQ:
      return OID_TEXT_LIKE_OP;
    case F_TEXTREGEXNE:
      return kTextNotLikeOperator;
    default:
      return InvalidOid;
  }
}

void Translate(OpExpr* operation) {
  set_opfuncid(operation);
  const Oid like_opno = LikeOperatorFor(operation->opfuncid);
  if (!OidIsValid(like_opno) || list_length(operation->args) != 2) return;
  Node* pattern = static_cast<Node*>(lsecond(operation->args));
  while (IsA(pattern, RelabelType))
    pattern = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(pattern)->arg);
  if (!IsA(pattern, Const)) return;
  const auto* constant = reinterpret_cast<Const*>(pattern);
  if (constant->constisnull || constant->consttype != TEXTOID) return;
  text* value = DatumGetTextPP(constant->constvalue);
  // The LIKE pattern is at most 2 bytes per regex byte plus a leading and a
  // trailing %. It is copied out of its std::string, whose block ends before
  // the next PostgreSQL call: an ERROR's longjmp must not skip a destructor
  // (check_boundary.py rule (d)).
  const std::size_t length = VARSIZE_ANY_EXHDR(value);
  const std::size_t capacity = 2 * length + 2;
  char* buffer = static_cast<char*>(palloc(capacity));
  std::size_t like_length = 0;
  bool translated = false;
  {
    std::string like;
    translated =
        dp::SimpleRegexAsLike(VARDATA_ANY(value), length, &like) && like.size() <= capacity;
    if (translated) std::memcpy(buffer, like.data(), like.size());
    like_length = like.size();
  }
  if (!translated) {
    pfree(buffer);
    return;
  }
  Const* like_pattern =
      makeConst(TEXTOID, -1, constant->constcollid, -1,
                PointerGetDatum(cstring_to_text_with_len(buffer, static_cast<int>(like_length))),
                false, false);
  like_pattern->location = constant->location;
  operation->opno = like_opno;
  operation->opfuncid = get_opcode(like_opno);
  lsecond(operation->args) = like_pattern;
}

bool TranslateWalker(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), DP_EXPRESSION_WALKER(TranslateWalker),
                             context, 0);
  if (IsA(node, OpExpr)) Translate(reinterpret_cast<OpExpr*>(node));
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(TranslateWalker), context);
}

}  // namespace

void TranslateSimpleRegexes(Query* query) {
  TranslateWalker(reinterpret_cast<Node*>(query), nullptr);
}

}  // namespace dp_pg
