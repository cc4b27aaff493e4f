// Restricted roles: who is restricted (the session's roles, their labels and
// memberships, judged once per statement), and what a restricted session's
// client may be sent below INFO. What is protected is protected_tables.cpp's,
// the label provider security_labels.cpp's, the GRANT invariant
// grant_invariant.cpp's, the utility allow-list and EXPLAIN refusal
// restricted_statements.cpp's.
#include "restriction.h"

#include "label_cache.h"
#include "security_labels.h"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_depend.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_seclabel.h"
#include "catalog/pg_shseclabel.h"
#include "commands/seclabel.h"
#include "libpq/auth.h"
#include "libpq/libpq-be.h"
#include "nodes/parsenodes.h"
#include "storage/proc.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/inval.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
}

namespace dp_pg {

namespace {

// Membership without the superuser shortcut: is_member_of_role() says yes
// for a superuser and every role, which would restrict every superuser. A
// superuser that was itself granted a restricted role (or is labelled) is
// restricted like any other member.
bool IsMemberOfAny(Oid role, List* roles) {
  ListCell* cell;
  foreach (cell, roles) {
    if (is_member_of_role_nosuper(role, lfirst_oid(cell))) return true;
  }
  return false;
}

// RestrictedSession() is asked several times per statement (planner,
// executor, utility hook); the answer is kept for the statement the client
// sent (its transaction, statement start time and pair of users) and, from
// one statement to the next, for as long as nothing it depends on changed.
struct RestrictionCache {
  LocalTransactionId transaction = InvalidLocalTransactionId;
  TimestampTz statement = 0;
  Oid session_user = InvalidOid;
  Oid current_user = InvalidOid;
  uint64 changes = 0;  // RestrictionChanges() when decided
  bool restricted = false;
};
RestrictionCache restriction_cache;

// Role memberships (pg_auth_members) changed, here or committed by another
// session: who is restricted may have changed with them.
uint64 membership_changes = 0;

// Whether the callbacks that count the changes below are registered (the
// library is preloaded: RegisterRestrictionInvalidation). Without them no
// change is counted, and an answer is kept only within its transaction.
bool changes_counted = false;

// Everything the answer depends on, as the invalidations of other
// sessions' commits arrive: the labelled roles (label_cache.h: role labels
// and pg_authid) and role memberships.
uint64 RestrictionChanges() { return RestrictedRolesChanges() + membership_changes; }

// A GRANT or REVOKE of role membership. Cached plans (prepared statements,
// PL/pgSQL) were judged for the memberships before it: all of them are
// planned and judged again at their next use, as PostgreSQL does after a
// change of schemas or operators (a role label invalidates every relation
// instead: security_labels.cpp).
void MembershipChanged(Datum, int, uint32) {
  ++membership_changes;
  ResetPlanCache();
}

// What the session's client may be sent below INFO, decided without
// catalog reads wherever a message is reported or a setting is checked.
// `session_judged`: the login role was judged at authentication, or
// RestrictedSession() answered. `session_seen_restricted`: some answer was
// yes; it stays set for the session (a role restricted mid-session, or a
// SET ROLE back from a restricted role, keeps the session fail-closed).
bool session_judged = false;
bool session_seen_restricted = false;

// DEBUG and LOG messages a client asked for (client_min_messages = debug5
// or log, also as a connection option or from postgresql.conf) include
// transaction and plan details that only the server log should get from a
// restricted session. Messages that are not also logged never reach the
// emit_log_hook, so the setting itself is kept at NOTICE or above. It is
// written directly, not through set_config_option, so that no transaction
// abort restores the lower value.
void KeepDebugFromClient() {
  if (client_min_messages < NOTICE) client_min_messages = NOTICE;
}

void NoteRestricted() {
  session_seen_restricted = true;
  KeepDebugFromClient();
}

// Whether messages below INFO must not reach this session's client: the
// session was found restricted, or it is not judged yet and its role is not
// a superuser (fail closed; a restricted role cannot be a superuser).
bool SessionKeepsDebugFromClient() {
  return session_seen_restricted || (!session_judged && !session_auth_is_superuser);
}

// The answer of RestrictedSession(). `restricted_at_statement_start`: this
// call was the first of a statement, the invalidations it took in changed
// what the answer depends on, and the answer became yes (it was no, or was
// not known, for these users).
bool DecideRestriction(bool* restricted_at_statement_start) {
  *restricted_at_statement_start = false;
  const Oid session_user = GetSessionUserId();
  const Oid current_user = GetUserId();
  if (!IsTransactionState()) return false;
  RestrictionCache& cache = restriction_cache;
  const TimestampTz statement = GetCurrentStatementStartTimestamp();
  const bool same_users = cache.session_user == session_user && cache.current_user == current_user;
  const bool same_roles = cache.transaction == MyProc->lxid && same_users;
  if (same_roles && cache.statement == statement) return cache.restricted;
  const bool new_statement = cache.statement != statement;
  const bool was_restricted = same_users && cache.restricted;
  const uint64 changes_before = RestrictionChanges();
  if (new_statement) {
    // PostgreSQL takes in other sessions' committed catalog changes when a
    // statement takes a lock it does not hold yet; a statement inside a
    // transaction that already holds every lock it needs would not.
    // Restrictions take effect at the next statement regardless (a quick
    // check when nothing is pending).
    AcceptInvalidationMessages();
    // Nothing the answer depends on changed since it was decided for these
    // users, in this transaction or an earlier one (each autocommit
    // statement is a transaction of its own: issue 31, row 13). A change
    // this session made and rolled back counts too: the abort takes in its
    // invalidations again.
    if (same_users && (changes_counted || cache.transaction == MyProc->lxid) &&
        cache.changes == RestrictionChanges()) {
      cache.transaction = MyProc->lxid;
      cache.statement = statement;
      return cache.restricted;
    }
  }
  // The labelled roles come from label_cache.h; memberships from
  // PostgreSQL's own cache (both invalidated by GRANT, REVOKE, ALTER ROLE,
  // DROP ROLE and SECURITY LABEL in any session). Reading them may take in
  // more invalidations: the count is taken before, so that the next
  // statement decides again.
  const uint64 changes = RestrictionChanges();
  List* restricted_roles = RestrictedRoles();
  const bool restricted =
      restricted_roles != NIL && (IsMemberOfAny(session_user, restricted_roles) ||
                                  IsMemberOfAny(current_user, restricted_roles));
  cache =
      RestrictionCache{MyProc->lxid, statement, session_user, current_user, changes, restricted};
  session_judged = true;
  if (restricted) NoteRestricted();
  *restricted_at_statement_start =
      new_statement && restricted && !was_restricted && RestrictionChanges() != changes_before;
  return restricted;
}

}  // namespace

bool RestrictedSession() {
  bool restricted_at_statement_start;
  return DecideRestriction(&restricted_at_statement_start);
}

void RefusePlanJudgedBeforeRestriction() {
  // A parallel worker runs its leader's plan, started after this check.
  if (IsParallelWorker() || !IsTransactionState()) return;
  bool restricted_at_statement_start;
  (void)DecideRestriction(&restricted_at_statement_start);
  if (!restricted_at_statement_start) return;
  // Decided first here, at the start of the executor: the statement's plan
  // was not made in this statement (the planner hook asks first) but taken
  // from the plan cache (a prepared statement bound over the extended
  // protocol) before the change that restricts the session was taken in.
  // It was judged for an unrestricted session: not run. Every cached plan
  // is made again at its next use.
  ResetPlanCache();
  ereport(ERROR,
          (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
           errmsg("dp_agg: this statement was planned before the role was restricted"),
           errdetail("A restriction committed in another session takes effect at this session's "
                     "next statement; a plan made before it is not run."),
           errhint("Run the statement again: it is planned and judged anew.")));
}

bool RoleIsRestricted(Oid role) { return IsMemberOfAny(role, RestrictedRoles()); }

// After SET, RESET or DISCARD (restricted_statements.cpp).
void JudgeSessionAfterSettingsChange() {
  // A new role (SET ROLE, SET SESSION AUTHORIZATION) is judged now, not
  // at the next statement.
  if (IsTransactionState()) (void)RestrictedSession();
  // RESET and DISCARD ALL restore client_min_messages without checking
  // it (to postgresql.conf's value, say).
  if (session_seen_restricted) KeepDebugFromClient();
}

// Messages below INFO that are logged too pass here: a second guard behind
// the clamped client_min_messages (a library loaded into the session rather
// than preloaded has not clamped the setting it was started with).
void KeepDebugMessageFromClient(ErrorData* error) {
  if (error->output_to_client && error->elevel < INFO && SessionKeepsDebugFromClient())
    error->output_to_client = false;
}

// The login role is judged once authentication has succeeded, inside the
// transaction InitPostgres runs for it (shared catalogs are readable) and
// before connection options or ALTER ROLE ... SET apply client_min_messages.
// Until then only errors reach the client (ClientAuthInProgress).
void JudgeLoginRole(Port* port, int status) {
  if (status != STATUS_OK || port->user_name == nullptr || !IsTransactionState()) return;
  const Oid role = get_role_oid(port->user_name, true);
  if (!OidIsValid(role)) return;  // refused later, as an unknown role
  session_judged = true;
  if (RoleIsRestricted(role)) NoteRestricted();
}

// client_min_messages, however it is set (SET, set_config(), connection
// options, ALTER ROLE ... SET, a function's SET clause, postgresql.conf on
// reload), stays at NOTICE or above in a restricted session.
void ClampClientMinMessages(int* new_value) {
  if (*new_value < NOTICE && IsUnderPostmaster && SessionKeepsDebugFromClient())
    *new_value = NOTICE;
}

void RegisterRestrictionInvalidation() {
  CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, MembershipChanged, 0);
  CacheRegisterSyscacheCallback(AUTHMEMMEMROLE, MembershipChanged, 0);
  changes_counted = true;
}

void StartRestrictionRules() {
  RegisterLabelProvider();
  // Loaded into a session that has started (not preloaded): its setting
  // was not checked.
  if (IsUnderPostmaster && SessionKeepsDebugFromClient()) KeepDebugFromClient();
}

}  // namespace dp_pg
