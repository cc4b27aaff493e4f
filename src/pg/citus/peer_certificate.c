/*
 * The verified client certificate of this backend's connection, for
 * node_role.cpp. C, because libpq/libpq-be.h is not C++-clean.
 */
#include "postgres.h"

#include "nodes/extensible.h"
#include "nodes/plannodes.h"

#include "peer_certificate.h"

#include "miscadmin.h"
/* libpq-be.h includes the GSSAPI headers when the server was built with
 * GSSAPI (Debian's is): read the connection only when they are present. */
#if !defined(ENABLE_GSS) || __has_include(<gssapi/gssapi.h>)
#define DP_AGG_READ_PORT 1
#include "libpq/auth.h"
#include "libpq/hba.h"
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

/*
 * Whether this backend's connection authenticated without a password: by
 * its client certificate (cert) or by trust (with clientcert=verify-full,
 * which the README requires). A libpq connection opened inside a server
 * process by a non-superuser (dblink, postgres_fdw) must send a password
 * (dblink_security_check, postgres_fdw's check_conn_params) and can still
 * present any certificate whose key file the server process reads, the
 * coordinator's included: only the authentication method tells Citus's own
 * connections from such ones (adversarial review of privacy units on Citus,
 * finding R2). Recorded by ClientAuthentication_hook, while the connection's
 * pg_hba.conf line is valid (PostgresMain frees it with PostmasterContext
 * afterwards); false when dp_agg was not loaded at authentication
 * (shared_preload_libraries), which fails closed.
 */
static bool authenticated_without_password = false;

void dp_citus_record_authentication(struct Port *port, int status) {
#ifdef DP_AGG_READ_PORT
  authenticated_without_password =
      status == STATUS_OK && port != NULL && port->hba != NULL &&
      (port->hba->auth_method == uaCert || port->hba->auth_method == uaTrust);
#endif
}

bool dp_citus_authenticated_without_password(void) { return authenticated_without_password; }
