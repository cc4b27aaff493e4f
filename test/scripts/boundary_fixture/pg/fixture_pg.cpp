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
