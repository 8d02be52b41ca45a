/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's side of TLS termination (network.tlsTerminate): its CA
 * (the policy's, or one made for this run whose key stays in this
 * process's memory), the leaf cache and upstream verification the proxy
 * uses, and the trust bundle the command's TLS clients are pointed at.
 */
#ifndef BPFBOX_SANDBOX_TLS_H
#define BPFBOX_SANDBOX_TLS_H

#include <openssl/ssl.h>

#include "lib/errmsg.h"
#include "policy/policy.h"
#include "proxy/proxy.h"
#include "sandbox/identity.h"
#include "sandbox/sandbox_tmpdir.h"

struct sandbox_tls {
	struct tls_ca *ca;
	struct tls_leaf_cache *leaves;
	SSL_CTX *upstream;
	struct proxy_tls cfg;		/* what the proxy is given; terminates is the proxy's to set */
	char bundle[96];		/* the trust bundle's path in TMPDIR; "" until written */
};

/*
 * The CA and the upstream context. Files the policy names are read with
 * reader's credentials (NULL: this process's), so a caller cannot use the
 * daemon to read what it could not. label names an ephemeral CA.
 */
int sandbox_tls_setup(struct sandbox_tls *t, const struct policy *p, const struct identity *reader,
		      const char *label, struct errmsg *em);
/* Writes the trust bundle (system CAs + the sandbox's CA) into the run's own TMPDIR. */
int sandbox_tls_bundle(struct sandbox_tls *t, const char *tmpdir, const struct tmpdir_id *id,
		       struct errmsg *em);
void sandbox_tls_free(struct sandbox_tls *t);

#endif
