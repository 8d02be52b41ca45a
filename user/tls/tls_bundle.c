// SPDX-License-Identifier: MIT
/* The sandbox's trust bundle file (tls_bundle.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tls_bundle.h"

const char *const tls_bundle_env[TLS_BUNDLE_NENV] = {
	"NODE_EXTRA_CA_CERTS",
	"SSL_CERT_FILE",
	"CURL_CA_BUNDLE",
	"REQUESTS_CA_BUNDLE",
	"PIP_CERT",
	"GIT_SSL_CAINFO",
	"AWS_CA_BUNDLE",
	"CARGO_HTTP_CAINFO",
	"DENO_CERT",
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE",
	"NIX_SSL_CERT_FILE",
	/* Not srt's: npm 9 and later ignore NODE_EXTRA_CA_CERTS, its cafile replaces its trust. */
	"npm_config_cafile",
};

/* Debian's, then Fedora's. */
static const char *const system_bundles[] = {
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
};

static int write_all(int fd, const char *b, size_t len)
{
	while (len) {
		ssize_t n = write(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The first system bundle that opens, copied to fd; *nl: whether it ended in a newline. */
static int copy_system_bundle(int fd, bool *nl)
{
	char buf[16384];
	int in = -1, ret = 0;

	*nl = true;
	for (size_t i = 0; i < sizeof(system_bundles) / sizeof(system_bundles[0]) && in < 0; i++)
		in = open(system_bundles[i], O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (in < 0)
		return 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		*nl = buf[n - 1] == '\n';
		ret = write_all(fd, buf, (size_t)n);
		if (ret)
			break;
	}
	close(in);
	return ret;
}

static int fill(int fd, const char *ca_pem, size_t ca_len)
{
	bool nl;
	int ret;

	/* The umask could take the read bits away from the sandbox's user: set them here. */
	if (fchmod(fd, 0444))
		return -errno;
	ret = copy_system_bundle(fd, &nl);
	/* A bundle without a final newline would glue its END line to our BEGIN line. */
	if (!ret && !nl)
		ret = write_all(fd, "\n", 1);
	if (!ret)
		ret = write_all(fd, ca_pem, ca_len);
	return ret;
}

int tls_bundle_write_at(int dirfd, const char *name, const char *ca_pem, size_t ca_len)
{
	int fd, ret;

	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	ret = fill(fd, ca_pem, ca_len);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		unlinkat(dirfd, name, 0);
	return ret;
}
