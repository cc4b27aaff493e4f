// The one place where C++ meets PostgreSQL's error handling.
//
// PostgreSQL reports errors with ereport(), which longjmps: a longjmp across a
// C++ frame skips destructors, and a C++ exception unwinding through
// PostgreSQL's C frames is undefined behaviour. So the rule of this extension:
//
//  * The pure core (src/core) never calls PostgreSQL; it reports failures by
//    throwing. Every call into it from SQL-callable code goes through CallCore.
//  * CallCore catches every exception, copies its text into a plain buffer,
//    lets the try block end (destroying every C++ object it created), and only
//    then raises the PostgreSQL ERROR. Nothing with a destructor is alive when
//    the longjmp happens.
//  * The PostgreSQL layer itself uses only trivially destructible values
//    around calls that may ereport (Datums, PODs, palloc'd memory).
//  * Nothing inside a CallCore body calls PostgreSQL (no catalog lookups,
//    palloc, ereport or GUC checks such as superuser(); NoiseSource() only
//    reads what DecideNoiseSource() decided in the executor hook). Core
//    functions called outside CallCore are noexcept (UnitScale, ToUnits,
//    ChooseUnitExponent, ToDouble, ToInt64Saturating, SumSensitivity, and
//    NoiseMechanism's accessors).
//  * test/scripts/check_boundary.py (make test, make lint) checks these
//    rules on the source: CallCore bodies call only core, std and pure
//    helpers; core functions and helpers that may throw are called only
//    inside CallCore; src/core includes no PostgreSQL header; outside
//    CallCore, no value with a non-trivial destructor is alive where a
//    PostgreSQL call that may raise is made (rule (d), its approximation
//    described in the script).
//
// The idea follows pg_duckdb's cpp_wrapper.hpp; the code is our own.
#ifndef DP_AGG_PG_ERROR_BOUNDARY_H
#define DP_AGG_PG_ERROR_BOUNDARY_H

#include <new>
#include <stdexcept>

#include "../core/parameters.h"
#include "../core/random_source.h"

namespace dp_pg {

enum class CoreFailureKind { kInvalidParameter, kRandomness, kOutOfMemory, kInternal };

struct CoreFailure {
  CoreFailureKind kind;
  char message[512];
  char hint[512];
};

void CopyFailure(CoreFailure* failure, CoreFailureKind kind, const char* message,
                 const char* hint) noexcept;

// Raises the PostgreSQL ERROR for `failure`: SQLSTATE 22023
// (invalid_parameter_value) for dp::InvalidParameter, a parameter the query
// chose; 58000 (system_error) for dp::RandomnessFailure; 53200
// (out_of_memory) for std::bad_alloc; XX000 (internal_error) for any other
// exception, which must never be reachable from SQL (parameters are
// validated, and the noise calibrated, when the executor hook prepares a
// call). error_boundary.cpp checks these codes at compile time. Never
// returns.
[[noreturn]] void ReportCoreFailure(const CoreFailure& failure);

template <typename Body>
auto CallCore(Body&& body) -> decltype(body()) {
  CoreFailure failure;
  try {
    return body();
  } catch (const dp::InvalidParameter& error) {
    CopyFailure(&failure, CoreFailureKind::kInvalidParameter, error.what(), error.hint().c_str());
  } catch (const dp::RandomnessFailure& error) {
    CopyFailure(&failure, CoreFailureKind::kRandomness, error.what(), "");
  } catch (const std::bad_alloc&) {
    CopyFailure(&failure, CoreFailureKind::kOutOfMemory, "out of memory", "");
  } catch (const std::exception& error) {
    CopyFailure(&failure, CoreFailureKind::kInternal, error.what(), "");
  } catch (...) {
    CopyFailure(&failure, CoreFailureKind::kInternal, "unknown C++ exception", "");
  }
  ReportCoreFailure(failure);
}

}  // namespace dp_pg

#endif  // DP_AGG_PG_ERROR_BOUNDARY_H
