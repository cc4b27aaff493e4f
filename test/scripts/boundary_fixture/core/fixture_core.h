// Fixture for check_boundary.py --self-test: a core header with one planted
// violation of rule (c) and the declarations the pg fixture calls.
#ifndef FIXTURE_CORE_H
#define FIXTURE_CORE_H

#include <cstdint>
#include <string>
#include <vector>
#include "postgres.h"  // PLANTED (c) a PostgreSQL header in the core

namespace dp {
int Throwing(int x);
int Safe(int x) noexcept;
struct Thing {
  int Method() const;
};
// Rule (d): a class with a destructor through its member, a plain one, and a
// function that returns a std::string by value.
struct Holder {
  int count;
  std::string name;
};
struct Plain {
  int count;
  double share;
  const char* label() const;
};
std::string Describe(int x) noexcept;
}  // namespace dp

#endif
