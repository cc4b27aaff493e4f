#include "error_boundary.h"

#include <cstring>

#include "pg_includes.h"

namespace dp_pg {

// The codes promised in error_boundary.h.
static_assert(ERRCODE_INVALID_PARAMETER_VALUE == MAKE_SQLSTATE('2', '2', '0', '2', '3'));
static_assert(ERRCODE_SYSTEM_ERROR == MAKE_SQLSTATE('5', '8', '0', '0', '0'));
static_assert(ERRCODE_OUT_OF_MEMORY == MAKE_SQLSTATE('5', '3', '2', '0', '0'));
static_assert(ERRCODE_INTERNAL_ERROR == MAKE_SQLSTATE('X', 'X', '0', '0', '0'));

namespace {
void CopyText(char* destination, std::size_t size, const char* source) noexcept {
  std::strncpy(destination, source != nullptr ? source : "", size - 1);
  destination[size - 1] = '\0';
}
}  // namespace

void CopyFailure(CoreFailure* failure, CoreFailureKind kind, const char* message,
                 const char* hint) noexcept {
  failure->kind = kind;
  CopyText(failure->message, sizeof failure->message, message);
  CopyText(failure->hint, sizeof failure->hint, hint);
}

void ReportCoreFailure(const CoreFailure& failure) {
  switch (failure.kind) {
    case CoreFailureKind::kInvalidParameter:
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", failure.message),
                      failure.hint[0] != '\0' ? errhint("%s", failure.hint) : 0));
      break;
    case CoreFailureKind::kRandomness:
      ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
                      errmsg("could not obtain secure random bytes for noise: %s", failure.message),
                      errhint("No answer is released without fresh noise. Check the server's "
                              "OpenSSL random source.")));
      break;
    case CoreFailureKind::kOutOfMemory:
      ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory in dp_agg")));
      break;
    case CoreFailureKind::kInternal:
      ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                      errmsg("internal error in dp_agg: %s", failure.message)));
      break;
  }
  pg_unreachable();
}

}  // namespace dp_pg
