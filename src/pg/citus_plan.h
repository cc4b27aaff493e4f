/* The worker job of a Citus distributed plan, read from Citus's CustomScan
 * (citus_plan.c, compiled as C against Citus's installed headers). */
#ifndef DP_AGG_PG_CITUS_PLAN_H
#define DP_AGG_PG_CITUS_PLAN_H

#ifdef __cplusplus
extern "C" {
#endif

/* The verified client-certificate CN of this backend's connection, or NULL. */
const char *dp_citus_verified_peer_cn(void);

#ifdef __cplusplus
}
#endif

#endif
