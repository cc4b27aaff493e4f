-- ===========================================================================
-- Randomized response (local differential privacy; core/randomized_response.h).
--
-- dp_agg.randomized_response(answer, epsilon): for applications that collect
-- a sensitive yes/no and store only the randomized answer. True answer with
-- probability e^epsilon / (1 + e^epsilon), drawn exactly from OpenSSL's
-- CSPRNG; each call is epsilon-DP for that answer. Not charged to any budget
-- (it is applied to the respondent's own answer before it is stored).
--
-- dp_rr_proportion(randomized_answer, epsilon): the unbiased estimate
-- (observed - q) / (p - q), p = e^epsilon / (1 + e^epsilon), q = 1 - p, of the
-- proportion of true answers; dp_rr_proportion_se(...) its standard error.
-- They charge nothing at query time: the answers are already private. The
-- number of answers is not protected (as in every local-DP collection).
-- Restricted roles may use neither over protected tables (README).
-- ===========================================================================
CREATE FUNCTION dp_agg.randomized_response(answer boolean, epsilon float8) RETURNS boolean
  AS 'MODULE_PATHNAME', 'dp_randomized_response' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION dp_agg.rr_check_epsilon(epsilon float8, previous float8, answers float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_rr_check_epsilon' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_agg.rr_transfn(state float8[], answer boolean, epsilon float8) RETURNS float8[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT ARRAY[state[1] + 1, state[2] + answer::int,
                 dp_agg.rr_check_epsilon(epsilon, state[3], state[1])]
  $$;

CREATE FUNCTION dp_agg.rr_combine(float8[], float8[]) RETURNS float8[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT CASE
      WHEN $1[1] = 0 THEN $2
      WHEN $2[1] = 0 THEN $1
      ELSE ARRAY[$1[1] + $2[1], $1[2] + $2[2], dp_agg.rr_check_epsilon($2[3], $1[3], $1[1])]
    END
  $$;

CREATE FUNCTION dp_agg.rr_proportion_final(float8[]) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_rr_proportion_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dp_agg.rr_proportion_se_final(float8[]) RETURNS float8
  AS 'MODULE_PATHNAME', 'dp_rr_proportion_se_final' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE dp_rr_proportion(boolean, float8) (
  SFUNC = dp_agg.rr_transfn, STYPE = float8[], INITCOND = '{0,0,0}',
  FINALFUNC = dp_agg.rr_proportion_final, COMBINEFUNC = dp_agg.rr_combine, PARALLEL = SAFE
);
CREATE AGGREGATE dp_rr_proportion_se(boolean, float8) (
  SFUNC = dp_agg.rr_transfn, STYPE = float8[], INITCOND = '{0,0,0}',
  FINALFUNC = dp_agg.rr_proportion_se_final, COMBINEFUNC = dp_agg.rr_combine, PARALLEL = SAFE
);

COMMENT ON FUNCTION dp_agg.randomized_response(boolean, float8) IS
  'randomized_response(answer, epsilon): the answer with probability e^epsilon/(1+e^epsilon), else its negation (local epsilon-DP, exact, CSPRNG); not charged to any budget; refused on protected data for restricted roles';
COMMENT ON FUNCTION dp_agg.rr_check_epsilon(float8, float8, float8) IS
  'Support function of dp_rr_proportion: checks its epsilon (internal)';
COMMENT ON FUNCTION dp_agg.rr_transfn(float8[], boolean, float8) IS
  'Support function of dp_rr_proportion (transition function; internal)';
COMMENT ON FUNCTION dp_agg.rr_combine(float8[], float8[]) IS
  'Support function of dp_rr_proportion (combine function; internal)';
COMMENT ON FUNCTION dp_agg.rr_proportion_final(float8[]) IS
  'Support function of dp_rr_proportion (final function; internal)';
COMMENT ON FUNCTION dp_agg.rr_proportion_se_final(float8[]) IS
  'Support function of dp_rr_proportion_se (final function; internal)';
COMMENT ON AGGREGATE dp_rr_proportion(boolean, float8) IS
  'dp_rr_proportion(randomized_answer, epsilon): unbiased estimate of the true proportion from answers randomized by randomized_response at epsilon; charges nothing at query time (the answers are already private)';
COMMENT ON AGGREGATE dp_rr_proportion_se(boolean, float8) IS
  'dp_rr_proportion_se(randomized_answer, epsilon): standard error of dp_rr_proportion; charges nothing at query time';
