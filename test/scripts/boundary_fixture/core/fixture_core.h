// Fixture for check_boundary.py --self-test: a core header with one planted
// violation of rule (c) and the declarations the pg fixture calls.
#ifndef FIXTURE_CORE_H
#define FIXTURE_CORE_H

#include <cstdint>
#include "postgres.h"  // PLANTED (c) a PostgreSQL header in the core

namespace dp {
int Throwing(int x);
int Safe(int x) noexcept;
struct Thing {
  int Method() const;
};
}  // namespace dp

#endif
