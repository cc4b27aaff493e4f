/* The verified client certificate and the authentication method of this
 * backend's connection (peer_certificate.c, C because libpq/libpq-be.h needs
 * the GSSAPI headers when the server was built with GSSAPI). */
#ifndef DP_AGG_PG_CITUS_PEER_CERTIFICATE_H
#define DP_AGG_PG_CITUS_PEER_CERTIFICATE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The verified client-certificate CN of this backend's connection, or NULL. */
const char *dp_citus_verified_peer_cn(void);

/* Whether this backend's connection authenticated by cert or trust (no
 * password, so not a dblink or postgres_fdw connection of a non-superuser). */
bool dp_citus_authenticated_without_password(void);

/* Records it, from the ClientAuthentication hook (hooks.cpp). */
struct Port;
void dp_citus_record_authentication(struct Port *port, int status);

#ifdef __cplusplus
}
#endif

#endif
