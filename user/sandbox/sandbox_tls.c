// SPDX-License-Identifier: MIT
/* The sandbox's CA, leaf cache, upstream verification and trust bundle for TLS termination. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/openssl_lazy.h"
#include "tls/tls_bundle.h"
#include "tls/tls_ca.h"
#include "tls/tls_leaf.h"
#include "tls/tls_upstream.h"

#include "sandbox_tls.h"

#define PEM_MAX (1 << 20)
#define CA_LIFETIME_S (30 * 24 * 3600)	/* outlives any run; trusted by this sandbox alone */
#define LEAF_LIFETIME_S (24 * 3600)
#define LEAF_CACHE 256
#define BUNDLE_NAME "bpfbox-ca-bundle.pem"

/* A PEM file: a regular file of at most PEM_MAX bytes, malloc'd and NUL-terminated. */
static int read_pem(const char *path, char **out, size_t *len)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > PEM_MAX) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	if (got < (size_t)st.st_size)
		err = -EIO;
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

static int read_as(const struct identity *reader, const char *path, char **out, size_t *len)
{
	struct identity_fs saved;
	int err, leave;

	if (!reader)
		return read_pem(path, out, len);
	err = identity_fs_enter(reader, &saved);
	if (err)
		return err;
	err = read_pem(path, out, len);
	leave = identity_fs_leave(&saved);
	if (!err && leave) {
		free(*out);
		err = leave;
	}
	return err;
}

static int load_ca(struct sandbox_tls *t, const struct policy_tls *pt, const struct identity *reader,
		   const char *label, struct errmsg *em)
{
	char *cert = NULL, *key = NULL;
	size_t cert_len = 0, key_len = 0;
	const char *why = NULL;
	int err;

	if (!pt->ca_cert_path) {
		err = tls_ca_generate(label, CA_LIFETIME_S, &t->ca);
		return err ? errmsg_set(em, err, "network.tlsTerminate: making the sandbox's CA") : 0;
	}
	err = read_as(reader, pt->ca_cert_path, &cert, &cert_len);
	if (err)
		return errmsg_set(em, err, "network.tlsTerminate.caCertPath: reading %s", pt->ca_cert_path);
	err = read_as(reader, pt->ca_key_path, &key, &key_len);
	if (err) {
		errmsg_set(em, err, "network.tlsTerminate.caKeyPath: reading %s", pt->ca_key_path);
		goto out;
	}
	err = tls_ca_load_pem(cert, cert_len, key, key_len, &t->ca, &why);
	if (err)
		errmsg_set(em, err, "network.tlsTerminate.caCertPath/caKeyPath: %s", why ? why : "not a usable CA");
out:
	free(cert);
	if (key) {
		explicit_bzero(key, key_len);
		free(key);
	}
	return err;
}

static int load_upstream(struct sandbox_tls *t, const struct policy_tls *pt, const struct identity *reader,
			 struct errmsg *em)
{
	char **pem = calloc(pt->n_extra_ca + 1, sizeof(*pem));
	size_t *len = calloc(pt->n_extra_ca + 1, sizeof(*len));
	const char *why = NULL;
	size_t i;
	int err = 0;

	if (!pem || !len) {
		err = errmsg_set(em, -ENOMEM, "network.tlsTerminate.extraCaCertPaths");
		goto out;
	}
	for (i = 0; i < pt->n_extra_ca; i++) {
		err = read_as(reader, pt->extra_ca_paths[i], &pem[i], &len[i]);
		if (err) {
			errmsg_set(em, err, "network.tlsTerminate.extraCaCertPaths[%zu]: reading %s", i,
				   pt->extra_ca_paths[i]);
			goto out;
		}
	}
	err = tls_upstream_ctx_new((const char *const *)pem, len, pt->n_extra_ca, &t->upstream, &why);
	if (err)
		errmsg_set(em, err, "network.tlsTerminate.extraCaCertPaths: %s", why ? why : "unusable");
out:
	for (i = 0; pem && i < pt->n_extra_ca; i++)
		free(pem[i]);
	free(pem);
	free(len);
	return err;
}

int sandbox_tls_setup(struct sandbox_tls *t, const struct policy *p, const struct identity *reader,
		      const char *label, struct errmsg *em)
{
	const struct policy_tls *pt = &p->tls;
	int err;

	memset(t, 0, sizeof(*t));
	err = openssl_lazy_load(em);
	if (!err)
		err = load_ca(t, pt, reader, label, em);
	if (!err)
		err = load_upstream(t, pt, reader, em);
	if (!err) {
		err = tls_leaf_cache_new(t->ca, LEAF_CACHE, LEAF_LIFETIME_S, &t->leaves);
		if (err)
			errmsg_set(em, err, "network.tlsTerminate: the leaf certificate cache");
	}
	if (err) {
		sandbox_tls_free(t);
		return err;
	}
	t->cfg.leaves = t->leaves;
	t->cfg.upstream = t->upstream;
	t->cfg.max_tunnels = pt->max_tunnels;
	t->cfg.handshake_ms = pt->handshake_timeout_ms;
	return 0;
}

int sandbox_tls_bundle(struct sandbox_tls *t, const char *tmpdir, const struct tmpdir_id *id,
		       struct errmsg *em)
{
	char *pem = NULL;
	size_t len = 0;
	struct stat st;
	int fd, err;

	/* The TMPDIR's owner can rename it: written only into the very directory the run made. */
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errmsg_set(em, -errno, "opening %s for the trust bundle", tmpdir);
	if (fstat(fd, &st) || (uint64_t)st.st_dev != id->dev || (uint64_t)st.st_ino != id->ino) {
		close(fd);
		return errmsg_set(em, -ESTALE, "%s is no longer the TMPDIR this run made", tmpdir);
	}
	err = tls_ca_cert_pem(t->ca, &pem, &len);
	if (!err)
		err = tls_bundle_write_at(fd, BUNDLE_NAME, pem, len);
	close(fd);
	free(pem);
	if (err)
		return errmsg_set(em, err, "writing the trust bundle %s/%s", tmpdir, BUNDLE_NAME);
	snprintf(t->bundle, sizeof(t->bundle), "%s/%s", tmpdir, BUNDLE_NAME);
	return 0;
}

void sandbox_tls_free(struct sandbox_tls *t)
{
	tls_leaf_cache_free(t->leaves);
	if (t->upstream)
		SSL_CTX_free(t->upstream);
	tls_ca_free(t->ca);
	memset(t, 0, sizeof(*t));
}
