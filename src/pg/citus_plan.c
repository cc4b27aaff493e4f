/*
 * The verified client certificate of this backend's connection, for
 * distributed.cpp. C, because libpq/libpq-be.h is not C++-clean.
 */
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "citus_plan.h"

#include "miscadmin.h"
/* libpq-be.h includes the GSSAPI headers when the server was built with
 * GSSAPI (Debian's is): read the connection only when they are present. */
#if !defined(ENABLE_GSS) || __has_include(<gssapi/gssapi.h>)
#define DP_AGG_READ_PORT 1
#include "libpq/libpq-be.h"
#endif

/*
 * The common name of the client certificate this backend's connection
 * presented, if PostgreSQL verified it against ssl_ca_file; NULL otherwise.
 * (libpq-be.h needs the GSSAPI headers that building Citus installs, so it
 * is read here, under the same condition.)
 */
const char *dp_citus_verified_peer_cn(void) {
#ifdef DP_AGG_READ_PORT
  if (MyProcPort == NULL || !MyProcPort->ssl_in_use || !MyProcPort->peer_cert_valid) return NULL;
  return MyProcPort->peer_cn;
#else
  return NULL;
#endif
}
