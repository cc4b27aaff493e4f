// Fixture for check_boundary.py --self-test: each line marked PLANTED must
// be reported; nothing else may be.
#include "error_boundary.h"

namespace dp_pg {
namespace {
// Pure: only core and standard calls, so it may run inside CallCore.
int PureHelper(int x) { return dp::Throwing(x) + std::max(x, 1); }
// Not pure: calls PostgreSQL.
int ImpureHelper(int x) { return x + superuser(); }
}  // namespace

int Clean(int x) {
  const int safe = dp::Safe(x);
  return CallCore([&] {
    dp::Thing thing;
    return thing.Method() + dp::Throwing(safe) + PureHelper(x);
  });
}

int Violations(int x) {
  int y = dp::Throwing(x);  // PLANTED (b) a throwing core call outside CallCore
  y += PureHelper(x);  // PLANTED (b) a throwing pure helper outside CallCore
  return CallCore([&] {
    char* p = static_cast<char*>(palloc(8));  // PLANTED (a) palloc inside CallCore
    if (!superuser()) elog(ERROR, "no");  // PLANTED (a) superuser() inside CallCore
    return ImpureHelper(y) + (p != nullptr);  // PLANTED (a) a helper that calls PostgreSQL
  });
}
}  // namespace dp_pg

// Rule (d): values with non-trivial destructors alive across PostgreSQL calls
// that may raise. The longjmp of ERROR would skip their destructors.
namespace dp_pg {
void DestructorViolations(int x, std::string by_value) {  // PLANTED (d) a by-value parameter
  std::string text = "x";  // PLANTED (d) a std::string across ereport
  std::vector<int> values(4);  // PLANTED (d) a std::vector across ereport
  dp::Holder holder;  // PLANTED (d) a core class whose member has a destructor
  const auto described = dp::Describe(x);  // PLANTED (d) auto from a function returning a string
  if (x > 0) ereport(ERROR, (errmsg("%s %d %s", text.c_str(), values[0], holder.name.c_str())));
  elog(ERROR, "%s", dp::Describe(x).c_str());  // PLANTED (d) a temporary string across elog
  elog(ERROR, "%s", std::string(4, 'x').c_str());  // PLANTED (d) a constructed temporary
  (void)described;
}

// None of these may be reported.
int DestructorsClean(int x) {
  const char* label = static_cast<char*>(palloc(16));
  dp::Plain plain{x, 0.5};  // trivially destructible
  {
    std::string scoped = dp::Describe(x);  // its block ends before the next PostgreSQL call
    x += static_cast<int>(scoped.size());
  }
  static std::string cache;  // static: not destroyed on return either
  const std::string& alias = cache;  // a reference owns nothing
  std::string* pointer = &cache;  // nor does a pointer
  auto sum = [&](int y) { return x + y; };  // captures by reference only
  const int checked = CallCore([&] {
    std::vector<int> inside(3);  // inside CallCore, where no PostgreSQL call runs
    return static_cast<int>(inside.size()) + dp::Throwing(x);
  });
  ereport(NOTICE, (errmsg("%s", alias.c_str())));  // below ERROR: does not raise
  if (checked < 0) elog(ERROR, "%s %d %d", label, plain.count, sum(1));
  std::string last = dp::Describe(x);  // no PostgreSQL call after it
  return static_cast<int>(last.size() + pointer->size());
}
}  // namespace dp_pg
