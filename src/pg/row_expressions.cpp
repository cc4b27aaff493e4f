#include "row_expressions.h"

extern "C" {
#include "catalog/pg_language.h"
#include "utils/array.h"
#include "utils/regproc.h"
}

#include "allow_list.h"
#include "constant_arguments.h"
#include "refusal.h"
#include "refusal_advice.h"
#include "settings.h"

namespace dp_pg {

namespace {

struct RowCheck {
  const char* place;  // "WHERE", "GROUP BY", ... for messages
  bool having;  // HAVING: aggregates are leaves
  bool gated;  // groups may be suppressed after HAVING runs
};

// How much a restricted query may evaluate on each protected row (README
// "Work per row"). Every node judged by CheckRowWalker counts once (an
// element of a constant array once each: `x IN (...)` compares with each);
// each call of a function whose total version caps its work (HasWorkCap:
// text functions, numeric * / % ...) counts against a second limit. With
// the caps of total_functions.cpp this bounds the time one row's evaluation
// can add to a query: what a CASE reaching the expensive branch only for a
// matching row can make visible. The limits are public; a query over them
// is refused from its text alone, before anything is charged.
constexpr int kMaxRowExpressionNodes = 1000;
constexpr int kMaxWorkCappedCalls = 16;

// Counts of the statement being judged (ResetRowExpressionCounts).
int row_expression_nodes = 0;
int work_capped_calls = 0;

void CountNode(Node* node) {
  int nodes = 1;
  if (IsA(node, Const)) {
    const auto* constant = reinterpret_cast<Const*>(node);
    if (!constant->constisnull && OidIsValid(get_element_type(constant->consttype))) {
      ArrayType* array = DatumGetArrayTypeP(constant->constvalue);
      nodes += ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
    }
  }
  row_expression_nodes += nodes;
  if (row_expression_nodes > kMaxRowExpressionNodes) {
    char detail[512];
    snprintf(detail, sizeof detail,
             "The expressions a query evaluates on protected rows (WHERE, JOIN ... ON, GROUP BY, "
             "HAVING, the select list, private aggregates' values and FILTER) may have at most "
             "%d nodes (each column, constant, operator and function call, and each element "
             "of a constant array, counts one), so that the work one row can cost is bounded.",
             kMaxRowExpressionNodes);
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED, "expressions over protected rows are too large", detail,
           "Simplify the expressions: shorter IN lists and CASE chains, or several queries.");
  }
}

void CountCall(Oid function) {
  if (!HasWorkCap(function)) return;
  if (++work_capped_calls > kMaxWorkCappedCalls) {
    char detail[512];
    snprintf(detail, sizeof detail,
             "A query may call text functions (lower, upper, LIKE, ILIKE, length, substring) "
             "and numeric *, /, %%, rounding, width_bucket or casts to float8 at most %d times "
             "in the expressions it evaluates on protected rows: each call can cost up to about "
             "a millisecond on one row (README \"Work per row\").",
             kMaxWorkCappedCalls);
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
           "too many calls of text or numeric functions over protected rows", detail,
           "Use fewer such calls, or split the query into several.");
  }
}

bool ContainsVarOutsideAggregates(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Var)) return true;
  if (IsA(node, Aggref)) return false;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ContainsVarOutsideAggregates), context);
}

[[noreturn]] void RefuseCollation(Oid function, const RowCheck* check) {
  char detail[512];
  snprintf(detail, sizeof detail,
           "It compares text in %s without a determined, deterministic collation (two "
           "different implicit collations meet, or the collation is nondeterministic), so it "
           "could fail, or compare loosely, for the rows that reach it.",
           check->place);
  char rule[256];
  snprintf(rule, sizeof rule, "%s over protected rows needs one deterministic collation",
           format_procedure(function));
  Refuse(ERRCODE_INDETERMINATE_COLLATION, rule, detail,
         "Add an explicit COLLATE \"C\" (or another deterministic collation) to one side of "
         "the comparison.");
}

bool ContainsVarOrParam(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Var) || IsA(node, Param)) return true;
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(ContainsVarOrParam), context);
}

// Whether a call over `arguments` compares or hashes text, so that it needs
// a collation.
bool NeedsCollation(List* arguments) {
  ListCell* cell;
  foreach (cell, arguments) {
    if (type_is_collatable(exprType(static_cast<Node*>(lfirst(cell))))) return true;
  }
  return false;
}

// A call that remains in the expression after constant folding runs at
// execution, for the rows that reach it: its function must be total, and a
// collation-sensitive call needs a determined, deterministic collation.
void CheckCall(Oid function, List* arguments, Oid input_collation, Node* call,
               const RowCheck* check) {
  // In HAVING of a level whose groups are all released, a function of
  // aggregate answers runs once per released group: post-processing.
  if (check->having && !check->gated && contain_agg_clause(call) &&
      !ContainsVarOutsideAggregates(call, nullptr))
    return;
  // Test fault: the old rule that took a simple CASE's test value for a
  // constant folded at planning.
  if (TestFaultIs(TestFault::kCaseTestConstant) && !ContainsVarOrParam(call, nullptr)) return;
  // A function with a total version is accepted: the rewrite step puts
  // that version in its place (RewriteKind::kTotalArithmetic), in the same
  // folded expression that is judged here.
  if (!IsTotalFunction(function) && !HasTotalReplacement(function))
    RefuseNonTotalCall(function, call, check->place);
  CheckConstantArguments(function, arguments, call, check->place);
  if (!TestFaultIs(TestFault::kIndeterminateCollation) &&
      !CollationIsTotal(NeedsCollation(arguments), input_collation))
    RefuseCollation(function, check);
}

// Regular expressions (~, ~*, !~, !~*, SIMILAR TO, substring/regexp_* with
// a pattern) stay refused even with a constant pattern, which would compile
// the same for every row: matching is not total in the data. The engine
// (src/backend/regex) allocates its NFA/DFA state sets per match and raises
// "regular expression failed: out of memory" (REG_ESPACE) when a text drives
// them past their limits, and back-references make the run time grow
// exponentially in the text's length: an error or a slow query that depends
// on the rows. The simple patterns that are LIKE patterns in disguise
// (literals, ^, $, . and .*) never get here: the planner hook writes them as
// LIKE/ILIKE first (regex_like.h), whose MatchText allocates nothing and
// recurses at most as deep as the pattern's % count.
bool IsRegexFunction(Oid function) {
  HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(function));
  if (!HeapTupleIsValid(tuple)) return false;
  const auto* form = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple));
  const bool internal = form->prolang == INTERNALlanguageId || form->prolang == SQLlanguageId;
  const bool named_regex = strstr(NameStr(form->proname), "regex") != nullptr ||
                           strcmp(NameStr(form->proname), "similar_to_escape") == 0;
  ReleaseSysCache(tuple);
  return internal && named_regex;
}

const char* const kRegexDetail =
    "Matching a regular expression is not total in the data: its memory and running time "
    "depend on the text it is matched against (\"regular expression failed: out of memory\" "
    "for some texts, exponential back-tracking with back-references), so an error or a slow "
    "query would reveal protected rows. dp_agg runs only simple patterns of ~ and !~, as "
    "LIKE: literal characters (\\ before a special one), ^ first, $ last, . and .*.";

const char* const kRegexHint =
    "Write a simple pattern with ~ or !~ (column ~ '^s', column ~ 'north$', column ~ 'a.*b') "
    "or LIKE or ILIKE with a constant pattern: no classes, quantifiers, groups or alternation "
    "(column ~ '^(s|n)' is column LIKE 's%' OR column LIKE 'n%'; column ~* 'north' is column "
    "ILIKE '%north%').";

[[noreturn]] void RefuseExpression(Node* node, const RowCheck* check) {
  char detail[512];
  const bool can_fail =
      IsA(node, CoerceViaIO) || IsA(node, ArrayCoerceExpr) || IsA(node, CoerceToDomain);
  snprintf(detail, sizeof detail, "It would run on protected rows in %s. %s", check->place,
           can_fail ? "A cast through text, an array cast or a domain check fails on some "
                      "values, which would reveal them."
                    : "dp_agg runs there only expressions that it knows cannot fail.");
  char rule[256];
  if (IsA(node, CoerceViaIO))
    snprintf(rule, sizeof rule, "cast from %s to %s may not be applied to protected rows",
             format_type_be(
                 exprType(reinterpret_cast<Node*>(reinterpret_cast<CoerceViaIO*>(node)->arg))),
             format_type_be(reinterpret_cast<CoerceViaIO*>(node)->resulttype));
  else if (IsA(node, MinMaxExpr))
    snprintf(rule, sizeof rule, "GREATEST/LEAST may not be applied to protected rows");
  else
    snprintf(rule, sizeof rule, "expression not allowed on protected rows");
  RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, detail, ExpressionAdvice(node), exprLocation(node),
           "");
}

// Walks an expression after constant folding. Every node left is evaluated
// at execution, possibly only for the rows that reach it (CASE, FILTER,
// AND), so every node must be unable to fail: default deny. It walks a
// private copy, so filling in the operators' function OIDs (set_opfuncid)
// changes nothing of the query.
bool CheckRowWalker(Node* node, RowCheck* check) {
  if (node == nullptr) return false;
  check_stack_depth();
  if (!IsA(node, List)) CountNode(node);
  switch (nodeTag(node)) {
    case T_Var:
      if (reinterpret_cast<Var*>(node)->varlevelsup > 0)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
               "a query over protected rows refers to an outer query",
               "A correlated subquery or LATERAL reference would run once per outer row.",
               kAggregateHint);
      return false;
    case T_Const:
    case T_CaseTestExpr:  // the value of a simple CASE: a leaf; its comparisons are calls
    case T_SQLValueFunction:
      return false;
    case T_Param:
      if (reinterpret_cast<Param*>(node)->paramkind != PARAM_EXTERN)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
               "a query over protected rows uses a value computed by another query",
               "Subquery results may depend on other rows.", kAggregateHint);
      return false;
    case T_Aggref:
      if (!check->having)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "aggregate in a row expression",
               "An aggregate cannot appear here.", kAggregateHint);
      return false;  // its arguments are checked with the aggregate itself
    case T_FuncExpr: {
      auto* call = reinterpret_cast<FuncExpr*>(node);
      if (call->funcretset)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set-returning function over protected rows",
               "It would repeat protected rows.", kAggregateHint);
      CheckCall(call->funcid, call->args, call->inputcollid, node, check);
      CountCall(call->funcid);
      break;
    }
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr: {
      auto* operation = reinterpret_cast<OpExpr*>(node);
      set_opfuncid(operation);
      if (operation->opretset)
        Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE, "set-returning operator over protected rows",
               "It would repeat protected rows.", kAggregateHint);
      CheckCall(operation->opfuncid, operation->args, operation->inputcollid, node, check);
      CountCall(operation->opfuncid);
      break;
    }
    case T_ScalarArrayOpExpr: {
      auto* operation = reinterpret_cast<ScalarArrayOpExpr*>(node);
      set_sa_opfuncid(operation);
      // The array side is folded to a constant or is a parameter; the
      // operator runs per element with the same collation.
      CheckCall(operation->opfuncid, list_make1(linitial(operation->args)), operation->inputcollid,
                node, check);
      break;
    }
    case T_RowCompareExpr: {
      auto* comparison = reinterpret_cast<RowCompareExpr*>(node);
      ListCell* op_cell;
      ListCell* collation_cell;
      ListCell* left_cell;
      forthree(op_cell, comparison->opnos, collation_cell, comparison->inputcollids, left_cell,
               comparison->largs)
          CheckCall(get_opcode(lfirst_oid(op_cell)), list_make1(lfirst(left_cell)),
                    lfirst_oid(collation_cell), node, check);
      break;
    }
    case T_CoerceViaIO: {
      // A cast to text (or unbounded varchar: varcharin with typmod -1
      // cannot fail) from a type whose output function is total. Casts
      // from text to other types parse, and parsing fails on bad values.
      auto* cast = reinterpret_cast<CoerceViaIO*>(node);
      const Oid target = getBaseType(cast->resulttype);
      if ((target != TEXTOID && target != VARCHAROID) ||
          !IsTotalTextCastSource(exprType(reinterpret_cast<Node*>(cast->arg))))
        RefuseExpression(node, check);
      break;
    }
    case T_BoolExpr:
    case T_NullTest:
    case T_BooleanTest:
    case T_RelabelType:
    case T_CollateExpr:
    case T_CaseExpr:
    case T_CaseWhen:
    case T_CoalesceExpr:
    case T_List:
    case T_TargetEntry:
      break;
    default:
      // Casts through text, domain checks, arrays built from rows (which
      // can exceed the size limit), GREATEST/LEAST, subscripts and anything
      // else not analysed here. Constants were folded before this walk.
      RefuseExpression(node, check);
  }
  return expression_tree_walker(node, DP_EXPRESSION_WALKER(CheckRowWalker), check);
}

// Judges `expression` as PostgreSQL will run it: constant sub-expressions
// folded first, exactly as the planner folds them (an error such as 1/0 is
// then raised while planning, whatever the data). Query parameters are not
// folded: a generic plan evaluates them per row. Folds a copy: the query is
// not modified.
void CheckFolded(Node* expression, RowCheck check) {
  if (expression == nullptr) return;
  Node* folded = eval_const_expressions(nullptr, static_cast<Node*>(copyObjectImpl(expression)));
  CheckRowWalker(folded, &check);
}

}  // namespace

[[noreturn]] void RefuseNonTotalFunction(Oid function, const char* place) {
  RefuseNonTotalCall(function, nullptr, place);
}

[[noreturn]] void RefuseNonTotalCall(Oid function, const Node* call, const char* place) {
  // Named as the user wrote it: an operator by its symbol and operand
  // types (not its internal function, such as textlike), a function by its
  // SQL name and argument types.
  Oid operator_oid = InvalidOid;
  if (call != nullptr && (IsA(call, OpExpr) || IsA(call, DistinctExpr) || IsA(call, NullIfExpr)))
    operator_oid = reinterpret_cast<const OpExpr*>(call)->opno;
  else if (call != nullptr && IsA(call, ScalarArrayOpExpr))
    operator_oid = reinterpret_cast<const ScalarArrayOpExpr*>(call)->opno;
  char detail[512];
  snprintf(detail, sizeof detail,
           "It would run on protected rows in %s and can raise an error for some values, "
           "which would reveal them: dp_agg runs there only functions that never fail.",
           place);
  char rule[256];
  const char* spelling = nullptr;
  if (OidIsValid(operator_oid)) {
    spelling = get_opname(operator_oid);
    // LIKE and ILIKE are the operators ~~ and ~~*: say which one was written.
    const char* keyword = nullptr;
    if (strcmp(spelling, "~~") == 0) keyword = "LIKE";
    if (strcmp(spelling, "!~~") == 0) keyword = "NOT LIKE";
    if (strcmp(spelling, "~~*") == 0) keyword = "ILIKE";
    if (strcmp(spelling, "!~~*") == 0) keyword = "NOT ILIKE";
    if (keyword != nullptr) spelling = keyword;
    if (IsRegexFunction(function)) {
      snprintf(rule, sizeof rule,
               "regular expression match (operator %s) may not be applied to protected rows",
               format_operator(operator_oid));
      RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, kRegexDetail, kRegexHint, exprLocation(call),
               spelling);
    }
    if (keyword != nullptr)
      snprintf(rule, sizeof rule, "%s (operator %s) may not be applied to protected rows", keyword,
               format_operator(operator_oid));
    else
      snprintf(rule, sizeof rule, "operator %s may not be applied to protected rows",
               format_operator(operator_oid));
  } else if (CastSpelling(call)[0] != '\0') {
    // A cast: named as written (CAST(x AS integer), x::integer, a driver's
    // {fn YEAR(x)}), not by the function that implements it (int4(numeric)).
    snprintf(rule, sizeof rule, "%s may not be applied to protected rows", CastSpelling(call));
    spelling = "";
  } else {
    snprintf(rule, sizeof rule, "function %s may not be applied to protected rows",
             format_procedure(function));
    spelling = get_func_name(function);
    if (IsRegexFunction(function))
      RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, kRegexDetail, kRegexHint, exprLocation(call),
               spelling);
  }
  RefuseAt(ERRCODE_INSUFFICIENT_PRIVILEGE, rule, detail, NonTotalCallAdvice(function, call),
           exprLocation(call), spelling);
}

void ResetRowExpressionCounts() {
  row_expression_nodes = 0;
  work_capped_calls = 0;
}

void CheckRowExpression(Node* expression, const char* place) {
  CheckFolded(expression, RowCheck{place, false, false});
}

void CheckHavingExpression(Node* having, bool groups_gated) {
  CheckFolded(having, RowCheck{"HAVING", true, groups_gated});
}

}  // namespace dp_pg
