-- ===========================================================================
-- Budgets restored from another cluster (issue 28).
--
-- pg_dump keeps role_budget and ledger_entry (extension configuration
-- tables), but role OIDs are the cluster's: after pg_dumpall into another
-- cluster the same names have other OIDs, and a row's old OID may even be
-- another role's there. Rows written in another cluster (system_identifier,
-- 40_budgets_ledger.sql) are therefore found by no role: no charge is ever
-- made against them, the analyst's private queries are refused with a
-- message that names them, and set_budget refuses to start a fresh budget
-- beside them. Nothing re-attaches them at restore time: a dump carries only
-- the names, and only an administrator can say that the role named alice in
-- this cluster is the one that spent alice's budget there (and pick among
-- several rows of one name: a role dropped in the old cluster keeps its row
-- for the audit). Re-attaching is one explicit, audited step:
--
--   SELECT * FROM dp_agg.reattach_budgets();     -- every unambiguous one, by name
--   SELECT dp_agg.reattach_budget('alice', 16390, 7345012345678901234);  -- one, by choice
--
-- A re-attached row keeps everything it recorded (totals, spending, kind,
-- binding certificates) and gets the role's OID and this cluster's
-- identifier; the ledger gets a reattach_budget row, and the role sees the
-- budget's earlier ledger rows (role_budget.reattached_from).
-- ===========================================================================

-- Attaches the orphaned budget (previous_role_oid, previous_system_identifier)
-- to `role` and records it. The callers check that the row is orphaned and
-- that the role has no budget here.
CREATE FUNCTION dp_agg.attach_orphan(previous_role_oid oid, previous_system_identifier bigint,
                                     role oid)
RETURNS void LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  orphan dp_agg.role_budget;
  attached dp_agg.role_budget;
  disagreement text;
BEGIN
  SELECT * INTO orphan FROM dp_agg.role_budget b
  WHERE b.role_oid = previous_role_oid AND b.system_identifier = previous_system_identifier;
  -- Only the budget its own ledger rows vouch for: its amounts start the
  -- role's sums here (review 28).
  disagreement := dp_agg.restored_budget_disagreement(orphan);
  IF disagreement IS NOT NULL THEN
    RAISE EXCEPTION 'the budget restored for role "%" (OID % in the cluster with system identifier %) cannot be re-attached',
      orphan.role_name, previous_role_oid, previous_system_identifier
      USING ERRCODE = 'ZP004',
            DETAIL = format('Its ledger rows do not vouch for it: %s. Nothing was changed.', disagreement),
            HINT = 'SELECT * FROM dp_agg.verify_ledger() shows what differs. Restore the budget with its ledger rows from the dump: re-attaching never changes what a budget recorded.';
  END IF;
  UPDATE dp_agg.role_budget b
     SET role_oid = role, system_identifier = dp_agg.system_identifier(),
         role_name = name_of_role,
         reattached_from = b.reattached_from
                           || (previous_role_oid::text || '@' || previous_system_identifier),
         updated_at = now()
   WHERE b.role_oid = previous_role_oid AND b.system_identifier = previous_system_identifier
  RETURNING * INTO attached;
  PERFORM dp_agg.append_ledger_entry('reattach_budget', role, name_of_role, session_user,
          current_user, orphan.epsilon_spent, orphan.delta_spent, orphan.rho_spent,
          orphan.zcdp_delta_spent, attached, false, NULL, NULL,
          format('re-attached the budget restored from role %I (OID %s in the cluster with system identifier %s): %s budget, epsilon %s of %s and delta %s of %s spent',
                 orphan.role_name, previous_role_oid, previous_system_identifier,
                 orphan.budget_kind, orphan.epsilon_spent, orphan.epsilon_total,
                 orphan.delta_spent, orphan.delta_total));
END $$;

-- Re-attaches every orphaned budget whose recorded name is a role of this
-- cluster, unless that is ambiguous: returns one row per orphaned budget with
-- what was done and, where nothing was, why and what to do.
CREATE FUNCTION dp_agg.reattach_budgets(OUT role name, OUT previous_role_oid oid,
                                        OUT previous_system_identifier bigint,
                                        OUT epsilon_spent numeric, OUT delta_spent numeric,
                                        OUT reattached boolean, OUT outcome text)
RETURNS SETOF record LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  orphan dp_agg.role_budget;
  target oid;
  same_name bigint;
  disagreement text;
BEGIN
  PERFORM dp_agg.require_admin('re-attach privacy budgets');
  -- No charge, set_budget or other re-attachment in between (the ledger
  -- writer does not wait for this lock: it retries).
  LOCK TABLE dp_agg.role_budget IN SHARE ROW EXCLUSIVE MODE;
  FOR orphan IN SELECT * FROM dp_agg.role_budget b WHERE b.system_identifier <> here
                ORDER BY b.role_name, b.updated_at LOOP
    role := orphan.role_name;
    previous_role_oid := orphan.role_oid;
    previous_system_identifier := orphan.system_identifier;
    epsilon_spent := orphan.epsilon_spent;
    delta_spent := orphan.delta_spent;
    reattached := false;
    target := (SELECT r.oid FROM pg_roles r WHERE r.rolname = orphan.role_name);
    same_name := (SELECT count(*) FROM dp_agg.role_budget b
                  WHERE b.system_identifier <> here AND b.role_name = orphan.role_name);
    disagreement := dp_agg.restored_budget_disagreement(orphan);
    IF disagreement IS NOT NULL THEN
      outcome := format('not re-attached: its ledger rows do not vouch for it: %s. SELECT * FROM dp_agg.verify_ledger() shows what differs; restore the budget with its ledger rows from the dump.',
                        disagreement);
    ELSIF target IS NULL THEN
      outcome := format('not re-attached: no role is named %I here. Create it (or rename the role that spent this budget to %I) and run dp_agg.reattach_budgets() again, or attach it to a role of another name with dp_agg.reattach_budget(role, %s, %s).',
                        orphan.role_name, orphan.role_name, orphan.role_oid,
                        orphan.system_identifier);
    ELSIF same_name > 1 THEN
      outcome := format('not re-attached: %s restored budgets carry the name %I (one may be that of a role dropped before the dump, kept for the audit). Compare them in dp_agg.budgets and dp_agg.ledger, then attach the right one with dp_agg.reattach_budget(%L, previous_role_oid, previous_system_identifier).',
                        same_name, orphan.role_name, orphan.role_name);
    ELSIF EXISTS (SELECT 1 FROM dp_agg.role_budget b
                  WHERE b.role_oid = target AND b.system_identifier = here) THEN
      outcome := format('not re-attached: role %I already has a budget in this cluster. If it recorded nothing that must be kept, remove it with dp_agg.revoke_budget(%L) and run dp_agg.reattach_budgets() again.',
                        orphan.role_name, orphan.role_name);
    ELSE
      PERFORM dp_agg.attach_orphan(orphan.role_oid, orphan.system_identifier, target);
      reattached := true;
      outcome := format('re-attached to role %I (OID %s)', orphan.role_name, target);
    END IF;
    RETURN NEXT;
  END LOOP;
END $$;

-- Re-attaches one orphaned budget, chosen by the role OID (and, if several
-- clusters' rows have it, the system identifier) it had where it was
-- written, to `role`, whatever name it was recorded under.
CREATE FUNCTION dp_agg.reattach_budget(role regrole, previous_role_oid oid,
                                       previous_system_identifier bigint DEFAULT NULL)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  here bigint := dp_agg.system_identifier();
  name_of_role name := (SELECT rolname FROM pg_roles WHERE oid = role);
  candidates bigint;
  orphan dp_agg.role_budget;
BEGIN
  PERFORM dp_agg.require_admin('re-attach privacy budgets');
  IF name_of_role IS NULL THEN
    RAISE EXCEPTION 'role with OID % does not exist', role::oid
      USING ERRCODE = 'undefined_object';
  END IF;
  LOCK TABLE dp_agg.role_budget IN SHARE ROW EXCLUSIVE MODE;
  candidates := (SELECT count(*) FROM dp_agg.role_budget b
                 WHERE b.system_identifier <> here AND b.role_oid = previous_role_oid
                   AND b.system_identifier = coalesce(reattach_budget.previous_system_identifier,
                                                      b.system_identifier));
  IF candidates = 0 THEN
    RAISE EXCEPTION 'no restored budget of role OID % is waiting to be re-attached',
      previous_role_oid
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'SELECT role, previous_role_oid, previous_system_identifier FROM dp_agg.reattach_budgets() lists them (and re-attaches the unambiguous ones); dp_agg.budgets shows them with orphaned = true.';
  ELSIF candidates > 1 THEN
    RAISE EXCEPTION 'restored budgets of role OID % from % clusters are waiting to be re-attached',
      previous_role_oid, candidates
      USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Name the cluster: dp_agg.reattach_budget(role, previous_role_oid, previous_system_identifier).';
  END IF;
  IF EXISTS (SELECT 1 FROM dp_agg.role_budget b
             WHERE b.role_oid = role AND b.system_identifier = here) THEN
    RAISE EXCEPTION 'role "%" already has a privacy budget in this cluster', name_of_role
      USING ERRCODE = 'ZP004',
            HINT = format('If it recorded nothing that must be kept, remove it with dp_agg.revoke_budget(%L) first.', name_of_role);
  END IF;
  SELECT * INTO orphan FROM dp_agg.role_budget b
  WHERE b.system_identifier <> here AND b.role_oid = previous_role_oid
    AND b.system_identifier = coalesce(reattach_budget.previous_system_identifier,
                                       b.system_identifier);
  PERFORM dp_agg.attach_orphan(orphan.role_oid, orphan.system_identifier, role);
END $$;

COMMENT ON FUNCTION dp_agg.attach_orphan(oid, bigint, oid) IS
  'Attaches one orphaned budget to a role and records a reattach_budget ledger row (internal)';
COMMENT ON FUNCTION dp_agg.reattach_budgets() IS
  'reattach_budgets(): re-attaches every budget restored from another cluster to the role of its recorded name where that is unambiguous, and says for each what was done or why not (administrators; leaves a ledger row per re-attachment)';
COMMENT ON FUNCTION dp_agg.reattach_budget(regrole, oid, bigint) IS
  'reattach_budget(role, previous_role_oid[, previous_system_identifier]): re-attaches one budget restored from another cluster to a role of the administrator''s choice (administrators; leaves a ledger row)';
