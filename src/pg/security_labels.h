// dp_agg's security labels (SECURITY LABEL FOR dp_agg ..., restriction.h):
// the provider's name and labels, which objects carry a label, and the
// provider's check of a new label (who may set it, on what, with which
// value; a new protection or restriction must keep grant_invariant.h's
// invariant).
#ifndef DP_AGG_PG_SECURITY_LABELS_H
#define DP_AGG_PG_SECURITY_LABELS_H

#include "pg_includes.h"

namespace dp_pg {

inline constexpr const char* kLabelProvider = "dp_agg";
inline constexpr const char* kProtectedLabel = "protected";
inline constexpr const char* kRestrictedLabel = "restricted";
inline constexpr const char* kPrivacyUnitLabel = "privacy_unit";

// Objects of class `class_id` that carry our label `wanted`, read from
// pg_seclabel (tables, column 0 only) or pg_shseclabel (roles).
List* LabelledObjects(Oid class_id, const char* wanted);

// Registers the label provider kLabelProvider with its check of new labels.
void RegisterLabelProvider();

}  // namespace dp_pg

#endif  // DP_AGG_PG_SECURITY_LABELS_H
