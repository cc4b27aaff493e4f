// dp_agg on Citus: fields of Citus's distributed plan, read from its text
// (plan_text.h).
#include "plan_text.h"

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

#include "wrappers.h"
namespace dp_pg {

namespace {

// The text of field `name` of the node whose text starts at `node` ('{'):
// from after ":name " to the end of its value, at the node's own depth.
// Backslash escapes the next character (outToken).
bool FieldText(const char* node, const char* name, const char** begin, const char** end) {
  const std::size_t name_length = std::strlen(name);
  int depth = 0;
  for (const char* p = node; *p != '\0'; ++p) {
    if (*p == '\\') {
      if (p[1] != '\0') ++p;
      continue;
    }
    if (*p == '{' || *p == '(') ++depth;
    if (*p == '}' || *p == ')') {
      if (--depth == 0) return false;
    }
    if (depth == 1 && *p == ':' && std::strncmp(p + 1, name, name_length) == 0 &&
        p[1 + name_length] == ' ') {
      const char* value = p + 2 + name_length;
      // the value: a balanced {...} / (...) or one token
      int value_depth = 0;
      const char* q = value;
      for (; *q != '\0'; ++q) {
        if (*q == '\\') {
          if (q[1] != '\0') ++q;
          continue;
        }
        if (*q == '{' || *q == '(') ++value_depth;
        if (*q == '}' || *q == ')') {
          if (value_depth == 0) break;
          if (--value_depth == 0) {
            ++q;
            break;
          }
        }
        if (value_depth == 0 && *q == ' ') break;
      }
      *begin = value;
      *end = q;
      return true;
    }
  }
  return false;
}

// Number of top-level nodes ({...}) or values in a list's text.
int ListLength(const char* begin, const char* end) {
  if (end - begin >= 2 && std::strncmp(begin, "<>", 2) == 0) return 0;
  int depth = 0;
  int items = 0;
  bool in_token = false;
  for (const char* p = begin; p < end; ++p) {
    if (*p == '\\') {
      ++p;
      continue;
    }
    if (*p == '{' || *p == '(') {
      if (depth == 1 && *p == '{') ++items;
      ++depth;
      continue;
    }
    if (*p == '}' || *p == ')') {
      --depth;
      continue;
    }
    if (depth == 1) {
      const bool token = *p != ' ';
      if (token && !in_token && *p != 'o' && *p != 'i') ++items;  // "(o 1 2)": skip the tag
      in_token = token;
    }
  }
  return items;
}

// Whether a task in `begin`..`end` (a taskList's text) is placed on the
// coordinator's group 0, or the tasks name no placement group at all (then
// where they run cannot be told: fail closed).
bool TaskOnCoordinatorGroup(const char* begin, const char* end) noexcept {
  static const char kField[] = ":groupId ";
  const std::size_t field_length = sizeof kField - 1;
  int placements = 0;
  for (const char* p = begin; p + field_length <= end; ++p) {
    if (std::strncmp(p, kField, field_length) != 0) continue;
    ++placements;
    if (std::strtol(p + field_length, nullptr, 10) == 0) return true;
  }
  return placements == 0 && ListLength(begin, end) > 0;
}

}  // namespace

bool ReadWorkerJob(CustomScan* scan, WorkerJob* job) {
  if (scan == nullptr || scan->methods == nullptr || scan->methods->CustomName == nullptr ||
      std::strncmp(scan->methods->CustomName, "Citus ", 6) != 0 ||
      list_length(scan->custom_private) != 1)
    return false;
  Node* node = static_cast<Node*>(linitial(scan->custom_private));
  if (node == nullptr || !IsA(node, ExtensibleNode) ||
      std::strcmp(reinterpret_cast<ExtensibleNode*>(node)->extnodename, "DistributedPlan") != 0)
    return false;
  char* plan_text = nodeToString(node);
  const char* begin = nullptr;
  const char* end = nullptr;
  if (!FieldText(plan_text, "workerJob", &begin, &end) || *begin != '{') return false;
  // Copies in palloc'd memory (no C++ object with a destructor lives across
  // the PostgreSQL calls below, which may raise).
  char* job_text = pnstrdup(begin, end - begin);
  if (FieldText(plan_text, "modLevel", &begin, &end))
    job->is_modification = std::atoi(begin) >= 2;  // ROW_MODIFY_COMMUTATIVE and above
  if (FieldText(plan_text, "subPlanList", &begin, &end))
    job->has_subplans = ListLength(begin, end) != 0;
  if (FieldText(plan_text, "relationIdList", &begin, &end))
    job->relation_count = ListLength(begin, end);
  if (!FieldText(job_text, "jobQuery", &begin, &end) || *begin != '{') return false;
  char* query_text = pnstrdup(begin, end - begin);
  if (FieldText(job_text, "taskList", &begin, &end)) {
    job->task_count = ListLength(begin, end);
    job->runs_on_coordinator = TaskOnCoordinatorGroup(begin, end);
  }
  if (FieldText(job_text, "dependentJobList", &begin, &end))
    job->has_dependent_jobs = ListLength(begin, end) != 0;
  Node* query = static_cast<Node*>(stringToNode(query_text));
  if (query == nullptr || !IsA(query, Query)) return false;
  job->job_query = reinterpret_cast<Query*>(query);
  pfree(plan_text);
  return true;
}

// Whether the text of a Citus DistributedPlan holds a release site of a
// private aggregate: a coord_combine_agg Aggref around one, which the plan's
// combineQuery holds for its own level and the combine plans in its
// subPlanList for the levels Citus runs first. Each "{AGGREF " node is
// read on its own (its text holds only PostgreSQL's nodes; Citus's own
// cannot be read back, see ReadWorkerJob); outToken escapes braces in names.
bool TextHasPrivateRelease(const char* text) {
  static const char kAggref[] = "{AGGREF ";
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == '\\') {
      if (p[1] != '\0') ++p;
      continue;
    }
    if (std::strncmp(p, kAggref, sizeof kAggref - 1) != 0) continue;
    const char* q = p;
    int depth = 0;
    for (; *q != '\0'; ++q) {
      if (*q == '\\') {
        if (q[1] != '\0') ++q;
        continue;
      }
      if (*q == '{' || *q == '(') ++depth;
      if ((*q == '}' || *q == ')') && --depth == 0) {
        ++q;
        break;
      }
    }
    Node* node = static_cast<Node*>(stringToNode(pnstrdup(p, q - p)));
    if (node != nullptr && IsA(node, Aggref) &&
        IsPrivateCitusReleaseCall(reinterpret_cast<Aggref*>(node)))
      return true;
  }
  return false;
}

}  // namespace dp_pg
