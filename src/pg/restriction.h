// Restricted analysts and protected tables: who is restricted, what is
// protected, and the checks on statements that are not planned queries.
//
//   SECURITY LABEL FOR dp_agg ON TABLE t IS 'protected'
//   SECURITY LABEL FOR dp_agg ON ROLE r IS 'restricted'
//
// A restricted role holds no SELECT on protected tables; a query that passes
// the rules of query_judgement.h is given access as the table owner, the way a
// view gives it. Without the preloaded library nothing grants that access,
// so the restricted role reads nothing (fail closed).
//
// Defined in restriction.cpp (who is restricted, what its client is sent),
// protected_tables.cpp (what is protected), restricted_statements.cpp (the
// utility allow-list, settings, EXPLAIN refusal); the label provider is
// security_labels.h's, the GRANT invariant grant_invariant.h's.
#ifndef DP_AGG_PG_RESTRICTION_H
#define DP_AGG_PG_RESTRICTION_H

#include "pg_includes.h"

extern "C" {
#include "libpq/libpq-be.h"
#include "tcop/utility.h"
}

namespace dp_pg {

// Whether the rules for restricted roles apply to the current statement: the
// session user or the current user is labelled 'restricted' or is a member
// of a role that is (SET ROLE and SECURITY DEFINER functions lend no escape).
//
// Decided at the first call of each statement the client sends (a query
// string, or a Parse, Bind or Execute message) and kept for that statement;
// decided again at the next one if a role label, a role or a role membership
// changed meanwhile, committed by any session (inside an open transaction
// too: the first call takes in pending invalidations). A statement already
// running, and a cursor already open, keep the plan they were judged with;
// cached plans are judged again at their next use.
bool RestrictedSession();

// At the start of the executor (call_sites.cpp), before anything runs or is
// charged: refuses (42501) a plan taken from the plan cache before a change
// that restricts the session was taken in -- the one case in which the
// statement's first decision comes after its plan was chosen (a prepared
// statement bound over the extended protocol inside a transaction).
void RefusePlanJudgedBeforeRestriction();

// Whether `role` is labelled 'restricted' or belongs to a role that is.
bool RoleIsRestricted(Oid role);

// Whether the table `relation` is labelled 'protected', or, for an
// inheritance parent or partitioned table read with its children
// (`with_children`), whether any of them is.
bool IsProtectedRelation(Oid relation, bool with_children);

// The column of `relation` labelled 'privacy_unit' (InvalidAttrNumber if
// none): all rows with the same value belong to one person, whom private
// aggregates protect as a whole (unit_rewrite.h).
AttrNumber PrivacyUnitColumn(Oid relation);

// Checks at ExecutorStart that cannot be made on the query tree: EXPLAIN
// (also of a prepared statement, which is not planned again) shows row
// counts and estimates, so restricted roles may not explain plans that read
// protected tables.
void CheckExecutionForRestrictedRole(QueryDesc* query, int flags);

// Settings a restricted role may change: client settings, what DP group
// selection spends (charged like any epsilon in a query), and how long its
// answers are reused (release_cache.h). Planner,
// debugging and dp_agg's other settings are not on the list.
bool IsAnalystSetting(const char* name);

// The ProcessUtility hook's work (hooks.cpp): refuses a restricted role's
// utility statement that is not on the list, runs the statement with `next`
// (the previous hook or standard_ProcessUtility; EXPLAIN counted for
// CheckExecutionForRestrictedRole), then keeps the restriction invariants
// after GRANT, ALTER and CREATE statements.
void RunUtilityForRestrictedRoles(PlannedStmt* statement, const char* query_string,
                                  bool read_only_tree, ProcessUtilityContext context,
                                  ParamListInfo params, QueryEnvironment* environment,
                                  DestReceiver* destination, QueryCompletion* completion,
                                  ProcessUtility_hook_type next);

// After SET, RESET or DISCARD has run (RunUtilityForRestrictedRoles): judges
// a new role at once, and keeps DEBUG messages from a restricted client
// whose client_min_messages was restored without its check hook.
void JudgeSessionAfterSettingsChange();

// The guards that keep DEBUG and LOG messages from restricted clients, for
// the hooks of hooks.cpp: the emit_log hook (messages below INFO stay off
// the client), the ClientAuthentication hook (the login role is judged once
// authenticated) and the check hook of client_min_messages (kept at NOTICE
// or above in a restricted session).
void KeepDebugMessageFromClient(ErrorData* error);
void JudgeLoginRole(Port* port, int status);
void ClampClientMinMessages(int* new_value);

// In _PG_init: role memberships changed in any session make every backend
// decide RestrictedSession() again and plan its cached plans again.
void RegisterRestrictionInvalidation();

// Registers the security label provider and, in a session that started
// before dp_agg was loaded, keeps DEBUG messages from a restricted client.
void StartRestrictionRules();

}  // namespace dp_pg

#endif  // DP_AGG_PG_RESTRICTION_H
